// SPDX-License-Identifier: BSD-3-Clause
// The extension module haloshift._haloshift: pybind11 over the C interface (bindings/c/haloshift.h),
// never over the C++ templates (one source of truth). The package haloshift (haloshift/__init__.py)
// parses the keyword arguments; the hot calls (forward, reverse, start, test, wait) come here directly.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "haloshift.h"

namespace haloshift_python {
namespace py = pybind11;

/// Raised as haloshift.Error (a RuntimeError and a ValueError).
struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Throws `error` with the C library's text unless `status` is HS_OK.
void check(hs_status status);
/// Whether MPI_Finalize has run (handles are then leaked, never freed: freeing would call MPI).
bool mpi_finalized();

using int3 = std::array<int, 3>;
using double3 = std::array<double, 3>;

/// "(a, b, c)" for messages.
std::string text(const int3& v);
/// hs_type of a numpy array of float32, float64, int32 or int64 in native byte order; else `error`
/// naming `what` and the dtype.
int type_of(const py::array& a, const char* what);
/// Checks that `a` may be written in place (writeable, aligned); else `error` naming `what`.
void require_writeable(const py::array& a, const char* what);
/// hs_op of "sum", "min" or "max"; else `error`.
hs_op op_of(const std::string& op);
/// Runs a blocking C call without the GIL (other Python threads run while it waits), then checks it.
template <class Call>
void blocking(Call call) {
  hs_status status;
  {
    py::gil_scoped_release nogil;
    status = call();
  }
  check(status);
}
/// The arrays of a plan's exchange in flight, kept alive until it is done (test() true, or wait()).
class in_flight {
 public:
  void hold(py::object arrays) { held_ = std::move(arrays); }
  /// `test(int* done)`: the C call; whether the exchange is done.
  template <class Test>
  bool test(Test test) {
    int done = 0;
    check(test(&done));
    if (done) held_ = py::none();
    return done != 0;
  }
  template <class Wait>
  void wait(Wait wait) {
    blocking(wait);
    held_ = py::none();
  }

 private:
  py::object held_ = py::none();
};

/// explain()'s table: a list of dicts {"strategy", "team", "shared_memory", "seconds"}, fastest first.
py::list prediction_table(const hs_prediction* out, int count);

/// A grid (hs_grid) built from a Fortran communicator handle (mpi4py's comm.py2f()).
class grid {
 public:
  grid(long comm, int ndims, int3 dims, int3 periodic, double3 lengths, int first_fastest, int remainder);
  grid(const grid&) = delete;
  grid& operator=(const grid&) = delete;
  ~grid();
  hs_grid handle() const { return handle_; }
  int ndims() const { return ndims_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  const int3& dims() const { return dims_; }
  const int3& coords() const { return coords_; }
  const int3& periodic() const { return periodic_; }
  long comm_f() const;

 private:
  hs_grid handle_ = nullptr;
  int ndims_ = 0, rank_ = 0, size_ = 0;
  int3 dims_{}, coords_{}, periodic_{};
};

/// The most arrays one particle forward moves (the C interface's; they live on the stack: no allocation).
inline constexpr int max_columns = HS_MAX_COLUMNS;

void bind_grid(py::module_& m);
void bind_fields(py::module_& m);
void bind_particles(py::module_& m);

}  // namespace haloshift_python

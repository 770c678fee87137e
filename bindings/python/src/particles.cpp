// SPDX-License-Identifier: BSD-3-Clause
// Particle plans and migrate over numpy arrays: positions as one (n, 3) or (n, 4) array
// (interleaved) or three 1D arrays, companions as (n,) or (n, c) arrays, described to the C
// interface as they lie in memory, never copied.
#include <cstring>
#include <optional>
#include <vector>

#include "module.hpp"

namespace haloshift_python {
namespace {

/// Element stride of axis `d`, or 0 when it is not a positive multiple of the element size.
py::ssize_t element_stride(const py::array& a, int d) {
  const py::ssize_t s = a.strides(d);
  return s > 0 && s % a.itemsize() == 0 ? s / a.itemsize() : 0;
}

std::string rows_text(const char* what, std::size_t rows, std::size_t need) {
  return std::string("haloshift: ") + what + " has " + std::to_string(rows) + " rows, the plan needs " +
         std::to_string(need) + " (owned + ghosts: plan.extend(a) makes such an array)";
}

py::array array_of(py::handle h, const char* what) {
  if (!py::isinstance<py::array>(h))
    throw error(std::string("haloshift: ") + what + " must be a numpy array, got " +
                py::str(py::type::of(h)).cast<std::string>());
  return py::reinterpret_borrow<py::array>(h);
}

/// hs_type of a position array: float32 or float64 only (and writeable if the call `writes` it);
/// else `error` naming the dtype.
int position_type(const py::array& a, const char* what, bool writes) {
  const int type = type_of(a, what);
  if (type != HS_FLOAT && type != HS_DOUBLE)
    throw error(std::string("haloshift: ") + what + " has dtype " + py::str(a.dtype()).cast<std::string>() +
                ": positions must be float32 or float64");
  if (writes) require_writeable(a, what);
  return type;
}

/// Positions as the C interface takes them; `rows` is how many particles the arrays hold.
struct positions {
  hs_positions x{};
  std::size_t rows = 0;
};

positions split_positions(const py::sequence& xyz, bool writes) {
  positions p;
  void* data[3];
  py::ssize_t stride = 0;
  for (int d = 0; d < 3; ++d) {
    const py::array a = array_of(xyz[d], "each coordinate array");
    const int type = position_type(a, "a coordinate array", writes);
    if (a.ndim() != 1) throw error("haloshift: three coordinate arrays must be 1D, got ndim " + std::to_string(a.ndim()));
    const py::ssize_t s = a.shape(0) > 1 ? element_stride(a, 0) : 1;
    if (d > 0 && (type != p.x.type || s != stride || static_cast<std::size_t>(a.shape(0)) != p.rows))
      throw error("haloshift: the x, y and z arrays must have the same dtype, length and stride");
    if (s == 0) throw error("haloshift: a coordinate array's stride is not a positive multiple of its element size");
    p.x.type = type;
    p.rows = static_cast<std::size_t>(a.shape(0));
    stride = s;
    data[d] = const_cast<void*>(a.data());
  }
  p.x.x = data[0];
  p.x.y = data[1];
  p.x.z = data[2];
  p.x.stride = static_cast<std::size_t>(stride);
  return p;
}

/// `x`: an (n, 3) or (n, 4) array, or a sequence of three 1D arrays; `writes`: the call writes them.
positions positions_of(py::handle x, bool writes) {
  if (!py::isinstance<py::array>(x) && py::isinstance<py::sequence>(x) && py::len(x) == 3)
    return split_positions(py::reinterpret_borrow<py::sequence>(x), writes);
  const py::array a = array_of(x, "x");
  const int type = position_type(a, "x", writes);
  if (a.ndim() != 2 || (a.shape(1) != 3 && a.shape(1) != 4))
    throw error("haloshift: x must be an (n, 3) or (n, 4) array or three 1D arrays, got ndim " +
                std::to_string(a.ndim()) + (a.ndim() == 2 ? " with " + std::to_string(a.shape(1)) + " columns" : ""));
  const py::ssize_t row = a.shape(0) > 1 ? element_stride(a, 0) : a.shape(1);
  if (element_stride(a, 1) != 1 || row < a.shape(1))
    throw error("haloshift: x's rows must be contiguous (each particle's coordinates side by side)");
  positions p;
  p.x.x = const_cast<void*>(a.data());
  p.x.type = type;
  p.x.stride = static_cast<std::size_t>(row);
  p.rows = static_cast<std::size_t>(a.shape(0));
  return p;
}

/// A companion array: (n,) or (n, c) with each row's values side by side.
hs_column column_of(py::handle h, std::size_t& rows) {
  const py::array a = array_of(h, "a per-particle array");
  hs_column c{};
  c.type = type_of(a, "a per-particle array");
  require_writeable(a, "a per-particle array");
  if (a.ndim() != 1 && a.ndim() != 2)
    throw error("haloshift: a per-particle array must be (n,) or (n, c), got ndim " + std::to_string(a.ndim()));
  c.components = a.ndim() == 2 ? static_cast<int>(a.shape(1)) : 1;
  const py::ssize_t row = a.shape(0) > 1 ? element_stride(a, 0) : c.components;
  if ((a.ndim() == 2 && a.shape(1) > 1 && element_stride(a, 1) != 1) || row < c.components)
    throw error("haloshift: a per-particle array's rows must be contiguous (strides " +
                std::to_string(a.strides(0)) + " bytes per particle)");
  c.data = const_cast<void*>(a.data());
  c.stride = static_cast<std::size_t>(row);
  rows = static_cast<std::size_t>(a.shape(0));
  return c;
}

hs_column column_with_rows(py::handle h, std::size_t need) {
  std::size_t rows = 0;
  const hs_column c = column_of(h, rows);
  if (rows < need) throw error(rows_text("a per-particle array", rows, need));
  return c;
}

/// Columns on the stack (no allocation per call), each with at least `need` rows.
struct columns {
  hs_column c[max_columns];
  int count = 0;
  columns(const py::args& arrays, std::size_t need) {
    if (py::len(arrays) > static_cast<std::size_t>(max_columns))
      throw error("haloshift: at most " + std::to_string(max_columns) + " arrays per particle exchange (HS_MAX_COLUMNS), got " +
                  std::to_string(py::len(arrays)) + ": exchange the others in a second call");
    for (py::handle h : arrays) c[count++] = column_with_rows(h, need);
  }
};

hs_domain domain_of(const double3& lo, const double3& hi) {
  hs_domain d{};
  for (int i = 0; i < 3; ++i) {
    d.lo[i] = lo[i];
    d.hi[i] = hi[i];
  }
  return d;
}

class particle_plan {
 public:
  particle_plan(py::object grid_object, const std::string& strategy, double3 lo, double3 hi, double3 cutoff,
                py::object x, std::optional<std::size_t> count)
      : grid_(std::move(grid_object)) {
    const positions p = owned_positions(x, count);
    const hs_domain dom = domain_of(lo, hi);
    const hs_grid g = grid_.cast<const grid&>().handle();
    blocking([&] {
      return hs_particle_plan_create(g, strategy.c_str(), &dom, cutoff.data(), &p.x, count.value_or(p.rows),
                                     &handle_);
    });
    update_sizes();
  }
  particle_plan(const particle_plan&) = delete;
  particle_plan& operator=(const particle_plan&) = delete;
  ~particle_plan() {
    if (!mpi_finalized()) hs_particle_plan_free(&handle_);
  }

  std::size_t owned() const { return owned_; }
  std::size_t ghosts() const { return ghosts_; }
  std::string strategy() const { return hs_particle_plan_strategy(handle_); }

  void rebuild(py::object x, std::optional<std::size_t> count) {
    const positions p = owned_positions(x, count);
    blocking([&] { return hs_particle_plan_rebuild(handle_, &p.x, count.value_or(p.rows)); });
    update_sizes();
  }
  void forward_positions(py::object x, const py::args& arrays) {
    const positions p = all_positions(x);
    const columns c(arrays, owned_ + ghosts_);
    blocking([&] { return hs_particle_forward_positions(handle_, &p.x, c.count, c.c); });
  }
  void forward(const py::args& arrays) {
    const columns c(arrays, owned_ + ghosts_);
    blocking([&] { return hs_particle_forward(handle_, c.count, c.c); });
  }
  void reverse(py::object f, const std::string& op) {
    const hs_column c = one_column(f);
    const hs_op how = op_of(op);
    blocking([&] { return hs_particle_reverse(handle_, &c, how); });
  }
  void start_forward_positions(py::object x, const py::args& arrays) {
    const positions p = all_positions(x);
    const columns c(arrays, owned_ + ghosts_);
    check(hs_particle_start_forward_positions(handle_, &p.x, c.count, c.c));
    in_flight_.hold(py::make_tuple(x, arrays));  // alive until the exchange is done
  }
  void start_forward(const py::args& arrays) {
    const columns c(arrays, owned_ + ghosts_);
    check(hs_particle_start_forward(handle_, c.count, c.c));
    in_flight_.hold(arrays);
  }
  void start_reverse(py::object f, const std::string& op) {
    const hs_column c = one_column(f);
    check(hs_particle_start_reverse(handle_, &c, op_of(op)));
    in_flight_.hold(f);
  }
  bool test() {
    return in_flight_.test([&](int* done) { return hs_particle_test(handle_, done); });
  }
  void wait() {
    in_flight_.wait([&] { return hs_particle_wait(handle_); });
  }

 private:
  positions owned_positions(py::handle x, const std::optional<std::size_t>& count) const {
    positions p = positions_of(x, false);  // read only
    if (count && *count > p.rows)
      throw error("haloshift: count = " + std::to_string(*count) + " but x has " + std::to_string(p.rows) + " rows");
    return p;
  }
  positions all_positions(py::handle x) const {
    positions p = positions_of(x, true);
    if (p.rows < owned_ + ghosts_) throw error(rows_text("x", p.rows, owned_ + ghosts_));
    return p;
  }
  hs_column one_column(py::handle f) const { return column_with_rows(f, owned_ + ghosts_); }
  void update_sizes() { check(hs_particle_plan_sizes(handle_, &owned_, &ghosts_)); }

  py::object grid_;  // the plan uses the grid's communicator
  hs_particle_plan handle_ = nullptr;
  std::size_t owned_ = 0, ghosts_ = 0;
  in_flight in_flight_;  // the arrays of the exchange in flight
};

/// migrate's arrays: the current numpy arrays behind the C descriptions, replaced by the resize callback.
struct migrate_state {
  std::vector<py::array> arrays;  // the positions (one or three), then the columns
  bool split = false;
  std::string failure;
};

/// A C-order array of `count` rows shaped and typed as `old`, its first `kept` rows copied from `old`.
py::array grown(const py::array& old, std::size_t count, std::size_t kept) {
  std::vector<py::ssize_t> shape(old.shape(), old.shape() + old.ndim());
  shape[0] = static_cast<py::ssize_t>(count);
  py::array fresh(old.dtype(), shape);
  const std::size_t row_bytes = static_cast<std::size_t>(old.itemsize()) *
                                static_cast<std::size_t>(old.ndim() == 2 ? old.shape(1) : 1);
  if (kept > 0) std::memcpy(fresh.mutable_data(), old.data(), kept * row_bytes);  // both C-contiguous
  return fresh;
}

int resize_arrays(std::size_t count, std::size_t kept, hs_positions* x, hs_column* cols, int ncols, void* user) {
  auto& state = *static_cast<migrate_state*>(user);
  py::gil_scoped_acquire gil;
  try {
    for (auto& a : state.arrays) a = grown(a, count, kept);
    std::size_t i = 0;
    x->x = state.arrays[i++].mutable_data();
    if (state.split) {
      x->y = state.arrays[i++].mutable_data();
      x->z = state.arrays[i++].mutable_data();
    }
    for (int c = 0; c < ncols; ++c) cols[c].data = state.arrays[i++].mutable_data();
    return 0;
  } catch (const std::exception& e) {  // never across the C interface
    state.failure = e.what();
    return 1;
  }
}

/// Moves the particles of `x` and `arrays` (C-contiguous arrays the caller owns: they are compacted
/// in place) to their owners; returns the arrays holding this rank's particles afterwards.
py::tuple migrate(const grid& g, double3 lo, double3 hi, py::object x, const py::args& arrays, bool keep_order) {
  positions p = positions_of(x, true);
  std::size_t count = p.rows;
  std::vector<hs_column> c;  // migrate takes any number of columns
  for (py::handle h : arrays) c.push_back(column_with_rows(h, count));
  migrate_state state;
  state.split = p.x.y != nullptr;
  if (state.split)
    for (int d = 0; d < 3; ++d) state.arrays.push_back(py::reinterpret_borrow<py::array>(x[py::int_(d)]));
  else
    state.arrays.push_back(py::reinterpret_borrow<py::array>(x));
  for (py::handle h : arrays) state.arrays.push_back(py::reinterpret_borrow<py::array>(h));
  const hs_domain dom = domain_of(lo, hi);
  const hs_status status = [&] {
    py::gil_scoped_release nogil;
    return hs_migrate(g.handle(), &dom, &p.x, static_cast<int>(c.size()), c.data(), &count, p.rows,
                      keep_order ? 1 : 0, resize_arrays, &state);
  }();
  if (status != HS_OK && !state.failure.empty()) throw error("haloshift: migrate: " + state.failure);
  check(status);
  py::tuple out(state.arrays.size());
  for (std::size_t i = 0; i < state.arrays.size(); ++i)
    out[i] = state.arrays[i][py::slice(0, static_cast<py::ssize_t>(count), 1)];
  return out;
}

py::list explain_particles(const grid& g, double3 lo, double3 hi, double3 cutoff, std::size_t count) {
  const hs_domain dom = domain_of(lo, hi);
  hs_prediction out[16];
  int written = 0;
  blocking([&] { return hs_explain_particles(g.handle(), &dom, cutoff.data(), count, out, 16, &written); });
  return prediction_table(out, written < 16 ? written : 16);
}

}  // namespace

void bind_particles(py::module_& m) {
  m.attr("MAX_COLUMNS") = max_columns;
  py::class_<particle_plan>(m, "_ParticlePlan")
      .def(py::init<py::object, const std::string&, double3, double3, double3, py::object,
                    std::optional<std::size_t>>())
      .def_property_readonly("owned", &particle_plan::owned)
      .def_property_readonly("ghosts", &particle_plan::ghosts)
      .def_property_readonly("strategy", &particle_plan::strategy)
      .def("rebuild", &particle_plan::rebuild, py::arg("x"), py::arg("count") = py::none())
      .def("forward_positions", &particle_plan::forward_positions, py::arg("x"))
      .def("forward", &particle_plan::forward)
      .def("reverse", &particle_plan::reverse, py::arg("f"), py::arg("op") = "sum")
      .def("_start_forward_positions", &particle_plan::start_forward_positions, py::arg("x"))
      .def("_start_forward", &particle_plan::start_forward)
      .def("_start_reverse", &particle_plan::start_reverse, py::arg("f"), py::arg("op") = "sum")
      .def("test", &particle_plan::test)
      .def("wait", &particle_plan::wait);
  m.def("_migrate", &migrate, py::arg("grid"), py::arg("lo"), py::arg("hi"), py::arg("x"), py::kw_only(),
        py::arg("keep_order") = true);
  m.def("_explain_particles", &explain_particles);
}

}  // namespace haloshift_python

// SPDX-License-Identifier: BSD-3-Clause
// haloshift._haloshift: errors, arrays' element types, grids, the calibration file.
#include "module.hpp"

#include <cstdint>

namespace haloshift_python {
namespace {
PyObject* error_type = nullptr;  // haloshift.Error, created once with the module
}

void check(hs_status status) {
  if (status != HS_OK) throw error(hs_last_error());
}

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

std::string text(const int3& v) {
  return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + ")";
}

int type_of(const py::array& a, const char* what) {
  // array_t<T>::check_ compares dtypes with PyArray_EquivTypes: byte order included, no allocation.
  if (py::array_t<double, 0>::check_(a)) return HS_DOUBLE;
  if (py::array_t<float, 0>::check_(a)) return HS_FLOAT;
  if (py::array_t<std::int32_t, 0>::check_(a)) return HS_INT32;
  if (py::array_t<std::int64_t, 0>::check_(a)) return HS_INT64;
  throw error(std::string("haloshift: ") + what + " has dtype " + py::str(a.dtype()).cast<std::string>() +
              ": haloshift exchanges float32, float64, int32 and int64 arrays in native byte order, in place "
              "(convert it once, e.g. numpy.ascontiguousarray(a, dtype=numpy.float64), and keep that array)");
}

void require_writeable(const py::array& a, const char* what) {
  if (!a.writeable())
    throw error(std::string("haloshift: ") + what +
                " is read-only (writeable=False): the exchange writes its ghost cells in place");
  const auto address = reinterpret_cast<std::uintptr_t>(a.data());
  if (address % static_cast<std::uintptr_t>(a.itemsize()) != 0)
    throw error(std::string("haloshift: ") + what + " is not aligned to its element size");
}

hs_op op_of(const std::string& op) {
  if (op == "sum") return HS_SUM;
  if (op == "min") return HS_MIN;
  if (op == "max") return HS_MAX;
  throw error("haloshift: op must be \"sum\", \"min\" or \"max\", got \"" + op + "\"");
}

py::list prediction_table(const hs_prediction* out, int count) {
  py::list table;
  for (int i = 0; i < count; ++i)
    table.append(py::dict(py::arg("strategy") = std::string(out[i].strategy),
                          py::arg("team") = py::make_tuple(out[i].team[0], out[i].team[1], out[i].team[2]),
                          py::arg("shared_memory") = out[i].shared_memory != 0,
                          py::arg("seconds") = out[i].seconds));
  return table;
}

grid::grid(long comm, int ndims, int3 dims, int3 periodic, double3 lengths, int first_fastest, int remainder) {
  hs_grid_options options;
  hs_grid_options_init(&options);
  options.ndims = ndims;
  for (int d = 0; d < 3; ++d) {
    options.dims[d] = dims[d];
    options.periodic[d] = periodic[d];
    options.lengths[d] = lengths[d];
  }
  options.first_fastest = first_fastest;
  options.remainder = remainder;
  blocking([&] { return hs_grid_create_f(static_cast<MPI_Fint>(comm), &options, &handle_); });
  check(hs_grid_info(handle_, &ndims_, &rank_, &size_, dims_.data(), coords_.data(), periodic_.data()));
}

grid::~grid() {
  if (!mpi_finalized()) hs_grid_free(&handle_);
}

long grid::comm_f() const {
  MPI_Fint comm = 0;
  check(hs_grid_comm_f(handle_, &comm));
  return static_cast<long>(comm);
}

namespace {
py::tuple first(const int3& v, int n) {
  py::tuple t(n);
  for (int d = 0; d < n; ++d) t[d] = v[d];
  return t;
}
}  // namespace

void bind_grid(py::module_& m) {
  // The names the package accepts, with the C interface's values (hs_grid_options' documented codes).
  m.attr("RANK_ORDERS") = py::dict(py::arg("last_fastest") = 0, py::arg("first_fastest") = 1);
  m.attr("REMAINDERS") = py::dict(py::arg("spread") = 0, py::arg("first") = 1, py::arg("last") = 2);
  py::class_<grid>(m, "_Grid")
      .def(py::init<long, int, int3, int3, double3, int, int>(), py::arg("comm"), py::arg("ndims"),
           py::arg("dims"), py::arg("periodic"), py::arg("lengths"), py::arg("first_fastest"), py::arg("remainder"))
      .def_property_readonly("ndims", &grid::ndims)
      .def_property_readonly("rank", &grid::rank)
      .def_property_readonly("size", &grid::size)
      .def_property_readonly("dims", [](const grid& g) { return first(g.dims(), g.ndims()); })
      .def_property_readonly("coords", [](const grid& g) { return first(g.coords(), g.ndims()); })
      .def_property_readonly("periodic", [](const grid& g) {
        py::tuple t(g.ndims());
        for (int d = 0; d < g.ndims(); ++d) t[d] = py::bool_(g.periodic()[d] != 0);
        return t;
      })
      .def("_comm_f", &grid::comm_f);
}

}  // namespace haloshift_python

PYBIND11_MODULE(_haloshift, m) {
  namespace hp = haloshift_python;
  m.doc() = "haloshift's C interface for Python (use the package haloshift)";
  const pybind11::tuple bases = pybind11::make_tuple(pybind11::handle(PyExc_RuntimeError),
                                                     pybind11::handle(PyExc_ValueError));
  hp::error_type = PyErr_NewException("haloshift.Error", bases.ptr(), nullptr);
  if (hp::error_type == nullptr) throw pybind11::error_already_set();
  m.add_object("Error", pybind11::handle(hp::error_type));
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const hp::error& e) {
      PyErr_SetString(hp::error_type, e.what());
    }
  });
  m.def("version", [] { return std::string(hs_version()); });
  m.def("use_calibration", [](const std::string& path) { hp::check(hs_use_calibration(path.c_str())); },
        pybind11::arg("path"));
  hp::bind_grid(m);
  hp::bind_fields(m);
  hp::bind_particles(m);
}

// SPDX-License-Identifier: BSD-3-Clause
// Field plans over numpy arrays: an array is described to the C interface as it lies in memory
// (hs_field_array: C order is z fastest, Fortran order x fastest, row or plane pitches as padding),
// never copied; anything the description cannot say is refused with haloshift.Error.
#include <vector>

#include "module.hpp"

namespace haloshift_python {
namespace {

using stride3 = std::array<py::ssize_t, 3>;

/// Whether an array of `extent` cells with element strides `stride` is laid out in `order` with
/// some padding after each line (numpy: a dense array, or a slice of one along an outer axis); if
/// so `padding` holds it. Strides of axes of one cell say nothing and are not looked at.
bool fits(const int3& extent, const stride3& stride, int order, int3& padding) {
  static constexpr int z_fastest_axes[3] = {2, 1, 0};
  static constexpr int x_fastest_axes[3] = {0, 1, 2};
  const int* axes = order == HS_Z_FASTEST ? z_fastest_axes : x_fastest_axes;
  padding = {0, 0, 0};
  for (int d = 0; d < 3; ++d)
    if (extent[d] == 0) return true;  // no element: nothing is addressed
  if (extent[axes[0]] > 1 && stride[axes[0]] != 1) return false;
  py::ssize_t pitch = 1;  // the element stride of the previous axis
  for (int i = 1; i < 3; ++i) {
    const int axis = axes[i], inner = axes[i - 1];
    if (extent[axis] == 1) {
      pitch *= extent[inner];
      continue;
    }
    if (stride[axis] <= 0 || stride[axis] % pitch != 0 || stride[axis] / pitch < extent[inner]) return false;
    padding[inner] = static_cast<int>(stride[axis] / pitch - extent[inner]);
    pitch = stride[axis];
  }
  return true;
}

std::string shape_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

std::string strides_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.strides(d));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

/// The C interface's field spec; `cuts` (empty: the even split) must outlive its use.
hs_field_spec make_spec(const int3& global, const int3& ghost_low, const int3& ghost_high, int pattern,
                        std::size_t element_size, const std::vector<std::vector<int>>& cuts) {
  hs_field_spec spec;
  hs_field_spec_init(&spec);
  for (int d = 0; d < 3; ++d) {
    spec.global[d] = global[d];
    spec.ghost_low[d] = ghost_low[d];
    spec.ghost_high[d] = ghost_high[d];
    spec.cuts[d] = d < static_cast<int>(cuts.size()) && !cuts[d].empty() ? cuts[d].data() : nullptr;
  }
  spec.pattern = pattern;
  spec.element_size = element_size;
  return spec;
}

class field_plan {
 public:
  field_plan(py::object grid_object, const std::string& strategy, int3 global, int3 ghost_low, int3 ghost_high,
             int pattern, std::size_t element_size, const std::vector<std::vector<int>>& cuts)
      : grid_(std::move(grid_object)) {
    const hs_field_spec spec = make_spec(global, ghost_low, ghost_high, pattern, element_size, cuts);
    const hs_grid g = grid_.cast<const grid&>().handle();
    ndims_ = grid_.cast<const grid&>().ndims();
    blocking([&] { return hs_field_plan_create(g, strategy.c_str(), &spec, &handle_); });
    check(hs_field_plan_shape(handle_, lo_.data(), interior_.data(), ghost_low_.data(), ghost_high_.data()));
  }
  field_plan(const field_plan&) = delete;
  field_plan& operator=(const field_plan&) = delete;
  ~field_plan() {
    if (!mpi_finalized()) hs_field_plan_free(&handle_);
  }

  py::tuple shape() const {
    auto part = [&](const int3& v) {
      py::tuple t(ndims_);
      for (int d = 0; d < ndims_; ++d) t[d] = v[d];
      return t;
    };
    return py::make_tuple(part(lo_), part(interior_), part(ghost_low_), part(ghost_high_));
  }
  std::string strategy() const { return hs_field_plan_strategy(handle_); }

  void forward(const py::array& a) {
    const hs_field_array array = describe(a);
    blocking([&] { return hs_field_forward(handle_, &array); });
  }
  void reverse(const py::array& a, const std::string& op) {
    const hs_field_array array = describe(a);
    const hs_op how = op_of(op);
    blocking([&] { return hs_field_reverse(handle_, &array, how); });
  }
  void start_forward(const py::array& a) {
    const hs_field_array array = describe(a);
    check(hs_field_start_forward(handle_, &array));
    in_flight_.hold(a);  // alive until the exchange is done
  }
  void start_reverse(const py::array& a, const std::string& op) {
    const hs_field_array array = describe(a);
    check(hs_field_start_reverse(handle_, &array, op_of(op)));
    in_flight_.hold(a);
  }
  bool test() {
    return in_flight_.test([&](int* done) { return hs_field_test(handle_, done); });
  }
  void progress() { check(hs_field_progress(handle_)); }
  void wait() {
    in_flight_.wait([&] { return hs_field_wait(handle_); });
  }

 private:
  hs_field_array describe(const py::array& a) const;

  py::object grid_;  // the plan uses the grid's communicator
  hs_field_plan handle_ = nullptr;
  int ndims_ = 3;
  int3 lo_{}, interior_{}, ghost_low_{}, ghost_high_{};
  in_flight in_flight_;  // the arrays of the exchange in flight
};

hs_field_array field_plan::describe(const py::array& a) const {
  const int type = type_of(a, "the array");
  require_writeable(a, "the array");
  int3 extent{1, 1, 1}, expected{};
  stride3 stride{1, 1, 1};
  const bool rank_ok = a.ndim() >= 1 && a.ndim() <= 3;
  for (int d = 0; d < 3; ++d) {
    expected[d] = ghost_low_[d] + interior_[d] + ghost_high_[d];
    if (!rank_ok || d >= a.ndim()) continue;
    extent[d] = static_cast<int>(a.shape(d));
    // a stride that is no multiple of the element size fits no layout: 0 is refused by fits()
    stride[d] = a.strides(d) % a.itemsize() == 0 ? a.strides(d) / a.itemsize() : 0;
  }
  if (!rank_ok || extent != expected) {
    std::string need = "(";
    for (int d = 0; d < ndims_; ++d) need += (d ? ", " : "") + std::to_string(expected[d]);
    throw error("haloshift: the array has shape " + shape_text(a) + " but the plan needs " + need +
                (ndims_ == 1 ? ",)" : ")") + ": this rank's interior " + text(interior_) + " with " +
                text(ghost_low_) + " ghost layers below and " + text(ghost_high_) +
                " above (plan.empty(dtype) makes one)");
  }
  int3 padding{};
  int order = HS_Z_FASTEST;
  if (!fits(extent, stride, HS_Z_FASTEST, padding)) {
    order = HS_X_FASTEST;
    if (!fits(extent, stride, HS_X_FASTEST, padding))
      throw error("haloshift: the array is not contiguous (strides " + strides_text(a) +
                  " bytes): it must be in C order (z fastest) or Fortran order (x fastest), or a slice of "
                  "such an array along its outer axes (padded rows or planes); numpy.ascontiguousarray copies it");
  }
  hs_field_array array;
  hs_field_array_init(&array, const_cast<void*>(a.data()), static_cast<hs_type>(type));
  array.order = order;
  for (int d = 0; d < 3; ++d) {
    array.ghost_low[d] = ghost_low_[d];
    array.ghost_high[d] = ghost_high_[d];
    array.padding[d] = padding[d];
  }
  return array;
}

py::list explain_field(const grid& g, int3 global, int3 ghost_low, int3 ghost_high, int pattern,
                       std::size_t element_size, const std::vector<std::vector<int>>& cuts) {
  const hs_field_spec spec = make_spec(global, ghost_low, ghost_high, pattern, element_size, cuts);
  hs_prediction out[16];
  int count = 0;
  blocking([&] { return hs_explain_field(g.handle(), &spec, out, 16, &count); });
  return prediction_table(out, count < 16 ? count : 16);
}

}  // namespace

void bind_fields(py::module_& m) {
  m.attr("PATTERNS") = py::dict(py::arg("full") = static_cast<int>(HS_PATTERN_FULL),
                                py::arg("faces") = static_cast<int>(HS_PATTERN_FACES),
                                py::arg("faces_and_edges") = static_cast<int>(HS_PATTERN_FACES_AND_EDGES));
  py::class_<field_plan>(m, "_FieldPlan")
      .def(py::init<py::object, const std::string&, int3, int3, int3, int, std::size_t,
                    const std::vector<std::vector<int>>&>())
      .def("_shape", &field_plan::shape)
      .def_property_readonly("strategy", &field_plan::strategy)
      .def("forward", &field_plan::forward, py::arg("a"), "Fill the ghost cells of `a` from the neighbours.")
      .def("reverse", &field_plan::reverse, py::arg("a"), py::arg("op") = "sum",
           "Combine every ghost cell of `a` onto its owner: op \"sum\", \"min\" or \"max\".")
      .def("_start_forward", &field_plan::start_forward)
      .def("_start_reverse", &field_plan::start_reverse)
      .def("test", &field_plan::test, "Whether the exchange in flight is done (it progresses it).")
      .def("progress", &field_plan::progress, "Post the next rounds of a multi-round exchange in flight.")
      .def("wait", &field_plan::wait, "Wait for the exchange in flight.");
  m.def("_explain_field", &explain_field);
}

}  // namespace haloshift_python

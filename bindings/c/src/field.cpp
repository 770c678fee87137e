// SPDX-License-Identifier: BSD-3-Clause
/// @file field.cpp
/// @brief The C interface's field plans: make_field_plan by name over a field_shape from
/// hs_field_spec, and forward, reverse and split phase on the caller's arrays as field_views.

#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "core.hpp"

namespace hs = haloshift;

namespace haloshift::c_api {
namespace {
template <class T>
using view = field_view<T>;
/// The handles of the exchanges a C field plan can have in flight: forward of each element
/// type, reverse of each element type with each reduction. Kept in the plan, so that the split
/// phase allocates nothing.
template <class T>
using forward_handle = decltype(std::declval<field_plan&>().start_forward(std::declval<const view<T>&>()));
template <class T, class Op>
using reverse_handle = decltype(std::declval<field_plan&>().start_reverse(std::declval<const view<T>&>(), Op{}));
using in_flight = in_flight_with<reverse_handle, forward_handle<float>, forward_handle<double>,
                                 forward_handle<std::int32_t>, forward_handle<std::int64_t>>;
}  // namespace
}  // namespace haloshift::c_api

/// A field plan handle: the C++ plan, its strategy's name as a C string, and the exchange in flight.
struct hs_field_plan_s {
  hs::field_plan plan;
  std::string strategy;
  hs::c_api::in_flight pending;
};

namespace haloshift::c_api {
namespace {
/// The cuts of `spec` as cell_cuts (dims[d] + 1 values where given).
cell_cuts cuts_of(const cartesian_grid& grid, const hs_field_spec& spec, const char* f) {
  cell_cuts cuts;
  for (int d = 0; d < 3; ++d) {
    if (!spec.cuts[d]) continue;
    if (d >= grid.ndims())
      throw error(std::string(f) + ": spec->cuts[" + std::to_string(d) + "] must be NULL: the grid has only " +
                  std::to_string(grid.ndims()) + " dimension(s)");
    cuts[d].assign(spec.cuts[d], spec.cuts[d] + grid.dim(d) + 1);
  }
  return cuts;
}

}  // namespace

/// The shape and options of `spec`, checked on this rank (the caller agrees the outcome).
void read_field_spec(const cartesian_grid& grid, const char* strategy, const hs_field_spec* spec, field_shape& shape,
                     plan_options& options, const char* f) {
  require(strategy, f, "strategy");
  require(spec, f, "spec");
  if (spec->pattern < HS_PATTERN_FULL || spec->pattern > HS_PATTERN_FACES_AND_EDGES)
    throw error(std::string(f) + ": spec->pattern = " + std::to_string(spec->pattern) +
                " is no hs_pattern (HS_PATTERN_FULL 0, HS_PATTERN_FACES 1, HS_PATTERN_FACES_AND_EDGES 2)");
  const offset global{spec->global[0], spec->global[1], spec->global[2]};
  const offset low{spec->ghost_low[0], spec->ghost_low[1], spec->ghost_low[2]};
  const offset high{spec->ghost_high[0], spec->ghost_high[1], spec->ghost_high[2]};
  shape = field_shape(grid.shape(), grid.coords(), global, cuts_of(grid, *spec, f), low, high);
  options.pattern = static_cast<halo_pattern>(spec->pattern);  // the same values (core.hpp)
}

namespace {

hs_field_plan_s& plan_of(hs_field_plan p, const char* function) {
  require(p, function, "plan");
  return *p;
}

/// The view of the caller's array `a` for the plan's shape: ghost widths -1 are the plan's.
template <class T>
view<T> view_of(const field_plan& plan, const hs_field_array& a, const char* function) {
  const field_shape& s = plan.shape();
  if (a.order != HS_X_FASTEST && a.order != HS_Z_FASTEST)
    throw error(std::string(function) + ": array->order = " + std::to_string(a.order) +
                " is no hs_order (HS_X_FASTEST 0, HS_Z_FASTEST 1)");
  offset low, high, padding;
  for (int d = 0; d < 3; ++d) {
    low[d] = a.ghost_low[d] == -1 ? s.ghost[d] : a.ghost_low[d];
    high[d] = a.ghost_high[d] == -1 ? s.ghost_high[d] : a.ghost_high[d];
    padding[d] = a.padding[d];
  }
  return make_field_view(static_cast<T*>(a.data), s.interior, low, high, static_cast<storage_order>(a.order), padding);
}

/// Calls `f(plan, view)` with the view of `array` in its element type.
template <class F>
void with_view(hs_field_plan p, const hs_field_array* array, const char* function, F&& f) {
  hs_field_plan_s& plan = plan_of(p, function);
  require(array, function, "array");
  with_type(array->type, function, [&](auto v) { f(plan, view_of<decltype(v)>(plan.plan, *array, function)); });
}

/// Raises unless the plan is free for a new exchange (one in flight per plan).
void check_free(const hs_field_plan_s& plan, const char* function) { check_no_exchange(plan.pending, function, "hs_field_wait"); }

}  // namespace
}  // namespace haloshift::c_api

using namespace haloshift::c_api;

extern "C" {

void hs_field_spec_init(hs_field_spec* spec) {
  if (!spec) return;
  *spec = hs_field_spec{};
  for (int d = 0; d < 3; ++d) spec->global[d] = 1;
  spec->pattern = HS_PATTERN_FULL;
}

hs_status hs_field_plan_create(hs_grid grid, const char* strategy, const hs_field_spec* spec, hs_field_plan* plan) {
  return guarded("hs_field_plan_create", [&] {
    const hs::cartesian_grid& g = grid_of(grid, "hs_field_plan_create");
    hs::field_shape shape;
    hs::plan_options options;
    hs::mpi::agree(g.comm(), [&] {
      require(plan, "hs_field_plan_create", "plan");
      *plan = nullptr;
      read_field_spec(g, strategy, spec, shape, options, "hs_field_plan_create");
    });
    install_auto();
    const std::size_t bytes = spec->element_size ? spec->element_size : sizeof(double);
    auto made = std::make_unique<hs_field_plan_s>();
    made->plan = hs::make_field_plan(g, strategy, shape, options, bytes);
    made->strategy = made->plan.strategy();
    *plan = made.release();
  });
}

hs_status hs_field_plan_free(hs_field_plan* plan) {
  return guarded("hs_field_plan_free", [&] {
    require(plan, "hs_field_plan_free", "plan (the address of the handle)");
    std::unique_ptr<hs_field_plan_s> gone(*plan);
    *plan = nullptr;
    if (gone) wait_pending(gone->pending);
  });
}

hs_status hs_field_plan_shape(hs_field_plan plan, int lo[3], int interior[3], int ghost_low[3], int ghost_high[3]) {
  return guarded("hs_field_plan_shape", [&] {
    const hs::field_shape& s = plan_of(plan, "hs_field_plan_shape").plan.shape();
    for (int d = 0; d < 3; ++d) {
      if (lo) lo[d] = s.lo[d];
      if (interior) interior[d] = s.interior[d];
      if (ghost_low) ghost_low[d] = s.ghost[d];
      if (ghost_high) ghost_high[d] = s.ghost_high[d];
    }
  });
}

const char* hs_field_plan_strategy(hs_field_plan plan) {
  if (!plan) {
    fail(HS_ERR_NULL, "hs_field_plan_strategy: plan is NULL");
    return "";
  }
  return plan->strategy.c_str();
}

void hs_field_array_init(hs_field_array* array, void* data, hs_type type) {
  if (!array) return;
  *array = hs_field_array{};
  array->data = data;
  array->type = type;
  array->order = HS_X_FASTEST;
  for (int d = 0; d < 3; ++d) array->ghost_low[d] = array->ghost_high[d] = -1;
}

hs_status hs_field_forward(hs_field_plan plan, const hs_field_array* array) {
  return guarded("hs_field_forward", [&] {
    with_view(plan, array, "hs_field_forward", [](hs_field_plan_s& p, const auto& v) { p.plan.forward(v); });
  });
}

hs_status hs_field_reverse(hs_field_plan plan, const hs_field_array* array, hs_op op) {
  return guarded("hs_field_reverse", [&] {
    with_view(plan, array, "hs_field_reverse", [&](hs_field_plan_s& p, const auto& v) {
      with_op(op, "hs_field_reverse", [&](auto o) { p.plan.reverse(v, o); });
    });
  });
}

hs_status hs_field_start_forward(hs_field_plan plan, const hs_field_array* array) {
  return guarded("hs_field_start_forward", [&] {
    with_view(plan, array, "hs_field_start_forward", [](hs_field_plan_s& p, const auto& v) {
      check_free(p, "hs_field_start_forward");
      using T = std::remove_pointer_t<decltype(v.data)>;
      p.pending.emplace<forward_handle<T>>(p.plan.start_forward(v));
    });
  });
}

hs_status hs_field_start_reverse(hs_field_plan plan, const hs_field_array* array, hs_op op) {
  return guarded("hs_field_start_reverse", [&] {
    with_view(plan, array, "hs_field_start_reverse", [&](hs_field_plan_s& p, const auto& v) {
      check_free(p, "hs_field_start_reverse");
      with_op(op, "hs_field_start_reverse", [&](auto o) {
        using T = std::remove_pointer_t<decltype(v.data)>;
        p.pending.emplace<reverse_handle<T, decltype(o)>>(p.plan.start_reverse(v, o));
      });
    });
  });
}

hs_status hs_field_test(hs_field_plan plan, int* done) {
  return guarded("hs_field_test", [&] {
    hs_field_plan_s& p = plan_of(plan, "hs_field_test");
    require(done, "hs_field_test", "done");
    *done = test_pending(p.pending) ? 1 : 0;
  });
}

hs_status hs_field_progress(hs_field_plan plan) {
  return guarded("hs_field_progress", [&] {
    std::visit([](auto& h) { if constexpr (requires { h.progress(); }) h.progress(); },
               plan_of(plan, "hs_field_progress").pending);
  });
}

hs_status hs_field_wait(hs_field_plan plan) {
  return guarded("hs_field_wait", [&] {
    wait_pending(plan_of(plan, "hs_field_wait").pending);
  });
}

}  // extern "C"

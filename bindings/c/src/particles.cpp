// SPDX-License-Identifier: BSD-3-Clause
/// @file particles.cpp
/// @brief The C interface's particle plans: make_particle_plan by name over the caller's
/// positions, rebuild, forward_positions with companion columns, forward of columns, reverse.

#include <memory>
#include <string>
#include <variant>

#include "particles.hpp"

namespace hs = haloshift;

namespace haloshift::c_api {
namespace {
/// A companion column as the exchange moves it: 32-bit units (every hs_type is 4 or 8 bytes),
/// copied through memcpy, so one compiled path serves every element type; unused slots have width 0.
using unit_column = strided_positions<std::uint32_t>;
/// `N` column slots, those past the call's columns left out (width 0). A call takes the fewest slots
/// compiled that hold its columns (few_slots or HS_MAX_COLUMNS; positions alone none): an empty slot
/// costs a test per element copied to this rank itself, and every count its own instantiation.
template <std::size_t N>
using columns_set = std::array<unit_column, N>;
inline constexpr std::size_t few_slots = 2;
using columns_api = detail::particle_columns;

/// Calls `f(std::integral_constant<std::size_t, N>{})` with the slots for `n` columns.
template <class Fn>
void with_slots(int n, Fn&& f) {
  if (n == 0) return f(std::integral_constant<std::size_t, 0>{});
  if (n <= static_cast<int>(few_slots)) return f(std::integral_constant<std::size_t, few_slots>{});
  f(std::integral_constant<std::size_t, HS_MAX_COLUMNS>{});
}

/// forward_positions of `pc` with the columns of `set`, and forward of the columns alone.
template <class F, std::size_t N>
auto start_with_positions(particle_plan& p, const detail::position_columns<F>& pc, const columns_set<N>& set) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return columns_api::start_forward(p, pc, set[I]...);
  }(std::make_index_sequence<N>{});
}
template <std::size_t N>
auto start_alone(particle_plan& p, const columns_set<N>& set) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return columns_api::start_forward_columns(p, set[I]...);
  }(std::make_index_sequence<N>{});
}

template <class F, std::size_t N>
using positions_handle = decltype(start_with_positions(std::declval<particle_plan&>(),
                                                       std::declval<const detail::position_columns<F>&>(),
                                                       std::declval<const columns_set<N>&>()));
template <std::size_t N>
using columns_handle = decltype(start_alone(std::declval<particle_plan&>(), std::declval<const columns_set<N>&>()));
template <class T, class Op>
using reverse_handle = decltype(columns_api::start_reverse_column(std::declval<particle_plan&>(),
                                                                  std::declval<const strided_positions<T>&>(), Op{}));
/// The exchanges a C particle plan can have in flight.
using in_flight = in_flight_with<reverse_handle, positions_handle<float, 0>, positions_handle<float, few_slots>,
                                 positions_handle<float, HS_MAX_COLUMNS>, positions_handle<double, 0>,
                                 positions_handle<double, few_slots>, positions_handle<double, HS_MAX_COLUMNS>,
                                 columns_handle<few_slots>, columns_handle<HS_MAX_COLUMNS>>;
}  // namespace
}  // namespace haloshift::c_api

/// A particle plan handle: the C++ plan, its strategy's name as a C string, the exchange in flight.
struct hs_particle_plan_s {
  hs::particle_plan plan;
  std::string strategy;
  hs::c_api::in_flight pending;
  /// The grid's communicator, shared with the plan (it outlives the grid's handle): rebuild agrees on it.
  std::shared_ptr<hs::detail::grid_context> context;
};

namespace haloshift::c_api {

void check_positions(const hs_positions* x, std::size_t count, const char* function) {
  require(x, function, "x (the positions)");
  with_float(x->type, function, [](auto) {});
  // Checked on every exchange: texts are built on failure only (a forward allocates nothing).
  const auto f = [function] { return std::string(function); };
  if (x->y || x->z) {
    if (!x->y || !x->z) throw error(f() + ": positions x->y and x->z must both be given (split) or both be NULL");
  } else if (x->stride != 0 && x->stride < 3) {
    throw error(f() + ": interleaved positions need stride >= 3, got " + std::to_string(x->stride));
  }
  if (count > 0) require(x->x, function, "x->x");
}

void check_column(const hs_column& c, int k, std::size_t count, const char* function) {
  const auto at = [&] { return std::string(function) + ": columns[" + std::to_string(k) + "]"; };
  if (!c.data && count > 0) throw error(at() + ".data is NULL");
  if (c.type < HS_FLOAT || c.type > HS_INT64) (void)type_size(c.type, (at() + ".type").c_str());
  if (c.components < 1) throw error(at() + ".components must be >= 1, got " + std::to_string(c.components));
  if (c.stride != 0 && c.stride < static_cast<std::size_t>(c.components))
    throw error(at() + ".stride = " + std::to_string(c.stride) + " is below its components " +
                std::to_string(c.components));
}

void check_columns(const hs_column* columns, int n, std::size_t count, const char* function) {
  if (n < 0 || n > HS_MAX_COLUMNS)
    throw error(std::string(function) + ": ncolumns must be 0 to HS_MAX_COLUMNS (" + std::to_string(HS_MAX_COLUMNS) +
                "), got " + std::to_string(n));
  if (n > 0) require(columns, function, "columns");
  for (int k = 0; k < n; ++k) check_column(columns[k], k, count, function);
}

namespace {

hs_particle_plan_s& plan_of(hs_particle_plan p, const char* function) {
  require(p, function, "plan");
  return *p;
}

/// A column as 32-bit units over `count` particles.
unit_column units_of(const hs_column& c, std::size_t count) {
  const std::size_t per = type_size(c.type, "column") / 4, width = static_cast<std::size_t>(c.components);
  return unit_column(static_cast<std::uint32_t*>(c.data), count, (c.stride ? c.stride : width) * per,
                     static_cast<int>(width * per));
}
/// The columns of a call, the unused slots left out (width 0).
template <std::size_t N>
columns_set<N> columns_of(const hs_column* columns, int n, std::size_t count) {
  const unit_column none(static_cast<std::uint32_t*>(nullptr), count, 1, 0);
  columns_set<N> set = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return columns_set<N>{((void)I, none)...};
  }(std::make_index_sequence<N>{});
  for (int k = 0; k < n; ++k) set[static_cast<std::size_t>(k)] = units_of(columns[k], count);
  return set;
}

/// The positions as the exchange writes them, `count` particles of `F`.
template <class F>
detail::position_columns<F> position_columns_of(const hs_positions& x, std::size_t count) {
  detail::position_columns<F> pc{.size = count, .writable = true};
  const std::size_t stride = stride_of(x) * sizeof(F);
  if (!split(x)) {
    pc.c[0] = {static_cast<std::byte*>(x.x), stride, 3};
    return pc;
  }
  pc.first = {0, 1, 2};
  const std::array<void*, 3> p{x.x, x.y, x.z};
  for (std::size_t d = 0; d < 3; ++d) pc.c[d] = {static_cast<std::byte*>(p[d]), stride, 1};
  return pc;
}

void check_free(const hs_particle_plan_s& plan, const char* function) {
  check_no_exchange(plan.pending, function, "hs_particle_wait");
}

/// Starts forward_positions of `x` with `n` columns into the plan's slot.
void start_positions(hs_particle_plan p, const hs_positions* x, int n, const hs_column* columns, const char* f) {
  hs_particle_plan_s& plan = plan_of(p, f);
  check_free(plan, f);
  check_positions(x, plan.plan.size(), f);
  check_columns(columns, n, plan.plan.size(), f);
  with_float(x->type, f, [&](auto v) {
    using F = decltype(v);
    const detail::position_columns<F> pc = position_columns_of<F>(*x, plan.plan.size());
    with_slots(n, [&](auto slots) {
      const auto set = columns_of<slots()>(columns, n, plan.plan.size());
      plan.pending.emplace<positions_handle<F, slots()>>(start_with_positions(plan.plan, pc, set));
    });
  });
}

void start_columns(hs_particle_plan p, int n, const hs_column* columns, const char* f) {
  hs_particle_plan_s& plan = plan_of(p, f);
  check_free(plan, f);
  if (n < 1) throw error(std::string(f) + ": ncolumns must be >= 1, got " + std::to_string(n));
  check_columns(columns, n, plan.plan.size(), f);
  with_slots(n, [&](auto slots) {
    if constexpr (slots() > 0) {
      const auto set = columns_of<slots()>(columns, n, plan.plan.size());
      plan.pending.emplace<columns_handle<slots()>>(start_alone(plan.plan, set));
    }
  });
}

void start_reverse(hs_particle_plan p, const hs_column* column, hs_op op, const char* f) {
  hs_particle_plan_s& plan = plan_of(p, f);
  check_free(plan, f);
  require(column, f, "column");
  check_column(*column, 0, plan.plan.size(), f);
  with_type(column->type, f, [&](auto v) {
    using T = decltype(v);
    const std::size_t width = static_cast<std::size_t>(column->components);
    const strided_positions<T> c(static_cast<T*>(column->data), plan.plan.size(), column->stride ? column->stride : width,
                                 column->components);
    with_op(op, f, [&](auto o) {
      plan.pending.emplace<reverse_handle<T, decltype(o)>>(columns_api::start_reverse_column(plan.plan, c, o));
    });
  });
}

void wait(hs_particle_plan_s& plan) { wait_pending(plan.pending); }

/// The plan of `strategy` (collective; the C arguments checked on every rank together).
particle_plan make_plan(const cartesian_grid& g, const char* strategy, const hs_domain* domain, const double* cutoff,
                        const hs_positions* x, std::size_t count) {
  const char* f = "hs_particle_plan_create";
  haloshift::domain dom;
  mpi::agree(g.comm(), [&] {
    require(strategy, f, "strategy");
    dom = read_domain(domain, f);
    require(cutoff, f, "cutoff");
    check_positions(x, count, f);
  });
  install_auto();
  const position cut{cutoff[0], cutoff[1], cutoff[2]};
  return with_float(x->type, f, [&](auto v) {
    return make_particle_plan(g, strategy, dom, cut, source_of<decltype(v)>(*x, count));
  });
}

}  // namespace
}  // namespace haloshift::c_api

using namespace haloshift::c_api;

extern "C" {

hs_status hs_particle_plan_create(hs_grid grid, const char* strategy, const hs_domain* domain, const double cutoff[3],
                                  const hs_positions* x, size_t count, hs_particle_plan* plan) {
  return guarded("hs_particle_plan_create", [&] {
    const hs::cartesian_grid& g = grid_of(grid, "hs_particle_plan_create");
    hs::mpi::agree(g.comm(), [&] {
      require(plan, "hs_particle_plan_create", "plan");
      *plan = nullptr;
    });
    auto made = std::make_unique<hs_particle_plan_s>(hs_particle_plan_s{make_plan(g, strategy, domain, cutoff, x, count), {}, {}, g.context()});
    made->strategy = made->plan.strategy();
    *plan = made.release();
  });
}

hs_status hs_particle_plan_rebuild(hs_particle_plan plan, const hs_positions* x, size_t count) {
  const char* f = "hs_particle_plan_rebuild";
  return guarded(f, [&] {
    hs_particle_plan_s& p = plan_of(plan, f);
    hs::mpi::agree(p.context->comm.get(), [&] { check_positions(x, count, f); });
    with_float(x->type, f, [&](auto v) { p.plan.rebuild(source_of<decltype(v)>(*x, count)); });
  });
}

hs_status hs_particle_plan_free(hs_particle_plan* plan) {
  return guarded("hs_particle_plan_free", [&] {
    require(plan, "hs_particle_plan_free", "plan (the address of the handle)");
    std::unique_ptr<hs_particle_plan_s> gone(*plan);
    *plan = nullptr;
    if (gone) wait(*gone);
  });
}

hs_status hs_particle_plan_sizes(hs_particle_plan plan, size_t* owned, size_t* ghosts) {
  return guarded("hs_particle_plan_sizes", [&] {
    const hs::particle_plan& p = plan_of(plan, "hs_particle_plan_sizes").plan;
    if (owned) *owned = p.owned();
    if (ghosts) *ghosts = p.ghosts();
  });
}

const char* hs_particle_plan_strategy(hs_particle_plan plan) {
  if (!plan) {
    fail(HS_ERR_NULL, "hs_particle_plan_strategy: plan is NULL");
    return "";
  }
  return plan->strategy.c_str();
}

hs_status hs_particle_start_forward_positions(hs_particle_plan plan, const hs_positions* x, int ncolumns,
                                              const hs_column* columns) {
  const char* f = "hs_particle_start_forward_positions";
  return guarded(f, [&] { start_positions(plan, x, ncolumns, columns, f); });
}

hs_status hs_particle_forward_positions(hs_particle_plan plan, const hs_positions* x, int ncolumns,
                                        const hs_column* columns) {
  const char* f = "hs_particle_forward_positions";
  return guarded(f, [&] {
    start_positions(plan, x, ncolumns, columns, f);
    wait(*plan);
  });
}

hs_status hs_particle_start_forward(hs_particle_plan plan, int ncolumns, const hs_column* columns) {
  const char* f = "hs_particle_start_forward";
  return guarded(f, [&] { start_columns(plan, ncolumns, columns, f); });
}

hs_status hs_particle_forward(hs_particle_plan plan, int ncolumns, const hs_column* columns) {
  const char* f = "hs_particle_forward";
  return guarded(f, [&] {
    start_columns(plan, ncolumns, columns, f);
    wait(*plan);
  });
}

hs_status hs_particle_start_reverse(hs_particle_plan plan, const hs_column* column, hs_op op) {
  const char* f = "hs_particle_start_reverse";
  return guarded(f, [&] { start_reverse(plan, column, op, f); });
}

hs_status hs_particle_reverse(hs_particle_plan plan, const hs_column* column, hs_op op) {
  const char* f = "hs_particle_reverse";
  return guarded(f, [&] {
    start_reverse(plan, column, op, f);
    wait(*plan);
  });
}

hs_status hs_particle_test(hs_particle_plan plan, int* done) {
  return guarded("hs_particle_test", [&] {
    hs_particle_plan_s& p = plan_of(plan, "hs_particle_test");
    require(done, "hs_particle_test", "done");
    *done = test_pending(p.pending) ? 1 : 0;
  });
}

hs_status hs_particle_wait(hs_particle_plan plan) {
  return guarded("hs_particle_wait", [&] { wait(plan_of(plan, "hs_particle_wait")); });
}

}  // extern "C"

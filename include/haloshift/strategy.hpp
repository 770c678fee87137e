// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file strategy.hpp
/// @brief What a halo-exchange strategy is: a named schedule generator.

#include <concepts>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "detail/hash.hpp"
#include "grid/grid_shape.hpp"
#include "grid/neighborhood.hpp"
#include "schedule/schedule.hpp"

namespace haloshift {

/// Tuning parameters some strategies read; the others ignore them.
struct strategy_parameters {
  /// TeamShift's team size per dimension; 0 picks one (see TeamShift).
  offset team{0, 0, 0};
  /// Per grid rank, its node (detail::node_layout::node_of), for node-aware
  /// schedules; empty unless the plan asked for the nodes.
  std::shared_ptr<const std::vector<int>> node_of{};
};

/// A strategy is a tag type with a `name` and a static `make_schedule(grid,
/// range)` (or `make_schedule(grid, range, parameters)`) returning the
/// schedule every rank follows. The executor, the validation, the cost model
/// and the tests all work from that schedule, so a new strategy is nothing but
/// a new schedule (see examples/custom_strategy).
template <class S>
concept strategy = requires(const grid_shape& g, const range& r, const strategy_parameters& p) {
  { S::name } -> std::convertible_to<std::string_view>;
  requires(requires {
            { S::make_schedule(g, r) } -> std::same_as<schedule>;
          } || requires {
            { S::make_schedule(g, r, p) } -> std::same_as<schedule>;
          });
};

namespace detail {
/// The schedule of strategy `S` for a grid, range and parameters, as plans run
/// it and the model prices it: each transfer in the earliest round its blocks
/// allow (earliest_rounds).
template <strategy S>
schedule schedule_of(const grid_shape& g, const range& r, const strategy_parameters& p = {}) {
  if constexpr (requires { S::make_schedule(g, r, p); })
    return earliest_rounds(S::make_schedule(g, r, p));
  else
    return earliest_rounds(S::make_schedule(g, r));
}

/// FNV-1a of the strategy name: compared across ranks when a plan is built.
constexpr std::int64_t name_hash(std::string_view name) noexcept {
  return static_cast<std::int64_t>(fnv1a_of(name));
}
}  // namespace detail

}  // namespace haloshift

#pragma once
/// @file strategy.hpp
/// @brief What a halo-exchange strategy is: a named schedule generator.

#include <concepts>
#include <cstdint>
#include <string_view>

#include "grid/grid_shape.hpp"
#include "grid/neighborhood.hpp"
#include "schedule/schedule.hpp"

namespace haloshift {

/// A strategy is a tag type with a `name` and a static `make_schedule(grid,
/// range)` returning the schedule every rank follows. The executor, the
/// validation, the cost model and the tests all work from that schedule, so
/// a new strategy is nothing but a new schedule (see examples/custom_strategy).
template <class S>
concept strategy = requires(const grid_shape& g, const range& r) {
  { S::name } -> std::convertible_to<std::string_view>;
  { S::make_schedule(g, r) } -> std::same_as<schedule>;
};

namespace detail {
/// FNV-1a of the strategy name: compared across ranks when a plan is built.
constexpr std::int64_t name_hash(std::string_view name) noexcept {
  std::uint64_t h = 1469598103934665603ull;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return static_cast<std::int64_t>(h >> 1);
}
}  // namespace detail

}  // namespace haloshift

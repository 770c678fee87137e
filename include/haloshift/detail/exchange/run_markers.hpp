// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file run_markers.hpp
/// @brief The marker types of exchange_run's template arguments: what a
/// forward pass does with arrivals, and a run without a collective engine.

#include <cstddef>

#include "program.hpp"

namespace haloshift::detail {

/// The operation of a forward pass: arrivals are stored, not combined.
struct store_arrivals {};

/// Marks a run without a neighbourhood-collective engine.
struct point_to_point {
  std::size_t staging_bytes(const program&, std::size_t) const noexcept { return 0; }
  void forget_requests() noexcept {}
};
}  // namespace haloshift::detail

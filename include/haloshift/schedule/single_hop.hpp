// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file single_hop.hpp
/// @brief SingleHop: one round, a direct message to every partner.

#include <string_view>

#include "../detail/compiled.hpp"
#include "../detail/schedule/colouring.hpp"
#include "../grid/grid_shape.hpp"
#include "../grid/neighborhood.hpp"
#include "schedule.hpp"

namespace haloshift {

/// SingleHop: every rank sends its block straight to every rank that wants it
/// ((2k+1)^3 - 1 messages in 3D, 26 for k = 1), all in one round: no
/// dependency chain, the most messages. The rank at `-o` wants my block at
/// its offset `o`, so that transfer goes along `-o`. Transfers are ordered
/// by the dimension that colours them in rendezvous mode (detail::order_by_colour).
struct SingleHop {
  /// The strategy's name (make_plan(grid, "SingleHop", ...), the registry, explain()).
  static constexpr std::string_view name = "SingleHop";

  /// One round of one transfer per offset of `r`.
  HALOSHIFT_BUILDER static schedule make_schedule(const grid_shape& grid, const range& r);
};

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER schedule SingleHop::make_schedule(const grid_shape& grid, const range& r) {
  schedule_round only;
  for (const offset& o : offsets(r)) only.transfers.push_back({-o, {zero_offset}});
  detail::order_by_colour(grid, only.transfers);
  return {{only}};
}
#endif

}  // namespace haloshift

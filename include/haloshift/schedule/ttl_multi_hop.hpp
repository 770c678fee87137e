// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file ttl_multi_hop.hpp
/// @brief TtlMultiHop: NAStJA's store-and-forward over the direct neighbours.

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "../detail/compiled.hpp"
#include "../detail/schedule/colouring.hpp"
#include "../detail/schedule/ttl_forwarding.hpp"
#include "../grid/grid_shape.hpp"
#include "../grid/neighborhood.hpp"
#include "../grid/offset.hpp"
#include "schedule.hpp"

namespace haloshift {

/// TtlMultiHop (NAStJA local multi-hop network): messages go only to the
/// 26 (3D), 8 (2D) or 2 (1D) direct neighbours. Round 1 sends the own block
/// to all of them; round `h` forwards each block that arrived in round `h-1`
/// along every direction the TTL rule allows (ttl::forwards), until `k`
/// rounds have carried every block `k` boxes. Each block reaches each holder
/// exactly once. A round's transfers are ordered by the dimension that
/// colours them in rendezvous mode (detail::order_by_colour).
struct TtlMultiHop {
  /// The strategy's name (make_plan(grid, "TtlMultiHop", ...), the registry, explain()).
  static constexpr std::string_view name = "TtlMultiHop";

  /// `max(k)` rounds over the direct neighbours of `grid`.
  HALOSHIFT_BUILDER static schedule make_schedule(const grid_shape& grid, const range& r);
};

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER schedule TtlMultiHop::make_schedule(const grid_shape& grid, const range& r) {
  schedule out;
  const int rounds = std::max({r.k[0], r.k[1], r.k[2]});
  const std::vector<offset> all = offsets(r);
  auto chebyshev = [](const offset& o) { return std::max({std::abs(o[0]), std::abs(o[1]), std::abs(o[2])}); };
  for (int h = 1; h <= rounds; ++h) {
    schedule_round step;
    for (const offset& w : detail::ttl::neighbor_directions(grid.ndims())) {
      transfer t{w, {}};
      if (h == 1) {
        if (detail::contains(r, -w)) t.blocks.push_back(zero_offset);
      } else {
        for (const offset& o : all)
          if (chebyshev(o) == h - 1 && detail::ttl::forwards(detail::ttl::last_hop(o, h - 1), w) &&
              detail::contains(r, o - w))
            t.blocks.push_back(o);
      }
      if (!t.blocks.empty()) step.transfers.push_back(std::move(t));
    }
    detail::order_by_colour(grid, step.transfers);
    out.rounds.push_back(std::move(step));
  }
  return out;
}
#endif

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file ttl_forwarding.hpp
/// @brief NAStJA's TTL multi-hop forwarding rule (msn-global-network, Fig. 8),
/// shared by the TtlMultiHop strategy and the local exchange network.

#include <cstdlib>
#include <vector>

#include "../../grid/offset.hpp"

/// NAStJA's TTL forwarding rule over the direct neighbours of a grid.
namespace haloshift::detail::ttl {

/// The direct neighbours: every `w != 0` with components in {-1, 0, 1} along
/// the first `ndims` dimensions (26 in 3D, 8 in 2D, 2 in 1D), canonical order.
inline std::vector<offset> neighbor_directions(int ndims) {
  std::vector<offset> out;
  const int hz = ndims > 2 ? 1 : 0, hy = ndims > 1 ? 1 : 0;
  for (int z = -hz; z <= hz; ++z)
    for (int y = -hy; y <= hy; ++y)
      for (int x = -1; x <= 1; ++x)
        if (x || y || z) out.push_back({x, y, z});
  return out;
}

/// A block that arrived travelling along `v` goes on along `w` iff `w != 0`
/// and every `w_i` is 0 or `v_i`: faces forward to 1 direction, edges to 3,
/// corners to 7. Each block so reaches each box at Chebyshev distance `h`
/// exactly once, after `h` hops, along the path whose hop `j` moves along
/// every dimension whose distance is still at least `j`.
inline bool forwards(const offset& v, const offset& w) {
  bool any = false;
  for (int i = 0; i < max_dims; ++i) {
    if (w[i] != 0 && w[i] != v[i]) return false;
    any = any || w[i] != 0;
  }
  return any;
}

/// The direction of the last hop of a block seen at offset `o` by its
/// holder `hops` hops after it left its owner (the holder is at `-o` from the
/// owner; dimensions still moving at hop `hops` are those with |o_i| = hops).
inline offset last_hop(const offset& o, int hops) {
  offset v{0, 0, 0};
  for (int i = 0; i < max_dims; ++i)
    if (std::abs(o[i]) == hops) v[i] = o[i] > 0 ? -1 : 1;
  return v;
}

}  // namespace haloshift::detail::ttl

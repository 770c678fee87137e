// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file msn_distances.hpp
/// @brief Hop distances in a Manhattan Street Network by breadth-first
/// search: one vertex's eccentricity, strong connectivity, the exact diameter.

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "../error.hpp"
#include "msn_topology.hpp"

namespace haloshift {

namespace detail {
/// Hops from `source` to every vertex, following edges forwards (or
/// backwards: distances *to* `source`); -1 where unreachable. O(P n) time,
/// edges computed on the fly, so a rank of a large job can afford it.
inline std::vector<int> msn_hops(const msn_topology& net, int source, bool backwards = false) {
  std::vector<int> hops(static_cast<std::size_t>(net.size()), -1), queue;
  queue.reserve(hops.size());
  hops[static_cast<std::size_t>(source)] = 0;
  queue.push_back(source);
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const int u = queue[head];
    for (int d = 0; d < net.degree(); ++d) {
      const int w = backwards ? net.predecessor(u, d) : net.successor(u, d);
      if (hops[static_cast<std::size_t>(w)] < 0) {
        hops[static_cast<std::size_t>(w)] = hops[static_cast<std::size_t>(u)] + 1;
        queue.push_back(w);
      }
    }
  }
  return hops;
}

/// Largest number of hops from `source` to any vertex. Throws if some vertex
/// cannot be reached (which would be a bug of the construction).
inline int msn_eccentricity(const msn_topology& net, int source) {
  int far = 0;
  for (int h : detail::msn_hops(net, source)) {
    if (h < 0) throw error("msn: vertex " + std::to_string(source) + " does not reach every vertex");
    far = std::max(far, h);
  }
  return far;
}

/// Every vertex reaches every other: all reachable from vertex 0 forwards and backwards.
inline bool msn_strongly_connected(const msn_topology& net) {
  for (bool backwards : {false, true}) {
    const std::vector<int> hops = detail::msn_hops(net, 0, backwards);
    if (std::find(hops.begin(), hops.end(), -1) != hops.end()) return false;
  }
  return true;
}

/// The exact diameter: the largest eccentricity over all sources. Breadth-first
/// searches from 256 sources at once, one bit per source, pulling frontiers
/// over in-edges: O(P^2 n d / 256) word operations and O(P n) memory (about a
/// second for P = 10^4 at n = 2; too slow for millions of vertices, where one
/// rank per source with msn_eccentricity and a max-reduction is the way).
inline int msn_diameter(const msn_topology& net) {
  constexpr int words = 4, lanes = 64 * words;
  using bits = std::array<std::uint64_t, words>;
  const std::size_t p = static_cast<std::size_t>(net.size()), n = static_cast<std::size_t>(net.degree());
  std::vector<int> in(p * n);
  for (std::size_t v = 0; v < p; ++v)
    for (std::size_t d = 0; d < n; ++d) in[v * n + d] = net.predecessor(static_cast<int>(v), static_cast<int>(d));
  std::vector<bits> seen(p), frontier(p), next(p);
  int diameter = 0;
  for (std::size_t first = 0; first < p; first += lanes) {
    const std::size_t count = std::min<std::size_t>(lanes, p - first);
    std::fill(seen.begin(), seen.end(), bits{});
    std::fill(frontier.begin(), frontier.end(), bits{});
    for (std::size_t k = 0; k < count; ++k) {
      seen[first + k][k / 64] |= std::uint64_t{1} << (k % 64);
      frontier[first + k] = seen[first + k];
    }
    // A vertex reached from every source of the batch can learn nothing more: skip it. In the last
    // levels most vertices are, which halves the work.
    bits full{};
    for (std::size_t k = 0; k < count; ++k) full[k / 64] |= std::uint64_t{1} << (k % 64);
    int level = 0;
    for (bool grew = true; grew;) {
      grew = false;
      for (std::size_t w = 0; w < p; ++w) {
        if (seen[w] == full) {
          next[w] = bits{};
          continue;
        }
        bits arriving{};
        for (std::size_t d = 0; d < n; ++d) {
          const bits& f = frontier[static_cast<std::size_t>(in[w * n + d])];
          for (int q = 0; q < words; ++q) arriving[q] |= f[q];
        }
        for (int q = 0; q < words; ++q) {
          arriving[q] &= ~seen[w][q];
          seen[w][q] |= arriving[q];
          grew = grew || arriving[q] != 0;
        }
        next[w] = arriving;
      }
      if (grew) ++level;
      frontier.swap(next);
    }
    // Every vertex must have been reached from every source of the batch.
    for (std::size_t w = 0; w < p; ++w)
      if (seen[w] != full) throw error("msn: vertex " + std::to_string(w) + " is not reached from every vertex");
    diameter = std::max(diameter, level);
  }
  return diameter;
}
}  // namespace detail

}  // namespace haloshift

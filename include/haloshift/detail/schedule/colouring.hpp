// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file colouring.hpp
/// @brief The rendezvous colouring: which end of a synchronous transfer goes
/// first, and the transfer order that keeps the colourings apart.

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <utility>
#include <vector>

#include "../arithmetic.hpp"
#include "../../grid/grid_shape.hpp"
#include "../../schedule/schedule.hpp"

namespace haloshift::detail {

/// The inverse of `a` modulo `m` (gcd(a, m) = 1, m >= 1), by the extended Euclidean algorithm.
inline long long modular_inverse(long long a, long long m) {
  long long r0 = m, r1 = a % m, s0 = 0, s1 = 1;
  while (r1 != 0) {
    const long long q = r0 / r1;
    r0 -= q * r1;
    std::swap(r0, r1);
    s0 -= q * s1;
    std::swap(s0, s1);
  }
  return positive_mod(s0, m);
}

/// The dimension whose coordinate colours a transfer along `direction`: the
/// first it moves along (a move by a multiple of a periodic dimension's
/// length lands on the rank itself and does not count); -1 if none.
inline int colour_dimension(const grid_shape& grid, const offset& direction) {
  for (int d = 0; d < max_dims; ++d)
    if (direction[d] % grid.dim(d) != 0) return d;
  return -1;
}

/// Rendezvous colouring. Along the transfer's direction the ranks form chains
/// (paths, or cycles on periodic dimensions); a rank sends first when its
/// position along its chain is even. Every chain of two or more ranks then has
/// a sender-first rank next to a receiver-first one, so synchronous sends
/// cannot wait on each other in a circle. Only the coordinate along
/// colour_dimension() matters.
inline bool sends_first(const grid_shape& grid, const offset& coords, const offset& direction) {
  const int d = colour_dimension(grid, direction);
  if (d < 0) return true;
  const int n = grid.dim(d);
  const int step = positive_mod(direction[d], n);
  if (!grid.periodic(d)) return (coords[d] / std::abs(direction[d])) % 2 == 0;
  // Position p along the cycle x0, x0+step, x0+2*step, ... (mod n) that starts at x0 = coords % g,
  // g = gcd(step, n): x0 + p step = coords (mod n), so p (step/g) = (coords - x0)/g (mod n/g), and
  // step/g is invertible modulo the cycle's length n/g. Solved directly rather than walked, so that
  // colouring every coordinate of a long ring (the simulator's rank classes) stays linear.
  const int g = std::gcd(step, n);
  const long long length = n / g, start = coords[d] % g;
  const long long position = (coords[d] - start) / g * modular_inverse(step / g, length) % length;
  return position % 2 == 0;
}

/// Orders a round's transfers by the dimension that colours them, x first,
/// keeping their order within a dimension. A rank runs a round's synchronous
/// transfers one after another, and each colouring depends on one coordinate
/// only, so in this order the round's times depend on x alone until the
/// first transfer coloured along y, and so on. On an odd ring, where the
/// colouring differs at every coordinate, that keeps the simulator's classes
/// few for most of the round (model/simulation/rank_classes.hpp); posting order in
/// overlapping mode does not matter to the result, only to timing.
inline void order_by_colour(const grid_shape& grid, std::vector<transfer>& transfers) {
  std::stable_sort(transfers.begin(), transfers.end(), [&grid](const transfer& a, const transfer& b) {
    // -1 (no colour: a copy to the rank itself) sorts last
    const auto key = [&grid](const transfer& t) {
      const int d = colour_dimension(grid, t.direction);
      return d < 0 ? max_dims : d;
    };
    return key(a) < key(b);
  });
}

}  // namespace haloshift::detail

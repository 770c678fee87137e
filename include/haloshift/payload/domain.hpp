// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file domain.hpp
/// @brief The global simulation box and its uniform split into one box per rank.

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "../error.hpp"
#include "../grid/grid_shape.hpp"

namespace haloshift {

/// A point in space; dimensions beyond the grid's are ignored.
using position = std::array<double, 3>;

/// The global simulation box `[lo, hi)`, split evenly among the ranks of a grid.
struct domain {
  /// Lower corner (inside the domain).
  position lo{0, 0, 0};
  /// Upper corner (outside: the domain is half-open).
  position hi{1, 1, 1};

  /// Length along `d`: the shift across a periodic border.
  double length(int d) const noexcept { return hi[d] - lo[d]; }

  /// Lower edge of the box at grid position `c` along `d`; `c` may lie
  /// outside `[0, P)` (a periodic image: shifted by whole domain lengths).
  /// Computed as `lo + L*c/P` so that edges are the same on every rank.
  double edge(const grid_shape& grid, int d, int c) const noexcept {
    const int n = grid.dim(d);
    const int wraps = c >= 0 ? c / n : -((-c + n - 1) / n);
    const int inside = c - wraps * n;
    return lo[d] + length(d) * inside / n + wraps * length(d);
  }

  /// Grid coordinate along `d` of the box that owns coordinate `x` of the
  /// primary domain, consistent with `edge` (boundaries belong to the upper box).
  int owner_coordinate(const grid_shape& grid, int d, double x) const noexcept {
    const int n = grid.dim(d);
    int c = static_cast<int>(std::floor((x - lo[d]) / length(d) * n));
    c = std::clamp(c, 0, n - 1);
    while (c > 0 && x < edge(grid, d, c)) --c;
    while (c < n - 1 && x >= edge(grid, d, c + 1)) ++c;
    return c;
  }

  /// Throws haloshift::error unless `lo < hi` along each of the grid's dimensions.
  void validate(const grid_shape& grid) const {
    for (int d = 0; d < grid.ndims(); ++d)
      if (!(std::isfinite(lo[d]) && std::isfinite(hi[d]) && lo[d] < hi[d]))
        throw error("domain: lo[" + std::to_string(d) + "] = " + std::to_string(lo[d]) + " must be below hi[" +
                    std::to_string(d) + "] = " + std::to_string(hi[d]));
  }
};

}  // namespace haloshift

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

  /// Lower edge of the box at grid position `c` along `d`. For `c` in
  /// `[0, P]` this is the primary domain's edge: exactly `lo` at 0, exactly
  /// `hi` at `P`, `lo + L*c/P` (never above `hi`) in between, the same on
  /// every rank and nondecreasing in `c`. Any other `c` is a periodic image:
  /// the primary edge shifted by whole domain lengths.
  double edge(const grid_shape& grid, int d, int c) const noexcept {
    const int n = grid.dim(d);
    if (c >= 0 && c <= n) return primary_edge(n, d, c);
    const int wraps = c >= 0 ? c / n : -((-c + n - 1) / n);
    return primary_edge(n, d, c - wraps * n) + wraps * length(d);
  }

  /// Wraps coordinate `x` along `d` into `[lo, hi)`, exactly: `x` already
  /// inside is returned unchanged (`-0.0` equal to `lo` becomes `lo`), `hi`
  /// wraps to `lo`, and a wrapped value that rounds to `hi` (or below `lo`)
  /// becomes `lo`. The result always satisfies `lo <= result < hi`.
  /// `x` must be finite.
  double wrap(int d, double x) const noexcept {
    const double l = lo[d], h = hi[d], len = length(d);
    if (x >= l && x < h) return x == l ? l : x;
    // Measured from the border crossed, so that hi maps to lo exactly even when lo + (hi - lo) != hi.
    double y = l;
    if (x >= h) {
      double t = x - h;
      t -= std::floor(t / len) * len;
      y = l + t;
    } else {
      double t = l - x;
      t -= std::floor(t / len) * len;
      y = h - t;
    }
    if (!(y >= l && y < h)) y = l;  // within rounding of the border (or hi itself): the lower box owns it
    return y == l ? l : y;
  }

  /// Grid coordinate along `d` of the box that owns coordinate `x`: the one
  /// `c` with `edge(c) <= x < edge(c + 1)` (half-open boxes; an empty box owns
  /// nothing). The one ownership rule: migrate and plan building both use it.
  /// `x` outside `[lo, hi)` is clamped to the first or last box.
  int owner_coordinate(const grid_shape& grid, int d, double x) const noexcept {
    const int n = grid.dim(d);
    const double guess = std::floor((x - lo[d]) / length(d) * n);
    int c = guess >= n ? n - 1 : guess > 0 ? static_cast<int>(guess) : 0;
    while (c > 0 && x < edge(grid, d, c)) --c;
    while (c < n - 1 && x >= edge(grid, d, c + 1)) ++c;
    return c;
  }

  /// Whether `x` lies in the box at grid position `coords` by the ownership
  /// rule (inside `[lo, hi)` and owned there along each of the grid's dimensions).
  bool owns(const grid_shape& grid, const offset& coords, const position& x) const noexcept {
    for (int d = 0; d < grid.ndims(); ++d)
      if (!(x[d] >= lo[d] && x[d] < hi[d]) || owner_coordinate(grid, d, x[d]) != coords[d]) return false;
    return true;
  }

  /// How many boxes along `d` a closed cutoff region reaches: a conservative
  /// bound `k` such that no particle lies within `cutoff` (distance `<= cutoff`,
  /// as the ghost selection computes it, shifted ghost against the receiving
  /// box) of any box more than `k` boxes away. About `floor(cutoff/width) + 1`,
  /// with every box's floating-point edges checked so that rounding cannot
  /// make it miss a box. At least 1 (a zero cutoff takes particles on the
  /// border); returns more than `max_boxes` when the cutoff spans more.
  int cutoff_reach(const grid_shape& grid, int d, double cutoff, int max_boxes = 1000000) const noexcept {
    if (!(cutoff >= 0) || !std::isfinite(cutoff)) return 1;
    const int n = grid.dim(d);
    const double len = length(d), estimate = std::floor(cutoff / (len / n));
    if (!(estimate <= max_boxes)) return max_boxes + 1;
    auto split = [n](long c, long& wraps) {  // c = wraps * n + inside, inside in [0, n)
      wraps = c >= 0 ? c / n : -((-c + n - 1) / n);
      return static_cast<int>(c - wraps * n);
    };
    // Nothing farther than k boxes is within reach when every gap across k whole
    // boxes exceeds the cutoff. Moving the receiver away inside one periodic
    // image only grows a gap, and a whole image farther only grows it too, so
    // per source box two receivers bound all others: k + 1 boxes away, and the
    // first box after the next wrap.
    auto clear = [&](int k) {
      for (int s = 0; s < n; ++s) {
        const long first_up = s + k + 1L, wrap_up = (first_up + n - 1) / n * n;
        for (long c : {first_up, wrap_up}) {
          if (c - s > k + static_cast<long>(n)) continue;
          long w = 0;
          const int i = split(c, w);
          if (!(primary_edge(n, d, i) - (primary_edge(n, d, s + 1) - static_cast<double>(w) * len) > cutoff))
            return false;
        }
        const long first_down = s - k - 1L;
        long w0 = 0;
        const int i0 = split(first_down, w0);
        const long wrap_down = first_down - (i0 + 1) % n;  // the next receiver below with inside == n - 1
        for (long c : {first_down, wrap_down}) {
          if (s - c > k + static_cast<long>(n)) continue;
          long w = 0;
          const int i = split(c, w);
          if (!((primary_edge(n, d, s) - static_cast<double>(w) * len) - primary_edge(n, d, i + 1) > cutoff))
            return false;
        }
      }
      return true;
    };
    int k = std::max(1, static_cast<int>(estimate) - 1);
    while (k <= max_boxes && !clear(k)) ++k;
    return k;
  }

  /// Throws haloshift::error unless `lo < hi` along each of the grid's dimensions.
  void validate(const grid_shape& grid) const {
    for (int d = 0; d < grid.ndims(); ++d)
      if (!(std::isfinite(lo[d]) && std::isfinite(hi[d]) && lo[d] < hi[d]))
        throw error("domain: lo[" + std::to_string(d) + "] = " + detail::number_text(lo[d]) + " must be below hi[" +
                    std::to_string(d) + "] = " + detail::number_text(hi[d]));
  }

 private:
  /// Edge `i` in `[0, n]` of the primary domain split in `n`.
  double primary_edge(int n, int d, int i) const noexcept {
    if (i <= 0) return lo[d];
    if (i >= n) return hi[d];
    return std::min(hi[d], lo[d] + length(d) * i / n);
  }
};

}  // namespace haloshift

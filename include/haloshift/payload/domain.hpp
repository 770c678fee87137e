// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file domain.hpp
/// @brief The global simulation box and its split into one box per rank:
/// even, or at user-given cuts per dimension (load balancing, docs/balance.md).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../detail/arithmetic.hpp"
#include "../detail/compiled.hpp"
#include "../detail/hash.hpp"
#include "../error.hpp"
#include "../grid/grid_shape.hpp"

namespace haloshift {

/// A point in space; dimensions beyond the grid's are ignored.
using position = std::array<double, 3>;

/// The global simulation box `[lo, hi)`, split among the ranks of a grid:
/// evenly along a dimension whose `cuts` are empty, else at its cuts.
struct domain {
  /// Lower corner (inside the domain).
  position lo{0, 0, 0};
  /// Upper corner (outside: the domain is half-open).
  position hi{1, 1, 1};
  /// Where the boxes meet along each dimension: empty for the even split, or
  /// the `P_d + 1` edges of the boxes along `d`, nondecreasing, the first
  /// `lo[d]` and the last `hi[d]`. Every box of a slab shares them (the boxes
  /// stay a brick, as LAMMPS's `balance shift`); a box between two equal cuts
  /// is empty and owns nothing. The same on every rank: plans and migrate
  /// agree on them, and validate() checks them.
  std::array<std::vector<double>, 3> cuts{};

  /// Length along `d`: the shift across a periodic border.
  double length(int d) const noexcept { return hi[d] - lo[d]; }

  /// Lower edge of the box at grid position `c` along `d`. For `c` in
  /// `[0, P]` this is the primary domain's edge: exactly `lo` at 0, exactly
  /// `hi` at `P`, in between `cuts[d][c]`, or `lo + L*c/P` (never above `hi`)
  /// for the even split; the same on every rank and nondecreasing in `c`. Any other `c` is a periodic image:
  /// the primary edge shifted by whole domain lengths.
  double edge(const grid_shape& grid, int d, int c) const noexcept {
    const int n = grid.dim(d);
    if (c >= 0 && c <= n) return primary_edge(n, d, c);
    const int wraps = detail::floor_div(c, n);
    return primary_edge(n, d, c - wraps * n) + wraps * length(d);
  }

  /// The box `[first, second)` at grid position `coords`: its edges edge(c) and edge(c + 1) along
  /// each of the grid's dimensions, the domain's bounds along the others. The one place a rank's
  /// box is computed (migrate, the particle checks and box_of take it from here).
  std::pair<position, position> box(const grid_shape& grid, const offset& coords) const noexcept {
    position l = lo, h = hi;
    for (int d = 0; d < grid.ndims(); ++d) {
      l[d] = edge(grid, d, coords[d]);
      h[d] = edge(grid, d, coords[d] + 1);
    }
    return {l, h};
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
    if (has_cuts(grid, d)) {  // the last edge at or below x, among edges 0 .. n-1
      const auto first = cuts[d].begin(), last = first + n;
      const auto above = std::upper_bound(first + 1, last, x);
      return static_cast<int>(above - first) - 1;
    }
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
    // Where to start looking: the reach of the widest box (with cuts, thinner boxes reach farther).
    double widest = length(d) / n;
    if (has_cuts(grid, d))
      for (int c = 0; c < n; ++c) widest = std::max(widest, primary_edge(n, d, c + 1) - primary_edge(n, d, c));
    const double len = length(d), estimate = std::floor(cutoff / widest);
    if (!(std::floor(cutoff / (len / n)) <= max_boxes)) return max_boxes + 1;
    auto split = [n](long c, long& wraps) {  // c = wraps * n + inside, inside in [0, n)
      wraps = detail::floor_div(c, static_cast<long>(n));
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

  /// Throws haloshift::error unless `lo < hi` along each of the grid's
  /// dimensions and every dimension's cuts are empty or `P_d + 1` finite,
  /// nondecreasing edges from `lo[d]` to `hi[d]` (none beyond the grid's dimensions).
  HALOSHIFT_BUILDER void validate(const grid_shape& grid) const;

  /// Whether the boxes along `d` lie at the cuts (else the even split; cuts of the wrong size, which
  /// validate() rejects, are never read).
  bool has_cuts(const grid_shape& grid, int d) const noexcept {
    return d < grid.ndims() && cuts[static_cast<std::size_t>(d)].size() == static_cast<std::size_t>(grid.dim(d)) + 1;
  }

  /// A fingerprint of the cuts along `d` (0 for the even split): what ranks compare to agree on them.
  std::int64_t cuts_hash(int d) const noexcept {
    if (cuts[static_cast<std::size_t>(d)].empty()) return 0;
    detail::fnv1a h;  // over the values' bytes, -0.0 as 0.0 (equal values, equal hashes)
    for (double v : cuts[static_cast<std::size_t>(d)]) h.value(v == 0 ? 0.0 : v);
    return static_cast<std::int64_t>(h.get());
  }

 private:
  /// Edge `i` in `[0, n]` of the primary domain split in `n`.
  double primary_edge(int n, int d, int i) const noexcept {
    if (i <= 0) return lo[d];
    if (i >= n) return hi[d];
    const std::vector<double>& c = cuts[static_cast<std::size_t>(d)];
    if (c.size() == static_cast<std::size_t>(n) + 1) return c[static_cast<std::size_t>(i)];  // has_cuts
    return std::min(hi[d], lo[d] + length(d) * i / n);
  }
};

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER void domain::validate(const grid_shape& grid) const {
  for (int d = 0; d < grid.ndims(); ++d)
    if (!(std::isfinite(lo[d]) && std::isfinite(hi[d]) && lo[d] < hi[d]))
      throw error("domain: lo[" + std::to_string(d) + "] = " + detail::number_text(lo[d]) + " must be below hi[" +
                  std::to_string(d) + "] = " + detail::number_text(hi[d]));
  for (int d = 0; d < max_dims; ++d) {
    const std::vector<double>& c = cuts[static_cast<std::size_t>(d)];
    if (c.empty()) continue;
    const std::string name = "domain.cuts[" + std::to_string(d) + "]";
    if (d >= grid.ndims())
      throw error(name + " has " + std::to_string(c.size()) + " values but the grid has only " +
                  std::to_string(grid.ndims()) + " dimension(s): leave it empty");
    const std::size_t edges = static_cast<std::size_t>(grid.dim(d)) + 1;
    if (c.size() != edges)
      throw error(name + " must have P_" + std::to_string(d) + " + 1 = " + std::to_string(edges) +
                  " values (the edges of the boxes along dimension " + std::to_string(d) + "), got " +
                  std::to_string(c.size()));
    auto at = [&](std::size_t i) { return name + "[" + std::to_string(i) + "] = " + detail::number_text(c[i]); };
    for (std::size_t i = 0; i < edges; ++i)
      if (!std::isfinite(c[i])) throw error(at(i) + " must be finite");
    if (c.front() != lo[d])
      throw error(at(0) + " must equal lo[" + std::to_string(d) + "] = " + detail::number_text(lo[d]));
    if (c.back() != hi[d])
      throw error(at(edges - 1) + " must equal hi[" + std::to_string(d) + "] = " + detail::number_text(hi[d]));
    for (std::size_t i = 1; i < edges; ++i)
      if (c[i] < c[i - 1]) throw error(at(i) + " is below " + at(i - 1) + ": cuts must be nondecreasing");
  }
}
#endif

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file field_shape.hpp
/// @brief Where a rank's part of a global structured grid lies, and how its
/// padded local array (interior plus ghost layers) is laid out. No MPI.

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../detail/arithmetic.hpp"
#include "../detail/checked_size.hpp"
#include "../detail/compiled.hpp"
#include "../detail/hash.hpp"
#include "../error.hpp"
#include "../grid/grid_shape.hpp"
#include "../grid/offset.hpp"

namespace haloshift {

/// User-given cell cuts of a grid field, per dimension: `cuts[d]` is empty
/// (the even split) or holds `P_d + 1` nondecreasing values from 0 to the
/// global cell count `N_d`; box `c` along `d` owns the cells `[cuts[d][c],
/// cuts[d][c + 1])`, and every box of a slab shares them (the boxes stay
/// bricks). Equal consecutive values give a box without cells. Dimensions
/// beyond the grid's stay empty.
using cell_cuts = std::array<std::vector<int>, max_dims>;

namespace detail {
/// First global cell of the box at grid position `c` of `p` boxes over `n`
/// cells: `floor(c * n / p)` (the remainder spread), or with the `n mod p`
/// wider boxes first or last. Valid for any `c`, so periodic images need no
/// special case: box `c + p` starts exactly `n` cells after box `c`.
constexpr std::int64_t split_lo(std::int64_t n, std::int64_t p, std::int64_t c,
                                grid_shape::remainder_cells rule = grid_shape::remainder_cells::spread) noexcept {
  if (rule == grid_shape::remainder_cells::spread) return floor_div(c * n, p);
  const std::int64_t images = floor_div(c, p), i = c - images * p, narrow = n / p, wider = n % p;
  // Before box i: i narrow boxes, and the wider ones among them (the first `wider`, or the last `wider`).
  const std::int64_t widened =
      rule == grid_shape::remainder_cells::first ? std::min(i, wider) : std::max<std::int64_t>(0, i - (p - wider));
  return images * n + i * narrow + widened;
}

/// 64-bit FNV-1a of cut values: what ranks compare to find cuts that differ.
inline std::int64_t cuts_hash(const std::vector<int>& cuts) noexcept {
  fnv1a h;
  for (int v : cuts) h.value(v);
  return static_cast<std::int64_t>(h.get());
}

/// "0,3,10,64", or "0,3,10,...,64 (17 values)" when long.
HALOSHIFT_BUILDER std::string cuts_text(const std::vector<int>& cuts);
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER std::string cuts_text(const std::vector<int>& cuts) {
  std::string s;
  for (std::size_t i = 0; i < cuts.size(); ++i) {
    if (cuts.size() > 8 && i == 3) {
      s += ",...";
      i = cuts.size() - 1;
    }
    // Appended piece by piece: GCC 12 at -O3 warns falsely (-Wrestrict) on `"," + std::to_string(...)`.
    if (i) s += ',';
    s += std::to_string(cuts[i]);
  }
  return cuts.size() > 8 ? s + " (" + std::to_string(cuts.size()) + " values)" : s;
}
#endif
}  // namespace detail

/// One rank's part of a global grid of `global[d]` cells split among the
/// grid's `P_d` boxes, with `ghost[d]` layers below its interior and
/// `ghost_high[d]` above (equal unless given per side; either may be 0). The split
/// is even (box `c` owns cells `[floor(c N/P), floor((c+1) N/P))`, boxes
/// differ by at most one cell; grid_options::remainder may put the wider
/// boxes first or last instead) or given by the user as cell_cuts. Storage is
/// row-major with x fastest: local cell `(i, j, k)`, interior at `0 <= i <
/// interior[0]`, ghosts at `-ghost[0] <= i < 0` and beyond, lives at
/// `index(i, j, k)`. Dimensions the grid lacks have one cell and no ghosts. A
/// box may own no cells (cuts, or fewer cells than boxes): its padded array is
/// then `ghost[d] + ghost_high[d]` wide, its ghosts filled from the boxes around.
struct field_shape {
  /// Global cells along each dimension (1 beyond the grid's dimensions).
  offset global{1, 1, 1};
  /// Ghost layers below the interior (where storage starts), per dimension.
  offset ghost{0, 0, 0};
  /// Ghost layers above the interior, per dimension (`ghost` unless the widths were given per side).
  offset ghost_high{0, 0, 0};
  offset lo{0, 0, 0};        ///< global coordinates of local interior cell (0, 0, 0)
  offset interior{1, 1, 1};  ///< interior cells of this rank (0 for a box without cells)
  offset padded{1, 1, 1};    ///< ghost + interior + ghost_high
  /// Storage distance between neighbouring cells along each dimension (stride[0] = 1).
  std::size_t stride[max_dims] = {1, 1, 1};
  /// The cuts given per dimension; empty along a dimension split evenly.
  cell_cuts cuts{};
  /// Which boxes of the even split take the remainder cells: the grid's (grid_options::remainder).
  grid_shape::remainder_cells remainder = grid_shape::remainder_cells::spread;

  field_shape() = default;

  // The constructors are out of line ([[gnu::noinline]]): init() and the constructors taking both
  // widths take 6 or 7 arguments, and inlined into a user's function such a call would pass one on
  // the stack; GCC then gives a function with cleanups a frame pointer, one register less for the
  // user's own loops there (docs/performance.md, "Including the headers").

  /// The even split of `global_cells`. Checks the arguments locally (make
  /// them agree across ranks with a collectively built field or plan).
  [[gnu::noinline]] field_shape(const grid_shape& grid, const offset& coords, const offset& global_cells,
                                const offset& ghost_width)
      : field_shape(grid, coords, global_cells, ghost_width, ghost_width) {}
  /// The even split, `ghost_low[d]` layers below the interior and `ghost_high[d]` above.
  [[gnu::noinline]] field_shape(const grid_shape& grid, const offset& coords, const offset& global_cells,
                                const offset& ghost_low, const offset& ghost_high) {
    init(grid, coords, global_cells, cell_cuts{}, {ghost_low, ghost_high}, false);
  }
  /// The split of `split` (every dimension of the grid needs its `P_d +
  /// 1` cuts; the last one is the global cell count). Checked locally.
  [[gnu::noinline]] field_shape(const grid_shape& grid, const offset& coords, const cell_cuts& split,
                                const offset& ghost_width)
      : field_shape(grid, coords, split, ghost_width, ghost_width) {}
  /// The split of `split`, `ghost_low[d]` layers below the interior and `ghost_high[d]` above.
  [[gnu::noinline]] field_shape(const grid_shape& grid, const offset& coords, const cell_cuts& split,
                                const offset& ghost_low, const offset& ghost_high) {
    offset g{1, 1, 1};
    for (int d = 0; d < grid.ndims(); ++d) g[d] = split[d].empty() ? 0 : split[d].back();
    init(grid, coords, g, split, {ghost_low, ghost_high}, true);
  }
  /// Cuts along some dimensions, the even split of `global_cells` along the
  /// others (`split[d]` empty); given cuts must end at `global_cells[d]`.
  [[gnu::noinline]] field_shape(const grid_shape& grid, const offset& coords, const offset& global_cells,
                                const cell_cuts& split, const offset& ghost_width)
      : field_shape(grid, coords, global_cells, split, ghost_width, ghost_width) {}
  /// Cuts along some dimensions, `ghost_low[d]` layers below the interior and `ghost_high[d]` above.
  [[gnu::noinline]] field_shape(const grid_shape& grid, const offset& coords, const offset& global_cells,
                                const cell_cuts& split, const offset& ghost_low, const offset& ghost_high) {
    init(grid, coords, global_cells, split, {ghost_low, ghost_high}, false);
  }

  /// Elements of the padded array.
  std::size_t size() const noexcept { return stride[2] * static_cast<std::size_t>(padded[2]); }
  /// Storage index of local cell `(i, j, k)` (interior from 0, ghosts below 0 and from interior).
  std::size_t index(int i, int j = 0, int k = 0) const noexcept {
    return static_cast<std::size_t>(i + ghost[0]) + static_cast<std::size_t>(j + ghost[1]) * stride[1] +
           static_cast<std::size_t>(k + ghost[2]) * stride[2];
  }
  /// Storage index of the cell at unwrapped global coordinates `g` (inside the padded box).
  std::size_t index_of_global(const offset& g) const noexcept {
    return index(g[0] - lo[0], g[1] - lo[1], g[2] - lo[2]);
  }
  /// Whether unwrapped global coordinates `g` fall inside this rank's padded box.
  bool holds(const offset& g) const noexcept {
    for (int d = 0; d < max_dims; ++d)
      if (g[d] < lo[d] - ghost[d] || g[d] >= lo[d] + interior[d] + ghost_high[d]) return false;
    return true;
  }

  /// First global cell of the box at grid position `t` along `d`, for any
  /// `t`: outside `[0, P_d)` a periodic image, `N_d` cells per `P_d` boxes
  /// further (box `t + P_d` starts `N_d` cells after box `t`). Box `t` owns
  /// `[first_cell(t), first_cell(t + 1))`.
  std::int64_t first_cell(const grid_shape& grid, int d, std::int64_t t) const noexcept {
    const std::vector<int>& c = cuts[d];
    if (c.empty()) return detail::split_lo(global[d], grid.dim(d), t, remainder);
    const std::int64_t p = static_cast<std::int64_t>(c.size()) - 1;
    const std::int64_t images = detail::floor_div(t, p);
    return images * global[d] + c[static_cast<std::size_t>(t - images * p)];
  }

  /// Boxes along each dimension the ghosts reach: the farthest box (either
  /// side, the largest over all boxes) holding a cell of some box's ghost
  /// layers (below or above); boxes without cells count. Periodic dimensions wrap as often as
  /// the ghosts do; non-periodic ones stop at the border. The even split with
  /// at least one cell per box keeps its `ceil(wider side / narrowest box)`, which
  /// all ranks know without a scan (never below the exact count, sometimes
  /// above: a plan reaching farther only sends nothing to the extra boxes).
  offset reach(const grid_shape& grid) const noexcept {
    offset k{0, 0, 0};
    for (int d = 0; d < grid.ndims(); ++d) {
      const int wider = std::max(ghost[d], ghost_high[d]);
      if (wider == 0) continue;
      if (cuts[d].empty() && global[d] >= grid.dim(d)) {
        const int narrowest = global[d] / grid.dim(d);  // floor splits differ by at most one cell
        k[d] = static_cast<int>((std::int64_t{wider} + narrowest - 1) / narrowest);
      } else {
        k[d] = exact_reach(grid, d);
      }
    }
    return k;
  }

  /// Same global size, ghost widths (both sides), cuts and remainder rule (the interior depends on the rank).
  bool same_layout_as(const field_shape& o) const noexcept {
    return global == o.global && ghost == o.ghost && ghost_high == o.ghost_high && cuts == o.cuts &&
           remainder == o.remainder;
  }

 private:
  /// Sets every member from checked arguments; `width` is {ghost below, ghost above}.
  HALOSHIFT_BUILDER void init(const grid_shape& grid, const offset& coords, const offset& global_cells,
                              const cell_cuts& given, const std::array<offset, 2>& width, bool cuts_required);

  /// The cuts along grid dimension `d`: `P_d + 1` values, from 0, nondecreasing, ending at `n`.
  static void check_cuts(const grid_shape& grid, int d, const std::vector<int>& c, int n, bool alone) {
    const std::string name = "cuts[" + std::to_string(d) + "]";
    const std::size_t want = static_cast<std::size_t>(grid.dim(d)) + 1;
    if (c.size() != want)
      throw error(name + " must have P_" + std::to_string(d) + " + 1 = " + std::to_string(want) + " values, got " +
                  std::to_string(c.size()));
    for (std::size_t i = 0; i < c.size(); ++i) {
      const std::string here = name + "[" + std::to_string(i) + "] = " + std::to_string(c[i]);
      if (c[i] < 0) throw error(here + " is negative: cuts count cells from 0");
      if (i == 0 && c[i] != 0) throw error(here + ": the first cut must be 0");
      if (i > 0 && c[i] < c[i - 1])
        throw error(here + " is below " + name + "[" + std::to_string(i - 1) + "] = " + std::to_string(c[i - 1]) +
                    ": cuts must be nondecreasing");
    }
    if (c.back() < 1)
      throw error(name + " ends at " + std::to_string(c.back()) +
                  ": the field needs at least one cell along dimension " + std::to_string(d));
    if (!alone && c.back() != n)
      throw error(name + " ends at " + std::to_string(c.back()) + " but global[" + std::to_string(d) +
                  "] = " + std::to_string(n) + ": the last cut is the global cell count");
  }

  /// reach() along `d` from the split itself: per box, the boxes owning its outermost ghost cells.
  int exact_reach(const grid_shape& grid, int d) const noexcept {
    const std::int64_t n = global[d], p = grid.dim(d), below_width = ghost[d], above_width = ghost_high[d];
    const bool wrap = grid.periodic(d);
    // The box owning global cell x (unwrapped): the last box of x's image starting at or before it.
    auto owner = [&](std::int64_t x) {
      const std::int64_t images = detail::floor_div(x, n), r = x - images * n;
      std::int64_t a = 0, b = p - 1;
      while (a < b) {
        const std::int64_t m = (a + b + 1) / 2;
        if (first_cell(grid, d, m) <= r)
          a = m;
        else
          b = m - 1;
      }
      return images * p + a;
    };
    std::int64_t k = 0;
    for (std::int64_t c = 0; c < p; ++c) {
      const std::int64_t first = first_cell(grid, d, c), end = first_cell(grid, d, c + 1);
      // The lowest ghost cell below the box (ghost layers) and the highest above it (ghost_high).
      const std::int64_t below = wrap ? first - below_width : std::max<std::int64_t>(first - below_width, 0);
      if (below < first) k = std::max(k, c - owner(below));
      const std::int64_t above = wrap ? end + above_width - 1 : std::min(end + above_width - 1, n - 1);
      if (above >= end) k = std::max(k, owner(above) - c);
    }
    return static_cast<int>(std::min<std::int64_t>(k, INT_MAX));
  }

  HALOSHIFT_BUILDER std::string to_string_short() const;
  friend std::string to_string(const field_shape& s);
};

/// "global (gx,gy,gz) ghost (wx,wy,wz)" (then " ghost_high (..)" where the widths above differ),
/// then " cuts[d] 0,3,..." for each dimension with cuts, for messages.
HALOSHIFT_BUILDER std::string to_string(const field_shape& s);
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER std::string to_string(const field_shape& s) {
  std::string text = s.to_string_short();
  for (int d = 0; d < max_dims; ++d)
    if (!s.cuts[d].empty()) text += " cuts[" + std::to_string(d) + "] " + detail::cuts_text(s.cuts[d]);
  return text;
}
#endif

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER void field_shape::init(const grid_shape& grid, const offset& coords, const offset& global_cells,
                                         const cell_cuts& given, const std::array<offset, 2>& width,
                                         bool cuts_required) {
  static constexpr const char* side[2] = {"ghost", "ghost_high"};
  remainder = grid.remainder();
  for (int d = 0; d < max_dims; ++d) {
    const std::string at = "[" + std::to_string(d) + "]";
    const std::vector<int>& c = given[d];
    if (d >= grid.ndims()) {
      for (int s = 0; s < 2; ++s)
        if (global_cells[d] > 1 || width[s][d] != 0)
          throw error("global" + at + " = " + std::to_string(global_cells[d]) + ", " + side[s] + at + " = " +
                      std::to_string(width[s][d]) + " but the grid has only " + std::to_string(grid.ndims()) +
                      " dimension(s) (use 0 or 1 cells and no ghosts there)");
      if (!c.empty())
        throw error("cuts" + at + " must be empty: the grid has only " + std::to_string(grid.ndims()) +
                    " dimension(s), got " + std::to_string(c.size()) + " values");
      continue;
    }
    if (!c.empty() || cuts_required) check_cuts(grid, d, c, global_cells[d], cuts_required);
    if (global_cells[d] < 1) throw error("global" + at + " must be >= 1, got " + std::to_string(global_cells[d]));
    for (int s = 0; s < 2; ++s)
      if (width[s][d] < 0) throw error(std::string(side[s]) + at + " must be >= 0, got " + std::to_string(width[s][d]));
    global[d] = global_cells[d];
    ghost[d] = width[0][d];
    ghost_high[d] = width[1][d];
    cuts[d] = c;
    lo[d] = static_cast<int>(first_cell(grid, d, coords[d]));
    interior[d] = static_cast<int>(first_cell(grid, d, coords[d] + 1)) - lo[d];
    const std::int64_t wide = std::int64_t{ghost[d]} + interior[d] + ghost_high[d];
    if (wide > INT_MAX)
      throw error("ghost" + at + " = " + std::to_string(ghost[d]) +
                  (ghost_high[d] == ghost[d] ? "" : ", ghost_high" + at + " = " + std::to_string(ghost_high[d])) +
                  " makes the padded extent " + std::to_string(ghost[d]) + " + " + std::to_string(interior[d]) + " + " +
                  std::to_string(ghost_high[d]) + " = " + std::to_string(wide) + " cells, more than INT_MAX");
    padded[d] = static_cast<int>(wide);
  }
  const std::string what = "field " + to_string_short() + ": padded cells";
  stride[1] = static_cast<std::size_t>(padded[0]);
  stride[2] = detail::checked_mul(stride[1], static_cast<std::size_t>(padded[1]), what);
  detail::checked_mul(stride[2], static_cast<std::size_t>(padded[2]), what);
}

HALOSHIFT_BUILDER std::string field_shape::to_string_short() const {
  return "global " + to_string(global) + " ghost " + to_string(ghost) +
         (ghost_high == ghost ? "" : " ghost_high " + to_string(ghost_high)) +
         (remainder == grid_shape::remainder_cells::spread ? ""
                                                           : std::string(" remainder ") + detail::name_of(remainder));
}
#endif

}  // namespace haloshift

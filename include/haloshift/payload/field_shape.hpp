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
#include "../detail/hash.hpp"
#include "../error.hpp"
#include "../detail/checked_size.hpp"
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
/// cells: `floor(c * n / p)`. Valid for any `c`, so periodic images need no
/// special case: box `c + p` starts exactly `n` cells after box `c`.
constexpr std::int64_t split_lo(std::int64_t n, std::int64_t p, std::int64_t c) noexcept { return floor_div(c * n, p); }

/// 64-bit FNV-1a of cut values: what ranks compare to find cuts that differ.
inline std::int64_t cuts_hash(const std::vector<int>& cuts) noexcept {
  fnv1a h;
  for (int v : cuts) h.value(v);
  return static_cast<std::int64_t>(h.get());
}

/// "0,3,10,64", or "0,3,10,...,64 (17 values)" when long.
inline std::string cuts_text(const std::vector<int>& cuts) {
  std::string s;
  for (std::size_t i = 0; i < cuts.size(); ++i) {
    if (cuts.size() > 8 && i == 3) {
      s += ",...";
      i = cuts.size() - 1;
    }
    s += (i ? "," : "") + std::to_string(cuts[i]);
  }
  return cuts.size() > 8 ? s + " (" + std::to_string(cuts.size()) + " values)" : s;
}
}  // namespace detail

/// One rank's part of a global grid of `global[d]` cells split among the
/// grid's `P_d` boxes, surrounded by `ghost[d]` layers on each side. The split
/// is even (box `c` owns cells `[floor(c N/P), floor((c+1) N/P))`, boxes
/// differ by at most one cell) or given by the user as cell_cuts. Storage is
/// row-major with x fastest: local cell `(i, j, k)`, interior at `0 <= i <
/// interior[0]`, ghosts at `-ghost[0] <= i < 0` and beyond, lives at
/// `index(i, j, k)`. Dimensions the grid lacks have one cell and no ghosts. A
/// box may own no cells (cuts, or fewer cells than boxes): its padded array is
/// then `2 ghost[d]` wide, its ghosts filled from the boxes around.
struct field_shape {
  /// Global cells along each dimension (1 beyond the grid's dimensions).
  offset global{1, 1, 1};
  /// Ghost layers on each side, per dimension.
  offset ghost{0, 0, 0};
  offset lo{0, 0, 0};        ///< global coordinates of local interior cell (0, 0, 0)
  offset interior{1, 1, 1};  ///< interior cells of this rank (0 for a box without cells)
  offset padded{1, 1, 1};    ///< interior + 2 ghost
  /// Storage distance between neighbouring cells along each dimension (stride[0] = 1).
  std::size_t stride[max_dims] = {1, 1, 1};
  /// The cuts given per dimension; empty along a dimension split evenly.
  cell_cuts cuts{};

  field_shape() = default;

  // The constructors are out of line ([[gnu::noinline]]) because init() takes 7 arguments: inlined
  // into a user's function, that call would pass one on the stack, and GCC then gives a function
  // with cleanups a frame pointer, one register less for the user's own loops there
  // (docs/performance.md, "Including the headers").

  /// The even split of `global_cells`. Checks the arguments locally (make
  /// them agree across ranks with a collectively built field or plan).
  [[gnu::noinline]] field_shape(const grid_shape& grid, const offset& coords, const offset& global_cells,
                                const offset& ghost_width) {
    init(grid, coords, global_cells, cell_cuts{}, ghost_width, false);
  }
  /// The split of `split` (every dimension of the grid needs its `P_d +
  /// 1` cuts; the last one is the global cell count). Checked locally.
  [[gnu::noinline]] field_shape(const grid_shape& grid, const offset& coords, const cell_cuts& split,
                                const offset& ghost_width) {
    offset g{1, 1, 1};
    for (int d = 0; d < grid.ndims(); ++d) g[d] = split[d].empty() ? 0 : split[d].back();
    init(grid, coords, g, split, ghost_width, true);
  }
  /// Cuts along some dimensions, the even split of `global_cells` along the
  /// others (`split[d]` empty); given cuts must end at `global_cells[d]`.
  [[gnu::noinline]] field_shape(const grid_shape& grid, const offset& coords, const offset& global_cells,
                                const cell_cuts& split, const offset& ghost_width) {
    init(grid, coords, global_cells, split, ghost_width, false);
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
      if (g[d] < lo[d] - ghost[d] || g[d] >= lo[d] + interior[d] + ghost[d]) return false;
    return true;
  }

  /// First global cell of the box at grid position `t` along `d`, for any
  /// `t`: outside `[0, P_d)` a periodic image, `N_d` cells per `P_d` boxes
  /// further (box `t + P_d` starts `N_d` cells after box `t`). Box `t` owns
  /// `[first_cell(t), first_cell(t + 1))`.
  std::int64_t first_cell(const grid_shape& grid, int d, std::int64_t t) const noexcept {
    const std::vector<int>& c = cuts[d];
    if (c.empty()) return detail::split_lo(global[d], grid.dim(d), t);
    const std::int64_t p = static_cast<std::int64_t>(c.size()) - 1;
    const std::int64_t images = detail::floor_div(t, p);
    return images * global[d] + c[static_cast<std::size_t>(t - images * p)];
  }

  /// Boxes along each dimension the ghosts reach: the farthest box (either
  /// side, the largest over all boxes) holding a cell of some box's ghost
  /// layers; boxes without cells count. Periodic dimensions wrap as often as
  /// the ghosts do; non-periodic ones stop at the border. The even split with
  /// at least one cell per box keeps its `ceil(ghost / narrowest box)`, which
  /// all ranks know without a scan (never below the exact count, sometimes
  /// above: a plan reaching farther only sends nothing to the extra boxes).
  offset reach(const grid_shape& grid) const noexcept {
    offset k{0, 0, 0};
    for (int d = 0; d < grid.ndims(); ++d) {
      if (ghost[d] == 0) continue;
      if (cuts[d].empty() && global[d] >= grid.dim(d)) {
        const int narrowest = global[d] / grid.dim(d);  // floor splits differ by at most one cell
        k[d] = (ghost[d] + narrowest - 1) / narrowest;
      } else {
        k[d] = exact_reach(grid, d);
      }
    }
    return k;
  }

  /// Same global size, ghost widths and cuts (the interior depends on the rank).
  bool same_layout_as(const field_shape& o) const noexcept {
    return global == o.global && ghost == o.ghost && cuts == o.cuts;
  }

 private:
  void init(const grid_shape& grid, const offset& coords, const offset& global_cells, const cell_cuts& given,
            const offset& ghost_width, bool cuts_required) {
    for (int d = 0; d < max_dims; ++d) {
      const std::string at = "[" + std::to_string(d) + "]";
      const std::vector<int>& c = given[d];
      if (d >= grid.ndims()) {
        if (global_cells[d] > 1 || ghost_width[d] != 0)
          throw error("global" + at + " = " + std::to_string(global_cells[d]) + ", ghost" + at + " = " +
                      std::to_string(ghost_width[d]) + " but the grid has only " + std::to_string(grid.ndims()) +
                      " dimension(s) (use 0 or 1 cells and no ghosts there)");
        if (!c.empty())
          throw error("cuts" + at + " must be empty: the grid has only " + std::to_string(grid.ndims()) +
                      " dimension(s), got " + std::to_string(c.size()) + " values");
        continue;
      }
      if (!c.empty() || cuts_required) check_cuts(grid, d, c, global_cells[d], cuts_required);
      if (global_cells[d] < 1) throw error("global" + at + " must be >= 1, got " + std::to_string(global_cells[d]));
      if (ghost_width[d] < 0) throw error("ghost" + at + " must be >= 0, got " + std::to_string(ghost_width[d]));
      global[d] = global_cells[d];
      ghost[d] = ghost_width[d];
      cuts[d] = c;
      lo[d] = static_cast<int>(first_cell(grid, d, coords[d]));
      interior[d] = static_cast<int>(first_cell(grid, d, coords[d] + 1)) - lo[d];
      const std::int64_t wide = std::int64_t{interior[d]} + 2 * std::int64_t{ghost[d]};
      if (wide > INT_MAX)
        throw error("ghost" + at + " = " + std::to_string(ghost[d]) + " makes the padded extent " +
                    std::to_string(interior[d]) + " + 2 * " + std::to_string(ghost[d]) + " = " + std::to_string(wide) +
                    " cells, more than INT_MAX");
      padded[d] = static_cast<int>(wide);
    }
    const std::string what = "field " + to_string_short() + ": padded cells";
    stride[1] = static_cast<std::size_t>(padded[0]);
    stride[2] = detail::checked_mul(stride[1], static_cast<std::size_t>(padded[1]), what);
    detail::checked_mul(stride[2], static_cast<std::size_t>(padded[2]), what);
  }

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
    const std::int64_t n = global[d], p = grid.dim(d), g = ghost[d];
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
      const std::int64_t below = wrap ? first - g : std::max<std::int64_t>(first - g, 0);
      if (below < first) k = std::max(k, c - owner(below));
      const std::int64_t above = wrap ? end + g - 1 : std::min(end + g - 1, n - 1);
      if (above >= end) k = std::max(k, owner(above) - c);
    }
    return static_cast<int>(std::min<std::int64_t>(k, INT_MAX));
  }

  std::string to_string_short() const { return "global " + to_string(global) + " ghost " + to_string(ghost); }
};

/// "global (gx,gy,gz) ghost (wx,wy,wz)", then " cuts[d] 0,3,..." for each dimension with cuts, for messages.
inline std::string to_string(const field_shape& s) {
  std::string text = "global " + to_string(s.global) + " ghost " + to_string(s.ghost);
  for (int d = 0; d < max_dims; ++d)
    if (!s.cuts[d].empty()) text += " cuts[" + std::to_string(d) + "] " + detail::cuts_text(s.cuts[d]);
  return text;
}

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file field_shape.hpp
/// @brief Where a rank's part of a global structured grid lies, and how its
/// padded local array (interior plus ghost layers) is laid out. No MPI.

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../error.hpp"
#include "../grid/checked_size.hpp"
#include "../grid/grid_shape.hpp"
#include "../grid/offset.hpp"

namespace haloshift {

namespace detail {
/// First global cell of the box at grid position `c` of `p` boxes over `n`
/// cells: `floor(c * n / p)`. Valid for any `c`, so periodic images need no
/// special case: box `c + p` starts exactly `n` cells after box `c`.
constexpr std::int64_t split_lo(std::int64_t n, std::int64_t p, std::int64_t c) noexcept {
  const std::int64_t a = c * n;
  return a >= 0 ? a / p : -((-a + p - 1) / p);
}
}  // namespace detail

/// One rank's part of a global grid of `global[d]` cells split among the
/// grid's `P_d` boxes: box `c` owns cells `[floor(c N/P), floor((c+1) N/P))`
/// (uneven splits differ by at most one cell), surrounded by `ghost[d]`
/// layers on each side. Storage is row-major with x fastest: local cell
/// `(i, j, k)`, interior at `0 <= i < interior[0]`, ghosts at `-ghost[0] <= i
/// < 0` and beyond, lives at `index(i, j, k)`. Dimensions the grid lacks have
/// one cell and no ghosts.
struct field_shape {
  /// Global cells along each dimension (1 beyond the grid's dimensions).
  offset global{1, 1, 1};
  /// Ghost layers on each side, per dimension.
  offset ghost{0, 0, 0};
  offset lo{0, 0, 0};        ///< global coordinates of local interior cell (0, 0, 0)
  offset interior{1, 1, 1};  ///< interior cells of this rank
  offset padded{1, 1, 1};    ///< interior + 2 ghost
  /// Storage distance between neighbouring cells along each dimension (stride[0] = 1).
  std::size_t stride[max_dims] = {1, 1, 1};

  field_shape() = default;

  /// Checks the arguments locally (make them agree with field_shape::agreed()).
  field_shape(const grid_shape& grid, const offset& coords, const offset& global_cells, const offset& ghost_width) {
    for (int d = 0; d < max_dims; ++d) {
      const std::string at = "[" + std::to_string(d) + "]";
      if (d >= grid.ndims()) {
        if (global_cells[d] > 1 || ghost_width[d] != 0)
          throw error("global" + at + " = " + std::to_string(global_cells[d]) + ", ghost" + at + " = " +
                      std::to_string(ghost_width[d]) + " but the grid has only " + std::to_string(grid.ndims()) +
                      " dimension(s) (use 0 or 1 cells and no ghosts there)");
        continue;
      }
      if (global_cells[d] < 1) throw error("global" + at + " must be >= 1, got " + std::to_string(global_cells[d]));
      if (ghost_width[d] < 0) throw error("ghost" + at + " must be >= 0, got " + std::to_string(ghost_width[d]));
      if (ghost_width[d] > 0 && global_cells[d] < grid.dim(d))
        throw error("global" + at + " = " + std::to_string(global_cells[d]) + " leaves some of the " +
                    std::to_string(grid.dim(d)) + " boxes along dimension " + std::to_string(d) +
                    " without interior cells, so ghost" + at + " = " + std::to_string(ghost_width[d]) +
                    " cannot be filled");
      global[d] = global_cells[d];
      ghost[d] = ghost_width[d];
      lo[d] = static_cast<int>(detail::split_lo(global[d], grid.dim(d), coords[d]));
      interior[d] = static_cast<int>(detail::split_lo(global[d], grid.dim(d), coords[d] + 1)) - lo[d];
      const std::int64_t wide = std::int64_t{interior[d]} + 2 * std::int64_t{ghost[d]};
      if (wide > INT_MAX)
        throw error("ghost" + at + " = " + std::to_string(ghost[d]) + " makes the padded extent " +
                    std::to_string(interior[d]) + " + 2 * " + std::to_string(ghost[d]) + " = " + std::to_string(wide) +
                    " cells, more than INT_MAX");
      padded[d] = static_cast<int>(wide);
    }
    const std::string what = "field global " + to_string(global) + " ghost " + to_string(ghost) + ": padded cells";
    stride[1] = static_cast<std::size_t>(padded[0]);
    stride[2] = detail::checked_mul(stride[1], static_cast<std::size_t>(padded[1]), what);
    detail::checked_mul(stride[2], static_cast<std::size_t>(padded[2]), what);
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

  /// Boxes along each dimension the ghosts reach: `ceil(ghost / narrowest box)`.
  offset reach(const grid_shape& grid) const noexcept {
    offset k{0, 0, 0};
    for (int d = 0; d < grid.ndims(); ++d) {
      const int narrowest = global[d] / grid.dim(d);  // floor splits differ by at most one cell
      if (ghost[d] > 0) k[d] = (ghost[d] + narrowest - 1) / narrowest;
    }
    return k;
  }

  /// Same global size and ghost widths (the interior depends on the rank).
  bool same_layout_as(const field_shape& o) const noexcept { return global == o.global && ghost == o.ghost; }
};

/// "global (gx,gy,gz) ghost (wx,wy,wz)" for messages.
inline std::string to_string(const field_shape& s) {
  return "global " + to_string(s.global) + " ghost " + to_string(s.ghost);
}

}  // namespace haloshift

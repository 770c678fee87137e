// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file field_selection.hpp
/// @brief What a field plan selects: the cells of a box's shell, and which
/// boxes need each of them (within the ghost width).

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../../grid/cartesian_grid.hpp"
#include "../../grid/offset_box.hpp"
#include "../../payload/field_shape.hpp"
#include "../exchange/key_interval.hpp"

namespace haloshift::detail {

/// The grid selector: the box at `source + rel` (unwrapped) needs cell `key`
/// (global coordinates in the source's frame) when the cell lies within that
/// box's padded box along every dimension (ghost layers below, ghost_high above).
struct within_ghost {
  static constexpr bool geometric = true;  ///< a product over dimensions: the build tests each dimension alone
  const grid_shape* grid;
  field_shape shape;
  /// The cells along `d` that the box `rel` boxes from the source at `source` needs: its interior
  /// and ghost layers on either side.
  key_interval<std::int64_t> interval(int d, int source, int rel) const noexcept {
    const std::int64_t t = source + rel;
    return {shape.first_cell(*grid, d, t) - shape.ghost[d], shape.first_cell(*grid, d, t + 1) + shape.ghost_high[d]};
  }
  bool operator()(const offset& source, const offset& rel, const offset& key) const noexcept {
    for (int d = 0; d < grid->ndims(); ++d)
      if (!interval(d, source[d], rel[d]).contains(key[d])) return false;
    return true;
  }
  /// The per-dimension test as the build runs it: this selector itself.
  const within_ghost& prepare(const offset&, const detail::offset_box&) const noexcept { return *this; }
};

/// The local cells along one dimension that other boxes may need: those within `ghost_high` of
/// the low face (the ghosts above of boxes below reach no farther into this box, however many
/// boxes away they are) and within `ghost` of the high face (the boxes above): at most two
/// intervals, increasing and disjoint.
struct shell_band {
  int ranges[2][2] = {{0, 0}, {0, 0}};
  int count = 0;
  shell_band(const field_shape& s, int d) {
    const int n = s.interior[d], low_end = std::min(s.ghost_high[d], n), high_begin = std::max(n - s.ghost[d], 0);
    if (high_begin <= low_end) {  // the two meet: the whole line
      if (n > 0) ranges[count++][1] = n;
      return;
    }
    if (low_end > 0) ranges[count++][1] = low_end;
    if (high_begin < n) {
      ranges[count][0] = high_begin;
      ranges[count++][1] = n;
    }
  }
  bool holds(int i) const noexcept {
    for (int r = 0; r < count; ++r)
      if (i >= ranges[r][0] && i < ranges[r][1]) return true;
    return false;
  }
  /// Calls f(i) for each cell of the line, or of the band only, in increasing order.
  template <class F>
  void for_each(bool whole_line, int n, F&& f) const {
    if (whole_line) {
      for (int i = 0; i < n; ++i) f(i);
      return;
    }
    for (int r = 0; r < count; ++r)
      for (int i = ranges[r][0]; i < ranges[r][1]; ++i) f(i);
  }
};

/// The cells of the box that other boxes may need (the shell: in some dimension's shell_band),
/// in storage order (z, then y, then x increasing): the build offers only these to the
/// selection. The loops visit only the planes, rows and cells of the shell (and each plane
/// once), so the cost follows the shell, not the interior.
inline std::vector<offset> shell_cells(const field_shape& s) {
  const shell_band x(s, 0), y(s, 1), z(s, 2);
  std::vector<offset> out;
  for (int k = 0; k < s.interior[2]; ++k) {
    const bool plane = z.holds(k);
    // Rows outside y's band hold shell cells only where x's band has some.
    y.for_each(plane || x.count > 0, s.interior[1], [&](int j) {
      x.for_each(plane || y.holds(j), s.interior[0], [&](int i) { out.push_back(offset{i, j, k} + s.lo); });
    });
  }
  return out;
}

}  // namespace haloshift::detail

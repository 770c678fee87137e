// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file field_selection.hpp
/// @brief What a field plan selects: the cells of a box's shell, and which
/// boxes need each of them (within the ghost width).

#include <cstdint>
#include <vector>

#include "../../grid/cartesian_grid.hpp"
#include "../../grid/offset_box.hpp"
#include "../../payload/field_shape.hpp"
#include "../exchange/key_interval.hpp"

namespace haloshift::detail {

/// The grid selector: the box at `source + rel` (unwrapped) needs cell `key`
/// (global coordinates in the source's frame) when the cell lies within the
/// ghost width of that box along every dimension.
struct within_ghost {
  static constexpr bool geometric = true;  ///< a product over dimensions: the build tests each dimension alone
  const grid_shape* grid;
  field_shape shape;
  /// The cells along `d` that the box `rel` boxes from the source at `source` needs: its interior
  /// and ghost layers.
  key_interval<std::int64_t> interval(int d, int source, int rel) const noexcept {
    const std::int64_t t = source + rel;
    return {shape.first_cell(*grid, d, t) - shape.ghost[d], shape.first_cell(*grid, d, t + 1) + shape.ghost[d]};
  }
  bool operator()(const offset& source, const offset& rel, const offset& key) const noexcept {
    for (int d = 0; d < grid->ndims(); ++d)
      if (!interval(d, source[d], rel[d]).contains(key[d])) return false;
    return true;
  }
  /// The per-dimension test as the build runs it: this selector itself.
  const within_ghost& prepare(const offset&, const detail::offset_box&) const noexcept { return *this; }
};

/// A cell no other box needs lies more than `ghost` cells inside its box along
/// every dimension; only the rest (the shell) is offered to the selection.
inline std::vector<offset> shell_cells(const field_shape& s) {
  std::vector<offset> out;
  auto near_face = [&](int d, int i) { return i < s.ghost[d] || i >= s.interior[d] - s.ghost[d]; };
  for (int k = 0; k < s.interior[2]; ++k)
    for (int j = 0; j < s.interior[1]; ++j)
      for (int i = 0; i < s.interior[0]; ++i)
        if (near_face(0, i) || near_face(1, j) || near_face(2, k)) out.push_back(offset{i, j, k} + s.lo);
  return out;
}

}  // namespace haloshift::detail

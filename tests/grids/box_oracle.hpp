// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The grid tests' oracle of a split grid: every box's cells and padded array
// from the cell boundaries along each dimension alone (the even split or
// user-given cuts), ghost widths below and above, and which ghost cells a halo
// pattern fills, with its own wrap arithmetic. Shares no code with the
// library's field_shape.

#include <array>
#include <cstddef>
#include <vector>

#include <haloshift/grid/neighborhood.hpp>

#include "../support/oracle.hpp"

namespace box_oracle {

struct boxes {
  oracle::grid g;
  int ndims = 1;
  /// Per dimension the P + 1 cell boundaries: box c owns [bounds[d][c], bounds[d][c + 1]).
  std::array<std::vector<int>, 3> bounds{std::vector<int>{0, 1}, std::vector<int>{0, 1}, std::vector<int>{0, 1}};
  std::array<int, 3> ghost{0, 0, 0};       ///< ghost layers below the interior
  std::array<int, 3> ghost_high{0, 0, 0};  ///< ghost layers above the interior
  /// The halo pattern as the most dimensions along which a filled ghost cell may lie outside its
  /// box's interior: 1 faces, 2 faces and edges, 3 full.
  int pattern_dims = 3;

  int cells(int d) const { return bounds[d].back(); }
  /// The even split of n[d] cells: box c starts at floor(c n / P).
  void split_evenly(const std::array<int, 3>& n) {
    for (int d = 0; d < 3; ++d) {
      bounds[d].assign(1, 0);
      for (int c = 1; c <= g.dims[d]; ++c)
        bounds[d].push_back(static_cast<int>(static_cast<long>(c) * n[d] / g.dims[d]));
    }
  }
  /// Padded box of rank r: unwrapped global lower corner and extents.
  std::array<int, 3> lo(int r) const {
    const auto c = g.coords_of(r);
    return {bounds[0][c[0]] - ghost[0], bounds[1][c[1]] - ghost[1], bounds[2][c[2]] - ghost[2]};
  }
  std::array<int, 3> extent(int r) const {
    const auto c = g.coords_of(r);
    std::array<int, 3> e{};
    for (int d = 0; d < 3; ++d) e[d] = ghost[d] + bounds[d][c[d] + 1] - bounds[d][c[d]] + ghost_high[d];
    return e;
  }
  bool interior(int r, const std::array<int, 3>& u) const {
    const auto c = g.coords_of(r);
    for (int d = 0; d < 3; ++d)
      if (u[d] < bounds[d][c[d]] || u[d] >= bounds[d][c[d] + 1]) return false;
    return true;
  }
  /// Whether the exchange fills (or, in reverse, reads) the cell of rank r's padded box at
  /// unwrapped coordinates u: it lies outside the interior along at most pattern_dims dimensions.
  bool in_pattern(int r, const std::array<int, 3>& u) const {
    const auto c = g.coords_of(r);
    int outside = 0;
    for (int d = 0; d < 3; ++d) outside += u[d] < bounds[d][c[d]] || u[d] >= bounds[d][c[d] + 1];
    return outside <= pattern_dims;
  }
  /// Wraps unwrapped global coordinates; false when outside a non-periodic dimension.
  bool wrap(std::array<int, 3>& u) const {
    for (int d = 0; d < 3; ++d) {
      while (g.periodic[d] && u[d] < 0) u[d] += cells(d);
      while (g.periodic[d] && u[d] >= cells(d)) u[d] -= cells(d);
      if (u[d] < 0 || u[d] >= cells(d)) return false;
    }
    return true;
  }
  /// Calls f(index, unwrapped coordinates) for every cell of rank r's padded box, storage order.
  template <class F>
  void for_each_cell(int r, F&& f) const {
    const auto l = lo(r), e = extent(r);
    std::size_t i = 0;
    for (int z = 0; z < e[2]; ++z)
      for (int y = 0; y < e[1]; ++y)
        for (int x = 0; x < e[0]; ++x) f(i++, std::array<int, 3>{l[0] + x, l[1] + y, l[2] + z});
  }
  /// The library's name of pattern_dims.
  haloshift::halo_pattern pattern() const {
    return pattern_dims == 1   ? haloshift::halo_pattern::faces
           : pattern_dims == 2 ? haloshift::halo_pattern::faces_and_edges
                               : haloshift::halo_pattern::full;
  }
};

}  // namespace box_oracle

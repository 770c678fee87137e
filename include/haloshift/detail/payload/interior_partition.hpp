// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file interior_partition.hpp
/// @brief The interior of a rank's field split for overlap: the inner box,
/// whose stencils read no ghost, and the rim around it (what
/// field_plan::interior_regions returns).

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include "../../error.hpp"
#include "../../grid/offset.hpp"
#include "../../payload/field_shape.hpp"

namespace haloshift::detail {

/// Local interior cells `lo[d] <= c[d] < hi[d]` (interior from 0, as field_shape::index takes
/// them): loop `for (int k = b.lo[2]; k < b.hi[2]; ++k)`, and likewise for j and i.
struct cell_box {
  offset lo{0, 0, 0};  ///< first cell along each dimension
  offset hi{0, 0, 0};  ///< one past the last cell along each dimension

  /// Whether the box holds no cell.
  bool empty() const noexcept {
    for (int d = 0; d < max_dims; ++d)
      if (hi[d] <= lo[d]) return true;
    return false;
  }
  /// Cells in the box.
  std::size_t cells() const noexcept {
    if (empty()) return 0;
    std::size_t n = 1;
    for (int d = 0; d < max_dims; ++d) n *= static_cast<std::size_t>(hi[d] - lo[d]);
    return n;
  }
  /// Whether local cell `c` lies in the box.
  bool contains(const offset& c) const noexcept {
    for (int d = 0; d < max_dims; ++d)
      if (c[d] < lo[d] || c[d] >= hi[d]) return false;
    return true;
  }
};

/// A rank's interior cells in disjoint boxes: `inner` (possibly empty), whose cells' stencils
/// stay inside the interior, and the `rim` around it (no empty box), which reads ghosts.
/// Together they cover the interior exactly once. For overlap: start the exchange, update
/// `inner`, wait, update each box of `rim`.
struct interior_partition {
  cell_box inner;
  std::vector<cell_box> rim;  ///< below and above `inner` along z, then y, then x
};

/// The partition of an `interior` whose inner box leaves out `low[d]` cells at the low end and
/// `high[d]` at the high end along each dimension (each >= 0). The rim is at most 6 boxes: along
/// each dimension `d`, z first (each box then spans whole rows, planes where it can), the slabs
/// below and above the inner box, spanning the inner box along the dimensions after `d` and the
/// whole interior along those before it.
inline interior_partition partition_interior(const offset& interior, const offset& low, const offset& high) {
  const cell_box whole{zero_offset, interior};
  interior_partition p;
  for (int d = 0; d < max_dims; ++d) {
    p.inner.lo[d] = std::min(low[d], interior[d]);
    p.inner.hi[d] = std::max(interior[d] - high[d], p.inner.lo[d]);
  }
  if (p.inner.empty()) {  // no inner cell: the rim is the whole interior (if it has cells)
    p.inner = cell_box{};
    if (!whole.empty()) p.rim.push_back(whole);
    return p;
  }
  for (int d = max_dims - 1; d >= 0; --d) {
    cell_box slab = whole;
    for (int e = d + 1; e < max_dims; ++e) {
      slab.lo[e] = p.inner.lo[e];
      slab.hi[e] = p.inner.hi[e];
    }
    cell_box below = slab, above = slab;
    below.hi[d] = p.inner.lo[d];
    above.lo[d] = p.inner.hi[d];
    for (const cell_box& b : {below, above})
      if (!b.empty()) p.rim.push_back(b);
  }
  return p;
}

/// The partition of the interior of `shape` for a stencil of `reach[d]` cells on each side along
/// `d` (field_plan::interior_regions): the inner box leaves out `reach[d]` cells at each side that
/// has ghost layers; a side without them has nothing to wait for, its cells stay inner.
inline interior_partition partition_interior(const field_shape& shape, const offset& reach) {
  offset low{0, 0, 0}, high{0, 0, 0};
  for (int d = 0; d < max_dims; ++d) {
    if (reach[d] < 0)
      throw error("interior_regions: reach[" + std::to_string(d) + "] = " + std::to_string(reach[d]) +
                  " must be >= 0");
    low[d] = shape.ghost[d] > 0 ? reach[d] : 0;
    high[d] = shape.ghost_high[d] > 0 ? reach[d] : 0;
  }
  return partition_interior(shape.interior, low, high);
}

}  // namespace haloshift::detail

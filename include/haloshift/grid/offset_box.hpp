// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file offset_box.hpp
/// @brief A box of offsets `[lo, hi]` and a dense index over it (z slowest).

#include <cstddef>

#include "offset.hpp"

namespace haloshift::detail {

/// The offsets `o` with `lo[d] <= o[d] <= hi[d]` along every dimension (both ends included).
struct offset_box {
  /// Lowest corner, inside the box.
  offset lo{0, 0, 0}, hi{0, 0, 0};
  /// @var hi
  /// Highest corner, inside the box.

  /// Whether `o` lies in the box.
  bool contains(const offset& o) const noexcept {
    for (int d = 0; d < max_dims; ++d)
      if (o[d] < lo[d] || o[d] > hi[d]) return false;
    return true;
  }
  /// Number of offsets in the box.
  std::size_t volume() const noexcept {
    std::size_t v = 1;
    for (int d = 0; d < max_dims; ++d) v *= static_cast<std::size_t>(hi[d] - lo[d] + 1);
    return v;
  }
  /// Position of `o` (inside the box) in canonical order.
  std::size_t index(const offset& o) const noexcept {
    std::size_t i = 0;
    for (int d = max_dims - 1; d >= 0; --d)
      i = i * static_cast<std::size_t>(hi[d] - lo[d] + 1) + static_cast<std::size_t>(o[d] - lo[d]);
    return i;
  }
};

}  // namespace haloshift::detail

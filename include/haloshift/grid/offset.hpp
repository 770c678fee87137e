// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file offset.hpp
/// @brief Offsets between boxes of a Cartesian grid, and their canonical order.

#include <array>
#include <string>

#include "../detail/compiled.hpp"

namespace haloshift {

/// Number of grid dimensions haloshift works in internally; 1D and 2D grids
/// use the first one or two, the others have size 1 and range 0.
inline constexpr int max_dims = 3;

/// An offset in boxes between two grid positions, `{dx, dy, dz}`; also used
/// for coordinates, sizes and per-dimension values. A type of haloshift's own
/// (not an alias of std::array) so that its arithmetic is found by
/// argument-dependent lookup in user code.
struct offset : std::array<int, max_dims> {
  friend constexpr bool operator==(const offset&, const offset&) = default;
};

/// The offset {0, 0, 0}: a box itself.
inline constexpr offset zero_offset{0, 0, 0};

/// Component-wise sum.
constexpr offset operator+(const offset& a, const offset& b) noexcept {
  return {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
}
/// Component-wise difference.
constexpr offset operator-(const offset& a, const offset& b) noexcept {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
/// The opposite offset.
constexpr offset operator-(const offset& a) noexcept { return {-a[0], -a[1], -a[2]}; }
/// Each component times `s`.
constexpr offset operator*(int s, const offset& a) noexcept { return {s * a[0], s * a[1], s * a[2]}; }

/// The unit offset along dimension `d`.
constexpr offset unit(int d) noexcept {
  offset u{0, 0, 0};
  u[d] = 1;
  return u;
}

namespace detail {
/// Canonical order: z slowest, x fastest. Laying blocks out in this order makes
/// every row (fixed y, z) and every plane (fixed z) one contiguous range, which
/// is what lets Shift send its phase-y and phase-z messages without packing.
constexpr bool canonical_less(const offset& a, const offset& b) noexcept {
  for (int d = max_dims - 1; d >= 0; --d)
    if (a[d] != b[d]) return a[d] < b[d];
  return false;
}

/// canonical_less as a comparator, for std::map, std::set and std::sort.
struct canonical_order {
  /// canonical_less(a, b).
  constexpr bool operator()(const offset& a, const offset& b) const noexcept { return canonical_less(a, b); }
};
}  // namespace detail

/// "(dx,dy,dz)" for messages.
HALOSHIFT_BUILDER std::string to_string(const offset& o);
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER std::string to_string(const offset& o) {
  return "(" + std::to_string(o[0]) + "," + std::to_string(o[1]) + "," + std::to_string(o[2]) + ")";
}
#endif

}  // namespace haloshift

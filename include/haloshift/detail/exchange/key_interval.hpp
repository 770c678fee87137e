// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file key_interval.hpp
/// @brief A half-open interval of one coordinate of a key: where a geometric
/// selector's condition along one dimension holds (selection.hpp).

namespace haloshift::detail {

/// The values `lo <= x < hi` of one coordinate of a key. For a box up from a
/// key's source only `lo` can refuse a key of the source box (and only `hi`
/// for a box down): the build compares with that bound alone.
template <class T>
struct key_interval {
  T lo, hi;  ///< the first value in, and the first value above it that is out
  /// Whether `x` lies in the interval.
  template <class U>
  bool contains(U x) const noexcept {
    return lo <= x && x < hi;
  }
};

}  // namespace haloshift::detail

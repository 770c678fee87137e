// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file detail/arithmetic.hpp
/// @brief Integer division and remainder rounded toward minus infinity: the
/// one place the library wraps coordinates on periodic rings and counts
/// images (C++'s / and % round toward zero, which is wrong for negatives).

#include <concepts>

namespace haloshift::detail {

/// floor(a / b) for b > 0.
template <std::integral T>
constexpr T floor_div(T a, T b) noexcept {
  const T q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/// a mod b in [0, b) for b > 0.
template <std::integral T>
constexpr T positive_mod(T a, T b) noexcept {
  const T r = a % b;
  return r < 0 ? r + b : r;
}

}  // namespace haloshift::detail

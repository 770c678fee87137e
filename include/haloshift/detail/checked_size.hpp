// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file checked_size.hpp
/// @brief Overflow-checked size arithmetic: a size that does not fit raises
/// haloshift::error naming what was being computed, never wraps silently.

#include <cstddef>
#include <string>

#include "../error.hpp"

namespace haloshift::detail {

/// `a * b`, or haloshift::error "<what>: a * b overflows size_t".
inline std::size_t checked_mul(std::size_t a, std::size_t b, const std::string& what) {
  std::size_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw error(what + ": " + std::to_string(a) + " * " + std::to_string(b) + " overflows size_t");
  return r;
}

/// `a + b`, or haloshift::error "<what>: a + b overflows size_t".
inline std::size_t checked_add(std::size_t a, std::size_t b, const std::string& what) {
  std::size_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw error(what + ": " + std::to_string(a) + " + " + std::to_string(b) + " overflows size_t");
  return r;
}

}  // namespace haloshift::detail

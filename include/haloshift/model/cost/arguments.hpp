// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file arguments.hpp
/// @brief Checks of the model layer's public arguments (byte counts, ranges,
/// protocols): a bad one raises haloshift::error naming the function, the
/// argument and its value, before any arithmetic on it.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../../error.hpp"
#include "../../exchange/protocol.hpp"
#include "../../grid/grid_shape.hpp"
#include "../../grid/neighborhood.hpp"

namespace haloshift::detail {

/// Largest k the model accepts along a dimension, and largest number of
/// blocks in a neighbourhood (prod_d (2 k_d + 1)): the closed forms count
/// messages in int.
inline constexpr int max_model_k = 1 << 20;
inline constexpr double max_model_blocks = 1 << 30;

/// A double printed as a number ("nan", "inf", "-1e+300", "0.5").
inline std::string value_text(double v) { return number_text(v); }

/// `name` must be a finite number of bytes >= 0.
inline void check_bytes(const char* where, const char* name, double bytes) {
  if (!std::isfinite(bytes) || bytes < 0)
    throw error(std::string(where) + ": " + name + " must be >= 0 bytes and finite, got " + value_text(bytes));
}

/// `mode` must be a protocol enumerator.
inline void check_protocol(const char* where, protocol mode) {
  if (mode != protocol::overlapping && mode != protocol::rendezvous)
    throw error(std::string(where) + ": mode must be protocol::overlapping or protocol::rendezvous, got " +
                std::to_string(static_cast<int>(mode)));
}

/// `r` must be a range: a shell enumerator, every k in [0, max_model_k], at least one positive.
inline void check_range(const char* where, const range& r) {
  if (r.kind != shell::full && r.kind != shell::eighth)
    throw error(std::string(where) + ": r.kind must be shell::full or shell::eighth, got " +
                std::to_string(static_cast<int>(r.kind)));
  bool any = false;
  for (int d = 0; d < max_dims; ++d) {
    if (r.k[d] < 0 || r.k[d] > max_model_k)
      throw error(std::string(where) + ": r.k[" + std::to_string(d) + "] must be in [0, " +
                  std::to_string(max_model_k) + "], got " + std::to_string(r.k[d]));
    any = any || r.k[d] > 0;
  }
  if (!any) throw error(std::string(where) + ": r is empty (k is 0 along every dimension)");
  double blocks = 1;
  for (int d = 0; d < max_dims; ++d) blocks *= r.high(d) - r.low(d) + 1.0;
  if (blocks > max_model_blocks)
    throw error(std::string(where) + ": r = " + to_string(r.k) + " spans " + value_text(blocks) +
                " blocks, more than " + value_text(max_model_blocks));
}

/// `r` must be a range of `grid`: check_range, and no k along dimensions the grid lacks.
inline void check_range(const char* where, const grid_shape& grid, const range& r) {
  check_range(where, r);
  for (int d = grid.ndims(); d < max_dims; ++d)
    if (r.k[d] != 0)
      throw error(std::string(where) + ": r.k[" + std::to_string(d) + "] = " + std::to_string(r.k[d]) +
                  " but the grid has only " + std::to_string(grid.ndims()) + " dimension(s)");
}

/// The arguments every model prediction takes: the range, the bytes per block `m`, the protocol.
inline void check_model_arguments(const char* where, const range& r, double m, protocol mode) {
  check_range(where, r);
  check_bytes(where, "m", m);
  check_protocol(where, mode);
}
/// The same, with the range checked against the grid's dimensions.
inline void check_model_arguments(const char* where, const grid_shape& grid, const range& r, double m,
                                  protocol mode) {
  check_range(where, grid, r);
  check_bytes(where, "m", m);
  check_protocol(where, mode);
}

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file particles.hpp
/// @brief The C interface's particle arrays as the C++ library reads them: hs_positions as a
/// position source (plans, rebuild) and as position columns (forward_positions), hs_column as a
/// strided column of 32-bit units (one compiled path for every element type), checked.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core.hpp"

namespace haloshift::c_api {

/// Particles' positions of the C interface, read as doubles (the plan's build and rebuild): x, y
/// and z of particle `i` at `first[d][i * stride]`.
template <std::floating_point F>
struct positions_source {
  std::array<const F*, 3> first{};
  std::size_t stride = 3, count = 0;
  std::size_t size() const noexcept { return count; }
  position operator[](std::size_t i) const noexcept {
    return {static_cast<double>(first[0][i * stride]), static_cast<double>(first[1][i * stride]),
            static_cast<double>(first[2][i * stride])};
  }
};

/// Whether the positions are split (one array per coordinate), after check_positions.
inline bool split(const hs_positions& x) noexcept { return x.y != nullptr; }
/// The stride of `x`, its default (0) resolved.
inline std::size_t stride_of(const hs_positions& x) noexcept { return x.stride ? x.stride : split(x) ? 1 : 3; }

/// Raises unless `x` describes positions: float or double, interleaved (stride >= 3) or split
/// (x, y and z given); `count` particles need the arrays.
void check_positions(const hs_positions* x, std::size_t count, const char* function);
/// Raises unless `c` (column `k` of a call) is a column: an hs_type, components >= 1, stride >=
/// components, data unless no particle (`count` 0) needs it.
void check_column(const hs_column& c, int k, std::size_t count, const char* function);
/// Raises unless `n` columns at `columns` can go (0 to HS_MAX_COLUMNS, an array unless 0), each checked.
void check_columns(const hs_column* columns, int n, std::size_t count, const char* function);

/// Calls `f(F{})` with the floating-point type of the positions.
template <class Fn>
decltype(auto) with_float(int type, const char* function, Fn&& f) {
  if (type == HS_FLOAT) return f(float{});
  if (type == HS_DOUBLE) return f(double{});
  throw error(std::string(function) + ": positions type = " + std::to_string(type) +
              " must be HS_FLOAT (0) or HS_DOUBLE (1)");
}

template <std::floating_point F>
positions_source<F> source_of(const hs_positions& x, std::size_t count) {
  const F* p = static_cast<const F*>(x.x);
  if (split(x)) return {{p, static_cast<const F*>(x.y), static_cast<const F*>(x.z)}, stride_of(x), count};
  return {{p, p + 1, p + 2}, stride_of(x), count};
}

}  // namespace haloshift::c_api

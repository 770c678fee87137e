// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The arithmetic of the heat-equation example, shared by the distributed run
// and its serial reference so that both evaluate every cell with the same
// expression in the same order (what "equal to the last bit" needs). The data
// movement, which is what the comparison tests, is not shared.

#include <cmath>
#include <cstdint>
#include <cstring>

namespace heat {

/// Initial temperature of global cell (x, y, z): a reproducible pattern in [0, 1).
inline double initial(int x, int y, int z) {
  const std::uint64_t h = (static_cast<std::uint64_t>(x) * 73856093u) ^ (static_cast<std::uint64_t>(y) * 19349663u) ^
                          (static_cast<std::uint64_t>(z) * 83492791u);
  return static_cast<double>(h % 1000) / 1000.0;
}

/// One explicit step: the cell relaxes towards the mean of its neighbours
/// (6 faces for the 7-point stencil, all 26 for the 27-point one). `at(dx, dy,
/// dz)` reads a neighbour; neighbours are summed z slowest, x fastest.
constexpr double diffusion = 0.5;
template <class At>
double step(int points, At&& at) {
  double sum = 0;
  if (points == 7) {
    sum = at(0, 0, -1) + at(0, -1, 0) + at(-1, 0, 0) + at(1, 0, 0) + at(0, 1, 0) + at(0, 0, 1);
    return at(0, 0, 0) + diffusion * (sum / 6.0 - at(0, 0, 0));
  }
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        if (dx || dy || dz) sum += at(dx, dy, dz);
  return at(0, 0, 0) + diffusion * (sum / 26.0 - at(0, 0, 0));
}

/// An order-independent checksum of cell (x, y, z) holding v: summed over
/// cells (mod 2^64), it does not depend on how the cells are split.
inline std::uint64_t checksum(int x, int y, int z, double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  std::uint64_t h = bits ^ (static_cast<std::uint64_t>(x) << 42) ^ (static_cast<std::uint64_t>(y) << 21) ^
                    static_cast<std::uint64_t>(z);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

}  // namespace heat

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Brute-force reference for halo exchanges, computed from grid coordinates
// alone: no schedule, no messages. Deliberately shares no code with the
// library's grid arithmetic, so a mistake there cannot hide in both.

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace oracle {

using coords = std::array<int, 3>;

struct grid {
  coords dims{1, 1, 1};
  std::array<bool, 3> periodic{false, false, false};
  bool x_fastest = false;  ///< ranks numbered with x fastest (grid_options::order first_fastest), else z fastest
  int size() const { return dims[0] * dims[1] * dims[2]; }
  coords coords_of(int r) const {
    if (x_fastest) return {r % dims[0], (r / dims[0]) % dims[1], r / (dims[0] * dims[1])};
    return {r / (dims[1] * dims[2]), (r / dims[2]) % dims[1], r % dims[2]};
  }
  int rank_of(const coords& c) const {
    return x_fastest ? (c[2] * dims[1] + c[1]) * dims[0] + c[0] : (c[0] * dims[1] + c[1]) * dims[2] + c[2];
  }
};

struct expected_block {
  coords offset;
  int source;
  coords image;
};

/// Every block rank `r` must receive with per-dimension range `k`
/// (low[d]..k[d] per dimension: low = -k for the full shell, 0 for the eighth),
/// in z-slowest, x-fastest order. `separated`: the most dimensions along which
/// an offset may be non-zero (a halo pattern: 1 faces, 2 faces and edges, 3 all).
inline std::vector<expected_block> halo_of(const grid& g, int r, const coords& k, bool eighth, int separated = 3) {
  std::vector<expected_block> out;
  const coords c = g.coords_of(r);
  const coords low{eighth ? 0 : -k[0], eighth ? 0 : -k[1], eighth ? 0 : -k[2]};
  for (int z = low[2]; z <= k[2]; ++z)
    for (int y = low[1]; y <= k[1]; ++y)
      for (int x = low[0]; x <= k[0]; ++x) {
        if (x == 0 && y == 0 && z == 0) continue;
        if ((x != 0) + (y != 0) + (z != 0) > separated) continue;
        const coords o{x, y, z};
        coords t{}, image{};
        bool exists = true;
        for (int d = 0; d < 3; ++d) {
          int v = c[d] + o[d];
          image[d] = 0;
          while (g.periodic[d] && v < 0) v += g.dims[d], --image[d];
          while (g.periodic[d] && v >= g.dims[d]) v -= g.dims[d], ++image[d];
          if (v < 0 || v >= g.dims[d]) exists = false;
          t[d] = v;
        }
        if (exists) out.push_back({o, g.rank_of(t), image});
      }
  return out;
}

/// Index of an offset inside a (2k+1)^3 box, for contribution patterns.
inline int offset_code(const coords& o) { return ((o[2] + 50) * 101 + (o[1] + 50)) * 101 + (o[0] + 50); }

}  // namespace oracle

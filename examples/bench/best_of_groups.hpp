// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The --shared-memory tables of the benchmarks (strategies.cpp, particles.cpp): variants timed
// side by side in groups (over MPI, on the shared-memory path's slots, with zero copy), each row
// the best of every group and each later group's speedup over the first.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "round_robin.hpp"

namespace bench {

/// The median (us) of the fastest of variants [first, last) of `t`, and which it is.
inline std::pair<double, std::size_t> fastest(const std::vector<std::vector<double>>& t, std::size_t first,
                                              std::size_t last) {
  std::size_t best = first;
  for (std::size_t v = first; v < last; ++v)
    if (median(t[v]) < median(t[best])) best = v;
  return {median(t[best]) * 1e6, best};
}

/// One Markdown row: the best variant of each group of `t` (groups [bounds[i], bounds[i + 1]), the
/// first over MPI), its median in us and name, then each later group's speedup over the first.
inline void print_best_of_groups(const std::string& what, const std::vector<std::vector<double>>& t,
                                 const std::vector<std::size_t>& bounds, const std::vector<std::string>& names) {
  std::string row = "| " + what + " |", speedups;
  const double mpi_us = fastest(t, bounds[0], bounds[1]).first;
  for (std::size_t g = 0; g + 1 < bounds.size(); ++g) {
    const auto [us, best] = fastest(t, bounds[g], bounds[g + 1]);
    char cell[96];
    std::snprintf(cell, sizeof cell, " %.1f %s |", us, names[best].c_str());
    row += cell;
    if (g == 0) continue;
    std::snprintf(cell, sizeof cell, " %.2f |", mpi_us / us);
    speedups += cell;
  }
  std::printf("%s%s\n", row.c_str(), speedups.c_str());
  std::fflush(stdout);
}

}  // namespace bench

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file balance_cuts.hpp
/// @brief The balancer's arithmetic on cuts (detail): the current cuts of a
/// domain, how far targets may move, where spread or point work reaches equal
/// shares, imbalance, and agreeing on cuts bit for bit. rebalance()
/// (balance.hpp) strings them together.

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include "../../grid/cartesian_grid.hpp"
#include "../mpi/check.hpp"
#include "../../payload/domain.hpp"

namespace haloshift::detail {

/// The edges of the boxes along `d` as the domain splits it now.
inline std::vector<double> current_cuts(const grid_shape& grid, const domain& dom, int d) {
  std::vector<double> c(static_cast<std::size_t>(grid.dim(d)) + 1);
  for (int i = 0; i <= grid.dim(d); ++i) c[static_cast<std::size_t>(i)] = dom.edge(grid, d, i);
  return c;
}

/// Moves the targets of the inner cuts no further than `max_move` of the box each moves into (the
/// old cuts' boxes), and keeps them nondecreasing inside [old.front(), old.back()].
inline std::vector<double> bounded_cuts(const std::vector<double>& old, const std::vector<double>& target,
                                        double max_move) {
  const std::size_t n = old.size() - 1;
  std::vector<double> out = target;
  out.front() = old.front();
  out.back() = old.back();
  for (std::size_t i = 1; i < n; ++i) {
    if (std::isfinite(max_move)) {
      const double down = old[i] - max_move * (old[i] - old[i - 1]), up = old[i] + max_move * (old[i + 1] - old[i]);
      out[i] = std::clamp(out[i], down, up);
    }
    out[i] = std::clamp(out[i], out[i - 1], old.back());
  }
  return out;
}

/// Where the cumulative work reaches each share: `slab[c]` of work spread evenly over box c of
/// `cuts` (an empty box holds its work at its edge); the inner cuts of an even split of the work.
inline std::vector<double> shares_of_spread_work(const std::vector<double>& cuts, const std::vector<double>& slab) {
  const std::size_t n = slab.size();
  const double total = std::accumulate(slab.begin(), slab.end(), 0.0);
  std::vector<double> out = cuts;
  if (!(total > 0)) return out;
  std::size_t box = 0;
  double below = 0;  // work of the boxes before `box`
  for (std::size_t i = 1; i < n; ++i) {
    const double share = total * static_cast<double>(i) / static_cast<double>(n);
    while (box < n - 1 && below + slab[box] < share) below += slab[box++];
    const double width = cuts[box + 1] - cuts[box];
    const double inside = slab[box] > 0 ? std::clamp((share - below) / slab[box], 0.0, 1.0) : 0.0;
    out[i] = std::clamp(cuts[box] + inside * width, cuts[box], cuts[box + 1]);
  }
  return out;
}

/// max / mean of `work` (1 when there is none).
inline double imbalance_of(std::span<const double> work) {
  double most = 0, sum = 0;
  for (double w : work) most = std::max(most, w), sum += w;
  return sum > 0 ? most * static_cast<double>(work.size()) / sum : 1.0;
}

/// Every rank's value of `mine`, by rank.
inline std::vector<double> gather_work(const cartesian_grid& grid, double mine) {
  std::vector<double> all(static_cast<std::size_t>(grid.size()));
  mpi::check(MPI_Allgather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, grid.comm()), "MPI_Allgather");
  return all;
}

/// Per rank, the work its box holds under `dom` (each rank's share of the sum over all ranks).
template <class Owner>
double work_owned(const cartesian_grid& grid, std::size_t n, Owner owner_and_weight) {
  std::vector<double> by_rank(static_cast<std::size_t>(grid.size()), 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto [rank, w] = owner_and_weight(i);
    by_rank[static_cast<std::size_t>(rank)] += w;
  }
  double mine = 0;
  mpi::check(MPI_Reduce_scatter_block(by_rank.data(), &mine, 1, MPI_DOUBLE, MPI_SUM, grid.comm()),
             "MPI_Reduce_scatter_block");
  return mine;
}

/// The cuts along `d` that split the weighted coordinates `x` (this rank's, sorted, with prefix
/// sums of their weights) into equal shares over all ranks: bisection of all inner cuts at once,
/// each round one MPI_Allreduce of the work below every trial cut.
inline std::vector<double> shares_of_points(const cartesian_grid& grid, const domain& dom, int d,
                                            const std::vector<double>& x, const std::vector<double>& prefix,
                                            double tolerance, int& rounds) {
  const std::size_t n = static_cast<std::size_t>(grid.dim(d));
  std::vector<double> out = current_cuts(grid.shape(), dom, d);
  double total = prefix.back();
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_SUM, grid.comm()), "MPI_Allreduce");
  if (!(total > 0) || n < 2) return out;
  auto below = [&](double t) {  // this rank's work strictly below t (the half-open boxes' rule)
    return prefix[static_cast<std::size_t>(std::lower_bound(x.begin(), x.end(), t) - x.begin())];
  };
  std::vector<double> lo(n - 1, dom.lo[d]), hi(n - 1, dom.hi[d]), trial(n - 1), work(n - 1);
  std::vector<double> best(n - 1, 0), best_error(n - 1, std::numeric_limits<double>::infinity());
  const double slack = tolerance * total / static_cast<double>(n);
  for (int round = 0; round < 200; ++round) {
    for (std::size_t i = 0; i + 1 < n; ++i) trial[i] = lo[i] + (hi[i] - lo[i]) / 2, work[i] = below(trial[i]);
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, work.data(), static_cast<int>(n - 1), MPI_DOUBLE, MPI_SUM, grid.comm()),
               "MPI_Allreduce");
    ++rounds;
    bool done = true;
    for (std::size_t i = 0; i + 1 < n; ++i) {
      const double share = total * static_cast<double>(i + 1) / static_cast<double>(n);
      const double miss = std::abs(work[i] - share);
      if (miss < best_error[i]) best_error[i] = miss, best[i] = trial[i];
      (work[i] < share ? lo[i] : hi[i]) = trial[i];
      // Done when the share is met, or the bracket is down to neighbouring doubles (a point of weight
      // sits at the share: the nearer side stands).
      const double next = lo[i] + (hi[i] - lo[i]) / 2;
      done = done && (best_error[i] <= slack || !(next > lo[i] && next < hi[i]));
    }
    if (done) break;
  }
  std::sort(best.begin(), best.end());
  for (std::size_t i = 1; i < n; ++i) out[i] = best[i - 1];
  return out;
}

/// Rank 0's cuts on every rank: floating-point reductions need not give every rank the same bits,
/// and ranks must agree on the cuts exactly.
inline void broadcast_cuts(const cartesian_grid& grid, std::vector<double>& cuts) {
  mpi::check(MPI_Bcast(cuts.data(), static_cast<int>(cuts.size()), MPI_DOUBLE, 0, grid.comm()), "MPI_Bcast");
}

}  // namespace haloshift::detail

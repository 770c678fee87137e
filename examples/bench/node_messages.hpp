// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// haloshift_bench_strategies --nodes: flat Shift and SingleHop against
// NodeAggregate on pretend nodes (grid_options::node_sizes), side by side in
// one run: each one's messages per exchange (from its schedule, every rank's
// program compiled here; those between nodes in brackets) and its median time.
#include <haloshift/haloshift.hpp>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "round_robin.hpp"

namespace bench {

/// Messages of one exchange of `name` on `grid` at `k`, over all ranks, and those between nodes.
inline std::pair<std::size_t, std::size_t> messages_of(const haloshift::cartesian_grid& grid, std::string_view name,
                                                       int k) {
  namespace hs = haloshift;
  const auto& nodes = hs::detail::nodes_of(grid);
  const hs::detail::strategy_entry e = hs::detail::strategy_registry::instance().find(name);
  const hs::range r = hs::make_range(grid.shape(), k);
  const hs::schedule s = e.make_schedule(grid.shape(), r, {.node_of = nodes.node_of});
  std::size_t all = 0, between = 0;
  for (int rank = 0; rank < grid.size(); ++rank) {
    const hs::detail::program p = hs::detail::compile(s, grid.shape(), grid.shape().coords_of(rank), r,
                                                      [](const hs::offset&) { return std::size_t{1}; }, name);
    for (const auto& round : p.rounds)
      for (const auto& t : round.transfers)
        if (t.send.exists() && !t.self) {
          ++all;
          between += (*nodes.node_of)[static_cast<std::size_t>(rank)] !=
                     (*nodes.node_of)[static_cast<std::size_t>(t.send.peer)];
        }
  }
  return {all, between};
}

/// The table for pretend nodes of each size in `node_sizes`; returns 1 after a halo that differs from Shift's.
inline int node_aware_table(const std::vector<long>& node_sizes, const std::vector<long>& ks,
                            const std::vector<long>& ms, double budget, int max_reps) {
  namespace hs = haloshift;
  const std::vector<std::string> names{"Shift", "SingleHop", "NodeAggregate"};
  int failures = 0, size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (long node_size : node_sizes) {
    hs::cartesian_grid grid(MPI_COMM_WORLD,
                            {.dims = {0, 0, 0}, .periodic = {true, true, true}, .node_sizes = {int(node_size)}});
    const bool root = grid.rank() == 0;
    if (root)
      std::printf("\n%d ranks in pretend nodes of %ld, periodic grid %dx%dx%d, %s; median of the max over ranks, us "
                  "(messages per exchange, all ranks / between nodes)\n\n| k | m | Shift | SingleHop | NodeAggregate "
                  "| best |\n|---:|---:|---:|---:|---:|:---|\n",
                  size, node_size, grid.dim(0), grid.dim(1), grid.dim(2), mpi_library().c_str());
    for (long k : ks)
      for (long m : ms) {
        std::vector<std::byte> mine(static_cast<std::size_t>(m));
        for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = std::byte(static_cast<unsigned char>(grid.rank() * 31 + i));
        std::vector<hs::plan<std::byte>> plans;
        std::vector<hs::halo<std::byte>> halos;
        for (const std::string& name : names) {
          plans.push_back(hs::make_plan<std::byte>(grid, name, static_cast<int>(k), mine.size()));
          halos.push_back(plans.back().make_halo());
          plans.back().forward(mine, halos.back());
        }
        for (std::size_t v = 1; v < plans.size(); ++v)  // every halo equals Shift's, block by block
          for (const auto& b : halos[v])
            failures += std::memcmp(b.data.data(), halos[0].at(b.offset).data.data(), b.data.size()) != 0;
        MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (failures) {
          if (root) std::fprintf(stderr, "MISMATCH at nodes of %ld, k=%ld m=%ld\n", node_size, k, m);
          return 1;
        }
        std::vector<std::function<void()>> run;
        for (std::size_t v = 0; v < plans.size(); ++v) run.push_back([&, v] { plans[v].forward(mine, halos[v]); });
        const auto t = round_robin(MPI_COMM_WORLD, run, budget, 5, max_reps);
        if (!root) continue;
        std::printf("| %ld | %ld |", k, m);
        std::size_t best = 0;
        for (std::size_t v = 0; v < plans.size(); ++v) {
          const auto [all, between] = messages_of(grid, names[v], static_cast<int>(k));
          std::printf(" %.1f (%zu / %zu) |", median(t[v]) * 1e6, all, between);
          if (median(t[v]) < median(t[best])) best = v;
        }
        std::printf(" %s |\n", names[best].c_str());
        std::fflush(stdout);
      }
  }
  return failures;
}

}  // namespace bench

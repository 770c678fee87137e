// SPDX-License-Identifier: BSD-3-Clause
// Write your own strategy: ZyxShift (zyx_shift.hpp) runs through the same
// plan, executor and checks as the built-in ones. This program compares its
// halo, forward and reverse, with Shift's and with the owners' data, then
// registers it: plans are built from its name, and Auto ranks it with the rest.
//   mpiexec -n 4 ./haloshift_custom_strategy [k]   (or --k K)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tool.hpp"
#include "zyx_shift.hpp"

#include <haloshift/auto.hpp>

namespace hs = haloshift;

int main(int argc, char** argv) {
  return tool::mpi_main("haloshift_custom_strategy", argc, argv, [&](tool::context& ctx) {
    CLI::App app{
        "Compares the halo of a user-written strategy (ZyxShift: Shift with the dimensions in the order "
        "z, y, x), forward and reverse, with Shift's and with the owners' data.",
        "haloshift_custom_strategy"};
    tool::add_version(app);
    int k = 2;
    app.add_option("k,--k", k, "Neighbourhood width")->check(tool::integer(1, 64))->capture_default_str();
    if (const int status = tool::parse(app, argc, argv, ctx.lead()); status >= 0) return status;
    int failures = 0;
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, false, true}});
    std::vector<double> mine(static_cast<std::size_t>(grid.rank() % 3 + 1));
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = grid.rank() + 0.125 * static_cast<double>(i);

    // Registered, the strategy is also known by name (from an input file, say) and is one of Auto's
    // candidates: explain() ranks it with the built-in strategies.
    hs::register_strategy<ZyxShift>();
    auto custom = hs::make_plan<double>(grid, "zyxshift", k, mine.size());
    const auto ranking = hs::explain(grid.shape(), hs::make_range(grid.shape(), k), 8.0 * static_cast<double>(mine.size()),
                                     hs::hockney(1.5e-6, 1e-10, 0.3e-6));
    failures += std::none_of(ranking.begin(), ranking.end(), [](const hs::prediction& p) { return p.strategy == "ZyxShift"; });
    if (grid.rank() == 0)
      for (const auto& p : ranking)
        std::printf("predicted %-12s %8.2f us\n", p.strategy.c_str(), p.seconds * 1e6);
    auto shift = hs::make_plan<hs::Shift, double>(grid, k, mine.size());
    const auto a = custom.forward(mine);
    const auto b = shift.forward(mine);
    auto ia = a.begin();
    for (const auto& block : b) {
      const auto other = *ia++;
      const auto owner = grid.neighbor_at(block.offset);
      const bool same = other.offset == block.offset && other.source == block.source && owner &&
                        owner->rank == block.source && other.data.size() == block.data.size() &&
                        (block.data.empty() ||
                         std::memcmp(other.data.data(), block.data.data(), block.data.size_bytes()) == 0) &&
                        (block.data.empty() || block.data[0] == static_cast<double>(block.source));
      failures += !same;
    }
    failures += a.size() != b.size();

    // Reverse: every holder returns 1 per element; both strategies must add the same.
    auto ca = custom.make_halo();
    auto cb = shift.make_halo();
    for (auto blk : ca) std::fill(blk.data.begin(), blk.data.end(), 1.0);
    for (auto blk : cb) std::fill(blk.data.begin(), blk.data.end(), 1.0);
    std::vector<double> ra = mine, rb = mine;
    custom.reverse(ca, std::span<double>(ra));
    shift.reverse(cb, std::span<double>(rb));
    failures += ra != rb;

    std::printf("rank %d: %s, %zu blocks, %zu messages (Shift: %zu)\n", grid.rank(),
                failures ? "MISMATCH" : "same halo and reverse sums as Shift", a.size(),
                custom.details().messages_sent, shift.details().messages_sent);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return total == 0 ? 0 : 1;
  });
}

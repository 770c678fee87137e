// SPDX-License-Identifier: BSD-3-Clause
// Shift demo: every rank of a periodic 3D grid imports its k-neighbourhood
// and prints a one-line summary of its halo and the exchange time.
//   mpiexec -n 4 ./haloshift_shift_demo [k] [elements]   (or --k K --elements N)
#include <cstdio>
#include <cstdlib>
#include <haloshift/haloshift.hpp>
#include <numeric>

#include "tool.hpp"

int main(int argc, char** argv) {
  return tool::mpi_main("haloshift_shift_demo", argc, argv, [&](tool::context& ctx) {
    CLI::App app{
        "Every rank of a periodic 3D grid imports its k-neighbourhood with Shift and prints a one-line "
        "summary of its halo and the exchange time.",
        "haloshift_shift_demo"};
    tool::add_version(app);
    int k = 1;
    std::size_t n = 1000;
    app.add_option("k,--k", k, "Neighbourhood width")->check(tool::integer(1, 64))->capture_default_str();
    app.add_option("elements,--elements", n, "Elements (doubles) per rank")
        ->check(tool::integer(0, 1 << 28))
        ->capture_default_str();
    if (const int status = tool::parse(app, argc, argv, ctx.lead()); status >= 0) return status;
    haloshift::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}});
    std::vector<double> mine(n, static_cast<double>(grid.rank()));
    auto plan = haloshift::make_plan<haloshift::Shift, double>(grid, k, mine.size());
    auto halo = plan.make_halo();
    plan.forward(mine, halo);  // warm-up
    const int repetitions = 100;
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < repetitions; ++i) plan.forward(mine, halo);
    const double seconds = (MPI_Wtime() - start) / repetitions;

    double sum = 0;
    std::size_t self_images = 0;
    for (const auto& b : halo) {
      sum += std::accumulate(b.data.begin(), b.data.end(), 0.0);
      self_images += b.source == grid.rank();
    }
    const auto& c = grid.coords();
    for (int r = 0; r < grid.size(); ++r) {
      if (r == grid.rank())
        std::printf("rank %d at (%d,%d,%d) of %dx%dx%d: %zu blocks (%zu images of itself), %zu messages sent, "
                    "checksum %.0f, exchange %.1f us\n",
                    r, c[0], c[1], c[2], grid.dim(0), grid.dim(1), grid.dim(2), halo.size(), self_images,
                    plan.details().messages_sent, sum, seconds * 1e6);
      std::fflush(stdout);
      MPI_Barrier(MPI_COMM_WORLD);
    }
    return 0;
  });
}

// SPDX-License-Identifier: BSD-3-Clause
// Block creation as in NAStJA (msn-global-network, Sec. I and II-A): every
// rank owns a region of 4x4x4 blocks of a 3D domain; an interface moves
// through the domain and ranks create blocks where it arrives. New blocks are
// announced over an MSN; a rank whose region is within one block of a new
// block reacts (in NAStJA: builds a local group with the block's owner).
//
//   mpiexec -n 8 haloshift-announce [--steps 24] [--delay 8] [--degree D] [--quiet] [--help] [--version]
//
// --steps: steps in which blocks are created (also the first positional
// argument); --delay: the delay in steps the application tolerates, which
// picks the smallest MSN degree whose diameter fits; --degree: that degree
// instead; --quiet: no line per reaction. Prints which ranks reacted to which
// blocks and checks that every rank heard of every block exactly once, no
// later than the network's diameter (exit status 1 if not).

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <haloshift/auto.hpp>
#include <haloshift/haloshift.hpp>
#include <vector>

#include "tool.hpp"

namespace hs = haloshift;

namespace {

constexpr int blocks_per_rank = 4;  // per dimension

/// What a new-block announcement carries (trivially copyable: no serialization needed).
struct new_block {
  int owner;
  hs::offset block;  // global block coordinates
};

/// Chebyshev distance in blocks from `block` to the region of the rank at `coords`.
int distance_to_region(const hs::offset& block, const hs::offset& coords) {
  int far = 0;
  for (int d = 0; d < 3; ++d) {
    const int low = coords[d] * blocks_per_rank, high = low + blocks_per_rank - 1;
    far = std::max(far, block[d] < low ? low - block[d] : block[d] > high ? block[d] - high : 0);
  }
  return far;
}

}  // namespace

int main(int argc, char** argv) {
  return tool::mpi_main("haloshift-announce", argc, argv, [&](tool::context& ctx) {
    CLI::App app{
        "Block creation as in NAStJA: an interface moves through a domain of 4x4x4 blocks per rank, ranks "
        "create blocks where it arrives and announce them over a Manhattan Street Network; ranks within "
        "one block of a new block react. Checks that every rank hears of every block exactly once, no "
        "later than the network's diameter.",
        "haloshift-announce"};
    tool::add_version(app);
    int steps = 24, tolerated_delay = 8, chosen_degree = 0;
    bool quiet = false;
    app.add_option("steps,--steps", steps, "Steps in which blocks are created")
        ->check(tool::integer(0, 1 << 20))
        ->capture_default_str();
    auto* delay_option = app.add_option("--delay", tolerated_delay,
                                        "Delay in steps the application tolerates: the MSN gets the smallest degree "
                                        "whose diameter fits it")
                             ->check(tool::integer(1, 1 << 20))
                             ->capture_default_str();
    app.add_option("--degree", chosen_degree, "MSN degree (instead of the one --delay picks)")
        ->check(tool::integer(1, 30))
        ->excludes(delay_option);
    app.add_flag("--quiet", quiet, "No line per reaction, only the summary");
    if (const int status = tool::parse(app, argc, argv, ctx.lead()); status >= 0) return status;
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {false, false, false}});

    // Which MSN? The smallest degree whose diameter fits the tolerated delay, 8 steps by default
    // (in NAStJA: the block size minus the steps a new local group needs).
    const int degree =
        chosen_degree > 0 ? chosen_degree : std::max(1, hs::msn_smallest_degree(grid.size(), tolerated_delay));
    hs::msn_announce<new_block> announcements(MPI_COMM_WORLD, degree);
    if (grid.rank() == 0)
      std::printf("%d ranks (grid %s), MSN of degree %d, diameter %d\n", grid.size(), hs::to_string(grid.shape()).c_str(),
                  degree, announcements.diameter());

    // The interface: a plane x + y + z = step moving diagonally through the
    // domain; a rank creates a block where the plane crosses its region's
    // lowest corner row (a stand-in for NAStJA's interface tracking).
    long created = 0, heard = 0, late = 0, reacted = 0;
    const hs::offset& me = grid.coords();
    for (int step = 0; step < steps + announcements.diameter(); ++step) {
      if (step < steps) {
        const hs::offset corner = blocks_per_rank * me;
        const int along = step - (corner[0] + corner[1] + corner[2]);
        if (along >= 0 && along < blocks_per_rank && (step + grid.rank()) % 3 == 0) {
          announcements.post({grid.rank(), {corner[0] + along, corner[1], corner[2]}});
          ++created;
        }
      }
      announcements.step();
      for (const auto& a : announcements.delivered()) {
        ++heard;
        if (step - a.posted_step > std::max(announcements.diameter() - 1, 0)) ++late;
        if (a.origin != grid.rank() && distance_to_region(a.value.block, me) <= 1) {
          ++reacted;
          if (!quiet)
            std::printf("step %3d: rank %d reacts to block %s of rank %d (%d hops away)\n", step, grid.rank(),
                        hs::to_string(a.value.block).c_str(), a.origin, a.hops);
        }
      }
    }
    long all_created = 0;
    std::vector<long> mine{heard, late, reacted}, low(3), high(3);
    MPI_Allreduce(&created, &all_created, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(mine.data(), low.data(), 3, MPI_LONG, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine.data(), high.data(), 3, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    const bool ok = heard == all_created && late == 0;
    int all_ok = ok;
    MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (grid.rank() == 0)
      std::printf("%ld blocks created; every rank heard of %ld to %ld of them, %ld to %ld late; reactions per rank: "
                  "%ld to %ld: %s\n",
                  all_created, low[0], high[0], low[1], high[1], low[2], high[2], all_ok ? "OK" : "FAILED");
    return all_ok ? 0 : 1;
  });
}

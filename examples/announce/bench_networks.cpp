// SPDX-License-Identifier: BSD-3-Clause
// Per-step cost of NAStJA's information networks against MPI collectives
// (docs/performance.md, "Information networks"). Every step carries one
// announcement of m bytes in total, posted by rank (step mod P):
//   MsnAnnounce at degrees 2..5, TTL multi-hop over the grid (hops = the
//   grid's radius, so it reaches every rank), MPI_Allgatherv and
//   MPI_Iallgatherv (counts known in advance: m from the poster, 0 from the
//   others; a collective cannot do with less), and the local single-hop
//   exchange where every rank sends m bytes to each of its 26 neighbours.
// Prints one line per method: the mean step time, maximum over ranks.
//
//   mpiexec -n 8 haloshift_bench_networks [--m 400,8000,800000] [--steps 200] [--quick] [--malloc-default]
//
// The networks hand every delivered message to the user as a fresh value, so
// each step allocates and frees buffers of the message size. glibc returns
// large freed blocks to the kernel, and in this VM every page of the next
// allocation then costs a page fault (most of an 800 kB step: docs). By
// default the bench keeps freed memory in the process (M_MMAP_THRESHOLD and
// M_TRIM_THRESHOLD raised), as long-running simulation codes usually do;
// --malloc-default keeps glibc's defaults.

#include <haloshift/haloshift.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <malloc.h>

namespace hs = haloshift;

namespace {

std::vector<long> parse_list(const std::string& text) {
  std::vector<long> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stol(item));
  return out;
}

/// Mean seconds per call of `step` over `steps` calls after 5 warm-up calls, maximum over ranks.
double time_steps(int steps, const std::function<void(int)>& step) {
  for (int s = 0; s < 5; ++s) step(s);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int s = 0; s < steps; ++s) step(s + 5);
  double mean = (MPI_Wtime() - start) / steps;
  MPI_Allreduce(MPI_IN_PLACE, &mean, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return mean;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<long> sizes{400, 8000, 800000};
  int steps = 200;
  bool malloc_default = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--m" && i + 1 < argc) sizes = parse_list(argv[++i]);
    else if (a == "--steps" && i + 1 < argc) steps = std::atoi(argv[++i]);
    else if (a == "--quick") sizes = {400}, steps = 10;
    else if (a == "--malloc-default") malloc_default = true;
  }
  if (!malloc_default) {
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
  }
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}});
  if (rank == 0) std::printf("%d ranks, grid %s%s\n| method | bytes/step | us/step |\n|---|---:|---:|\n", size,
                             hs::to_string(grid.shape()).c_str(), malloc_default ? ", glibc malloc defaults" : "");
  auto report = [&](const std::string& method, long m, double seconds) {
    if (rank == 0) std::printf("| %s | %ld | %.1f |\n", method.c_str(), m, seconds * 1e6);
  };
  for (long m : sizes) {
    const hs::byte_buffer message(static_cast<std::size_t>(m), std::byte{7});
    const int rounds = m >= 800000 ? std::max(steps / 10, 5) : steps;
    for (int degree = 2; degree <= 5; ++degree) {
      hs::msn_announce<hs::byte_buffer> net(MPI_COMM_WORLD, degree);
      const double t = time_steps(rounds, [&](int s) {
        if (s % size == rank) net.post(message);
        net.step();
      });
      report("MsnAnnounce degree " + std::to_string(degree) + " (diameter " + std::to_string(net.diameter()) + ")", m, t);
    }
    {
      int radius = 1;
      for (int d = 0; d < grid.ndims(); ++d) radius = std::max(radius, grid.dim(d) / 2);
      hs::ttl_local_exchange<hs::byte_buffer> net(grid, radius);
      report("TTL multi-hop (" + std::to_string(radius) + " hops)", m, time_steps(rounds, [&](int s) {
               if (s % size == rank) net.post(message);
               net.step();
             }));
    }
    {
      hs::local_exchange<std::byte> net(grid);
      report("local single-hop (m to each neighbour)", m, time_steps(rounds, [&](int) { net.step(message); }));
    }
    std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
    hs::byte_buffer gathered(static_cast<std::size_t>(m));
    auto prepare = [&](int s) {
      std::fill(counts.begin(), counts.end(), 0);
      counts[static_cast<std::size_t>(s % size)] = static_cast<int>(m);
      for (int r = 1; r < size; ++r) displs[static_cast<std::size_t>(r)] = displs[static_cast<std::size_t>(r - 1)] + counts[static_cast<std::size_t>(r - 1)];
      return s % size == rank ? static_cast<int>(m) : 0;
    };
    report("MPI_Allgatherv", m, time_steps(rounds, [&](int s) {
             const int mine = prepare(s);
             MPI_Allgatherv(message.data(), mine, MPI_BYTE, gathered.data(), counts.data(), displs.data(), MPI_BYTE,
                            MPI_COMM_WORLD);
           }));
    report("MPI_Iallgatherv", m, time_steps(rounds, [&](int s) {
             const int mine = prepare(s);
             MPI_Request request;
             MPI_Iallgatherv(message.data(), mine, MPI_BYTE, gathered.data(), counts.data(), displs.data(), MPI_BYTE,
                             MPI_COMM_WORLD, &request);
             MPI_Wait(&request, MPI_STATUS_IGNORE);
           }));
  }
  MPI_Finalize();
  return 0;
}

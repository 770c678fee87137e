// SPDX-License-Identifier: BSD-3-Clause
// haloshift_bench_strategies: every strategy against the two baselines, side
// by side in one run: the hand-written MPI Shift (raw_shift.hpp) and
// MPI_Neighbor_alltoallv (the NeighborAlltoall strategy is exactly that call on
// a distributed graph). Periodic 3D grid of all ranks, block mode.
//
//   mpiexec -n 8 ./haloshift_bench_strategies [--k 1,2,3,4] [--m 64,1024,...] [--reps N]
//   mpiexec -n 8 ./haloshift_bench_strategies --nodes 2,4 [--k ...] [--m ...]
//
// --nodes: pretend nodes of each given size (grid_options::node_sizes) instead:
// flat Shift and SingleHop against NodeAggregate, with each one's messages per
// exchange (all ranks; between nodes in brackets), the same checks and timing.
//
// Every variant is first checked against the hand-written Shift's halo, byte
// for byte. Then the variants run round robin (A B C ... A B C ...), each
// repetition a barrier and one exchange timed as the maximum over ranks; the
// table shows medians in microseconds, the winner, and each time divided by
// the hand-written Shift's.
//
// --shared-memory: the shared-memory path inside a node (plan_options::shared_memory,
// docs/node-aware.md) through its slots and with zero copy (halos in node-shared memory,
// make_shared_halo; the field as a view of a shared_array) against the best MPI strategy,
// side by side, per k and m, then a 128^3 field of doubles (ghost width 1; --field N: N^3);
// the other options as above.
#include <haloshift/haloshift.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "best_of_groups.hpp"
#include "node_messages.hpp"
#include "raw_shift.hpp"
#include "round_robin.hpp"

namespace hs = haloshift;
using bench::median;
using bench::parse_list;

namespace {

/// The variants of a row: over MPI, on the shared-memory path (slots), zero copy (shared halos or arrays).
const std::vector<std::string> variant_names{"Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall", "Shift",
                                             "SingleHop", "TtlMultiHop", "Shift", "SingleHop", "TtlMultiHop"};
const std::vector<std::size_t> variant_groups{0, 4, 7, 10};

/// The plans of one block row: variant_names over MPI, then twice on the shared-memory path.
std::vector<hs::plan<std::byte>> block_plans(const hs::cartesian_grid& grid, int k, std::size_t m) {
  std::vector<hs::plan<std::byte>> plans;
  for (std::size_t v = 0; v < variant_names.size(); ++v)
    plans.push_back(hs::make_plan<std::byte>(grid, variant_names[v], k, m, {.shared_memory = v >= 4}));
  return plans;
}

/// One block row: every variant checked against Shift's halo over MPI (byte for byte), the zero-copy
/// ones also that they lent their messages, then timed round robin. Returns the failures.
int block_row(const hs::cartesian_grid& grid, long k, long m, double budget, int max_reps) {
  std::vector<std::byte> mine(static_cast<std::size_t>(m));
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = std::byte(static_cast<unsigned char>(grid.rank() * 31 + i));
  std::vector<hs::plan<std::byte>> plans = block_plans(grid, static_cast<int>(k), mine.size());
  std::vector<hs::halo<std::byte>> halos;
  for (std::size_t v = 0; v < plans.size(); ++v)
    halos.push_back(v >= variant_groups[2] ? plans[v].make_shared_halo() : plans[v].make_halo());
  int failures = 0;
  std::vector<std::function<void()>> run;
  for (std::size_t v = 0; v < plans.size(); ++v) {
    const std::uint64_t lent = hs::detail::lent_messages;
    plans[v].forward(mine, halos[v]);
    failures += !std::equal(halos[v].buffer().begin(), halos[v].buffer().end(), halos[0].buffer().begin());
    const bool should_lend = v >= variant_groups[2] && m <= 65536 && hs::detail::nodes_of(grid).comm.size() > 1;
    failures += (hs::detail::lent_messages > lent) != should_lend;
    run.push_back([&, v] { plans[v].forward(mine, halos[v]); });
  }
  const auto t = bench::round_robin(MPI_COMM_WORLD, run, budget, 5, max_reps);
  if (grid.rank() == 0)
    bench::print_best_of_groups(std::to_string(k) + ", " + std::to_string(m) + " B", t, variant_groups, variant_names);
  return failures;
}

/// A `cells`^3 field of doubles over the grid, ghost width 1 (faces, edges and corners): the field
/// over MPI and on the slots, and a view of a shared_array (zero copy), each checked against the first.
int field_row(const hs::cartesian_grid& grid, int cells, double budget, int max_reps) {
  hs::grid_field<double> u(grid, {cells, cells, cells}, {1, 1, 1});
  for (std::size_t i = 0; i < u.storage().size(); ++i) u.storage()[i] = static_cast<double>(i % 1000);
  hs::shared_array<double> shared(grid, u.storage().size());
  std::copy(u.storage().begin(), u.storage().end(), shared.begin());
  const hs::field_view<double> view = hs::make_field_view(shared.data(), u.shape());
  std::vector<hs::field_plan> fields;
  for (std::size_t v = 0; v < variant_names.size(); ++v)
    if (variant_names[v] != "NeighborAlltoall")
      fields.push_back(hs::make_field_plan(grid, variant_names[v], u.shape(), {.shared_memory = v >= 4}));
  std::vector<std::function<void()>> run;
  for (std::size_t f = 0; f < fields.size(); ++f)
    run.push_back(f >= 6 ? std::function<void()>([&, f] { fields[f].forward(view); })
                         : std::function<void()>([&, f] { fields[f].forward(u); }));
  fields[0].forward(u);
  fields[6].forward(view);
  int failures = !std::equal(u.storage().begin(), u.storage().end(), shared.begin());
  const auto t = bench::round_robin(MPI_COMM_WORLD, run, budget, 5, max_reps);
  if (grid.rank() == 0)
    bench::print_best_of_groups("field " + std::to_string(cells) + "^3, ghost 1", t, {0, 3, 6, 9},
              {"Shift", "SingleHop", "TtlMultiHop", "Shift", "SingleHop", "TtlMultiHop", "Shift", "SingleHop",
               "TtlMultiHop"});
  return failures;
}

/// --shared-memory: the shared-memory path, with and without zero copy, against the best MPI
/// strategy (blocks, then a field).
int shared_memory_table(const std::vector<long>& ks, const std::vector<long>& ms, int cells, double budget,
                        int max_reps) {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}});
  const hs::detail::node_layout& nodes = hs::detail::nodes_of(grid);
  if (grid.rank() == 0)
    std::printf("%d ranks on %d node(s), periodic grid %dx%dx%d, %s; median of the max over ranks, us; the best MPI "
                "strategy against the best on the shared-memory path, through the slots and zero copy (a shared "
                "halo or array)\n\n| k, block | MPI | slots | zero copy | slots speedup | zero copy speedup |\n"
                "|---|---:|---:|---:|---:|---:|\n",
                grid.size(), nodes.count, grid.dim(0), grid.dim(1), grid.dim(2), bench::mpi_library().c_str());
  int failures = 0;
  for (long k : ks)
    for (long m : ms) failures += block_row(grid, k, m, budget, max_reps);
  failures += field_row(grid, cells, budget, max_reps);
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failures && grid.rank() == 0)
    std::fprintf(stderr, "MISMATCH: a halo differs from Shift's over MPI, or zero copy did not lend\n");
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::vector<long> ks{1, 2, 3, 4}, ms{64, 1024, 16384, 131072, 1048576};
  int max_reps = 201;
  double budget = 1.0, max_cube_mib = 128;
  int field_cells = 128;  // --field: the --shared-memory field's cells per side
  bool shared_memory = false;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--shared-memory") {
      shared_memory = true;
      --i;  // a flag, no value
      continue;
    }
    if (i + 1 >= argc) break;
    if (a == "--k") ks = parse_list(argv[i + 1]);
    else if (a == "--m") ms = parse_list(argv[i + 1]);
    else if (a == "--reps") max_reps = std::atoi(argv[i + 1]);
    else if (a == "--budget") budget = std::atof(argv[i + 1]);
    else if (a == "--field") field_cells = std::atoi(argv[i + 1]);
  }
  if (shared_memory) {
    const int failures = shared_memory_table(ks, ms, field_cells, budget, max_reps);
    MPI_Finalize();
    return failures ? 1 : 0;
  }
  std::vector<long> nodes;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--nodes") nodes = parse_list(argv[i + 1]);
  if (!nodes.empty()) {
    const int failed = bench::node_aware_table(nodes, ks, ms, budget, max_reps);
    MPI_Finalize();
    return failed;
  }
  int failures = 0;
  {
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}});
    const int dims[3] = {grid.dim(0), grid.dim(1), grid.dim(2)};
    const bool root = grid.rank() == 0;
    if (root) {
      const std::string v = bench::mpi_library();
      std::printf("%d ranks, periodic grid %dx%dx%d, %s; median of the max over ranks, us; ratio to the "
                  "hand-written Shift in brackets\n\n",
                  grid.size(), dims[0], dims[1], dims[2], v.c_str());
      std::printf("| k | m | raw Shift | Shift | TeamShift | SingleHop | TtlMultiHop | Neighbor_alltoallv | best |\n");
      std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|:---|\n");
    }
    for (long k : ks)
      for (long m : ms) {
        const double side = 2.0 * k + 1;
        if (side * side * side * m / 1048576.0 > max_cube_mib) {
          if (root) std::printf("| %ld | %ld | skipped: halo over %.0f MiB per rank | | | | | | |\n", k, m, max_cube_mib);
          continue;
        }
        std::vector<std::byte> mine(static_cast<std::size_t>(m));
        for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = std::byte(static_cast<unsigned char>(grid.rank() * 31 + i));
        bench::raw_shift raw(MPI_COMM_WORLD, dims, static_cast<int>(k), static_cast<std::size_t>(m));
        auto p_shift = hs::make_plan<hs::Shift, std::byte>(grid, static_cast<int>(k), mine.size());
        auto p_team = hs::make_plan<hs::TeamShift, std::byte>(grid, static_cast<int>(k), mine.size());
        auto p_single = hs::make_plan<hs::SingleHop, std::byte>(grid, static_cast<int>(k), mine.size());
        auto p_ttl = hs::make_plan<hs::TtlMultiHop, std::byte>(grid, static_cast<int>(k), mine.size());
        auto p_nbr = hs::make_plan<hs::NeighborAlltoall, std::byte>(grid, static_cast<int>(k), mine.size());
        std::vector<hs::plan<std::byte>*> plans{&p_shift, &p_team, &p_single, &p_ttl, &p_nbr};
        std::vector<hs::halo<std::byte>> halos;
        for (auto* p : plans) halos.push_back(p->make_halo());
        // Check: every variant's halo equals the hand-written Shift's cube, block by block.
        raw.forward(mine.data());
        for (std::size_t v = 0; v < plans.size(); ++v) {
          plans[v]->forward(mine, halos[v]);
          for (const auto& b : halos[v])
            failures += std::memcmp(b.data.data(), raw.cube() + raw.at(b.offset[0], b.offset[1], b.offset[2]),
                                    b.data.size()) != 0;
        }
        MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (failures) {
          if (root) std::fprintf(stderr, "MISMATCH at k=%ld m=%ld\n", k, m);
          break;
        }
        std::vector<std::function<void()>> run{[&] { raw.forward(mine.data()); }};
        for (std::size_t v = 0; v < plans.size(); ++v) run.push_back([&, v] { plans[v]->forward(mine, halos[v]); });
        const auto t = bench::round_robin(MPI_COMM_WORLD, run, budget, 5, max_reps);
        if (root) {
          const char* names[] = {"raw Shift", "Shift", "TeamShift", "SingleHop", "TtlMultiHop", "Neighbor_alltoallv"};
          std::vector<double> med;
          for (const auto& v : t) med.push_back(median(v) * 1e6);
          const std::size_t best = static_cast<std::size_t>(std::min_element(med.begin(), med.end()) - med.begin());
          std::printf("| %ld | %ld |", k, m);
          for (std::size_t v = 0; v < med.size(); ++v)
            v == 0 ? std::printf(" %.1f |", med[v]) : std::printf(" %.1f (%.2f) |", med[v], med[v] / med[0]);
          std::printf(" %s |\n", names[best]);
          std::fflush(stdout);
        }
      }
    if (root) std::printf("\nTeamShift uses its default team sizes (TeamShift::team_sizes).\n");
  }
  MPI_Finalize();
  return failures ? 1 : 0;
}

// SPDX-License-Identifier: BSD-3-Clause
// haloshift_bench_field_build: what building a field plan costs (issue 37 item
// 3: in proportion to the ghost and shell cells, not the interior). For 128^3
// and 1024^2 cells per rank, ghost widths 1 and 2, patterns full and faces, it
// prints the build time of make_field_plan (median over the repetitions of the
// slowest rank) next to the cells involved, and the time of listing the shell
// cells the build offers: as the build did before (a pass over every interior
// cell) and as it does now (the shell alone).
//
//   mpiexec -n 2 ./haloshift_bench_field_build [--reps 5] [--strategy Shift] [--quick]
//
// --quick: 32^3 and 128^2 cells per rank, 2 repetitions (a smoke run).
#include <haloshift/haloshift.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace hs = haloshift;

namespace {

struct options {
  int reps = 5;
  std::string strategy = "Shift";
  bool quick = false;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      o.quick = true, o.reps = 2;
    } else if (a == "--reps" && i + 1 < argc) {
      o.reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--strategy" && i + 1 < argc) {
      o.strategy = argv[++i];
    } else {
      std::fprintf(stderr, "haloshift_bench_field_build: unknown option '%s' (--reps N, --strategy NAME, --quick)\n",
                   a.c_str());
      std::exit(2);
    }
  }
  return o;
}

/// Median over the repetitions of the slowest rank's time of `f`.
template <class F>
double timed(int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    f();
    double mine = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    t.push_back(slowest);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// The reference: the build's list of shell cells as it was made before (one pass over every
/// interior cell, keeping those in the shell), and the one the build makes now.
std::size_t scan_interior(const hs::field_shape& s) {
  std::vector<hs::offset> out;
  auto near_face = [&](int d, int i) { return i < s.ghost_high[d] || i >= s.interior[d] - s.ghost[d]; };
  for (int k = 0; k < s.interior[2]; ++k)
    for (int j = 0; j < s.interior[1]; ++j)
      for (int i = 0; i < s.interior[0]; ++i)
        if (near_face(0, i) || near_face(1, j) || near_face(2, k)) out.push_back(hs::offset{i, j, k} + s.lo);
  return out.size();
}

void run(const options& o, int ndims, int per_rank, int rank) {
  hs::grid_options g;
  g.dims.assign(static_cast<std::size_t>(ndims), 0);
  g.periodic.assign(static_cast<std::size_t>(ndims), true);
  const hs::cartesian_grid grid(MPI_COMM_WORLD, g);
  hs::offset global{1, 1, 1};
  for (int d = 0; d < ndims; ++d) global[d] = per_rank * grid.dim(d);
  for (int width : {1, 2})
    for (hs::halo_pattern pattern : {hs::halo_pattern::full, hs::halo_pattern::faces}) {
      const hs::offset ghost{width, ndims > 1 ? width : 0, ndims > 2 ? width : 0};
      const hs::field_shape shape(grid.shape(), grid.coords(), global, ghost);
      std::size_t interior = 1;
      for (int d = 0; d < 3; ++d) interior *= static_cast<std::size_t>(shape.interior[d]);
      std::size_t shell = 0;
      const double build = timed(o.reps, [&] {
        hs::field_plan plan = hs::make_field_plan(grid, o.strategy, shape, {.pattern = pattern});
        shell = plan.details().layout.total();  // owned shell cells offered, and ghost cells
      });
      std::size_t scanned = 0, listed = 0;
      const double scan = timed(o.reps, [&] { scanned = scan_interior(shape); });
      const double list = timed(o.reps, [&] { listed = hs::detail::shell_cells(shape).size(); });
      if (rank == 0)
        std::printf("%dD %5d^%d/rank ghost %d %-5s interior %8zu shell %7zu shell+ghosts %7zu  build %8.3f ms  "
                    "shell list: by scan %8.3f ms, now %8.3f ms%s\n",
                    ndims, per_rank, ndims, width, pattern == hs::halo_pattern::full ? "full" : "faces", interior,
                    listed, shell, build * 1e3, scan * 1e3, list * 1e3, scanned == listed ? "" : " (MISMATCH)");
    }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const options o = parse(argc, argv);
  if (rank == 0)
    std::printf("field plan build, %s, %d rank(s), median of %d (slowest rank)\n", o.strategy.c_str(), size, o.reps);
  run(o, 3, o.quick ? 32 : 128, rank);
  run(o, 2, o.quick ? 128 : 1024, rank);
  MPI_Finalize();
  return 0;
}

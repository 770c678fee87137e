// SPDX-License-Identifier: BSD-3-Clause
/// @file bench_overhead.cpp
/// @brief What the C interface adds to an exchange: a forward of a 128^3 double field (ghost 1,
/// Shift) and a forward_positions of 16k particles per rank, each through the C++ API and through
/// haloshift.h on the same layout, interleaved rep by rep (the slowest rank's time per rep, then
/// the median), with the heap allocations the C calls make counted (operator new replaced: any in
/// the library, which calls it through the program's, count).
///
/// haloshift_c_bench_overhead [reps]; run under mpiexec at any rank count.

#include <haloshift/haloshift.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "counting_new.hpp"  // tests/support: operator new replaced, counting while asked to
#include "round_robin.hpp"   // examples/bench: bench::timed, bench::median
#include "haloshift.h"

namespace hs = haloshift;

namespace {

void check(hs_status s, const char* call) {
  if (s == HS_OK) return;
  std::fprintf(stderr, "%s: %s\n", call, hs_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/// Times C++ and C rep by rep (alternating which goes first) and prints both medians, their
/// ratio and the allocations per C call.
/// `f()` timed, the heap allocations it makes added to `allocated`.
template <class F>
double counted(F&& f, long& allocated) {
  const long before = allocations::count.load();
  allocations::counting = true;
  const double t = bench::timed(MPI_COMM_WORLD, f);
  allocations::counting = false;
  allocated += allocations::count.load() - before;
  return t;
}

/// Times C++ and C rep by rep (alternating which goes first) and prints both medians, their
/// ratio, the allocations per call of each, and whether the two arrays (`mine` written through
/// C++, `theirs` through C, from the same contents) came out identical bit for bit on every rank.
template <class Cpp, class C>
void compare(const char* what, int reps, Cpp&& cpp, C&& c, const std::vector<double>& mine,
             const std::vector<double>& theirs) {
  cpp();
  c();  // warm: the first exchange of a layout sizes its staging
  std::vector<double> a, b;
  long allocated[2] = {0, 0};
  for (int r = 0; r < reps; ++r) {
    if (r % 2) b.push_back(counted(c, allocated[1]));
    a.push_back(counted(cpp, allocated[0]));
    if (r % 2 == 0) b.push_back(counted(c, allocated[1]));
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(MPI_IN_PLACE, allocated, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  int same = std::memcmp(mine.data(), theirs.data(), mine.size() * sizeof(double)) == 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const double ta = bench::median(a), tb = bench::median(b);
  if (rank == 0 && !same) std::printf("%s: the arrays written through C++ and through C differ\n", what);
  if (!same) MPI_Abort(MPI_COMM_WORLD, 1);
  if (rank == 0)
    std::printf("%s\n  C++ %9.2f us  C %9.2f us  C/C++ %.3f  (C - C++ %+.2f us)  allocations per call: C++ %.2f, C %.2f\n",
                what, ta * 1e6, tb * 1e6, tb / ta, (tb - ta) * 1e6, static_cast<double>(allocated[0]) / reps,
                static_cast<double>(allocated[1]) / reps);
}

void fields(int reps) {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}});
  const int n = 128;
  const hs::offset global{n * grid.dim(0), n * grid.dim(1), n * grid.dim(2)};
  const hs::field_shape shape(grid.shape(), grid.coords(), global, hs::offset{1, 1, 1});
  hs::field_plan plan = hs::make_field_plan<hs::Shift>(grid, shape);
  std::vector<double> mine(plan.shape().size());
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = static_cast<double>(i) + 0.5 * grid.rank();
  std::vector<double> theirs = mine;  // the same contents: the two forwards must write the same ghosts
  const auto view = hs::make_field_view(mine.data(), plan.shape());

  hs_grid cgrid = nullptr;
  check(hs_grid_create(MPI_COMM_WORLD, nullptr, &cgrid), "hs_grid_create");
  hs_field_spec spec;
  hs_field_spec_init(&spec);
  for (int d = 0; d < 3; ++d) {
    spec.global[d] = global[d];
    spec.ghost_low[d] = spec.ghost_high[d] = 1;
  }
  hs_field_plan cplan = nullptr;
  check(hs_field_plan_create(cgrid, "Shift", &spec, &cplan), "hs_field_plan_create");
  hs_field_array array;
  hs_field_array_init(&array, theirs.data(), HS_DOUBLE);
  compare("field 128^3 per rank, double, ghost 1, Shift", reps, [&] { plan.forward(view); },
          [&] { check(hs_field_forward(cplan, &array), "hs_field_forward"); }, mine, theirs);
  check(hs_field_plan_free(&cplan), "hs_field_plan_free");
  check(hs_grid_free(&cgrid), "hs_grid_free");
}

void particles(int reps) {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}});
  const double width = 20, cutoff = 2.5;
  const hs::domain dom{{0, 0, 0}, {width * grid.dim(0), width * grid.dim(1), width * grid.dim(2)}};
  const std::size_t count = 16384;
  std::vector<double> x(3 * count);
  std::mt19937_64 random(17 + static_cast<unsigned>(grid.rank()));
  std::uniform_real_distribution<double> u(0, width);
  for (std::size_t i = 0; i < count; ++i)
    for (int d = 0; d < 3; ++d) x[3 * i + static_cast<std::size_t>(d)] = grid.coords()[d] * width + u(random);
  hs::particle_plan plan = hs::make_particle_plan<hs::Shift>(grid, dom, cutoff, hs::strided_positions<double>(x.data(), count, 3));
  std::vector<double> mine(3 * plan.size()), theirs(3 * plan.size());
  std::copy(x.begin(), x.end(), mine.begin());
  std::copy(x.begin(), x.end(), theirs.begin());

  hs_grid cgrid = nullptr;
  check(hs_grid_create(MPI_COMM_WORLD, nullptr, &cgrid), "hs_grid_create");
  const hs_domain cdom = {{0, 0, 0}, {dom.hi[0], dom.hi[1], dom.hi[2]}};
  const double cut[3] = {cutoff, cutoff, cutoff};
  hs_positions positions = {x.data(), nullptr, nullptr, HS_DOUBLE, 3};
  hs_particle_plan cplan = nullptr;
  check(hs_particle_plan_create(cgrid, "Shift", &cdom, cut, &positions, count, &cplan), "hs_particle_plan_create");
  positions.x = theirs.data();
  const std::string what = "particles 16k per rank, forward_positions, Shift (" + std::to_string(plan.ghosts()) + " ghosts)";
  compare(what.c_str(), reps, [&] { plan.forward_positions(hs::strided_positions<double>(mine.data(), plan.size(), 3)); },
          [&] { check(hs_particle_forward_positions(cplan, &positions, 0, nullptr), "hs_particle_forward_positions"); },
          mine, theirs);
  check(hs_particle_plan_free(&cplan), "hs_particle_plan_free");
  check(hs_grid_free(&cgrid), "hs_grid_free");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 101;
  fields(reps);
  particles(reps * 4);
  MPI_Finalize();
  return 0;
}

// SPDX-License-Identifier: BSD-3-Clause
// The kernel of haloshift_bench_include_cost, written once and compiled four
// times (include_cost_plain.cpp, include_cost_hand.cpp, include_cost_library.cpp
// and the control include_cost_again.cpp): the 2D star stencil of the Parallel
// Research Kernels (PRK) over a padded n x n array, its loops inline in the
// function that also sets up the run, as PRK's main() has them.
// Where a code exchanges ghosts between sweeps, the three flavours differ:
// - bare (plain and again): an MPI_Barrier, the least a code can have there;
// - hand-written (INCLUDE_COST_HAND_WRITTEN): a face exchange written by hand
//   (raw_faces.hpp) built in this function, as the code a user ports has it;
// - library (INCLUDE_COST_WITH_LIBRARY): a faces-only field plan and a view of
//   `in` built in this function, forward() called.
// At 1 rank none exchanges, so only the loops are timed.
//
// The including file defines INCLUDE_COST_ENTRY (the name of the entry point)
// and the flavour's macro (the library's after including <haloshift/haloshift.hpp>
// first thing). Everything else here is in an anonymous namespace: each file
// compiles its own copy of the loops (one inline template shared by all would
// leave the linker one copy of them).
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstddef>

#include "include_cost.hpp"
#ifdef INCLUDE_COST_HAND_WRITTEN
#include "raw_faces.hpp"
#endif

namespace {

// PRK's macros, with PRK's names: IN(i, j) is in[i + j * width].
#define INCLUDE_COST_IN(i, j) in[(i) + (j) * width]
#define INCLUDE_COST_OUT(i, j) out[(i) + (j) * width]

// Not inlined into the entry point, on either side: each radius is a function of its own, as PRK's
// main() is, so the two sides differ only by what the library adds to it.
template <int R>
[[gnu::noinline]] double run_radius(MPI_Comm comm, const include_cost::run_args& a, double* in, double* out) {
  const long n = a.n, width = n + 2 * R;
  int size = 1;
  MPI_Comm_size(comm, &size);
#ifdef INCLUDE_COST_WITH_LIBRARY
  namespace hs = haloshift;
  const hs::cartesian_grid grid(comm, {.dims = {0, 0}, .periodic = {false, false}});
  const hs::field_shape shape(grid.shape(), grid.coords(), {static_cast<int>(n), static_cast<int>(n)},
                              hs::offset{R, R});
  auto plan = hs::make_field_plan<hs::Shift>(grid, shape, {.pattern = hs::halo_pattern::faces});
  const auto view = hs::make_field_view(in, plan.shape().interior, hs::offset{R, R}, hs::storage_order::x_fastest,
                                        hs::offset{0, 0});
#elif defined(INCLUDE_COST_HAND_WRITTEN)
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(comm, 2, dims, periods, 0, &cart);
  bench::raw_faces faces(cart, bench::padded_mesh(2, static_cast<int>(n), R));
#endif
  // PRK's weights: 1 / (2 r R) at distance r along the axes, negative below.
  double weight[2 * R + 1][2 * R + 1] = {};
  for (int r = 1; r <= R; ++r) {
    weight[R][R + r] = weight[R + r][R] = 1.0 / (2.0 * r * R);
    weight[R][R - r] = weight[R - r][R] = -1.0 / (2.0 * r * R);
  }
  for (long j = 0; j < width; ++j)
    for (long i = 0; i < width; ++i) INCLUDE_COST_IN(i, j) = static_cast<double>(i + j), INCLUDE_COST_OUT(i, j) = 0;

  const auto start = std::chrono::steady_clock::now();
  for (int it = 0; it < a.iterations; ++it) {
#ifdef INCLUDE_COST_WITH_LIBRARY
    if (size > 1) plan.forward(view);
#elif defined(INCLUDE_COST_HAND_WRITTEN)
    if (size > 1) faces.forward(in);
#else
    if (size > 1) MPI_Barrier(comm);  // bare: the least a code can have where it exchanges; never at 1 rank
#endif
    for (long j = R; j < n + R; ++j)
      for (long i = R; i < n + R; ++i) {
        for (int jj = -R; jj <= R; ++jj) INCLUDE_COST_OUT(i, j) += weight[R][R + jj] * INCLUDE_COST_IN(i, j + jj);
        for (int ii = -R; ii < 0; ++ii) INCLUDE_COST_OUT(i, j) += weight[R + ii][R] * INCLUDE_COST_IN(i + ii, j);
        for (int ii = 1; ii <= R; ++ii) INCLUDE_COST_OUT(i, j) += weight[R + ii][R] * INCLUDE_COST_IN(i + ii, j);
      }
    for (long j = R; j < n + R; ++j)
      for (long i = R; i < n + R; ++i) INCLUDE_COST_IN(i, j) += 1.0;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
#ifdef INCLUDE_COST_HAND_WRITTEN
  MPI_Comm_free(&cart);
#endif
  return seconds;
}

#undef INCLUDE_COST_IN
#undef INCLUDE_COST_OUT

}  // namespace

double INCLUDE_COST_ENTRY(MPI_Comm comm, const include_cost::run_args& a, double* in, double* out) {
  switch (a.radius) {
    case 1: return run_radius<1>(comm, a, in, out);
    case 2: return run_radius<2>(comm, a, in, out);
    case 3: return run_radius<3>(comm, a, in, out);
    case 4: return run_radius<4>(comm, a, in, out);
    default: return -1;
  }
}

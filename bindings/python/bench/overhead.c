/* SPDX-License-Identifier: BSD-3-Clause */
/* The C side of the Python binding's cost (bindings/python/bench/overhead.py does the same from
 * Python, call for call): through haloshift.h, a forward of a 128^3 double field per rank (ghost 1,
 * Shift) and a forward_positions of 16k particles per rank (Shift, cutoff 2.5, boxes 20 wide), each
 * rep a barrier, one call and the slowest rank's time, the median of `reps`; then the mean of 20000
 * back-to-back forwards of an 8^3 field (the per-call cost where the exchange is nearly free).
 * Positions come from a formula (no random generator), so both programs exchange the same particles.
 *
 *   mpiexec -n N haloshift_python_bench_overhead_c [reps]        (target haloshift_python_bench) */
#define _GNU_SOURCE /* madvise, posix_memalign */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include <sys/mman.h>

#include "haloshift.h"

/* An array allocated as numpy allocates its data on Linux: 4 MiB and more get transparent huge pages
 * (numpy >= 1.22 calls madvise(MADV_HUGEPAGE)), which the x faces' strided packing feels; without
 * this the C side is the slower one for no reason of the binding's. */
static double* numpy_like(size_t count) {
  void* p = NULL;
  if (posix_memalign(&p, 2u << 20, count * sizeof(double)) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
#ifdef MADV_HUGEPAGE
  if (count * sizeof(double) >= (4u << 20)) madvise(p, count * sizeof(double), MADV_HUGEPAGE);
#endif
  return p;
}

static void check(hs_status s, const char* call) {
  if (s == HS_OK) return;
  fprintf(stderr, "%s: %s\n", call, hs_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The median over reps of the slowest rank's time of one call. */
static double median_of(double* t, int reps) {
  qsort(t, (size_t)reps, sizeof(double), by_value);
  return t[reps / 2];
}

static double one_rep_field(hs_field_plan plan, const hs_field_array* a) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  check(hs_field_forward(plan, a), "hs_field_forward");
  double t = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

static hs_field_plan field_plan(hs_grid grid, const int dims[3], int n) {
  hs_field_spec spec;
  hs_field_spec_init(&spec);
  for (int d = 0; d < 3; ++d) {
    spec.global[d] = n * dims[d];
    spec.ghost_low[d] = spec.ghost_high[d] = 1;
  }
  hs_field_plan plan = NULL;
  check(hs_field_plan_create(grid, "Shift", &spec, &plan), "hs_field_plan_create");
  return plan;
}

static void fields(hs_grid grid, const int dims[3], int rank, int reps) {
  hs_field_plan plan = field_plan(grid, dims, 128);
  double* u = numpy_like(130 * 130 * 130);
  double* t = malloc(sizeof(double) * (size_t)reps);
  for (size_t i = 0; i < 130 * 130 * 130; ++i) u[i] = 1.0;
  hs_field_array a;
  hs_field_array_init(&a, u, HS_DOUBLE);
  a.order = HS_Z_FASTEST; /* numpy's C order */
  one_rep_field(plan, &a); /* warm */
  for (int r = 0; r < reps; ++r) t[r] = one_rep_field(plan, &a);
  if (rank == 0) printf("field 128^3 per rank, float64, ghost 1, Shift: C %.2f us\n", median_of(t, reps) * 1e6);
  check(hs_field_plan_free(&plan), "hs_field_plan_free");

  plan = field_plan(grid, dims, 8);
  hs_field_array_init(&a, u, HS_DOUBLE);
  a.order = HS_Z_FASTEST;
  const int calls = 20000;
  check(hs_field_forward(plan, &a), "hs_field_forward");
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < calls; ++i) check(hs_field_forward(plan, &a), "hs_field_forward");
  double per_call = (MPI_Wtime() - t0) / calls;
  MPI_Allreduce(MPI_IN_PLACE, &per_call, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("field 8^3 per rank, %d calls back to back: C %.3f us per call\n", calls, per_call * 1e6);
  check(hs_field_plan_free(&plan), "hs_field_plan_free");
  free(u);
  free(t);
}

/* Particle i of the box at `coords`: a low-discrepancy sequence, the same bits in Python. */
static void position(size_t i, const int coords[3], double width, double* x) {
  static const double step[3] = {0.7548776662466927, 0.5698402909980532, 0.6180339887498949};
  for (int d = 0; d < 3; ++d) {
    const double v = (double)(i + 1) * step[d];
    x[d] = coords[d] * width + width * (v - floor(v));
  }
}

static void particles(hs_grid grid, const int dims[3], const int coords[3], int rank, int reps) {
  const size_t count = 16384;
  const double width = 20, cutoff[3] = {2.5, 2.5, 2.5};
  const hs_domain dom = {{0, 0, 0}, {width * dims[0], width * dims[1], width * dims[2]}};
  double* x = malloc(sizeof(double) * 3 * count);
  for (size_t i = 0; i < count; ++i) position(i, coords, width, x + 3 * i);
  hs_positions p = {x, NULL, NULL, HS_DOUBLE, 3};
  hs_particle_plan plan = NULL;
  check(hs_particle_plan_create(grid, "Shift", &dom, cutoff, &p, count, &plan), "hs_particle_plan_create");
  size_t owned = 0, ghosts = 0;
  check(hs_particle_plan_sizes(plan, &owned, &ghosts), "hs_particle_plan_sizes");
  x = realloc(x, sizeof(double) * 3 * (owned + ghosts));
  p.x = x;
  double* t = malloc(sizeof(double) * (size_t)reps);
  check(hs_particle_forward_positions(plan, &p, 0, NULL), "hs_particle_forward_positions"); /* warm */
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    check(hs_particle_forward_positions(plan, &p, 0, NULL), "hs_particle_forward_positions");
    t[r] = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("particles 16k per rank (%zu ghosts on rank 0), forward_positions, Shift: C %.2f us\n", ghosts,
           median_of(t, reps) * 1e6);
  check(hs_particle_plan_free(&plan), "hs_particle_plan_free");
  free(x);
  free(t);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int reps = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 101;
  hs_grid grid = NULL;
  check(hs_grid_create(MPI_COMM_WORLD, NULL, &grid), "hs_grid_create");
  int rank = 0, dims[3], coords[3];
  check(hs_grid_info(grid, NULL, &rank, NULL, dims, coords, NULL), "hs_grid_info");
  fields(grid, dims, rank, reps);
  particles(grid, dims, coords, rank, 4 * reps);
  check(hs_grid_free(&grid), "hs_grid_free");
  MPI_Finalize();
  return 0;
}

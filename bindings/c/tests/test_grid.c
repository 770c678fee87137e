/* SPDX-License-Identifier: BSD-3-Clause */
/* Grids through the C interface: the rank order (last or first dimension fastest), the remainder
 * rule of a field's split, dims from the domain's lengths, and Fortran communicators both ways. */
#include "support.h"

static int rank = 0, size = 1;

static hs_grid make_grid(int first_fastest, int remainder, const double lengths[3]) {
  hs_grid_options o;
  hs_grid_options_init(&o);
  o.first_fastest = first_fastest;
  o.remainder = remainder;
  if (lengths) memcpy(o.lengths, lengths, sizeof o.lengths);
  hs_grid grid = NULL;
  OK(hs_grid_create(MPI_COMM_WORLD, &o, &grid));
  return grid;
}

/* This rank's coordinates from its number, in either order. */
static void rank_order(int first_fastest) {
  hs_grid grid = make_grid(first_fastest, 0, NULL);
  int dims[3], coords[3], periodic[3], ndims = 0, r = -1, n = 0;
  OK(hs_grid_info(grid, &ndims, &r, &n, dims, coords, periodic));
  EXPECT(ndims == 3 && r == rank && n == size && dims[0] * dims[1] * dims[2] == size);
  EXPECT(periodic[0] && periodic[1] && periodic[2]);
  const int number = first_fastest ? coords[0] + dims[0] * (coords[1] + dims[1] * coords[2])
                                   : (coords[0] * dims[1] + coords[1]) * dims[2] + coords[2];
  EXPECT(number == rank);
  OK(hs_grid_free(&grid));
}

/* 7 cells per dimension: boxes own floor(7/P) or one more, the extra ones spread, first or last. */
static void remainder_rule(int rule) {
  hs_grid grid = make_grid(0, rule, NULL);
  int dims[3], coords[3];
  OK(hs_grid_info(grid, NULL, NULL, NULL, dims, coords, NULL));
  hs_field_spec spec;
  hs_field_spec_init(&spec);
  for (int d = 0; d < 3; ++d) spec.global[d] = 7;
  hs_field_plan plan = NULL;
  OK(hs_field_plan_create(grid, "Shift", &spec, &plan));
  int lo[3], interior[3];
  OK(hs_field_plan_shape(plan, lo, interior, NULL, NULL));
  for (int d = 0; d < 3; ++d) {
    const int p = dims[d], c = coords[d], base = 7 / p, extra = 7 % p;
    int first = c * 7 / p, last = (c + 1) * 7 / p; /* spread */
    if (rule == 1) {
      first = c * base + (c < extra ? c : extra);
      last = first + base + (c < extra);
    } else if (rule == 2) {
      const int narrow = p - extra;
      first = c * base + (c > narrow ? c - narrow : 0);
      last = first + base + (c >= narrow);
    }
    EXPECT(lo[d] == first && interior[d] == last - first);
  }
  OK(hs_field_plan_free(&plan));
  OK(hs_grid_free(&grid));
}

/* A long domain along z: the smallest surface puts every box along z. */
static void lengths(void) {
  const double l[3] = {1, 1, 50};
  hs_grid grid = make_grid(0, 0, l);
  int dims[3];
  OK(hs_grid_info(grid, NULL, NULL, NULL, dims, NULL, NULL));
  EXPECT(dims[0] == 1 && dims[1] == 1 && dims[2] == size);
  OK(hs_grid_free(&grid));
}

/* A grid from a Fortran handle, and its communicator back as one. */
static void fortran_handles(void) {
  hs_grid grid = NULL;
  OK(hs_grid_create_f(MPI_Comm_c2f(MPI_COMM_WORLD), NULL, &grid));
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Fint f = 0;
  OK(hs_grid_comm(grid, &c));
  OK(hs_grid_comm_f(grid, &f));
  int same = MPI_UNEQUAL, dup = MPI_UNEQUAL;
  MPI_Comm_compare(MPI_Comm_f2c(f), c, &same);
  MPI_Comm_compare(MPI_COMM_WORLD, c, &dup);
  EXPECT(same == MPI_IDENT && dup == MPI_CONGRUENT); /* the grid's own duplicate */
  OK(hs_grid_free(&grid));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  rank_order(0);
  rank_order(1);
  for (int rule = 0; rule <= 2; ++rule) remainder_rule(rule);
  lengths();
  fortran_handles();
  EXPECT(strcmp(hs_version(), "0.1.0") >= 0 && strchr(hs_version(), '.') != NULL);
  const int code = finish("test_grid");
  MPI_Finalize();
  return code;
}

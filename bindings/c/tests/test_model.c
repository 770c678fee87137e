/* SPDX-License-Identifier: BSD-3-Clause */
/* The model through the C interface: hs_use_calibration makes explain and Auto read the file given
 * (two files, two predictions), explain ranks fastest first and agrees on every rank, capacity
 * bounds what is written, and Auto's field and particle plans run explain's first choice. */
#include <unistd.h>

#include "support.h"

static int rank = 0, size = 1; /* on 1 rank no message leaves: every prediction is 0 */

/* Writes a calibration file of latency `alpha` (rank 0) and makes Auto read it (every rank). */
static void use_calibration(const char* path, double alpha) {
  if (rank == 0) {
    FILE* f = fopen(path, "w");
    EXPECT(f != NULL);
    if (f) {
      fprintf(f, "{\"haloshift_calibration\": 1, \"alpha_s\": %g, \"beta_s_per_byte\": 1e-10, \"gamma_s\": 0}\n", alpha);
      fclose(f);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  OK(hs_use_calibration(path));
}

/* The same on every rank: the ranking's length and each entry's time. */
static void expect_agreed(const hs_prediction* p, int n) {
  int low = n, high = n;
  MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT(low == high);
  for (int i = 0; i < n && low == high; ++i) {
    double s[2] = {p[i].seconds, -p[i].seconds};
    MPI_Allreduce(MPI_IN_PLACE, s, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    EXPECT(s[0] == -s[1]);
  }
}

/* A ranking: fastest first, the three selecting built-ins among them, agreed. Returns Shift's time. */
static double check_ranking(const hs_prediction* p, int n) {
  double shift = -1;
  int seen = 0;
  for (int i = 0; i < n; ++i) {
    EXPECT(i == 0 || p[i - 1].seconds <= p[i].seconds);
    EXPECT(size > 1 ? p[i].seconds > 0 : p[i].seconds == 0);
    if (strcmp(p[i].strategy, "Shift") == 0) shift = p[i].seconds;
    seen += !strcmp(p[i].strategy, "Shift") + !strcmp(p[i].strategy, "SingleHop") + !strcmp(p[i].strategy, "TtlMultiHop");
  }
  EXPECT(seen == 3);
  expect_agreed(p, n);
  return shift;
}

static double explain_fields(hs_grid grid, const hs_field_spec* spec) {
  hs_prediction p[16];
  int n = 0;
  OK(hs_explain_field(grid, spec, p, 16, &n));
  EXPECT(n >= 3 && n <= 16);
  const double shift = check_ranking(p, n);
  /* Auto runs the first. */
  hs_field_plan plan = NULL;
  OK(hs_field_plan_create(grid, "auto", spec, &plan));
  EXPECT(plan && strcmp(hs_field_plan_strategy(plan), p[0].strategy) == 0);
  OK(hs_field_plan_free(&plan));
  /* Capacity 1: the count of all, one entry written. */
  hs_prediction one[2];
  strcpy(one[1].strategy, "untouched");
  int all = 0;
  OK(hs_explain_field(grid, spec, one, 1, &all));
  EXPECT(all == n && strcmp(one[0].strategy, p[0].strategy) == 0 && strcmp(one[1].strategy, "untouched") == 0);
  /* As text: sized by a first call, one line per prediction after the header, in ranking order. */
  size_t length = 0;
  OK(hs_explain_text(p, n, NULL, 0, &length));
  char text[2048];
  EXPECT(length > 0 && length < sizeof text);
  size_t again = 0;
  OK(hs_explain_text(p, n, text, sizeof text, &again));
  EXPECT(again == length && strlen(text) == length);
  int lines = 0;
  for (const char* c = text; *c; ++c) lines += *c == '\n';
  EXPECT(lines == n + 1);
  const char* first = strstr(text, p[0].strategy);
  EXPECT(first != NULL && (n < 2 || strstr(first, p[n - 1].strategy) != NULL));
  char cut[8];
  OK(hs_explain_text(p, n, cut, sizeof cut, NULL));
  EXPECT(strlen(cut) == sizeof cut - 1);
  EXPECT(hs_explain_text(p, -1, text, sizeof text, NULL) == HS_ERR_ARGUMENT);
  EXPECT(hs_explain_text(NULL, 2, text, sizeof text, NULL) == HS_ERR_NULL);
  return shift;
}

static void explain_particles(hs_grid grid) {
  const hs_domain dom = {{0, 0, 0}, {8, 8, 8}};
  const double cutoff[3] = {1.5, 1.5, 1.5};
  double x[3] = {0, 0, 0};
  int coords[3], dims[3];
  OK(hs_grid_info(grid, NULL, NULL, NULL, dims, coords, NULL));
  for (int d = 0; d < 3; ++d) x[d] = (coords[d] + 0.5) * 8.0 / dims[d]; /* one particle in the middle of the box */
  hs_prediction p[16];
  int n = 0;
  OK(hs_explain_particles(grid, &dom, cutoff, 1, p, 16, &n));
  check_ranking(p, n);
  const hs_positions pos = {x, NULL, NULL, HS_DOUBLE, 3};
  hs_particle_plan plan = NULL;
  OK(hs_particle_plan_create(grid, "Auto", &dom, cutoff, &pos, 1, &plan));
  EXPECT(plan && strcmp(hs_particle_plan_strategy(plan), p[0].strategy) == 0);
  OK(hs_particle_plan_free(&plan));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char path[64];
  int id = (int)getpid();
  MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
  snprintf(path, sizeof path, "haloshift-c-test-calibration-%d.json", id);
  hs_grid grid = NULL;
  OK(hs_grid_create(MPI_COMM_WORLD, NULL, &grid));
  hs_field_spec spec;
  hs_field_spec_init(&spec);
  for (int d = 0; d < 3; ++d) {
    spec.global[d] = 24;
    spec.ghost_low[d] = spec.ghost_high[d] = 1;
  }
  use_calibration(path, 1e-6);
  const double fast = explain_fields(grid, &spec);
  explain_particles(grid);
  use_calibration(path, 5e-5); /* a slower network: explain and Auto read the new file */
  const double slow = explain_fields(grid, &spec);
  EXPECT(size > 1 ? slow > fast : slow == fast);
  OK(hs_grid_free(&grid));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) remove(path);
  const int code = finish("test_model");
  MPI_Finalize();
  return code;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Bad input across the C interface: NULL handles and pointers, values that are no enumerator,
 * negative ghost widths, an unknown strategy, arguments that differ between ranks or are bad on one
 * rank only. Each call must return the expected code with a text naming the problem, the same code
 * on every rank for collective calls, and leave the library usable (a good exchange runs after). */
#include "support.h"

static int rank = 0, size = 1;

/* Expects `status` == `code` with `part` in the error text; for collective calls the same code on all ranks. */
static void expect_error(hs_status status, hs_status code, const char* part, int collective, int line) {
  char what[1400];
  snprintf(what, sizeof what, "status %d (want %d), text '%s' (want '%s')", (int)status, (int)code, hs_last_error(),
           part);
  expect(status == code && strstr(hs_last_error(), part) != NULL, what, line);
  if (!collective) return;
  int low = (int)status, high = (int)status;
  MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  expect(low == high, "the ranks returned different codes", line);
}
#define LOCAL_ERROR(call, code, part) expect_error((call), (code), (part), 0, __LINE__)
#define SHARED_ERROR(call, code, part) expect_error((call), (code), (part), 1, __LINE__)

static void spec_of(hs_field_spec* spec, int ghost) {
  hs_field_spec_init(spec);
  for (int d = 0; d < 3; ++d) {
    spec->global[d] = 8;
    spec->ghost_low[d] = spec->ghost_high[d] = ghost;
  }
}

static void null_arguments(hs_grid grid, hs_field_plan plan) {
  hs_field_array a;
  hs_field_array_init(&a, NULL, HS_DOUBLE);
  LOCAL_ERROR(hs_field_forward(NULL, &a), HS_ERR_NULL, "hs_field_forward: plan is NULL");
  LOCAL_ERROR(hs_field_forward(plan, NULL), HS_ERR_NULL, "hs_field_forward: array is NULL");
  LOCAL_ERROR(hs_field_reverse(NULL, &a, HS_SUM), HS_ERR_NULL, "hs_field_reverse: plan is NULL");
  LOCAL_ERROR(hs_field_test(plan, NULL), HS_ERR_NULL, "hs_field_test: done is NULL");
  LOCAL_ERROR(hs_field_wait(NULL), HS_ERR_NULL, "hs_field_wait: plan is NULL");
  LOCAL_ERROR(hs_grid_info(NULL, NULL, NULL, NULL, NULL, NULL, NULL), HS_ERR_NULL, "hs_grid_info: grid is NULL");
  LOCAL_ERROR(hs_grid_comm(grid, NULL), HS_ERR_NULL, "hs_grid_comm: comm is NULL");
  hs_grid other = NULL;
  SHARED_ERROR(hs_grid_create(MPI_COMM_WORLD, NULL, rank == 0 ? NULL : &other), HS_ERR_NULL,
               "hs_grid_create: grid is NULL");
  EXPECT(other == NULL);
  LOCAL_ERROR(hs_field_plan_free(NULL), HS_ERR_NULL, "hs_field_plan_free");
  LOCAL_ERROR(hs_particle_wait(NULL), HS_ERR_NULL, "hs_particle_wait: plan is NULL");
  LOCAL_ERROR(hs_particle_forward(NULL, 0, NULL), HS_ERR_NULL, "hs_particle_forward: plan is NULL");
  LOCAL_ERROR(hs_use_calibration(NULL), HS_ERR_NULL, "hs_use_calibration: path is NULL");
  EXPECT(strcmp(hs_field_plan_strategy(NULL), "") == 0);
  hs_field_plan none = NULL;
  OK(hs_field_plan_free(&none)); /* freeing a NULL handle is fine */
  hs_field_spec spec;
  spec_of(&spec, 1);
  SHARED_ERROR(hs_field_plan_create(grid, "Shift", rank == size - 1 ? NULL : &spec, &none), HS_ERR_NULL,
               "spec is NULL");
  SHARED_ERROR(hs_field_plan_create(grid, NULL, &spec, &none), HS_ERR_NULL, "strategy is NULL");
  EXPECT(none == NULL);
}

static void bad_values(hs_grid grid, hs_field_plan plan, double* data) {
  hs_field_array a;
  hs_field_array_init(&a, data, HS_DOUBLE);
  a.type = 7;
  LOCAL_ERROR(hs_field_forward(plan, &a), HS_ERR_ARGUMENT, "type = 7 is no hs_type");
  a.type = HS_DOUBLE;
  a.order = 2;
  LOCAL_ERROR(hs_field_forward(plan, &a), HS_ERR_ARGUMENT, "order = 2 is no hs_order");
  a.order = HS_X_FASTEST;
  LOCAL_ERROR(hs_field_reverse(plan, &a, (hs_op)9), HS_ERR_ARGUMENT, "op = 9 is no hs_op");
  a.ghost_low[0] = 0; /* narrower than the plan's */
  LOCAL_ERROR(hs_field_forward(plan, &a), HS_ERR_ARGUMENT, "narrower than the plan's ghost");
  a.ghost_low[0] = -3;
  LOCAL_ERROR(hs_field_forward(plan, &a), HS_ERR_ARGUMENT, "ghost -3");
  hs_field_array_init(&a, data, HS_DOUBLE);
  OK(hs_field_start_forward(plan, &a));
  LOCAL_ERROR(hs_field_start_forward(plan, &a), HS_ERR_ARGUMENT, "already has an exchange in flight");
  OK(hs_field_wait(plan));
  hs_field_spec spec;
  spec_of(&spec, 1);
  spec.pattern = 5;
  hs_field_plan p = NULL;
  SHARED_ERROR(hs_field_plan_create(grid, "Shift", &spec, &p), HS_ERR_ARGUMENT, "pattern = 5 is no hs_pattern");
  hs_prediction out[4];
  int count = 0;
  SHARED_ERROR(hs_explain_field(grid, &spec, out, -1, &count), HS_ERR_ARGUMENT, "capacity must be >= 0");
  LOCAL_ERROR(hs_use_calibration("/nonexistent/haloshift-calibration.json"), HS_ERR_ARGUMENT,
              "/nonexistent/haloshift-calibration.json");
  hs_grid g = NULL;
  hs_grid_options o;
  hs_grid_options_init(&o);
  o.ndims = rank == 0 ? 4 : 3; /* bad on rank 0 only: every rank learns it */
  SHARED_ERROR(hs_grid_create(MPI_COMM_WORLD, &o, &g), HS_ERR_ARGUMENT, "ndims must be 1, 2 or 3, got 4");
  EXPECT(g == NULL);
}

static void bad_plans(hs_grid grid) {
  hs_field_spec spec;
  spec_of(&spec, 1);
  hs_field_plan p = NULL;
  spec.ghost_low[1] = -2;
  SHARED_ERROR(hs_field_plan_create(grid, "Shift", &spec, &p), HS_ERR_ARGUMENT, "ghost[1] must be >= 0, got -2");
  spec_of(&spec, 1);
  if (rank == size - 1) spec.ghost_high[2] = -1; /* on one rank only */
  SHARED_ERROR(hs_field_plan_create(grid, "SingleHop", &spec, &p), HS_ERR_ARGUMENT, "ghost_high[2] must be >= 0");
  spec_of(&spec, 1);
  SHARED_ERROR(hs_field_plan_create(grid, "NoSuchStrategy", &spec, &p), HS_ERR_ARGUMENT, "NoSuchStrategy");
  if (size > 1) {
    spec_of(&spec, 1 + rank % 2);
    SHARED_ERROR(hs_field_plan_create(grid, "Shift", &spec, &p), HS_ERR_ARGUMENT, "must be the same on all ranks");
  }
  EXPECT(p == NULL);
}

static void bad_particles(hs_grid grid) {
  const hs_domain dom = {{0, 0, 0}, {4, 4, 4}};
  const double cutoff[3] = {0.5, 0.5, 0.5};
  double x[6] = {1, 1, 1, 2, 2, 2};
  hs_positions pos = {x, NULL, NULL, HS_INT32, 3};
  hs_particle_plan plan = NULL;
  SHARED_ERROR(hs_particle_plan_create(grid, "Shift", &dom, cutoff, &pos, 0, &plan), HS_ERR_ARGUMENT,
               "must be HS_FLOAT (0) or HS_DOUBLE (1)");
  pos.type = HS_DOUBLE;
  OK(hs_particle_plan_create(grid, "Shift", &dom, cutoff, &pos, 0, &plan));
  hs_column columns[HS_MAX_COLUMNS + 1];
  for (int k = 0; k <= HS_MAX_COLUMNS; ++k) columns[k] = (hs_column){x, HS_DOUBLE, 1, 0};
  LOCAL_ERROR(hs_particle_forward(plan, HS_MAX_COLUMNS + 1, columns), HS_ERR_ARGUMENT, "ncolumns must be 0 to HS_MAX_COLUMNS");
  columns[0].components = 0;
  LOCAL_ERROR(hs_particle_forward(plan, 1, columns), HS_ERR_ARGUMENT, "columns[0].components must be >= 1, got 0");
  OK(hs_particle_plan_free(&plan));
  /* One particle per rank, in the middle of its box: a column without data is refused on every
   * rank (an exchange call checks locally: all ranks must err alike), never written through. */
  int dims[3], coords[3];
  OK(hs_grid_info(grid, NULL, NULL, NULL, dims, coords, NULL));
  for (int d = 0; d < 3; ++d) x[d] = (coords[d] + 0.5) * 4.0 / dims[d];
  OK(hs_particle_plan_create(grid, "SingleHop", &dom, cutoff, &pos, 1, &plan));
  columns[0] = (hs_column){NULL, HS_DOUBLE, 1, 0};
  LOCAL_ERROR(hs_particle_forward(plan, 1, columns), HS_ERR_NULL, "columns[0].data is NULL");
  pos.x = NULL;
  LOCAL_ERROR(hs_particle_forward_positions(plan, &pos, 0, NULL), HS_ERR_NULL, "x->x is NULL");
  pos.x = x;
  OK(hs_particle_plan_free(&plan));
  /* A particle outside a non-periodic domain, on one rank only: every rank raises, nothing moves. */
  hs_grid walls = NULL;
  hs_grid_options o;
  hs_grid_options_init(&o);
  o.periodic[0] = 0;
  OK(hs_grid_create(MPI_COMM_WORLD, &o, &walls));
  size_t count = 0;
  if (rank == 0) {
    x[0] = -1;
    count = 1;
  }
  SHARED_ERROR(hs_migrate(walls, &dom, &pos, 0, NULL, &count, 2, 1, NULL, NULL), HS_ERR_ARGUMENT, "(particle 0)");
  OK(hs_grid_free(&walls));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  hs_grid grid = NULL;
  OK(hs_grid_create(MPI_COMM_WORLD, NULL, &grid));
  hs_field_spec spec;
  spec_of(&spec, 1);
  hs_field_plan plan = NULL;
  OK(hs_field_plan_create(grid, "Shift", &spec, &plan));
  int interior[3];
  OK(hs_field_plan_shape(plan, NULL, interior, NULL, NULL));
  const size_t cells = (size_t)(interior[0] + 2) * (size_t)(interior[1] + 2) * (size_t)(interior[2] + 2);
  double* data = calloc(cells, sizeof(double));
  null_arguments(grid, plan);
  bad_values(grid, plan, data);
  bad_plans(grid);
  bad_particles(grid);
  /* Still usable: a good exchange after all of that. */
  hs_field_array a;
  hs_field_array_init(&a, data, HS_DOUBLE);
  OK(hs_field_forward(plan, &a));
  OK(hs_field_plan_free(&plan));
  OK(hs_grid_free(&grid));
  free(data);
  const int code = finish("test_misuse");
  MPI_Finalize();
  return code;
}

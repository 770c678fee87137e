/* SPDX-License-Identifier: BSD-3-Clause */
/* What the C interface's tests share: failure counting, values of any hs_type, agreement of the
 * outcome over all ranks. Each test program includes it once. */
#ifndef HALOSHIFT_C_TEST_SUPPORT_H
#define HALOSHIFT_C_TEST_SUPPORT_H

#include <haloshift.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

/* Counts a failed expectation and prints the first few, with the rank. */
static inline void expect(int ok, const char* what, int line) {
  if (ok) return;
  ++failures;
  if (failures <= 10) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "rank %d, line %d: %s\n", rank, line, what);
  }
}
#define EXPECT(cond) expect((cond) ? 1 : 0, #cond, __LINE__)

/* Raises (counts a failure, prints hs_last_error) unless `status` is HS_OK. */
static inline void check_ok(hs_status status, const char* call, int line) {
  if (status == HS_OK) return;
  char text[1200];
  snprintf(text, sizeof text, "%s returned %d: %s", call, (int)status, hs_last_error());
  expect(0, text, line);
}
#define OK(call) check_ok((call), #call, __LINE__)

/* The bytes of one value of an hs_type. */
static inline size_t size_of(int type) { return type == HS_FLOAT || type == HS_INT32 ? 4 : 8; }

/* Value `i` of an array of `type`, as a double (the tests' values are integers below 2^24: exact). */
static inline double get_value(const void* a, int type, size_t i) {
  switch (type) {
    case HS_FLOAT: return ((const float*)a)[i];
    case HS_DOUBLE: return ((const double*)a)[i];
    case HS_INT32: return ((const int32_t*)a)[i];
    default: return (double)((const int64_t*)a)[i];
  }
}
static inline void set_value(void* a, int type, size_t i, double v) {
  switch (type) {
    case HS_FLOAT: ((float*)a)[i] = (float)v; break;
    case HS_DOUBLE: ((double*)a)[i] = v; break;
    case HS_INT32: ((int32_t*)a)[i] = (int32_t)v; break;
    default: ((int64_t*)a)[i] = (int64_t)v; break;
  }
}

/* The failures of all ranks; prints the verdict on rank 0 and returns the exit code. */
static inline int finish(const char* name) {
  int total = 0, rank = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("%s: %s (%d failures)\n", name, total ? "FAILED" : "passed", total);
  return total ? 1 : 0;
}

#endif

// SPDX-License-Identifier: BSD-3-Clause
// What the five files of haloshift_bench_include_cost share: the four entry
// points, one per kernel file, and their arguments. No haloshift header here:
// include_cost_plain.cpp and include_cost_hand.cpp must see none.
#pragma once

#include <mpi.h>

namespace include_cost {

struct run_args {
  long n = 0;          ///< interior cells per side; arrays are (n + 2 radius)^2, x fastest
  int radius = 1;      ///< 1 to 4
  int iterations = 1;  ///< sweeps timed in one call
};

}  // namespace include_cost

/// Fills `in` and `out`, then returns the seconds of `iterations` sweeps
/// (the loops only); -1 for a radius outside 1 to 4.
double run_plain(MPI_Comm comm, const include_cost::run_args& a, double* in, double* out);
/// The same loops with a face exchange written by hand (raw_faces.hpp) built next to them.
double run_hand_written(MPI_Comm comm, const include_cost::run_args& a, double* in, double* out);
/// The same loops, compiled after #include <haloshift/haloshift.hpp>, with a plan in the same function.
double run_library(MPI_Comm comm, const include_cost::run_args& a, double* in, double* out);
/// run_plain compiled once more in a file of its own (the control: placement alone).
double run_plain_again(MPI_Comm comm, const include_cost::run_args& a, double* in, double* out);

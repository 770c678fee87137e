// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// This process's rank and the number of ranks in MPI_COMM_WORLD: shared by the MPI test files, which
// compile together as unity sources and so cannot each define them.
#include <mpi.h>

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

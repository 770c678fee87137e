// SPDX-License-Identifier: BSD-3-Clause
// Replaces MPI_Allreduce of a test program with a counting one that calls PMPI_Allreduce. Compiled on
// its own (not in a unity source): one definition, seen by no other file.
#include "counting_mpi.hpp"

#include <mpi.h>

#include <atomic>

namespace {
std::atomic<long> calls{0};
std::atomic<long> isends{0};
}  // namespace

namespace collectives {
long allreduces() { return calls; }
long sends() { return isends; }
}  // namespace collectives

extern "C" int MPI_Isend(const void* buffer, int count, MPI_Datatype type, int to, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  ++isends;
  return PMPI_Isend(buffer, count, type, to, tag, comm, request);
}

extern "C" int MPI_Allreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  ++calls;
  return PMPI_Allreduce(send, receive, count, type, op, comm);
}

// SPDX-License-Identifier: BSD-3-Clause
// Replaces MPI_Allreduce of a test program with a counting one that calls PMPI_Allreduce. Compiled on
// its own (not in a unity source): one definition, seen by no other file.
#include "counting_mpi.hpp"

#include <mpi.h>

#include <atomic>

namespace {
std::atomic<long> calls{0};
std::atomic<long> isends{0};
constexpr int counted_peers = 64;
std::atomic<long> isends_to[counted_peers]{};  // per destination rank (of whichever communicator)
}  // namespace

namespace collectives {
long allreduces() { return calls; }
long sends() { return isends; }
long sends_to(int rank) { return rank >= 0 && rank < counted_peers ? isends_to[rank].load() : -1; }
}  // namespace collectives

extern "C" int MPI_Isend(const void* buffer, int count, MPI_Datatype type, int to, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  ++isends;
  if (to >= 0 && to < counted_peers) ++isends_to[to];
  return PMPI_Isend(buffer, count, type, to, tag, comm, request);
}

extern "C" int MPI_Allreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  ++calls;
  return PMPI_Allreduce(send, receive, count, type, op, comm);
}

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The MPI test program's MPI_Allreduce counts its calls (counting_mpi.cpp, through MPI's profiling
// interface): how the tests prove that a call with collective argument checks agrees in one collective.

namespace collectives {
/// MPI_Allreduce calls this process has made so far.
long allreduces();
/// MPI_Isend calls so far (the shared-memory path sends none inside a node).
long sends();
/// MPI_Isend calls to rank `rank` of their communicator so far (ranks below 64; -1 above).
long sends_to(int rank);
}  // namespace collectives

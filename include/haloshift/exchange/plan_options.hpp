// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file plan_options.hpp
/// @brief The options every plan kind is built with.

#include "../grid/neighborhood.hpp"
#include "../memory/spaces.hpp"
#include "argument_checks.hpp"
#include "protocol.hpp"

namespace haloshift {

/// How one exchange of several fields (a field_bundle, or several field views passed together)
/// travels (docs/grids.md, "Several fields: one message per neighbour or one per field").
enum class field_messages {
  /// make_field_plan<Auto>: the cost model's choice for the fields it was told of (the
  /// bundle's, or make_field_plan's `fields`); a strategy chosen by name: per_neighbor.
  automatic,
  /// One message per neighbour carrying every field's cells in turn: the fewest messages, each
  /// packed (its cells lie in several arrays).
  per_neighbor,
  /// One message per neighbour and field, posted together: as many latencies as fields, each
  /// message as contiguous as a single field's (sent in place where it is one run), none above
  /// the size of one field's.
  per_field,
};

/// Options of a plan; they must be equal on all ranks.
struct plan_options {
  /// Point-to-point protocol: overlapping (MPI_Isend/MPI_Irecv) or rendezvous (MPI_Ssend).
  protocol mode = protocol::overlapping;
  /// Full neighbourhood or eighth shell.
  shell kind = shell::full;
  /// Which neighbours to import from: all (full), faces only (a star
  /// stencil), or faces and edges. Narrower patterns send fewer messages.
  halo_pattern pattern = halo_pattern::full;
  /// TeamShift's team size per dimension (0: TeamShift chooses); ignored by the other strategies.
  offset team{0, 0, 0};
  /// How forward, reverse and start check their arguments: locally, or agreed
  /// per call so that a mistake on one rank raises on all (argument_checks.hpp).
  argument_checks checks = argument_checks::from_environment;
  /// Host threads that pack and unpack a field view's exchange in host memory (1: the calling
  /// thread alone). MPI stays on the calling thread (MPI_THREAD_FUNNELED is enough).
  int pack_threads = 1;
  /// How device memory's messages reach MPI (docs/gpu.md, "Staging").
  memory::mpi_path device_mpi = memory::mpi_path::detect;
  /// Messages between ranks of one node go through an MPI-3 shared window
  /// instead of MPI (docs/node-aware.md): the sender packs into the window,
  /// the receiver unpacks out of it. Point-to-point strategies with the
  /// overlapping protocol; NeighborAlltoall, rendezvous and batched (device)
  /// exchanges stay on MPI.
  bool shared_memory = false;
  /// Split-phase exchanges (start_forward, start_reverse) run on a thread of the plan's own:
  /// the packing, messages and unpacking go on while the calling thread computes, on a core of
  /// their own where one is free (docs/grids.md, "Overlap on a thread of its own"). Needs MPI
  /// initialized at MPI_THREAD_SERIALIZED or above (MPI_Init_thread); at MPI_THREAD_SERIALIZED the
  /// calling thread makes no MPI call between start and wait. A blocking forward or reverse, and
  /// a wait the thread has not yet begun to serve, run on the calling thread as without it.
  bool background = false;
  /// Several fields in one exchange of a field plan: one message per neighbour, or one per
  /// neighbour and field (field_messages). Point-to-point strategies; NeighborAlltoall sends one
  /// message per neighbour by construction and refuses per_field. Ignored by block and particle plans.
  field_messages messages = field_messages::automatic;
};

}  // namespace haloshift

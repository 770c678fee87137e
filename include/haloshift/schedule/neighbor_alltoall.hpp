// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file neighbor_alltoall.hpp
/// @brief The MPI baseline: one MPI_Neighbor_alltoallv over a distributed
/// graph of the k-neighbourhood.

#include <string_view>

#include "single_hop.hpp"

namespace haloshift {

/// NeighborAlltoall: SingleHop's messages, handed to MPI as one
/// `MPI_Neighbor_alltoallv` on a communicator made by
/// `MPI_Dist_graph_create_adjacent` (one edge per offset, so periodic images
/// are duplicate edges). Persistent (`MPI_Neighbor_alltoallv_init`, or Open
/// MPI's `MPIX_` extension) where the MPI offers it. Not over a Cartesian
/// communicator: that reaches only the 2d face neighbours, and Debian's MPIs
/// were seen filling the wrong slots on periodic dimensions of two ranks.
/// Only the overlapping protocol applies.
struct NeighborAlltoall {
  /// The strategy's name (make_plan(grid, "NeighborAlltoall", ...), the registry).
  static constexpr std::string_view name = "NeighborAlltoall";
  /// The plan runs this schedule through MPI's neighbourhood collective instead of the executor.
  static constexpr bool neighbor_collective = true;

  /// SingleHop's schedule (what the collective moves).
  static schedule make_schedule(const grid_shape& grid, const range& r) { return SingleHop::make_schedule(grid, r); }
};

}  // namespace haloshift

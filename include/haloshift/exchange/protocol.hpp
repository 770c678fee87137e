// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file protocol.hpp
/// @brief How a rank's sends and receives of one round relate in time.

namespace haloshift {

/// `overlapping` (default): all receives and sends of a round are posted at
/// once (MPI_Irecv / MPI_Isend). `rendezvous`: the papers' measurement mode;
/// transfers run one after another, and in each a rank either sends
/// (MPI_Ssend) and then receives or the other way round, alternating along the
/// direction, so a rank never sends and receives at the same time (Hockney
/// cost doubles).
enum class protocol { overlapping, rendezvous };

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file links.hpp
/// @brief One step of a network: one package over every outgoing link, one
/// from every incoming link, sizes learnt by matched probe.

#include <climits>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "../../error.hpp"
#include "../mpi/check.hpp"
#include "../../network/message_codec.hpp"

namespace haloshift::detail {

/// The other end of a link and the tag that tells the link apart from other
/// links between the same two ranks (periodic images, repeated MSN links).
struct link {
  int peer;
  int tag;
};

/// Sends `out[i]` over `sends[i]` and receives one package from every link of
/// `receives` into `in` (resized to match). Every package goes, even an empty
/// one: the receiver waits for exactly one per link and step. Variable sizes
/// need no agreement in advance: MPI_Mprobe + MPI_Get_count + MPI_Mrecv.
/// A package too large for MPI's int count throws on its sender before that
/// rank sends anything in the step.
inline void exchange_packages(MPI_Comm comm, const std::vector<link>& sends,
                              const std::vector<std::span<const std::byte>>& out,
                              const std::vector<link>& receives, std::vector<byte_buffer>& in) {
  for (std::size_t i = 0; i < sends.size(); ++i)
    if (out[i].size() > static_cast<std::size_t>(INT_MAX))
      throw error("network: a package of " + std::to_string(out[i].size()) + " bytes to rank " +
                  std::to_string(sends[i].peer) + " exceeds MPI's int count (" + std::to_string(INT_MAX) + ")");
  std::vector<MPI_Request> requests(sends.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < sends.size(); ++i)
    mpi::check(MPI_Isend(out[i].data(), static_cast<int>(out[i].size()), MPI_BYTE, sends[i].peer, sends[i].tag, comm,
                         &requests[i]),
               "MPI_Isend");
  in.resize(receives.size());
  for (std::size_t j = 0; j < receives.size(); ++j) {
    MPI_Message message;
    MPI_Status status;
    mpi::check(MPI_Mprobe(receives[j].peer, receives[j].tag, comm, &message, &status), "MPI_Mprobe");
    int count = 0;
    mpi::check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
    in[j].resize(static_cast<std::size_t>(count));
    mpi::check(MPI_Mrecv(in[j].data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE), "MPI_Mrecv");
  }
  mpi::check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

}  // namespace haloshift::detail

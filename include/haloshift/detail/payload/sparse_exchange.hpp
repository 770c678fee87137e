// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file sparse_exchange.hpp
/// @brief migrate's transport: bytes to the few ranks that get some, either
/// to any rank (NBX) or among the boxes around this one.

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <string>
#include <vector>

#include "../../error.hpp"
#include "../../grid/cartesian_grid.hpp"
#include "../compiled.hpp"
#include "../mpi/check.hpp"

namespace haloshift::detail {

/// Bytes for one rank, or from one: a piece of migrate's departure or arrival buffer.
struct rank_bytes {
  int rank = 0;
  std::size_t first = 0, size = 0;  ///< where in the buffer
};

inline int checked_count(std::size_t bytes, int rank) {
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw error("migrate: " + std::to_string(bytes) + " bytes for rank " + std::to_string(rank) +
                " exceed MPI's int count");
  return static_cast<int>(bytes);
}

/// Sparse data exchange (Hoefler's NBX): synchronous sends to the few ranks
/// that get something, receives by probing, and a non-blocking barrier that
/// completes once every send was matched. O(messages) work and no O(P)
/// memory, for any distance. Fills `in` with the arrivals, ordered by source
/// rank. `tag`: see migration_tag.
HALOSHIFT_BUILDER void sparse_exchange(MPI_Comm comm, int tag, const std::byte* out, const std::vector<rank_bytes>& to,
                                       std::vector<std::byte>& in, std::vector<rank_bytes>& from);
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER void sparse_exchange(MPI_Comm comm, int tag, const std::byte* out, const std::vector<rank_bytes>& to,
                                       std::vector<std::byte>& in, std::vector<rank_bytes>& from) {
  std::vector<MPI_Request> sends;
  for (const rank_bytes& m : to) {
    sends.emplace_back();
    mpi::check(MPI_Issend(out + m.first, checked_count(m.size, m.rank), MPI_BYTE, m.rank, tag, comm, &sends.back()),
               "MPI_Issend");
  }
  in.clear();
  from.clear();
  MPI_Request barrier = MPI_REQUEST_NULL;
  bool barrier_started = false;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    mpi::check(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &status), "MPI_Iprobe");
    if (flag) {
      int n = 0;
      mpi::check(MPI_Get_count(&status, MPI_BYTE, &n), "MPI_Get_count");
      from.push_back({status.MPI_SOURCE, in.size(), static_cast<std::size_t>(n)});
      in.resize(in.size() + static_cast<std::size_t>(n));
      mpi::check(MPI_Recv(in.data() + from.back().first, n, MPI_BYTE, status.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE),
                 "MPI_Recv");
      continue;
    }
    if (!barrier_started) {
      int done = 0;
      mpi::check(MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE),
                 "MPI_Testall");
      if (done) {
        mpi::check(MPI_Ibarrier(comm, &barrier), "MPI_Ibarrier");
        barrier_started = true;
      }
    } else {
      int done = 0;
      mpi::check(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) break;
    }
  }
  // One message per source (each rank sends one per destination): arrival order is timing, rank order is not.
  std::sort(from.begin(), from.end(), [](const rank_bytes& a, const rank_bytes& b) { return a.rank < b.rank; });
}
#endif

/// The exchange when every rank sends only to the boxes around it (particles
/// move less than a box between re-neighbourings, the usual case): one
/// message to and from each neighbouring rank, empty where nothing goes, as
/// LAMMPS's exchange does with its six swaps. The receiver learns a message's
/// size from the message itself (a matched probe), so sizes and bytes take one
/// round, not two. `near` and `to` are sorted by rank; so are the arrivals.
HALOSHIFT_BUILDER void neighbour_exchange(MPI_Comm comm, int tag, const std::vector<int>& near, const std::byte* out,
                                          const std::vector<rank_bytes>& to, std::vector<std::byte>& in,
                                          std::vector<rank_bytes>& from);
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER void neighbour_exchange(MPI_Comm comm, int tag, const std::vector<int>& near, const std::byte* out,
                                          const std::vector<rank_bytes>& to, std::vector<std::byte>& in,
                                          std::vector<rank_bytes>& from) {
  std::vector<MPI_Request> sends(near.size());
  std::size_t next = 0;  // the next message of `to`: every destination is in `near`
  for (std::size_t i = 0; i < near.size(); ++i) {
    const bool some = next < to.size() && to[next].rank == near[i];
    const rank_bytes m = some ? to[next++] : rank_bytes{near[i], 0, 0};
    mpi::check(MPI_Isend(out + m.first, checked_count(m.size, m.rank), MPI_BYTE, m.rank, tag, comm, &sends[i]),
               "MPI_Isend");
  }
  std::vector<MPI_Message> messages(near.size());
  from.clear();
  std::size_t total = 0;
  for (std::size_t i = 0; i < near.size(); ++i) {
    MPI_Status status;
    mpi::check(MPI_Mprobe(near[i], tag, comm, &messages[i], &status), "MPI_Mprobe");
    int n = 0;
    mpi::check(MPI_Get_count(&status, MPI_BYTE, &n), "MPI_Get_count");
    from.push_back({near[i], total, static_cast<std::size_t>(n)});
    total += static_cast<std::size_t>(n);
  }
  in.resize(total);
  for (std::size_t i = 0; i < near.size(); ++i)
    mpi::check(MPI_Mrecv(in.data() + from[i].first, static_cast<int>(from[i].size), MPI_BYTE, &messages[i],
                         MPI_STATUS_IGNORE),
               "MPI_Mrecv");
  mpi::check(MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  std::erase_if(from, [](const rank_bytes& m) { return m.size == 0; });
}
#endif

/// The ranks of the boxes around this one (offsets of at most one box along
/// each dimension, periodic images included), without this rank, sorted.
HALOSHIFT_BUILDER std::vector<int> neighbour_ranks(const cartesian_grid& grid);
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER std::vector<int> neighbour_ranks(const cartesian_grid& grid) {
  std::vector<int> ranks;
  const int nd = grid.ndims();
  for (int z = nd > 2 ? -1 : 0; z <= (nd > 2 ? 1 : 0); ++z)
    for (int y = nd > 1 ? -1 : 0; y <= (nd > 1 ? 1 : 0); ++y)
      for (int x = -1; x <= 1; ++x)
        if (const auto n = grid.shape().neighbor_at(grid.coords(), offset{x, y, z}); n && n->rank != grid.rank())
          ranks.push_back(n->rank);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}
#endif

}  // namespace haloshift::detail

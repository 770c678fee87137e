// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file batched_round.hpp
/// @brief The steps of one round of a batched exchange, as exchange_run
/// takes them: pack (and stage out), post the messages, unpack (and stage in).

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "../mpi/check.hpp"
#include "batch_cache.hpp"

namespace haloshift::detail::batch {

/// Where MPI reads and writes a batched exchange's messages.
inline std::byte* message_area(const batch_run& b) noexcept { return b.pinned ? b.pinned : b.staging; }

/// Enqueues round `r`'s packing (its departures, its copies to the rank itself) and, where MPI
/// cannot reach executor memory, the departures' copy to the pinned staging; else the copy to the
/// host of each departure `windowed(post, true)` says a node's window carries (batch_run::host).
template <class Windowed>
void pack_round(const batch_run& b, const batched_round& r, Windowed&& windowed) {
  executor& x = *b.exec;
  x.use_stream(b.stream);
  for (const launch& l : r.pack) x.run(b.table, b.with_op(l), b.at);
  if (b.pinned && r.departures) x.to_host(b.pinned + r.arrivals, b.staging + r.arrivals, r.departures);
  if (b.pinned || !b.host || b.host == b.staging) return;  // the window's departures are in host memory already
  for (const staged_post& c : r.sends)
    if (windowed(c, true)) x.to_host(b.host + c.offset, b.staging + c.offset, c.bytes);
}

/// Posts round `r`'s receives, then its sends (packed by now), point to point on `comm`, but for
/// those `windowed(post, out)` says a node's window carries; returns how many receives lead `requests`.
template <class Windowed>
std::size_t post_round(const batch_run& b, const batched_round& r, MPI_Comm comm, std::vector<MPI_Request>& requests,
                       Windowed&& windowed) {
  std::byte* area = message_area(b);
  for (const staged_post& c : r.receives) {
    if (windowed(c, false)) continue;
    requests.emplace_back();
    mpi::check(MPI_Irecv(area + c.offset, static_cast<int>(c.bytes), MPI_BYTE, c.peer, c.tag, comm, &requests.back()),
               "MPI_Irecv");
  }
  const std::size_t receives = requests.size();
  for (const staged_post& c : r.sends) {
    if (windowed(c, true)) continue;
    requests.emplace_back();
    mpi::check(MPI_Isend(area + c.offset, static_cast<int>(c.bytes), MPI_BYTE, c.peer, c.tag, comm, &requests.back()),
               "MPI_Isend");
  }
  return receives;
}

/// Enqueues round `r`'s arrivals' copy back to executor memory (where they were staged: pinned
/// memory, or the host for those `windowed(post, false)` says came through a node's window) and
/// their unpacking (or combining); waits for it unless the exchange is stream-ordered.
template <class Windowed>
void unpack_round(const batch_run& b, const batched_round& r, Windowed&& windowed) {
  executor& x = *b.exec;
  if (b.pinned && r.arrivals) x.to_device(b.staging, b.pinned, r.arrivals);
  if (!b.pinned && b.host && b.host != b.staging)
    for (const staged_post& c : r.receives)
      if (windowed(c, false)) x.to_device(b.staging + c.offset, b.host + c.offset, c.bytes);
  for (const launch& l : r.unpack) x.run(b.table, b.with_op(l), b.at);
  if (!b.stream) x.synchronize();  // the arrays are the caller's once the exchange completes
}

}  // namespace haloshift::detail::batch

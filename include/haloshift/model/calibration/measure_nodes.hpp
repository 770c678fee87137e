// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file measure_nodes.hpp
/// @brief The two levels of a calibration (docs/node-aware.md, "The two-level
/// model"): which ranks of a job share a node, the message time between
/// nodes, and the synchronisation latency of the shared-memory path inside one.

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include <mpi.h>

#include "../../error.hpp"
#include "../../detail/exchange/shared_route.hpp"
#include "../../detail/mpi/check.hpp"
#include "../cost/hockney.hpp"
#include "../cost/node_placement.hpp"
#include "fit.hpp"
#include "measure.hpp"

namespace haloshift::detail {

/// Which ranks of `comm` share a node (collective): pretend nodes of HALOSHIFT_NODE_SIZE where it is
/// set (over the whole job: one machine; a grid's own layout, grid/nodes.hpp, splits each real node), else the nodes MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) finds, as a node size when they are
/// consecutive blocks of ranks (the last possibly smaller), else a node per rank.
inline node_placement node_placement_of(MPI_Comm comm) {
  int rank = 0, size = 0;
  mpi::check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  if (const std::vector<int> sizes = pretend_node_sizes(); !sizes.empty()) return pretend_placement(sizes, size);
  MPI_Comm shared = MPI_COMM_NULL;
  mpi::check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared), "MPI_Comm_split_type");
  int leader = rank;  // the node's lowest rank names it
  mpi::check(MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, shared), "MPI_Allreduce");
  MPI_Comm_free(&shared);
  std::vector<int> leaders(static_cast<std::size_t>(size));
  mpi::check(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm), "MPI_Allgather");
  std::map<int, int> number;  // leader -> node number, in order of first appearance
  for (const int l : leaders) number.emplace(l, static_cast<int>(number.size()));
  std::vector<int> node_of;
  for (const int l : leaders) node_of.push_back(number[l]);
  return placement_of(std::move(node_of));
}

/// The lowest rank of `ranks` that shares node 0 (`inside`) or does not (`!inside`); 0 if none.
inline int partner_of_rank0(const node_placement& nodes, int ranks, bool inside) {
  for (int r = 1; r < ranks; ++r)
    if (nodes.same_node(0, r) == inside) return r;
  return 0;
}

/// The model between nodes: a linear fit of the ping-pong of rank 0 with the lowest rank on another node
/// (the fastest half of `repetitions` per size), with gap `gamma`. Collective.
inline hockney measure_between_nodes(MPI_Comm comm, int partner, double gamma, int repetitions = 20) {
  const std::vector<std::size_t> sizes{0, 64, 1024, 8192, 65536, 262144, 1048576};
  const hockney line =
      fit::linear_regression(fit::means(fit::fastest(ping_pong(comm, sizes, repetitions, 2, partner), 0.5)));
  return hockney(line.alpha(), line.beta(), std::min(gamma, line.alpha()));
}

/// One-way time of a flag passed back and forth `repetitions` times between the two ranks of `pair` through
/// a shared window: what an in-node partner waits for "data ready" before copying. Collective over `pair`.
inline double flag_ping_pong(MPI_Comm pair, int repetitions) {
  int me = 0;
  mpi::check(MPI_Comm_rank(pair, &me), "MPI_Comm_rank");
  std::int64_t* mine = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  mpi::check(MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, pair, &mine, &win), "MPI_Win_allocate_shared");
  MPI_Aint bytes = 0;
  int unit = 0;
  std::int64_t* theirs = nullptr;
  mpi::check(MPI_Win_shared_query(win, 1 - me, &bytes, &unit, &theirs), "MPI_Win_shared_query");
  __atomic_store_n(mine, std::int64_t{-1}, __ATOMIC_RELEASE);
  mpi::check(MPI_Win_lock_all(MPI_MODE_NOCHECK, win), "MPI_Win_lock_all");
  mpi::check(MPI_Barrier(pair), "MPI_Barrier");
  // Waits as the exchange's in-node waits do: a short spin, then the core yielded, which a partner sharing
  // it needs to get on (without it, 4 ranks on 2 cores measured a time slice, 11 ms, instead of the trip).
  const auto wait_for = [&](std::int64_t i) {
    for (unsigned spins = 0; __atomic_load_n(mine, __ATOMIC_ACQUIRE) != i;) {
      MPI_Win_sync(win);
      progress_while_waiting(pair, spins);
    }
  };
  const double start = MPI_Wtime();
  for (std::int64_t i = 0; i < repetitions; ++i) {
    if (me == 1) wait_for(i);
    __atomic_store_n(theirs, i, __ATOMIC_RELEASE);
    MPI_Win_sync(win);
    if (me == 0) wait_for(i);
  }
  const double seconds = (MPI_Wtime() - start) / (2.0 * repetitions);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  return seconds;
}

/// The synchronisation latency of the shared-memory path: rank 0 and `partner` (on one node) pass a
/// flag back and forth in a shared window (release store, MPI_Win_sync, acquire load), the one-way time
/// of `repetitions` round trips; 0 when they share no memory. Collective.
inline double measure_shm_alpha(MPI_Comm comm, int partner, int repetitions) {
  int rank = 0;
  mpi::check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  MPI_Comm shared = MPI_COMM_NULL;
  mpi::check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared), "MPI_Comm_split_type");
  int leader = rank, same = 0;
  mpi::check(MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, shared), "MPI_Allreduce");
  same = leader == 0;  // on rank 0's real node
  mpi::check(MPI_Bcast(&same, 1, MPI_INT, partner, comm), "MPI_Bcast");
  double seconds = 0;
  if (same && (rank == 0 || rank == partner)) {
    MPI_Comm pair = MPI_COMM_NULL;  // rank 0 and the partner alone: the window is theirs
    mpi::check(MPI_Comm_split(shared, 0, rank, &pair), "MPI_Comm_split");
    seconds = detail::flag_ping_pong(pair, repetitions);
    MPI_Comm_free(&pair);
  } else {
    MPI_Comm none = MPI_COMM_NULL;
    mpi::check(MPI_Comm_split(shared, MPI_UNDEFINED, rank, &none), "MPI_Comm_split");
  }
  MPI_Comm_free(&shared);
  mpi::check(MPI_Bcast(&seconds, 1, MPI_DOUBLE, 0, comm), "MPI_Bcast");
  return seconds;
}

/// `inside`, measured between ranks 0 and `nodes`' first partner on its node, with the levels of
/// `comm`'s nodes: the shared-memory path's latency where rank 0 has a partner on its node, the model
/// between nodes where the job spans several too. One rank per node: `inside` was measured between
/// nodes and stays the only level. `flag_trips`: round trips of the latency's measurement (few in
/// quick_calibration: on an oversubscribed node each waits for the scheduler). Collective.
inline hockney with_node_levels(MPI_Comm comm, const node_placement& nodes, const hockney& inside, int flag_trips = 1000) {
  int size = 0;
  mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const int in = partner_of_rank0(nodes, size, true), out = partner_of_rank0(nodes, size, false);
  hockney h = inside;
  if (in > 0) h = h.with_shm_alpha(measure_shm_alpha(comm, in, flag_trips));
  if (in > 0 && out > 0) h = h.with_between_nodes(measure_between_nodes(comm, out, inside.gamma()));
  return h;
}

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file simulation_setup.hpp
/// @brief What a max-plus simulation takes (the model, the protocol, block
/// sizes, staging) and what it predicts.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../../exchange/protocol.hpp"
#include "../../grid/grid_shape.hpp"
#include "../../schedule/schedule.hpp"
#include "../cost/arguments.hpp"
#include "../cost/hockney.hpp"
#include "../cost/node_placement.hpp"
#include "../../detail/exchange/shared_slot_bytes.hpp"

namespace haloshift::detail {

/// What the simulation predicts.
struct simulation_result {
  double makespan = 0;         ///< seconds until the last rank finishes
  std::vector<double> finish;  ///< per rank
  std::size_t messages = 0;    ///< messages between different ranks, all ranks together
  double bytes = 0;            ///< bytes in those messages
};

/// A rank's launches in one round of a batched exchange (detail/batch/compile.hpp: one per wave).
struct device_launches {
  unsigned pack = 0, unpack = 0;
};

/// What device data costs a rank in a round (hockney::device_terms): before its messages leave, its
/// pack launches, the `packed` bytes it packs (its copies to itself too) and, `staged`, the copy of
/// the `sent` bytes to the host; after they all arrived, the copy of the `received` bytes back and
/// their unpacking. A copy of no bytes is not made (batched_round.hpp).
inline std::pair<double, double> device_round_cost(const hockney::device_terms& d, device_launches l, bool staged,
                                                   double packed, double sent, double received) {
  const auto copy = [&](double bytes) { return staged && bytes > 0 ? d.copy_alpha + d.copy_beta * bytes : 0.0; };
  return {l.pack * d.launch + d.pack_beta * packed + copy(sent),
          copy(received) + l.unpack * d.launch + d.pack_beta * received};
}

/// Inputs besides the schedule. `block_bytes(rank)` is the size of a rank's
/// block (block mode); `link_time(from, to, bytes)`, when set, replaces the
/// Hockney time of a message per link (non-uniform networks; gamma still
/// applies to bursts).
struct simulation_setup {
  /// The message-time model.
  hockney cost;
  /// The protocol the exchange runs.
  protocol mode = protocol::overlapping;
  /// Bytes of `rank`'s block (default: 0).
  std::function<double(int)> block_bytes = [](int) { return 0.0; };
  /// Time of a message of `bytes` from rank `from` to rank `to`; empty: the Hockney time.
  std::function<double(int, int, double)> link_time{};
  /// Which messages the executor stages, when set: bit 1 of
  /// `staging(rank, round, transfer)` says that rank packs its send of that
  /// transfer into scratch, bit 2 that it unpacks its receive from scratch.
  /// Each costs `copy_beta` per byte of the rank's own time (see
  /// model/simulation/staging.hpp, which reads this off the compiled programs).
  std::function<unsigned(int, std::size_t, std::size_t)> staging{};
  /// Device data, when set: `launches(rank, round)` (model/simulation/staging.hpp reads them off
  /// the batched programs). Every round then costs each rank device_round_cost() instead of host
  /// packing (`staging` and copy_beta), and runs nonblocking in either protocol, as a batched
  /// exchange does (detail/exchange/exchange_run.hpp, post_batched).
  std::function<device_launches(int, std::size_t)> launches{};
  /// With `launches`: messages go through pinned host memory (false: MPI reads device memory).
  bool staged = false;
  /// Which ranks share a node: with two levels, a message between nodes is priced by
  /// `cost.between_nodes()` (if the model has one) and one inside a node by `cost`; empty: one level.
  node_placement nodes{};
  /// With `nodes`: transfers inside a node take the shared-memory path (hockney::shm_alpha), no MPI message.
  bool shm = false;
};

/// How a message travels: by MPI, priced by `model`, or by the shared-memory path inside a node
/// (`shm`), which carries messages up to shared_slot_bytes and sends larger ones by MPI.
struct message_route {
  const hockney* model = nullptr;
  bool shm = false;
  /// Whether a message of `bytes` goes through the node's window.
  bool windowed(double bytes) const noexcept { return shm && bytes <= static_cast<double>(shared_slot_bytes); }
  /// Seconds of a message of `bytes` alone on this route.
  double seconds(double bytes) const noexcept {
    return windowed(bytes) ? model->shm_alpha() + model->copy_beta() * bytes : model->time(bytes);
  }
  /// What the sender's port is busy with per message of `bytes` posted with `posted` others: the
  /// gap and the bytes' injection; nothing for the shared-memory path (the receiver copies).
  double injection(double bytes, double posted) const noexcept {
    return windowed(bytes) ? 0.0 : model->gap(bytes, posted) + model->beta(bytes) * bytes;
  }
};

/// Whether the existing ones of `n` sends (each with `exists` and a `route`) cross different levels.
template <class Send>
bool routes_differ(const Send* sends, std::size_t n) {
  const Send* first = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    if (!sends[i].exists) continue;
    if (first && (sends[i].route.model != first->route.model ||
                  sends[i].route.windowed(sends[i].bytes) != first->route.windowed(first->bytes)))
      return true;
    if (!first) first = &sends[i];
  }
  return false;
}

/// A message of a round whose messages cross different levels, in its sender's port: it may start
/// `ready` (its sender reached it, and its wire latency passed), then its bytes take `injection`.
struct port_job {
  double ready = 0, injection = 0, done = 0;
  std::size_t slot = 0;  ///< the caller's index of the message
};
/// Latency first: a sender's messages whose levels differ are served in the order their wire latency
/// ends, each when the port is free (as a network link's latency precedes its bytes), `done` when
/// its bytes are through. With one level every message has the same latency and this is the
/// injection order of the one-level model, which the simulator keeps for it (bit for bit).
inline void serve_by_readiness(std::vector<port_job>& jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const port_job& a, const port_job& b) { return a.ready < b.ready; });
  double port = 0;
  for (port_job& j : jobs) port = j.done = std::max(port, j.ready) + j.injection;
}

/// The route of a message from rank `from` to rank `to` under `setup`: one level without a node
/// layout; with one, between nodes by the between-nodes model (the model itself if it has one level),
/// inside a node by the model itself or, with `setup.shm`, by the shared-memory path.
inline message_route route_of(const simulation_setup& setup, int from, int to) {
  if (!setup.nodes.two_levels()) return {&setup.cost, false};
  if (setup.nodes.same_node(from, to)) return {&setup.cost, setup.shm};
  const hockney* between = setup.cost.between_nodes();
  return {between ? between : &setup.cost, false};
}

/// The setup's protocol is an enumerator and every rank's block a finite number of bytes >= 0.
/// Returns whether every rank's block has the same size.
inline bool check_simulation_setup(const char* where, const grid_shape& grid, const simulation_setup& setup) {
  check_protocol(where, setup.mode);
  check_node_placement(where, setup.nodes, grid.size());
  if (!setup.block_bytes) throw error(std::string(where) + ": setup.block_bytes is empty");
  bool uniform = true;
  const double first = grid.size() ? setup.block_bytes(0) : 0.0;
  for (int rank = 0; rank < grid.size(); ++rank) {
    const double b = setup.block_bytes(rank);
    if (!std::isfinite(b) || b < 0)
      throw error(std::string(where) + ": setup.block_bytes(" + std::to_string(rank) +
                  ") must be >= 0 bytes and finite, got " + value_text(b));
    uniform = uniform && b == first;
  }
  return uniform;
}

}  // namespace haloshift::detail

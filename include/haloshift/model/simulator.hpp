// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file simulator.hpp
/// @brief Max-plus evaluation of a schedule on a whole grid: the longest path
/// through every rank's message dependencies, in time linear in the number of
/// messages (the Petri-net paper's (max,+) method without its matrices).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "../exchange/program.hpp"
#include "../exchange/protocol.hpp"
#include "../grid/grid_shape.hpp"
#include "../schedule/schedule.hpp"
#include "arguments.hpp"
#include "hockney.hpp"

namespace haloshift {

/// What the simulation predicts.
struct simulation_result {
  double makespan = 0;         ///< seconds until the last rank finishes
  std::vector<double> finish;  ///< per rank
  std::size_t messages = 0;    ///< messages between different ranks, all ranks together
  double bytes = 0;            ///< bytes in those messages
};

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
  /// model/staging.hpp, which reads this off the compiled programs).
  std::function<unsigned(int, std::size_t, std::size_t)> staging{};
};

namespace detail {
/// The setup's protocol is an enumerator and every rank's block a finite number of bytes >= 0.
inline void check_simulation_setup(const char* where, const grid_shape& grid, const simulation_setup& setup) {
  check_protocol(where, setup.mode);
  if (!setup.block_bytes) throw error(std::string(where) + ": setup.block_bytes is empty");
  for (int rank = 0; rank < grid.size(); ++rank)
    if (const double b = setup.block_bytes(rank); !std::isfinite(b) || b < 0)
      throw error(std::string(where) + ": setup.block_bytes(" + std::to_string(rank) +
                  ") must be >= 0 bytes and finite, got " + value_text(b));
}
}  // namespace detail

namespace detail {

struct sim_message {
  int from = -1, to = -1;
  double bytes = 0;
};

/// The message rank `s` (at `c`) sends in transfer `t`: none to itself (a
/// local copy) and none without bytes, exactly as the executor does.
inline bool message_of(const grid_shape& grid, const offset& c, int s, const transfer& t,
                       const std::function<double(int)>& block_bytes, sim_message& out) {
  if (!t.senders.contains(c)) return false;
  const auto to = grid.neighbor_at(c, t.direction);
  if (!to || to->rank == s) return false;
  double bytes = 0;
  for (const offset& o : t.blocks)
    if (const auto owner = grid.neighbor_at(c, o)) bytes += block_bytes(owner->rank);
  if (bytes <= 0) return false;
  out = {s, to->rank, bytes};
  return true;
}

/// Bytes rank `s` (at `c`) copies to itself in transfer `t` (its neighbour
/// along the direction is its own periodic image); 0 otherwise.
inline double local_copy_bytes(const grid_shape& grid, const offset& c, int s, const transfer& t,
                               const std::function<double(int)>& block_bytes) {
  if (!t.senders.contains(c)) return 0;
  const auto to = grid.neighbor_at(c, t.direction);
  if (!to || to->rank != s) return 0;
  double bytes = 0;
  for (const offset& o : t.blocks)
    if (const auto owner = grid.neighbor_at(c, o)) bytes += block_bytes(owner->rank);
  return bytes;
}

}  // namespace detail

/// Predicts the time of schedule `s` on every rank of `grid`. Overlapping
/// mode: in each round a rank posts its sends in order; the i-th leaves after
/// the injection of the earlier ones (gamma + beta * m each) and completes
/// `time(m)` after both ends are in the round; a rank's round ends with its
/// last sent or received message. Rendezvous mode: the executor's order
/// (transfers one after another, send-first or receive-first by the chain
/// colouring), each synchronous message starting when both ends reach it.
/// A copy to the rank itself takes `copy_beta` per byte of the rank's own
/// time, in transfer order, as the executor does it (free when 0). A rank
/// that sends or receives in a round ends it `round_delta` after its last
/// message; with `gamma_growth` the gap of a rank's sends grows with the
/// number it posts in that round (both 0: the papers' model). With
/// `setup.staging`, packing a send costs the sender `copy_beta` per byte
/// before it leaves and unpacking a receive costs the receiver as much after
/// its round's messages are in (overlapping) or after the message
/// (rendezvous), as the executor does it.
inline simulation_result simulate(const grid_shape& grid, const schedule& s, const simulation_setup& setup) {
  const int n = grid.size();
  detail::check_simulation_setup("simulate", grid, setup);
  simulation_result out;
  std::vector<double> now(n, 0.0), next(n, 0.0), port(n, 0.0), posted(n, 0.0);
  std::vector<char> active(n, 0);
  const double delta = setup.cost.round_delta();
  auto message_time = [&](const detail::sim_message& m) {
    return setup.link_time ? setup.link_time(m.from, m.to, m.bytes) : setup.cost.time(m.bytes);
  };
  detail::sim_message m;
  const double copy_beta = setup.cost.copy_beta();
  std::vector<double> unpack(n, 0.0);
  std::size_t round_index = 0;
  // Staging bits of the message `rank` sends in transfer `ti`: bit 1 from the
  // sender's program, bit 2 from the receiver's.
  auto message_staging = [&](int rank, std::size_t round, std::size_t ti, int to) -> unsigned {
    if (!setup.staging || copy_beta <= 0) return 0;
    return (setup.staging(rank, round, ti) & 1u) | (setup.staging(to, round, ti) & 2u);
  };
  for (const schedule_round& r : s.rounds) {
    if (setup.mode == protocol::overlapping) {
      next = now;
      std::fill(port.begin(), port.end(), 0.0);
      std::fill(active.begin(), active.end(), 0);
      // The gap depends on how many messages a rank posts in the round: count them first (only
      // when it matters, so the papers' model keeps its single pass).
      std::fill(posted.begin(), posted.end(), 1.0);
      if (setup.cost.gamma_growth() > 0) {
        std::fill(posted.begin(), posted.end(), 0.0);
        for (const transfer& t : r.transfers)
          for (int rank = 0; rank < n; ++rank)
            posted[rank] += detail::message_of(grid, grid.coords_of(rank), rank, t, setup.block_bytes, m);
      }
      std::fill(unpack.begin(), unpack.end(), 0.0);
      for (std::size_t ti = 0; ti < r.transfers.size(); ++ti)
        for (int rank = 0; rank < n; ++rank) {
          const transfer& t = r.transfers[ti];
          if (!detail::message_of(grid, grid.coords_of(rank), rank, t, setup.block_bytes, m)) {
            if (copy_beta > 0) {  // a copy delays the rank's later sends and its end of round
              port[rank] += copy_beta * detail::local_copy_bytes(grid, grid.coords_of(rank), rank, t, setup.block_bytes);
              next[rank] = std::max(next[rank], now[rank] + port[rank]);
            }
            continue;
          }
          const unsigned staged = message_staging(rank, round_index, ti, m.to);
          if (staged & 1u) port[rank] += copy_beta * m.bytes;  // packed before it leaves
          if (staged & 2u) unpack[m.to] += copy_beta * m.bytes;  // unpacked after the Waitall
          const double depart = now[rank] + port[rank];
          const double done = std::max(depart, now[m.to]) + message_time(m);
          port[rank] += setup.cost.gap(m.bytes, posted[rank]) + setup.cost.beta(m.bytes) * m.bytes;
          next[rank] = std::max(next[rank], done);
          next[m.to] = std::max(next[m.to], done);
          active[rank] = active[m.to] = 1;
          ++out.messages;
          out.bytes += m.bytes;
        }
      for (int rank = 0; rank < n; ++rank) {
        if (delta > 0 && active[rank]) next[rank] += delta;  // each communicating rank's Waitall: one dependency step
        next[rank] += unpack[rank];
      }
      ++round_index;
      now.swap(next);
      continue;
    }
    // Rendezvous: per transfer, every rank has at most a send and a receive, in its colour's order.
    for (std::size_t ti = 0; ti < r.transfers.size(); ++ti) {
      const transfer& t = r.transfers[ti];
      std::vector<detail::sim_message> sends(n), recvs(n);
      std::vector<char> has_send(n, 0), has_recv(n, 0), first_send(n, 0), step(n, 0);
      for (int rank = 0; rank < n; ++rank)
        if (detail::message_of(grid, grid.coords_of(rank), rank, t, setup.block_bytes, m)) {
          sends[rank] = m;
          has_send[rank] = 1;
          recvs[m.to] = m;
          has_recv[m.to] = 1;
        }
      if (copy_beta > 0)
        for (int rank = 0; rank < n; ++rank)
          if (!has_send[rank])
            now[rank] += copy_beta * detail::local_copy_bytes(grid, grid.coords_of(rank), rank, t, setup.block_bytes);
      std::deque<int> ready;
      for (int rank = 0; rank < n; ++rank) {
        first_send[rank] = detail::sends_first(grid, grid.coords_of(rank), t.direction);
        if (has_send[rank] || has_recv[rank]) ready.push_back(rank);
      }
      // The operation a rank is blocked in: 0 its send, 1 its receive, -1 none left.
      auto op = [&](int rank) -> int {
        while (step[rank] < 2) {
          const bool send_now = (step[rank] == 0) == static_cast<bool>(first_send[rank]);
          if (send_now ? has_send[rank] : has_recv[rank]) return send_now ? 0 : 1;
          ++step[rank];
        }
        return -1;
      };
      // A synchronous message starts when both ends are blocked in it.
      auto fire = [&](int from) {  // each synchronous message is a dependency step of both ends
        const detail::sim_message& sm = sends[from];
        const unsigned staged = message_staging(from, round_index, ti, sm.to);
        const double pack = staged & 1u ? copy_beta * sm.bytes : 0.0;
        const double done = std::max(now[from] + pack, now[sm.to]) + message_time(sm) + delta;
        now[from] = done;
        now[sm.to] = done + (staged & 2u ? copy_beta * sm.bytes : 0.0);
        ++step[from];
        ++step[sm.to];
        ++out.messages;
        out.bytes += sm.bytes;
        ready.push_back(from);
        ready.push_back(sm.to);
      };
      while (!ready.empty()) {
        const int rank = ready.front();
        ready.pop_front();
        const int o = op(rank);
        if (o == 0 && op(sends[rank].to) == 1 && recvs[sends[rank].to].from == rank) fire(rank);
        if (o == 1) {
          const int from = recvs[rank].from;
          if (op(from) == 0 && sends[from].to == rank) fire(from);
        }
      }
      for (int rank = 0; rank < n; ++rank)
        if (op(rank) != -1)
          throw error("simulate: rendezvous schedule deadlocks at rank " + std::to_string(rank) +
                      " (transfer along " + to_string(t.direction) + ")");
    }
    ++round_index;
  }
  out.finish = now;
  out.makespan = n ? *std::max_element(now.begin(), now.end()) : 0.0;
  return out;
}

}  // namespace haloshift

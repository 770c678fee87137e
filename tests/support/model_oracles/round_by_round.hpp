// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file round_by_round.hpp
/// @brief Test oracle: Hockney time read off a schedule round by round (bulk-synchronous:
/// each round costs its slowest rank), the form every closed formula in
/// docs/model.md is derived from.

#include <algorithm>
#include <vector>

#include <haloshift/auto.hpp>

namespace haloshift {

namespace detail {

/// One message of the round-by-round reading.
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

}  // namespace detail

/// Sum over rounds of the slowest rank's round time. Overlapping: a rank's
/// i-th send of a round completes after the injections of the earlier ones,
/// `sum_{j<i} (gamma + beta m_j) + time(m_i)`; its round takes as long as the
/// last, plus `round_delta` if any rank communicates in it; the gap grows
/// with the sends a rank posts in the round (`gamma_growth`). Rendezvous:
/// transfers one after another, each costing the slowest rank's send plus
/// receive, `round_delta` each. Unlike `simulate`, ranks do not run ahead of
/// the slowest one, so this is an upper bound of the max-plus time, equal to
/// it when all ranks do the same (Shift, SingleHop, TtlMultiHop on periodic
/// grids).
inline double round_by_round_time(const grid_shape& grid, const schedule& s, const detail::simulation_setup& setup) {
  detail::check_simulation_setup("round_by_round_time", grid, setup);
  const int n = grid.size();
  double total = 0;
  detail::sim_message m;
  auto message_time = [&](const detail::sim_message& x) {
    return setup.link_time ? setup.link_time(x.from, x.to, x.bytes) : setup.cost.time(x.bytes);
  };
  for (const schedule_round& r : s.rounds) {
    if (setup.mode == protocol::overlapping) {
      std::vector<double> injected(n, 0.0), finish(n, 0.0), posted(n, 0.0);
      for (const transfer& t : r.transfers)
        for (int rank = 0; rank < n; ++rank)
          posted[rank] += detail::message_of(grid, grid.coords_of(rank), rank, t, setup.block_bytes, m);
      for (const transfer& t : r.transfers)
        for (int rank = 0; rank < n; ++rank)
          if (detail::message_of(grid, grid.coords_of(rank), rank, t, setup.block_bytes, m)) {
            finish[rank] = std::max(finish[rank], injected[rank] + message_time(m));
            injected[rank] += setup.cost.gap(m.bytes, posted[rank]) + setup.cost.beta(m.bytes) * m.bytes;
          }
      const bool any = std::any_of(posted.begin(), posted.end(), [](double p) { return p > 0; });
      total += any ? *std::max_element(finish.begin(), finish.end()) + setup.cost.round_delta() : 0.0;
      continue;
    }
    for (const transfer& t : r.transfers) {
      std::vector<double> busy(n, 0.0);
      for (int rank = 0; rank < n; ++rank)
        if (detail::message_of(grid, grid.coords_of(rank), rank, t, setup.block_bytes, m)) {
          const double step = message_time(m) + setup.cost.round_delta();
          busy[rank] += step;
          busy[m.to] += step;
        }
      total += n ? *std::max_element(busy.begin(), busy.end()) : 0.0;
    }
  }
  return total;
}

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file closed_forms_alike.hpp
/// @brief Test oracle: exact forms where every rank of a periodic grid does the same
/// (docs/model.md, "Every rank alike"): one rank's round is the grid's
/// (overlapping), one ring at a time (rendezvous, closed_forms_rings.hpp), and
/// unit steps on odd rings.

#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <optional>
#include <string_view>
#include <vector>

#include <haloshift/auto.hpp>
#include <haloshift/model/cost/paper_formulas.hpp>

#include "closed_forms_rings.hpp"

namespace haloshift::detail::closed_form::detail {

/// What every rank does in one transfer of a schedule whose ranks all act alike (every rank sends in every
/// transfer, on a periodic grid): the bytes of its message to another rank (0: none), the bytes it copies to
/// itself (its neighbour along the direction is its own image), and whether the executor packs the send and
/// unpacks the receive (one layout on every rank, read off rank 0's compiled program).
struct alike_transfer {
  offset direction{};
  double bytes = 0, copy = 0;
  bool packed = false, unpacked = false;
};
using alike_rounds = std::vector<std::vector<alike_transfer>>;

/// Rounds `first..last-1` of `s` on a periodic `grid` as a rank whose staging bits in transfer `ti` of round `ri`
/// are `bits(ri, ti)` (1 packed send, 2 unpacked receive; empty: none) makes them, when every rank of its class
/// does the same. Every transfer's neighbour must exist (alike() checks it).
inline alike_rounds transfers_of(const grid_shape& grid, const schedule& s, std::size_t first, std::size_t last,
                                 double m, const std::function<unsigned(std::size_t, std::size_t)>& bits) {
  alike_rounds out(last - first);
  for (std::size_t ri = first; ri < last; ++ri)
    for (std::size_t ti = 0; ti < s.rounds[ri].transfers.size(); ++ti) {
      const transfer& t = s.rounds[ri].transfers[ti];
      alike_transfer a;
      a.direction = t.direction;
      const double bytes = m * static_cast<double>(t.blocks.size());
      (grid.neighbor_at(zero_offset, t.direction)->rank == 0 ? a.copy : a.bytes) = bytes;
      const unsigned b = bits && a.bytes > 0 ? bits(ri, ti) : 0u;
      a.packed = (b & 1u) != 0;
      a.unpacked = (b & 2u) != 0;
      out[ri - first].push_back(a);
    }
  return out;
}

/// The transfers of `s` on `grid` as every rank makes them (rank 0's layout stands for every rank's); no value
/// where ranks differ (a sender class, or a direction along a dimension the grid lacks: no rank has that neighbour).
inline std::optional<alike_rounds> alike(const grid_shape& grid, const schedule& s, const range& r, double m,
                                         const hockney& h, std::string_view strategy) {
  for (const schedule_round& round : s.rounds)
    for (const transfer& t : round.transfers)
      if (t.senders.dim >= 0 || !grid.neighbor_at(zero_offset, t.direction)) return std::nullopt;
  if (h.copy_beta() <= 0 || m <= 0) return transfers_of(grid, s, 0, s.rounds.size(), m, {});
  const haloshift::detail::staging_table staged(grid, s, r, strategy);
  return transfers_of(grid, s, 0, s.rounds.size(), m,
                      [&](std::size_t ri, std::size_t ti) { return staged(0, ri, ti); });
}

/// Overlapping, every rank alike: every rank enters each round at the same time, so a round costs what one
/// rank's sends cost. Its i-th message leaves after the packing (pi_j), copies and injections
/// (gap_j + beta m_j) of the ones before it and its own packing, and completes time(m_i) later; its receives
/// complete as its sends do (their senders are its translates). Round:
/// `max_i (sum_{j<=i} pi_j + sum_{j<i} (gap_j + beta m_j) + time(m_i)) + delta + sum_i upsilon_i`,
/// the maximum also over the running total at each copy, `upsilon_i` the unpacking of a staged receive.
inline double overlapping_alike(const alike_rounds& rounds, const hockney& h) {
  const double cb = h.copy_beta();
  double total = 0;
  for (const auto& round : rounds) {
    double posted = 1;  // the gap grows with the round's messages (counted when it matters, as simulate())
    if (h.gamma_growth() > 0) {
      posted = 0;
      for (const alike_transfer& a : round) posted += a.bytes > 0;
    }
    double port = 0, end = 0, unpack = 0;
    bool active = false;
    for (const alike_transfer& a : round) {
      if (a.bytes <= 0) {
        port += cb * a.copy;
        end = std::max(end, port);
        continue;
      }
      port += a.packed ? cb * a.bytes : 0.0;
      end = std::max(end, port + h.time(a.bytes));
      port += h.gap(a.bytes, posted) + h.beta(a.bytes) * a.bytes;
      unpack += a.unpacked ? cb * a.bytes : 0.0;
      active = true;
    }
    total += end + (active ? h.round_delta() : 0.0) + unpack;
  }
  return total;
}

/// A synchronous message's costs: its time with the round's delta, its packing and its receive's unpacking.
struct synchronous_costs {
  double message = 0, pack = 0, unpack = 0;
};
/// Calls `step(a, costs)` on the messages of `rounds` in order, until it returns false (then false); `copies`
/// gains the cost of each copy to the rank itself, which every rank makes alike and so adds a constant.
template <class Step>
bool each_synchronous(const alike_rounds& rounds, const hockney& h, double& copies, Step step) {
  const double cb = h.copy_beta();
  for (const auto& round : rounds)
    for (const alike_transfer& a : round) {
      if (a.bytes <= 0) {
        copies += cb * a.copy;
        continue;
      }
      if (!step(a, synchronous_costs{h.time(a.bytes) + h.round_delta(), a.packed ? cb * a.bytes : 0.0,
                                     a.unpacked ? cb * a.bytes : 0.0}))
        return false;
    }
  return true;
}

/// Rendezvous on periodic `grid`, every rank alike, transfer after transfer (docs/model.md, "One ring at a time").
/// The times stay a sum `sum_d f_d(x_d)` (all zero at the start) as long as each transfer, coloured along d, moves
/// along no other dimension e whose f_e varies: its partners' times and colours then vary with x_d alone, so it is
/// ring_transfer on f_d (the other terms add a constant, and max-plus is shift-invariant), and a copy adds a
/// constant. The makespan is `sum_d max f_d`. On even cycles f_d takes two values, one per colour, and they stay
/// equal unless a receive is unpacked: `2 (pi + t(m) + delta)` per transfer; on an odd cycle the seam's third
/// message travels along the ring from transfer to transfer. No value once a transfer moves along a dimension
/// other than its colouring's whose times vary (the times no longer split by dimension).
inline std::optional<double> rendezvous_rings(const grid_shape& grid, const alike_rounds& rounds, const hockney& h) {
  std::array<std::vector<double>, max_dims> f;
  std::array<bool, max_dims> varies{};
  for (int d = 0; d < max_dims; ++d) f[d].assign(static_cast<std::size_t>(grid.dim(d)), 0.0);
  double constant = 0;
  const bool splits = each_synchronous(rounds, h, constant, [&](const alike_transfer& a, synchronous_costs c) {
    const int d = haloshift::detail::colour_dimension(grid, a.direction);
    for (int e = 0; e < max_dims; ++e)
      if (e != d && varies[e] && a.direction[e] % grid.dim(e) != 0) return false;
    f[d] = ring_transfer(f[d], grid.dim(d), a.direction[d], c.message, c.pack, c.unpack);
    const auto [low, high] = std::minmax_element(f[d].begin(), f[d].end());
    varies[d] = *low != *high;
    return true;
  });
  if (!splits) return std::nullopt;
  for (int d = 0; d < max_dims; ++d) constant += *std::max_element(f[d].begin(), f[d].end());
  return constant;
}

/// Rendezvous on periodic `grid` whose rings are all even (or of one box), every rank alike, every transfer
/// stepping one box, or an odd number coprime to the ring, along the dimension d that colours it (docs/model.md,
/// "Parity classes"). Then a rank sends first when x_d is even (its position along the cycle is x_d s^-1 mod P_d,
/// s^-1 odd), and its partners, x + w and x - w, have the parities of x flipped along every dimension where w is
/// odd: a rank's time is a function of its parity vector, 2^n values, whatever the transfers do. Per transfer,
/// with the ring recurrence's `sum(a, b) = max(a + pi, b) + t(m) + delta` and `q'` the partners' class: a
/// sender-first class sends `D_q = sum(T_q, T_q')`, a receiver-first one `D_q = sum(D_q' + upsilon, D_q')`, and
/// `T'_q = D_q` receiver-first, `D_q' + upsilon` sender-first. This covers what rendezvous_rings cannot on even
/// rings: unpacked receives (the colours' times differ) under transfers that move along two dimensions at once
/// (TtlMultiHop's diagonals). No value where a ring is odd or a step even or not coprime to its ring.
inline std::optional<double> rendezvous_parities(const grid_shape& grid, const alike_rounds& rounds, const hockney& h) {
  const int n = grid.ndims();
  for (int d = 0; d < n; ++d)
    if (grid.dim(d) > 1 && grid.dim(d) % 2 != 0) return std::nullopt;
  const unsigned classes = 1u << n;
  std::vector<double> T(classes, 0.0), D(classes), next(classes);
  double constant = 0;
  const bool coprime = each_synchronous(rounds, h, constant, [&](const alike_transfer& a, synchronous_costs c) {
    const int d = haloshift::detail::colour_dimension(grid, a.direction), P = grid.dim(d);
    if (std::gcd(((a.direction[d] % P) + P) % P, P) != 1) return false;
    unsigned flip = 0;  // the dimensions along which the partners' parity differs
    for (int e = 0; e < n; ++e)
      if (grid.dim(e) > 1 && a.direction[e] % 2 != 0) flip |= 1u << e;
    auto sum = [c](double ready, double partner) { return std::max(ready + c.pack, partner) + c.message; };
    auto receives_first = [d](unsigned q) { return ((q >> d) & 1u) != 0; };
    for (unsigned q = 0; q < classes; ++q)
      if (!receives_first(q)) D[q] = sum(T[q], T[q ^ flip]);
    for (unsigned q = 0; q < classes; ++q)
      if (receives_first(q)) D[q] = sum(D[q ^ flip] + c.unpack, D[q ^ flip]);
    for (unsigned q = 0; q < classes; ++q) next[q] = receives_first(q) ? D[q] : D[q ^ flip] + c.unpack;
    T.swap(next);
    return true;
  });
  if (!coprime) return std::nullopt;
  return constant + *std::max_element(T.begin(), T.end());
}

/// The exact form of an alike schedule `s` of `strategy` on periodic `grid`: overlapping_alike or
/// rendezvous_rings, else rendezvous_parities; no value where ranks differ, or where in rendezvous mode the times
/// stop splitting by dimension on a grid with an odd ring.
inline std::optional<double> alike_form(const grid_shape& grid, const schedule& s, const range& r, double m,
                                        const hockney& h, protocol mode, std::string_view strategy) {
  if (!exact_domain(grid)) return std::nullopt;
  const auto rounds = alike(grid, s, r, m, h, strategy);
  if (!rounds) return std::nullopt;
  if (mode == protocol::overlapping) return overlapping_alike(*rounds, h);
  if (const auto rings = rendezvous_rings(grid, *rounds, h)) return rings;
  return rendezvous_parities(grid, *rounds, h);
}
/// Whether the executor stages (packs or unpacks) no message of `s` on an alike periodic grid (rank 0's program
/// stands for every rank's): then copy_beta prices only copies to the rank itself. Shift in block mode sends
/// every message from one piece of its layout and receives it into one.
inline bool stages_nothing(const grid_shape& grid, const schedule& s, const range& r, std::string_view strategy) {
  const haloshift::detail::staging_table staged(grid, s, r, strategy);
  for (std::size_t ri = 0; ri < s.rounds.size(); ++ri)
    for (std::size_t ti = 0; ti < s.rounds[ri].transfers.size(); ++ti)
      if (staged(0, ri, ti) != 0) return false;
  return true;
}

/// Rendezvous on a periodic grid with odd rings, full shell, every dimension at least two boxes, the messages not
/// staged (TtlMultiHop, and SingleHop with k = 1: their transfers step one box along every dimension they move
/// along): as on Shift's odd rings, every transfer coloured along an odd ring pays the seam's third message,
/// `sum_w (3 or 2) sync(m_w)`. That needs nothing to pipeline: along each ring, the transfers it colours must
/// alternate in direction (TtlMultiHop and SingleHop post their directions x fastest, -1, 0, +1 within each y
/// and z, so they do; with a dimension of one box the same y direction comes three times in a row and does
/// pipeline). No value where these conditions fail.
inline std::optional<double> unit_steps_on_odd_rings(const grid_shape& grid, const schedule& s, const range& r,
                                                     double m, const hockney& h, protocol mode,
                                                     std::string_view strategy) {
  if (!exact_domain(grid) || mode != protocol::rendezvous || !full(r)) return std::nullopt;
  for (int d = 0; d < grid.ndims(); ++d)
    if (grid.dim(d) < 2) return std::nullopt;
  if (h.copy_beta() > 0 && m > 0 && !stages_nothing(grid, s, r, strategy)) return std::nullopt;
  std::array<int, max_dims> last_step{};  // per colouring dimension, the step of the last transfer it coloured
  double t = 0;
  for (const schedule_round& round : s.rounds)
    for (const transfer& w : round.transfers) {
      const int d = haloshift::detail::colour_dimension(grid, w.direction);
      if (d < 0 || m == 0) continue;  // a copy (none on rings of two boxes or more with unit steps)
      for (int e = 0; e < grid.ndims(); ++e)
        if (std::abs(w.direction[e]) > 1) return std::nullopt;
      if (w.direction[d] == last_step[d]) return std::nullopt;  // the same way twice along the ring: pipelines
      last_step[d] = w.direction[d];
      const int messages = even_cycles(grid.dim(d), w.direction[d]) ? 2 : 3;
      t += messages * sync(h, m * static_cast<double>(w.blocks.size()));
    }
  return t;
}

}  // namespace haloshift::detail::closed_form::detail

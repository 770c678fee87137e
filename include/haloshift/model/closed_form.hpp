// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file closed_form.hpp
/// @brief Closed-form Hockney times of the built-in strategies (docs/model.md),
/// for block mode with `m` bytes per rank. Two kinds:
///  * the papers' formulas, `shift(r, m, h, mode)` and the like, for a
///    one-piece model on a periodic grid wide enough that no message returns
///    to its sender (`P_d > 2 k_d`) and with even rings (rendezvous);
///  * `shift(grid, r, m, h, mode)` and the like: the formula for that very
///    grid and every term of the model (pieces, bursts, the cost per round,
///    packing and copies), equal to the max-plus simulation (tested), or no
///    value where the protocol lies outside what a formula covers
///    (TeamShift's teams, odd cycles in rendezvous mode but Shift's without
///    packing): there `simulate()` / `explain()` are the answer.

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../exchange/protocol.hpp"
#include "../grid/neighborhood.hpp"
#include "../schedule/shift.hpp"
#include "../schedule/single_hop.hpp"
#include "../schedule/team_shift.hpp"
#include "../schedule/ttl_multi_hop.hpp"
#include "arguments.hpp"
#include "hockney.hpp"
#include "staging.hpp"

/// Closed-form Hockney times of the built-in strategies (see closed_form.hpp).
namespace haloshift::closed_form {

namespace detail {
/// Blocks per dimension a phase multiplies the carried data by.
inline int width(const range& r, int d) { return r.high(d) - r.low(d) + 1; }
/// Bytes carried into the phase along `d`: m times the widths of the earlier phases.
inline double carried(const range& r, int d, double m) {
  for (int e = 0; e < d; ++e)
    if (r.k[e] > 0) m *= width(r, e);
  return m;
}
/// One overlapping round in which a rank posts n messages of `bytes`:
/// alpha + (n-1) (gamma + gamma_growth (n-1)) + n beta m, and the round's delta.
inline double burst(const hockney& h, int n, double bytes) { return n > 0 ? h.burst(n, bytes) + h.round_delta() : 0.0; }
/// One synchronous message (rendezvous): its time and the dependency step it is.
inline double sync(const hockney& h, double bytes) { return h.time(bytes) + h.round_delta(); }
inline bool full(const range& r) { return r.kind == shell::full; }
}  // namespace detail

/// Shift: per phase `k_d` steps; a step sends 2 messages (1 with the eighth shell) of the carried size
/// M_d = m prod_{e<d} w_e. Overlapping `sum_d k_d (alpha + gamma + 2 beta M_d)`, i.e. the paper's
/// `6k alpha + beta m (8k^3 + 12k^2 + 6k)` for gamma = alpha; rendezvous `sum_d 4 k_d time(M_d)`
/// (plus delta per round, per synchronous message in rendezvous, and the gap's growth).
inline double shift(const range& r, double m, const hockney& h, protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::shift", r, m, mode);
  double t = 0;
  for (int d = 0; d < max_dims; ++d) {
    if (r.k[d] == 0) continue;
    const double M = detail::carried(r, d, m);
    const int per_step = detail::full(r) ? 2 : 1;
    t += r.k[d] * (mode == protocol::overlapping ? detail::burst(h, per_step, M) : 2 * per_step * detail::sync(h, M));
  }
  return t;
}

/// SingleHop: N = prod_d w_d - 1 messages of m at once: `alpha + (N-1) gamma + N beta m`;
/// rendezvous `2 N time(m)`.
inline double single_hop(const range& r, double m, const hockney& h, protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::single_hop", r, m, mode);
  int n = 1;
  for (int d = 0; d < max_dims; ++d) n *= detail::width(r, d);
  --n;
  return mode == protocol::overlapping ? detail::burst(h, n, m) : 2.0 * n * detail::sync(h, m);
}

/// TtlMultiHop with the same k along its `ndims` dimensions: round h sends along every one of the
/// D = 3^n - 1 directions (2^n - 1 for the eighth shell); the message along w carries
/// (2h-1)^(n-|w|) blocks (h^(n-|w|) for the eighth shell), all of them together the B_h blocks
/// at Chebyshev distance h. Overlapping per round `alpha + (D-1) gamma + beta m B_h`; rendezvous
/// `sum_w 2 time(m_w)`.
inline double ttl_multi_hop(const range& r, int ndims, double m, const hockney& h, protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::ttl_multi_hop", r, m, mode);
  if (ndims < 1 || ndims > max_dims)
    throw error("closed_form::ttl_multi_hop: ndims must be in [1, " + std::to_string(max_dims) + "], got " +
                std::to_string(ndims));
  const int k = *std::max_element(r.k.begin(), r.k.end());
  double t = 0;
  for (int hop = 1; hop <= k; ++hop) {
    // Directions with s non-zero components: C(n, s) 2^s of them (full), C(n, s) (eighth).
    double directions = 0, blocks = 0, rendezvous = 0;
    for (int s = 1; s <= ndims; ++s) {
      int choose = 1;
      for (int i = 0; i < s; ++i) choose = choose * (ndims - i) / (i + 1);
      const double count = choose * (detail::full(r) ? (1 << s) : 1);
      const double per_message = std::pow(detail::full(r) ? 2 * hop - 1 : hop, ndims - s);
      directions += count;
      blocks += count * per_message;
      rendezvous += count * 2 * detail::sync(h, per_message * m);
    }
    const double d = directions;
    t += mode == protocol::overlapping ? h.alpha(m) + (d - 1) * h.gap(m, d) + h.beta(m) * blocks * m + h.round_delta()
                                       : rendezvous;
  }
  return t;
}

/// TeamShift's round-by-round time (every round costs its slowest member), an upper bound of its
/// max-plus time, per phase with team c > 1 and K = ceil(k/c) (c = 1: Shift's phase), carried size M:
///  (A) c-1 messages of M;  (B) skew + floor((K-1)/c) daisy steps, 2 messages of cM (1 eighth)
///  for the members still fetching;  (C) member i sends its F_i = S f_i c M (S = 2 sides, 1 eighth,
///  f_i = floor((K-i-1)/c) + 1 fetches) to its c-1 team mates. Overlapping: each round costs its
///  slowest member (member 0, which fetches most); rendezvous: every transfer of every member
///  class in turn.
inline double team_shift_rounds(const grid_shape& grid, const range& r, const offset& team, double m, const hockney& h,
                                protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::team_shift_rounds", grid, r, m, mode);
  const offset c = TeamShift::team_sizes(grid, r, team);
  double t = 0;
  for (int d = 0; d < max_dims; ++d) {
    if (r.k[d] == 0) continue;
    const double M = detail::carried(r, d, m);
    const int sides = detail::full(r) ? 2 : 1;
    if (c[d] == 1) {
      t += r.k[d] * (mode == protocol::overlapping ? detail::burst(h, sides, M) : 2 * sides * detail::sync(h, M));
      continue;
    }
    const int cd = c[d], K = (r.k[d] + cd - 1) / cd;
    auto fetches = [&](int i) { return i + 1 <= K ? (K - i - 1) / cd + 1 : 0; };
    if (mode == protocol::overlapping) {
      t += detail::burst(h, cd - 1, M);                            // (A)
      t += (1 + (K - 1) / cd) * detail::burst(h, sides, cd * M);   // (B)
      t += detail::burst(h, cd - 1, sides * fetches(0) * cd * M);  // (C)
    } else {
      t += cd * (cd - 1) * detail::sync(h, M);  // (A)
      for (int s = 0; 1 + s * cd <= K; ++s)     // (B)
        for (int i = 0; i < cd; ++i)
          if (i + 1 + s * cd <= K) t += sides * 2 * detail::sync(h, cd * M);
      for (int i = 0; i < cd; ++i)  // (C)
        if (fetches(i)) t += (cd - 1) * detail::sync(h, sides * fetches(i) * cd * M);
    }
  }
  return t;
}

namespace detail {
/// Whether the exact forms apply at all: a periodic grid (every rank holds every block, and the
/// strategies below treat every rank alike).
inline bool exact_domain(const grid_shape& grid) {
  for (int d = 0; d < grid.ndims(); ++d)
    if (!grid.periodic(d)) return false;
  return true;
}
/// Along a ring of `P` ranks, whether a step of `s` runs in even cycles (a proper rendezvous colouring:
/// every rank does one send and one receive, each ranks' pair takes two synchronous messages).
inline bool even_cycles(int P, int s) {
  const int step = ((s % P) + P) % P;
  return step == 0 || (P / std::gcd(step, P)) % 2 == 0;
}

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
/// does the same.
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
/// where ranks differ (a sender class).
inline std::optional<alike_rounds> alike(const grid_shape& grid, const schedule& s, const range& r, double m,
                                         const hockney& h, std::string_view strategy) {
  for (const schedule_round& round : s.rounds)
    for (const transfer& t : round.transfers)
      if (t.senders.dim >= 0) return std::nullopt;
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

/// The dimension that colours a transfer along `w` for rendezvous (sends_first): the first it moves along.
inline int colour_dimension(const grid_shape& grid, const offset& w) {
  for (int d = 0; d < grid.ndims(); ++d)
    if (w[d] % grid.dim(d) != 0) return d;
  return -1;
}

/// Rendezvous, every rank alike and every transfer's cycles even (no value otherwise). Along an even cycle of
/// a step s, g = gcd(s, P_d), a rank sends first when floor(x_d / g) is even, so a transfer splits the ranks in
/// two colours: a sender-first rank at S sends (packing pi) to a receiver-first one at R, which unpacks
/// (upsilon), packs and sends on to the next sender-first one, waiting in its receive:
///   first = max(S + pi, R) + t(m) + delta,  R' = first + upsilon + pi + t(m) + delta,  S' = R' + upsilon.
/// From a common start both colours end together when nothing is unpacked (`2 (pi + t(m) + delta)` per
/// transfer); otherwise the sender-first colour ends `upsilon` later, and the times stay a function of the
/// colour only while the transfers keep colouring by the same (d, g). Where the colouring changes, a run of
/// transfers that moved along d alone, followed only by transfers that never move along d, added to every
/// rank a time that depends on x_d only while each later line along other dimensions starts at one time: max-plus
/// being shift-invariant, the makespan adds up run by run (Shift's phases). Elsewhere: no value.
inline std::optional<double> rendezvous_alike(const grid_shape& grid, const alike_rounds& rounds, const hockney& h) {
  const double cb = h.copy_beta(), delta = h.round_delta();
  std::vector<const alike_transfer*> order;
  for (const auto& round : rounds)
    for (const alike_transfer& a : round) order.push_back(&a);
  double total = 0, S = 0, R = 0;
  int run_dim = -1, run_g = 0;
  bool run_along_one = true;  // the run's messages moved along run_dim alone
  for (std::size_t i = 0; i < order.size(); ++i) {
    const alike_transfer& a = *order[i];
    if (a.bytes <= 0) {
      S += cb * a.copy;
      R += cb * a.copy;
      continue;
    }
    const int d = colour_dimension(grid, a.direction), P = grid.dim(d);
    if (!even_cycles(P, a.direction[d])) return std::nullopt;
    const int g = std::gcd(((a.direction[d] % P) + P) % P, P);
    if ((d != run_dim || g != run_g) && S != R) {
      // The colours of the run differ: the next run starts every line at one time only as described above.
      if (!run_along_one) return std::nullopt;
      for (std::size_t j = i; j < order.size(); ++j)
        if (order[j]->direction[run_dim] != 0) return std::nullopt;
      total += std::max(S, R);
      S = R = 0;
    }
    if (d != run_dim || g != run_g) {
      run_dim = d;
      run_g = g;
      run_along_one = true;
    }
    for (int e = 0; e < grid.ndims(); ++e) run_along_one = run_along_one && (e == d || a.direction[e] == 0);
    const double pack = a.packed ? cb * a.bytes : 0.0, unpack = a.unpacked ? cb * a.bytes : 0.0;
    const double message = h.time(a.bytes) + delta;
    const double first = std::max(S + pack, R) + message;
    R = first + unpack + pack + message;
    S = R + unpack;
  }
  return total + std::max(S, R);
}

/// The exact form of an alike schedule `s` of `strategy` on periodic `grid`: overlapping_alike or
/// rendezvous_alike; no value where ranks differ or a rendezvous cycle is odd.
inline std::optional<double> alike_form(const grid_shape& grid, const schedule& s, const range& r, double m,
                                        const hockney& h, protocol mode, std::string_view strategy) {
  if (!exact_domain(grid)) return std::nullopt;
  const auto rounds = alike(grid, s, r, m, h, strategy);
  if (!rounds) return std::nullopt;
  return mode == protocol::overlapping ? std::optional<double>(overlapping_alike(*rounds, h))
                                       : rendezvous_alike(grid, *rounds, h);
}
/// One phase of Shift along `d` on a periodic grid whose messages are not staged, from a common start (see shift
/// below).
inline std::optional<double> shift_phase(const grid_shape& grid, const range& r, int d, double m, const hockney& h,
                                         protocol mode) {
  if (r.k[d] == 0 || m == 0) return 0.0;
  const double M = carried(r, d, m);
  const int sides = full(r) ? 2 : 1, P = grid.dim(d);
  if (P == 1) return r.k[d] * sides * h.copy_beta() * M;  // a ring of one box only copies, step after step
  if (mode == protocol::overlapping) return r.k[d] * burst(h, sides, M);
  if (P % 2 == 0) return 2 * sides * r.k[d] * sync(h, M);
  if (full(r)) return 6 * r.k[d] * sync(h, M);
  // Eighth shell: the steps all run one way, and the seam's extra message pipelines through (P - 1) / 2 of them
  // before the seam meets it again.
  return (2 * r.k[d] + (2 * r.k[d] + P - 2) / (P - 1)) * sync(h, M);
}

/// The staging bits (1 packed send, 2 unpacked receive) of member `i` of a line in transfer `transfer` of the
/// phase's round `round` (counted from the phase's first); none without packing.
using member_staging = std::function<unsigned(int i, std::size_t round, std::size_t transfer)>;

/// One phase of TeamShift along `d` with teams of `c > 1` boxes on a periodic grid, for one line of members
/// entering it at times `t` (schedule/team_shift.hpp; K = ceil(k_d / c), S sides, carried size M, packing
/// pi and unpacking upsilon as `staged` says, g(F) = gap + beta F the injection of a message of F):
///  (A) every member posts c - 1 messages of M to its mates;
///  (B) step s: member i with i + 1 + s c <= K sends S super-blocks of c M to member i of the team `hop` teams
///      away (hop = i + 1 at the skew, c after it) and receives as many: only members of one index talk, so each
///      index runs its own clock (a copy where hop c is a multiple of P_d);
///  (C) member i posts F_i = S f_i c M (f_i its fetches per side) to each mate.
/// Overlapping: member i's q-th send of a round leaves at `D_i(q) = t_i + sum_{q'<=q} pi_i(q') + q g(F_i)`; in
/// an allgather member j's round ends with its own last message or the latest of its receives,
/// `max(max_q D_j(q) + t(F_j), max_i (max(D_i(q_i(j)), t_j) + t(F_i))) + delta + sum upsilon_j`, q_i(j) the
/// position of j among i's mates; at a step of (B) its sends and receives pair with its translates:
/// `max_q D_i(q) + t(c M) + delta + sum upsilon_i` (without packing `burst(S, c M) + delta`).
/// Rendezvous: the allgathers' transfers run one after another, member i to mate j, each a single synchronous
/// message (no rank both sends and receives in one of them): `t_i = max(t_i + pi, t_j) + t(F_i) + delta`,
/// `t_j = t_i + upsilon`; (B) runs each index's ranks in cycles of `P_d / gcd(hop c, P_d)` ranks:
/// `2 (pi + t(c M) + delta)` per side when they are even and nothing is unpacked; no value otherwise (a seam, or
/// colours that drift apart). Returns the members' times after the phase.
inline std::optional<std::vector<double>> team_phase(const grid_shape& grid, const range& r, int d, int c, double m,
                                                     const hockney& h, protocol mode, std::vector<double> t,
                                                     const member_staging& staged) {
  if (r.k[d] == 0 || m == 0) return t;
  const int P = grid.dim(d), K = (r.k[d] + c - 1) / c, sides = full(r) ? 2 : 1;
  const double M = carried(r, d, m), delta = h.round_delta(), cb = h.copy_beta();
  auto fetches = [&](int i) { return i + 1 <= K ? (K - i - 1) / c + 1 : 0; };
  auto pack = [&](int i, std::size_t round, std::size_t ti, double bytes) {
    return staged && (staged(i, round, ti) & 1u) ? cb * bytes : 0.0;
  };
  auto unpack = [&](int j, std::size_t round, std::size_t ti, double bytes) {
    return staged && (staged(j, round, ti) & 2u) ? cb * bytes : 0.0;
  };
  std::size_t round = 0;
  auto allgather = [&](auto bytes_of) {
    // Transfer indices in the schedule's order: senders ascending, each to its mates ascending.
    std::vector<std::vector<std::size_t>> index(static_cast<std::size_t>(c), std::vector<std::size_t>(c, 0));
    std::size_t next_index = 0;
    for (int i = 0; i < c; ++i)
      for (int j = 0; j < c && bytes_of(i) > 0; ++j)
        if (j != i) index[i][j] = next_index++;
    if (mode == protocol::rendezvous) {
      for (int i = 0; i < c; ++i)
        for (int j = 0; j < c && bytes_of(i) > 0; ++j)
          if (j != i) {
            t[i] = std::max(t[i] + pack(i, round, index[i][j], bytes_of(i)), t[j]) + sync(h, bytes_of(i));
            t[j] = t[i] + unpack(j, round, index[i][j], bytes_of(i));
          }
      ++round;
      return;
    }
    auto injection = [&](double bytes) { return h.gap(bytes, c - 1) + h.beta(bytes) * bytes; };
    std::vector<std::vector<double>> depart(static_cast<std::size_t>(c), std::vector<double>(c, 0.0));
    for (int i = 0; i < c; ++i) {
      double port = t[i];
      for (int j = 0; j < c && bytes_of(i) > 0; ++j)
        if (j != i) {
          port += pack(i, round, index[i][j], bytes_of(i));
          depart[i][j] = port;
          port += injection(bytes_of(i));
        }
    }
    std::vector<double> next(t);
    for (int j = 0; j < c; ++j) {
      double end = t[j], unpacked = 0;
      bool active = false;
      for (int i = 0; i < c; ++i) {
        if (i == j) continue;
        if (bytes_of(j) > 0) {  // its own send to i
          end = std::max(end, depart[j][i] + h.time(bytes_of(j)));
          active = true;
        }
        if (bytes_of(i) > 0) {  // its receive from i
          end = std::max(end, std::max(depart[i][j], t[j]) + h.time(bytes_of(i)));
          unpacked += unpack(j, round, index[i][j], bytes_of(i));
          active = true;
        }
      }
      next[j] = end + (active ? delta : 0.0) + unpacked;
    }
    t.swap(next);
    ++round;
  };
  allgather([&](int) { return M; });               // (A)
  for (int s = 0; 1 + s * c <= K; ++s, ++round) {  // (B)
    std::size_t ti = 0;
    for (int i = 0; i < c; ++i) {
      if (i + 1 + s * c > K) continue;  // not fetching
      const int hop = s == 0 ? i + 1 : c;
      const double bytes = c * M;
      if ((hop * c) % P == 0) {  // fetching from itself: a copy per side
        t[i] += sides * cb * bytes;
        ti += static_cast<std::size_t>(sides);
        continue;
      }
      if (mode == protocol::rendezvous && !even_cycles(P, hop * c)) return std::nullopt;
      double port = 0, end = 0, unpacked = 0;
      for (int side = 0; side < sides; ++side, ++ti) {
        const double p = pack(i, round, ti, bytes), u = unpack(i, round, ti, bytes);
        if (mode == protocol::rendezvous) {
          if (u > 0) return std::nullopt;
          end += 2 * (p + sync(h, bytes));
          continue;
        }
        port += p;
        end = std::max(end, port + h.time(bytes));
        port += h.gap(bytes, sides) + h.beta(bytes) * bytes;
        unpacked += u;
      }
      t[i] += mode == protocol::rendezvous ? end : end + delta + unpacked;
    }
  }
  allgather([&](int i) { return sides * fetches(i) * c * M; });  // (C)
  return t;
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

/// Shift (teams of one box) or TeamShift on a periodic grid without packing (copy_beta = 0, or no message staged),
/// phase by phase: each phase adds to a rank a time that depends on its coordinate along the phase's dimension
/// only, so every line of a later phase starts at one time and, max-plus being shift-invariant, the makespan is
/// the sum of the phases' makespans.
inline std::optional<double> phase_by_phase(const grid_shape& grid, const range& r, const offset& team, double m,
                                            const hockney& h, protocol mode) {
  if (!exact_domain(grid)) return std::nullopt;
  double total = 0;
  for (int d = 0; d < max_dims; ++d) {
    if (team[d] == 1) {
      const auto phase = shift_phase(grid, r, d, m, h, mode);
      if (!phase) return std::nullopt;
      total += *phase;
      continue;
    }
    const auto t = team_phase(grid, r, d, team[d], m, h, mode, std::vector<double>(team[d], 0.0), {});
    if (!t) return std::nullopt;
    total += *std::max_element(t->begin(), t->end());
  }
  return total;
}

/// TeamShift with teams larger than one box and packing, member by member. Which messages a rank packs depends on
/// its member vector (its coordinates modulo the team sizes), so the phases no longer add up; but after each
/// phase a rank's time still depends on its member vector alone (by induction: a phase couples a rank only with
/// ranks along its dimension, of the same member index along the others). So each phase runs team_phase on every
/// line of member vectors, from the times the earlier phases left it (a phase of teams of one box: Shift's steps,
/// detail::overlapping_alike or rendezvous_alike with that member's packing). Rendezvous where those have a value.
inline std::optional<double> team_shift_packed(const grid_shape& grid, const range& r, const offset& c, double m,
                                               const hockney& h, protocol mode, const schedule& s) {
  const haloshift::detail::staging_table staged(grid, s, r, TeamShift::name);
  const std::size_t members = static_cast<std::size_t>(c[0] * c[1] * c[2]);
  std::vector<double> T(members, 0.0);
  auto flat = [&](const offset& mu) { return static_cast<std::size_t>((mu[2] * c[1] + mu[1]) * c[0] + mu[0]); };
  std::size_t first = 0;  // the phase's first round
  for (int d = 0; d < max_dims; ++d) {
    if (r.k[d] == 0) continue;
    const int K = (r.k[d] + c[d] - 1) / c[d];
    const std::size_t rounds =
        c[d] == 1 ? static_cast<std::size_t>(r.k[d]) : 2 + static_cast<std::size_t>((K - 1) / c[d] + 1);
    for (int a = 0; a < c[(d + 1) % 3]; ++a)
      for (int b = 0; b < c[(d + 2) % 3]; ++b) {
        offset mu{};
        mu[(d + 1) % 3] = a;
        mu[(d + 2) % 3] = b;
        auto member = [&](int i) {
          offset x = mu;
          x[d] = i;
          return x;
        };
        const member_staging bits = [&](int i, std::size_t round, std::size_t ti) {
          return staged(grid.rank_of(member(i)), first + round, ti);
        };
        if (c[d] == 1) {
          const alike_rounds phase =
              transfers_of(grid, s, first, first + rounds, m,
                           [&](std::size_t ri, std::size_t ti) { return bits(0, ri - first, ti); });
          const auto steps = mode == protocol::overlapping ? std::optional<double>(overlapping_alike(phase, h))
                                                           : rendezvous_alike(grid, phase, h);
          if (!steps) return std::nullopt;
          T[flat(mu)] += *steps;
          continue;
        }
        std::vector<double> t(static_cast<std::size_t>(c[d]));
        for (int i = 0; i < c[d]; ++i) t[i] = T[flat(member(i))];
        const auto after = team_phase(grid, r, d, c[d], m, h, mode, std::move(t), bits);
        if (!after) return std::nullopt;
        for (int i = 0; i < c[d]; ++i) T[flat(member(i))] = (*after)[i];
      }
    first += rounds;
  }
  return *std::max_element(T.begin(), T.end());
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
      const int d = colour_dimension(grid, w.direction);
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
}  // namespace detail

/// Shift on `grid` (periodic), exactly. Per phase `d`, `k_d` steps of two messages (one with the eighth shell)
/// of the carried size `M_d`; a ring of one box only copies. Overlapping and on even rings in rendezvous mode
/// every rank does the same: detail::overlapping_alike and detail::rendezvous_alike, with every term of the
/// model (with one piece and no packing `k_d burst(S, M_d)` and `2 S k_d sync(M_d)`, S = 2 sides, 1 eighth).
/// On an odd ring in rendezvous mode the colouring meets itself at the seam; without packing: full shell
/// `6 k_d sync(M_d)` (every transfer's chain is three messages long, and the next transfer runs the other
/// way, so nothing pipelines), eighth shell `(2 k_d + ceil(2 k_d / (P_d - 1))) sync(M_d)` (the steps all run
/// one way and the seam's extra message pipelines through (P_d - 1) / 2 of them: `2 k_d + 1` once
/// `P_d >= 2 k_d + 1`, `3 k_d` on a ring of 3); a ring of one box copies `k_d S M_d` at copy_beta. Shift in block
/// mode stages no message (detail::stages_nothing), so packing costs it nothing.
inline std::optional<double> shift(const grid_shape& grid, const range& r, double m, const hockney& h, protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::shift", grid, r, m, mode);
  const schedule s = Shift::make_schedule(grid, r);
  if (const auto alike = detail::alike_form(grid, s, r, m, h, mode, Shift::name)) return alike;
  if (h.copy_beta() > 0 && m > 0 && detail::exact_domain(grid) && !detail::stages_nothing(grid, s, r, Shift::name))
    return std::nullopt;
  return detail::phase_by_phase(grid, r, {1, 1, 1}, m, h, mode);
}

/// SingleHop on `grid` (periodic), exactly: one round of `N` messages of m, one per offset that leaves the
/// rank (offsets a multiple of the grid along every dimension are copies), every rank alike: overlapping
/// `burst(N, m) + delta` with one piece (detail::overlapping_alike in general); rendezvous `2 N sync(m)` when every
/// transfer runs in even cycles, and with k = 1 on odd rings detail::unit_steps_on_odd_rings. No value for steps
/// of two boxes or more on odd cycles (their colouring follows s^-1 mod P and the seams of the transfers
/// interact).
inline std::optional<double> single_hop(const grid_shape& grid, const range& r, double m, const hockney& h,
                                        protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::single_hop", grid, r, m, mode);
  const schedule s = SingleHop::make_schedule(grid, r);
  if (const auto alike = detail::alike_form(grid, s, r, m, h, mode, SingleHop::name)) return alike;
  return detail::unit_steps_on_odd_rings(grid, s, r, m, h, mode, SingleHop::name);
}

/// TtlMultiHop on `grid` (periodic), exactly: round `h` posts one message along each of the `D` directions,
/// the one along `w` carrying `b_w` blocks (ttl_multi_hop above), every rank alike: overlapping, with one
/// piece, `alpha + (D - 1) gap + beta m sum_w b_w + delta` per round (detail::overlapping_alike in general, any
/// `k` per dimension, rings of one or two boxes); rendezvous on even cycles `sum_w 2 sync(m b_w)` with packing
/// and unpacking as detail::rendezvous_alike says. No value otherwise.
inline std::optional<double> ttl_multi_hop(const grid_shape& grid, const range& r, double m, const hockney& h,
                                           protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::ttl_multi_hop", grid, r, m, mode);
  const schedule s = TtlMultiHop::make_schedule(grid, r);
  if (const auto alike = detail::alike_form(grid, s, r, m, h, mode, TtlMultiHop::name)) return alike;
  for (int d = 0; d < grid.ndims(); ++d)
    if (r.k[d] != r.k[0]) return std::nullopt;  // the rule below is tested with the same k everywhere
  return detail::unit_steps_on_odd_rings(grid, s, r, m, h, mode, TtlMultiHop::name);
}

/// TeamShift on `grid` (periodic), exactly. With teams of one box it runs Shift's steps (above, on its own
/// schedule and layout). With larger teams, phase by phase (detail::team_phase: its members run ahead of one
/// another by different amounts), and with packing member vector by member vector (detail::team_shift_packed:
/// which messages a member packs depends on its index along every dimension, so the phases no longer add up).
/// No value for a rendezvous daisy chain in odd cycles or with unpacking; `simulate()` is exact there.
/// team_shift_rounds is the round-by-round upper bound.
inline std::optional<double> team_shift(const grid_shape& grid, const range& r, const offset& team, double m,
                                        const hockney& h, protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::team_shift", grid, r, m, mode);
  const offset c = TeamShift::team_sizes(grid, r, team);
  bool teams = false;
  for (int d = 0; d < max_dims; ++d) teams = teams || (r.k[d] > 0 && c[d] > 1);
  const schedule s = TeamShift::make_schedule(grid, r, {.team = team});
  if (!teams)
    if (const auto alike = detail::alike_form(grid, s, r, m, h, mode, TeamShift::name)) return alike;
  if (h.copy_beta() > 0 && m > 0 && detail::exact_domain(grid)) {
    if (teams) return detail::team_shift_packed(grid, r, c, m, h, mode, s);
    if (!detail::stages_nothing(grid, s, r, TeamShift::name)) return std::nullopt;
  }
  return detail::phase_by_phase(grid, r, c, m, h, mode);
}

}  // namespace haloshift::closed_form

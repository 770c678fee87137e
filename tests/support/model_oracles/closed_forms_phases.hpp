// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file closed_forms_phases.hpp
/// @brief Test oracle: exact forms of the dimension-by-dimension strategies phase by phase
/// (docs/model.md, "TeamShift's teams"): Shift's phase, TeamShift's team
/// phase for one line of members, and TeamShift with packing member vector by
/// member vector.

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include <haloshift/auto.hpp>
#include <haloshift/model/cost/paper_formulas.hpp>

#include "closed_forms_alike.hpp"
#include "closed_forms_rings.hpp"

namespace haloshift::detail::closed_form::detail {

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

/// One phase of TeamShift along `d` with teams of `c > 1` boxes on a periodic grid, for one line of ranks along
/// `d` entering it at times `t` (one per coordinate x_d; member i = x_d mod c of team floor(x_d / c);
/// schedule/team_shift.hpp; K = ceil(k_d / c), S sides, carried size M, packing pi and unpacking upsilon as
/// `staged` says for member i, g(F) = gap + beta F the injection of a message of F):
///  (A) every member posts c - 1 messages of M to its mates;
///  (B) step s: member i with i + 1 + s c <= K sends S super-blocks of c M to member i of the team `hop` teams
///      away (hop = i + 1 at the skew, c after it) and receives as many: only members of one index talk, so each
///      index runs its own clock (a copy where hop c is a multiple of P_d);
///  (C) member i posts F_i = S f_i c M (f_i its fetches per side) to each mate.
/// Overlapping (a member's ranks all enter at one time, and keep it): member i's q-th send of a round leaves at
/// `D_i(q) = t_i + sum_{q'<=q} pi_i(q') + q g(F_i)`; in an allgather member j's round ends with its own last
/// message or the latest of its receives,
/// `max(max_q D_j(q) + t(F_j), max_i (max(D_i(q_i(j)), t_j) + t(F_i))) + delta + sum upsilon_j`, q_i(j) the
/// position of j among i's mates; at a step of (B) its sends and receives pair with its translates:
/// `max_q D_i(q) + t(c M) + delta + sum upsilon_i` (without packing `burst(S, c M) + delta`).
/// Rendezvous: the allgathers' transfers run one after another, member i to mate j in every team, each a single
/// synchronous message (no rank both sends and receives in one of them): `t_i = max(t_i + pi, t_j) + t(F_i) +
/// delta`, `t_j = t_i + upsilon`; each side of a step of (B) is one synchronous transfer of step `hop c` on the
/// ring among member i's ranks (ring_transfer: even or odd cycles of `P_d / gcd(hop c, P_d)` ranks, unpacking
/// or not; the other members wait). Returns the times after the phase, per coordinate.
inline std::vector<double> team_phase(const grid_shape& grid, const range& r, int d, int c, double m, const hockney& h,
                                      protocol mode, std::vector<double> t, const member_staging& staged) {
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
  auto at = [](int x) { return static_cast<std::size_t>(x); };
  std::size_t round = 0;
  auto allgather = [&](auto bytes_of) {
    // Transfer indices in the schedule's order: senders ascending, each to its mates ascending.
    std::vector<std::vector<std::size_t>> index(static_cast<std::size_t>(c), std::vector<std::size_t>(c, 0));
    std::size_t next_index = 0;
    for (int i = 0; i < c; ++i)
      for (int j = 0; j < c && bytes_of(i) > 0; ++j)
        if (j != i) index[i][j] = next_index++;
    auto injection = [&](double bytes) { return h.gap(bytes, c - 1) + h.beta(bytes) * bytes; };
    for (int base = 0; base < P; base += c) {  // each team on its own
      double* u = t.data() + base;
      if (mode == protocol::rendezvous) {
        for (int i = 0; i < c; ++i)
          for (int j = 0; j < c && bytes_of(i) > 0; ++j)
            if (j != i) {
              u[i] = std::max(u[i] + pack(i, round, index[i][j], bytes_of(i)), u[j]) + sync(h, bytes_of(i));
              u[j] = u[i] + unpack(j, round, index[i][j], bytes_of(i));
            }
        continue;
      }
      std::vector<std::vector<double>> depart(static_cast<std::size_t>(c), std::vector<double>(c, 0.0));
      for (int i = 0; i < c; ++i) {
        double port = u[i];
        for (int j = 0; j < c && bytes_of(i) > 0; ++j)
          if (j != i) {
            port += pack(i, round, index[i][j], bytes_of(i));
            depart[i][j] = port;
            port += injection(bytes_of(i));
          }
      }
      std::vector<double> next(u, u + c);
      for (int j = 0; j < c; ++j) {
        double end = u[j], unpacked = 0;
        bool active = false;
        for (int i = 0; i < c; ++i) {
          if (i == j) continue;
          if (bytes_of(j) > 0) {  // its own send to i
            end = std::max(end, depart[j][i] + h.time(bytes_of(j)));
            active = true;
          }
          if (bytes_of(i) > 0) {  // its receive from i
            end = std::max(end, std::max(depart[i][j], u[j]) + h.time(bytes_of(i)));
            unpacked += unpack(j, round, index[i][j], bytes_of(i));
            active = true;
          }
        }
        next[j] = end + (active ? delta : 0.0) + unpacked;
      }
      std::copy(next.begin(), next.end(), u);
    }
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
        for (int x = i; x < P; x += c) t[at(x)] += sides * cb * bytes;
        ti += static_cast<std::size_t>(sides);
        continue;
      }
      double port = 0, end = 0, unpacked = 0;
      for (int side = 0; side < sides; ++side, ++ti) {
        const double p = pack(i, round, ti, bytes), u = unpack(i, round, ti, bytes);
        if (mode == protocol::rendezvous) {  // the schedule's direction: -hop c, then +hop c
          const std::vector<double> after = ring_transfer(t, P, (side == 0 ? -1 : 1) * hop * c, sync(h, bytes), p, u);
          for (int x = i; x < P; x += c) t[at(x)] = after[at(x)];
          continue;
        }
        port += p;
        end = std::max(end, port + h.time(bytes));
        port += h.gap(bytes, sides) + h.beta(bytes) * bytes;
        unpacked += u;
      }
      if (mode == protocol::overlapping)
        for (int x = i; x < P; x += c) t[at(x)] += end + delta + unpacked;
    }
  }
  allgather([&](int i) { return sides * fetches(i) * c * M; });  // (C)
  return t;
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
    const auto t = team_phase(grid, r, d, team[d], m, h, mode, std::vector<double>(grid.dim(d), 0.0), {});
    total += *std::max_element(t.begin(), t.end());
  }
  return total;
}

/// TeamShift with teams larger than one box and packing, member by member. Which messages a rank packs depends on
/// its member vector (its coordinates modulo the team sizes), so the phases no longer add up; but after each
/// phase a rank's time still depends on its member vector alone (by induction: a phase couples a rank only with
/// ranks along its dimension, of the same member index along the others). So each phase runs team_phase on every
/// line of member vectors, from the times the earlier phases left it (a phase of teams of one box: Shift's steps,
/// detail::overlapping_alike or rendezvous_rings with that member's packing). Rendezvous where those have a value.
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
                                                           : rendezvous_rings(grid, phase, h);
          if (!steps) return std::nullopt;
          T[flat(mu)] += *steps;
          continue;
        }
        std::vector<double> t(static_cast<std::size_t>(grid.dim(d)));
        for (int x = 0; x < grid.dim(d); ++x) t[x] = T[flat(member(x % c[d]))];
        const auto after = team_phase(grid, r, d, c[d], m, h, mode, std::move(t), bits);
        for (int x = 0; x < grid.dim(d); ++x)  // the times must stay a function of the member vector
          if (after[x] != after[x % c[d]]) return std::nullopt;
        for (int i = 0; i < c[d]; ++i) T[flat(member(i))] = after[i];
      }
    first += rounds;
  }
  return *std::max_element(T.begin(), T.end());
}

}  // namespace haloshift::detail::closed_form::detail

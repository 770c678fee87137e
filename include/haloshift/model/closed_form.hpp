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
///    value where no formula covers the case (non-periodic grids;
///    TtlMultiHop's later rounds on odd rings in rendezvous mode with the
///    eighth shell or staged messages; TeamShift's packed daisy chains on odd
///    cycles): there `simulate()` / `explain()` are the answer. Their parts:
///    closed_form_terms.hpp (shared terms), closed_form_alike.hpp (every rank
///    alike), closed_form_rings.hpp (a rendezvous transfer on one ring),
///    closed_form_phases.hpp (phase by phase, TeamShift's teams).

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
#include "closed_form_alike.hpp"
#include "closed_form_phases.hpp"
#include "closed_form_terms.hpp"
#include "hockney.hpp"
#include "staging.hpp"

/// Closed-form Hockney times of the built-in strategies (see closed_form.hpp).
namespace haloshift::closed_form {

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

/// Shift on `grid` (periodic), exactly. Per phase `d`, `k_d` steps of two messages (one with the eighth shell)
/// of the carried size `M_d`; a ring of one box only copies. Every rank does the same: detail::overlapping_alike,
/// and in rendezvous mode detail::rendezvous_rings (a phase moves along its own ring only), with every term of the
/// model (with one piece and no packing `k_d burst(S, M_d)` and, on even rings, `2 S k_d sync(M_d)`, S = 2 sides,
/// 1 eighth). On an odd ring in rendezvous mode the colouring meets itself at the seam: full shell
/// `6 k_d sync(M_d)` (every transfer's chain is three messages long, and the next transfer runs the other
/// way, so nothing pipelines), eighth shell `(2 k_d + ceil(2 k_d / (P_d - 1))) sync(M_d)` (the steps all run
/// one way and the seam's extra message pipelines through (P_d - 1) / 2 of them: `2 k_d + 1` once
/// `P_d >= 2 k_d + 1`, `3 k_d` on a ring of 3); a ring of one box copies `k_d S M_d` at copy_beta. Shift in block
/// mode stages no message (detail::stages_nothing), so packing costs it nothing.
inline std::optional<double> shift(const grid_shape& grid, const range& r, double m, const hockney& h, protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::shift", grid, r, m, mode);
  return detail::alike_form(grid, Shift::make_schedule(grid, r), r, m, h, mode, Shift::name);
}

/// SingleHop on `grid` (periodic), exactly: one round of `N` messages of m, one per offset that leaves the
/// rank (offsets a multiple of the grid along every dimension are copies), every rank alike: overlapping
/// `burst(N, m) + delta` with one piece (detail::overlapping_alike in general); rendezvous one ring at a time
/// (detail::rendezvous_rings: the transfers run in colour order, x first, and those coloured along y and z never
/// move along x), `2 N sync(m)` when every transfer runs in even cycles. On odd cycles each step's seam adds
/// messages that depend on the steps that follow (their colouring follows s^-1 mod P), which the ring recurrence
/// computes for any k, shell and packing.
inline std::optional<double> single_hop(const grid_shape& grid, const range& r, double m, const hockney& h,
                                        protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::single_hop", grid, r, m, mode);
  return detail::alike_form(grid, SingleHop::make_schedule(grid, r), r, m, h, mode, SingleHop::name);
}

/// TtlMultiHop on `grid` (periodic), exactly: round `h` posts one message along each of the `D` directions,
/// the one along `w` carrying `b_w` blocks (ttl_multi_hop above), every rank alike: overlapping, with one
/// piece, `alpha + (D - 1) gap + beta m sum_w b_w + delta` per round (detail::overlapping_alike in general, any
/// `k` per dimension, rings of one or two boxes); rendezvous on even cycles `sum_w 2 sync(m b_w)`, one ring at a
/// time (detail::rendezvous_rings) while the times split by dimension (the first round), and on even rings per
/// parity class (detail::rendezvous_parities, unpacking included). On odd rings with unit steps, the full shell
/// and nothing staged, detail::unit_steps_on_odd_rings. No value otherwise (odd rings, later rounds, eighth shell
/// or staged messages): the seams of two rings meet on the diagonal transfers and the times depend on the
/// coordinates jointly (simulate()).
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
/// No value with packing for a rendezvous daisy chain in odd cycles or with unpacking (a member's times then vary
/// along the ring); `simulate()` is exact there.
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

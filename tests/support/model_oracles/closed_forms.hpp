// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file closed_forms.hpp
/// @brief Test oracle: the exact closed forms of the built-in strategies on a
/// given grid (docs/model.md, "The exact forms"), `shift(grid, r, m, h, mode)`
/// and the like: every term of the model (pieces, bursts, the cost per round,
/// packing and copies), derived independently of the max-plus simulation and
/// equal to it (tests/unit/test_model_closed_forms.cpp), or no value where no
/// formula covers the case. Parts: closed_forms_alike.hpp (every rank alike),
/// closed_forms_rings.hpp (a rendezvous transfer on one ring),
/// closed_forms_phases.hpp (phase by phase, TeamShift's teams).

#include <optional>

#include <haloshift/auto.hpp>
#include <haloshift/model/cost/paper_formulas.hpp>

#include "closed_forms_alike.hpp"
#include "closed_forms_phases.hpp"

namespace haloshift::detail::closed_form {

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

}  // namespace haloshift::detail::closed_form

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file paper_formulas.hpp
/// @brief The papers' closed-form Hockney times of the built-in strategies
/// (docs/model.md, "Closed forms"), for block mode with `m` bytes per rank, a
/// one-piece model on a periodic grid wide enough that no message returns to
/// its sender (`P_d > 2 k_d`) and with even rings (rendezvous). They
/// reproduce the papers' tables; every prediction of the library (explain(),
/// Auto, the advisor) is the max-plus simulation (simulation/simulator.hpp).

#include <algorithm>
#include <cmath>
#include <string>

#include "../../exchange/protocol.hpp"
#include "../../grid/neighborhood.hpp"
#include "../../schedule/team_shift.hpp"
#include "arguments.hpp"
#include "hockney.hpp"

namespace haloshift::detail::closed_form::detail {

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

}  // namespace haloshift::detail::closed_form::detail

/// The papers' closed-form Hockney times of the built-in strategies.
namespace haloshift::detail::closed_form {

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

}  // namespace haloshift::detail::closed_form

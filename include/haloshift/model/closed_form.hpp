// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file closed_form.hpp
/// @brief Closed-form Hockney times of the built-in strategies (docs/model.md),
/// for block mode with `m` bytes per rank. Two kinds:
///  * the papers' formulas, `shift(r, m, h, mode)` and the like, for a
///    one-piece model on a periodic grid wide enough that no message returns
///    to its sender (`P_d > 2 k_d`) and with even rings (rendezvous);
///  * `shift(grid, r, m, h, mode)` and the like: the formula for that very
///    grid, equal to the max-plus simulation (tested), or no value where the
///    grid, model or protocol lies outside what a formula covers (packing and
///    copies, TeamShift's teams, some odd rings in rendezvous mode): there
///    `simulate()` / `explain()` are the answer.

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "../exchange/protocol.hpp"
#include "../grid/neighborhood.hpp"
#include "../schedule/team_shift.hpp"
#include "arguments.hpp"
#include "hockney.hpp"

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
inline double burst(const hockney& h, int n, double bytes) {
  return n > 0 ? h.burst(n, bytes) + h.round_delta() : 0.0;
}
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
    t += mode == protocol::overlapping
             ? h.alpha(m) + (d - 1) * h.gap(m, d) + h.beta(m) * blocks * m + h.round_delta()
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
inline double team_shift_rounds(const grid_shape& grid, const range& r, const offset& team, double m,
                                const hockney& h, protocol mode) {
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
      t += detail::burst(h, cd - 1, M);                                               // (A)
      t += (1 + (K - 1) / cd) * detail::burst(h, sides, cd * M);                      // (B)
      t += detail::burst(h, cd - 1, sides * fetches(0) * cd * M);                      // (C)
    } else {
      t += cd * (cd - 1) * detail::sync(h, M);                                         // (A)
      for (int s = 0; 1 + s * cd <= K; ++s)                                            // (B)
        for (int i = 0; i < cd; ++i)
          if (i + 1 + s * cd <= K) t += sides * 2 * detail::sync(h, cd * M);
      for (int i = 0; i < cd; ++i)                                                     // (C)
        if (fetches(i)) t += (cd - 1) * detail::sync(h, sides * fetches(i) * cd * M);
    }
  }
  return t;
}

namespace detail {
/// Whether the exact forms apply at all: a periodic grid, no copies (copy_beta = 0: packing and copies
/// to the rank itself depend on the layout and on the order of transfers).
inline bool exact_domain(const grid_shape& grid, const hockney& h) {
  for (int d = 0; d < grid.ndims(); ++d)
    if (!grid.periodic(d)) return false;
  return h.copy_beta() == 0;
}
/// An overlapping round of `n` messages of `bytes` each in which the last one posted completes last:
/// each injection (gap + beta m) is >= 0 (measured tables may make it negative).
inline bool last_completes_last(const hockney& h, int n, double bytes) {
  return n <= 1 || h.gap(bytes, n) + h.beta(bytes) * bytes >= 0;
}
/// Along a ring of `P` ranks, whether a step of `s` runs in even cycles (a proper rendezvous colouring:
/// every rank does one send and one receive, each ranks' pair takes two synchronous messages).
inline bool even_cycles(int P, int s) {
  const int step = ((s % P) + P) % P;
  return step == 0 || (P / std::gcd(step, P)) % 2 == 0;
}
}  // namespace detail

/// Shift on `grid` (periodic), exactly: per phase `d` with `P_d > 1`, `k_d` steps of the carried size
/// `M_d`. Overlapping `k_d burst(S, M_d)` (S = 2 sides, 1 with the eighth shell). Rendezvous on an even
/// ring `2 S k_d sync(M_d)`; on an odd ring the colouring meets itself at the seam: full shell
/// `6 k_d sync(M_d)` (every transfer's chain is three messages long, and the next transfer runs the other
/// way, so nothing pipelines), eighth shell `(2 k_d + 1) sync(M_d)` when `P_d >= 2 k_d + 1` (the steps
/// all run one way and the seam's extra message pipelines through them). A ring of one box only copies
/// (free here). No value for copy_beta > 0 or an eighth-shell odd ring shorter than `2 k_d + 1`.
inline std::optional<double> shift(const grid_shape& grid, const range& r, double m, const hockney& h,
                                   protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::shift", grid, r, m, mode);
  if (!detail::exact_domain(grid, h)) return std::nullopt;
  double t = 0;
  for (int d = 0; d < max_dims; ++d) {
    if (r.k[d] == 0 || grid.dim(d) == 1 || m == 0) continue;
    const double M = detail::carried(r, d, m);
    const int sides = detail::full(r) ? 2 : 1, P = grid.dim(d);
    if (mode == protocol::overlapping) {
      if (!detail::last_completes_last(h, sides, M)) return std::nullopt;
      t += r.k[d] * detail::burst(h, sides, M);
    } else if (P % 2 == 0) {
      t += 2 * sides * r.k[d] * detail::sync(h, M);
    } else if (detail::full(r)) {
      t += 6 * r.k[d] * detail::sync(h, M);
    } else if (P >= 2 * r.k[d] + 1) {
      t += (2 * r.k[d] + 1) * detail::sync(h, M);
    } else {
      return std::nullopt;
    }
  }
  return t;
}

/// SingleHop on `grid` (periodic), exactly: `N` messages, one per offset that is not the rank itself
/// (offsets a multiple of the grid along every dimension are copies). Overlapping `burst(N, m)`;
/// rendezvous `2 N sync(m)` when every transfer runs in even cycles, no value otherwise.
inline std::optional<double> single_hop(const grid_shape& grid, const range& r, double m, const hockney& h,
                                        protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::single_hop", grid, r, m, mode);
  if (!detail::exact_domain(grid, h)) return std::nullopt;
  if (m == 0) return 0.0;
  int n = 0;
  for (const offset& o : offsets(r)) {
    int colour = -1;  // the dimension that decides the rendezvous colour (sends_first)
    for (int d = max_dims - 1; d >= 0; --d)
      if (o[d] % grid.dim(d) != 0) colour = d;
    if (colour < 0) continue;  // a copy
    if (mode == protocol::rendezvous && !detail::even_cycles(grid.dim(colour), -o[colour])) return std::nullopt;
    ++n;
  }
  if (mode == protocol::overlapping)
    return detail::last_completes_last(h, n, m) ? std::optional<double>(detail::burst(h, n, m)) : std::nullopt;
  return 2.0 * n * detail::sync(h, m);
}

/// TtlMultiHop on `grid` (periodic, the same `k` and at least two boxes along each of its dimensions),
/// exactly: round `h` posts one message along each of the `D` directions, the one along `w` carrying
/// `b_w` blocks (ttl_multi_hop above). Overlapping, when a round's messages share one piece of the model,
/// `alpha + (D - 1) gap + beta m sum_w b_w + delta`; rendezvous on even rings `sum_w 2 sync(m b_w)`.
/// No value otherwise.
inline std::optional<double> ttl_multi_hop(const grid_shape& grid, const range& r, double m, const hockney& h,
                                           protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::ttl_multi_hop", grid, r, m, mode);
  if (!detail::exact_domain(grid, h)) return std::nullopt;
  if (m == 0) return 0.0;
  const int n = grid.ndims();
  for (int d = 0; d < n; ++d)
    if (r.k[d] != r.k[0] || grid.dim(d) < 2 || (mode == protocol::rendezvous && grid.dim(d) % 2 != 0))
      return std::nullopt;
  // The papers' form, once it is known that every message of a round (1 to (2h-1)^(n-1) blocks, h^(n-1)
  // with the eighth shell) prices with one piece and completes after the ones posted before it.
  auto piece = [&](double bytes) {
    std::size_t i = 0;
    while (i + 1 < h.pieces().size() && h.pieces()[i + 1].from_bytes <= bytes) ++i;
    return i;
  };
  const int directions = detail::full(r) ? static_cast<int>(std::pow(3, n)) - 1 : (1 << n) - 1;
  for (int hop = 1; hop <= r.k[0] && mode == protocol::overlapping; ++hop) {
    const double largest = m * std::pow(detail::full(r) ? 2 * hop - 1 : hop, n - 1);
    if (piece(m) != piece(largest) || !detail::last_completes_last(h, directions, m) ||
        !detail::last_completes_last(h, directions, largest))
      return std::nullopt;
  }
  return ttl_multi_hop(r, n, m, h, mode);
}

/// TeamShift on `grid`: with teams of one box it is Shift (above). With larger teams the members of a
/// team run ahead of one another by different amounts, a max-plus effect with no closed form here: no
/// value (`simulate()` is exact; team_shift_rounds is the round-by-round upper bound).
inline std::optional<double> team_shift(const grid_shape& grid, const range& r, const offset& team, double m,
                                        const hockney& h, protocol mode) {
  haloshift::detail::check_model_arguments("closed_form::team_shift", grid, r, m, mode);
  const offset c = TeamShift::team_sizes(grid, r, team);
  for (int d = 0; d < max_dims; ++d)
    if (r.k[d] > 0 && c[d] > 1) return std::nullopt;
  return shift(grid, r, m, h, mode);
}

}  // namespace haloshift::closed_form

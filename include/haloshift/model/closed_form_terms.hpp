// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file closed_form_terms.hpp
/// @brief The closed forms' shared terms (docs/model.md, "Closed forms"): carried
/// sizes, one round's burst, one synchronous message, and when a grid and a
/// rendezvous colouring are what the exact forms assume.

#include <numeric>

#include "../grid/grid_shape.hpp"
#include "../grid/neighborhood.hpp"
#include "../schedule/colouring.hpp"
#include "hockney.hpp"

namespace haloshift::closed_form::detail {

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

}  // namespace haloshift::closed_form::detail

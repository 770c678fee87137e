// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file closed_forms_rings.hpp
/// @brief Test oracle: one synchronous transfer on one ring, odd or even (docs/model.md,
/// "One ring at a time"): the recurrence closed_forms_alike.hpp runs per
/// dimension while a periodic grid's times split into one term per dimension.

#include <algorithm>
#include <numeric>
#include <vector>

#include <haloshift/grid/grid_shape.hpp>
#include <haloshift/detail/schedule/colouring.hpp>

namespace haloshift::detail::closed_form::detail {

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

/// One synchronous transfer, step `s` (not a multiple of P), on a ring of P ranks entering it at `T` (indexed by
/// coordinate), every rank sending `message` (its time plus the round's delta) after packing `pack` and unpacking
/// its receive for `unpack`. The ring splits into g = gcd(s, P) cycles of L = P / g ranks; a rank sends first when
/// its position along its cycle is even (detail/schedule/colouring.hpp). With a send's completion
/// `sum(ready, partner) = max(ready + pack, partner) + message`:
///  (1) a sender-first rank x sends when its receiver x + s is ready, `D_x = sum(T_x, T_{x+s})`, except at the seam
///      of an odd cycle (position L - 1, whose receiver is sender-first too and first sends its own message on):
///      `D_x = sum(T_x, sum(T_{x+s}, T_{x+2s}))`;
///  (2) a receiver-first rank sends after its receive, to a sender-first rank that has sent:
///      `D_x = sum(D_{x-s} + unpack, D_{x+s})`;
///  (3) a rank ends with the later of its two: `T'_x = D_x` receiver-first, `D_{x-s} + unpack` sender-first.
/// On an even cycle this is the two-colour recurrence of docs/model.md; on an odd one the seam makes three
/// messages in a row, and what it delays travels along the cycle transfer after transfer.
inline std::vector<double> ring_transfer(const std::vector<double>& T, int P, int s, double message, double pack,
                                         double unpack) {
  const int step = ((s % P) + P) % P, g = std::gcd(step, P), L = P / g;
  const long long inverse = haloshift::detail::modular_inverse(step / g, L);
  auto position = [&](int x) { return static_cast<int>((x - x % g) / g * inverse % L); };
  auto at = [&](int x) { return static_cast<std::size_t>(((x % P) + P) % P); };
  auto sum = [&](double ready, double partner) { return std::max(ready + pack, partner) + message; };
  std::vector<double> D(T.size()), next(T.size());
  for (int x = 0; x < P; ++x) {  // (1)
    const int p = position(x);
    if (p % 2 == 1) continue;
    D[at(x)] = p == L - 1 ? sum(T[at(x)], sum(T[at(x + step)], T[at(x + 2 * step)])) : sum(T[at(x)], T[at(x + step)]);
  }
  for (int x = 0; x < P; ++x)  // (2)
    if (position(x) % 2 == 1) D[at(x)] = sum(D[at(x - step)] + unpack, D[at(x + step)]);
  for (int x = 0; x < P; ++x)  // (3)
    next[at(x)] = position(x) % 2 == 1 ? D[at(x)] : D[at(x - step)] + unpack;
  return next;
}

}  // namespace haloshift::detail::closed_form::detail

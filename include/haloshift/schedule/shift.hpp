// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file shift.hpp
/// @brief Plimpton's Shift: dimension by dimension, k daisy-chain steps each way.

#include <algorithm>
#include <string_view>
#include <vector>

#include "../detail/compiled.hpp"
#include "../grid/grid_shape.hpp"
#include "../grid/neighborhood.hpp"
#include "schedule.hpp"

namespace haloshift {

namespace detail {

/// `held` moved by `s` boxes along `e`.
inline std::vector<offset> shifted(const std::vector<offset>& held, int s, const offset& e) {
  std::vector<offset> out;
  out.reserve(held.size());
  for (const offset& h : held) out.push_back(h + s * e);
  return out;
}

/// What a rank holds after a phase along `d` that brought every block of
/// `held` from the boxes `r.low(d)..r.high(d)` away: the blocks a
/// dimension-by-dimension strategy carries into the next phase.
inline std::vector<offset> grown(const std::vector<offset>& held, int d, const range& r) {
  std::vector<offset> out;
  for (int j = r.low(d); j <= r.high(d); ++j)
    for (const offset& h : held) out.push_back(h + j * unit(d));
  std::sort(out.begin(), out.end(), detail::canonical_order{});
  return out;
}

/// The blocks of `held` that a later phase may still move: those whose offset
/// differs from 0 along fewer dimensions than `pattern` allows (a phase adds
/// one more). The others are only kept, which is what makes a faces-only
/// Shift send just its own block in every phase.
inline std::vector<offset> forwardable(std::vector<offset> held, halo_pattern pattern) {
  std::erase_if(held, [&](const offset& h) { return separating_dims(h) >= pattern_dims(pattern); });
  return held;
}

/// Shift's phase along `d`: `k` steps, each to both neighbours (only towards
/// `-` for the eighth shell); step `s` forwards what arrived at step `s-1`.
inline void shift_phase(schedule& out, const std::vector<offset>& held, int d, const range& r) {
  const offset e = unit(d);
  for (int s = 1; s <= r.k[d]; ++s) {
    schedule_round step;
    // What arrived from `-e` at step s-1 sits at `h - (s-1)e`; pass it on to `+e`.
    if (r.low(d) < 0) step.transfers.push_back({e, shifted(held, -(s - 1), e)});
    step.transfers.push_back({-e, shifted(held, s - 1, e)});
    out.rounds.push_back(std::move(step));
  }
}

}  // namespace detail

/// Shift (Plimpton 1995). Phase x, then y, then z; in each phase `k` steps in
/// both directions, step `s` forwarding what arrived at step `s-1`. Phase y
/// carries everything held after phase x, phase z everything held after y, so
/// corner blocks need no messages of their own: `6k` messages per rank.
/// With the eighth shell only the `+` direction's blocks are wanted, so each
/// step sends only towards `-` (3k messages). A halo_pattern narrower than
/// full carries into a phase only the blocks that may still move (faces:
/// the own block alone, so every phase sends one face's worth).
struct Shift {
  /// The strategy's name (make_plan(grid, "Shift", ...), the registry, explain()).
  static constexpr std::string_view name = "Shift";

  /// Shift's rounds for range `r` (the same on every grid).
  HALOSHIFT_BUILDER static schedule make_schedule(const grid_shape&, const range& r);
};

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER schedule Shift::make_schedule(const grid_shape&, const range& r) {
  schedule out;
  std::vector<offset> held{zero_offset};
  for (int d = 0; d < max_dims; ++d) {
    if (r.k[d] == 0) continue;
    held = detail::forwardable(std::move(held), r.pattern);
    detail::shift_phase(out, held, d, r);
    held = detail::grown(held, d, r);
  }
  return out;
}
#endif

}  // namespace haloshift

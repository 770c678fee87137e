#pragma once
/// @file shift.hpp
/// @brief Plimpton's Shift: dimension by dimension, k daisy-chain steps each way.

#include <algorithm>
#include <string_view>
#include <vector>

#include "../grid/grid_shape.hpp"
#include "../grid/neighborhood.hpp"
#include "schedule.hpp"

namespace haloshift {

/// Shift (Plimpton 1995). Phase x, then y, then z; in each phase `k` steps in
/// both directions, step `s` forwarding what arrived at step `s-1`. Phase y
/// carries everything held after phase x, phase z everything held after y, so
/// corner blocks need no messages of their own: `6k` messages per rank.
/// With the eighth shell only the `+` direction's blocks are wanted, so each
/// step sends only towards `-` (3k messages).
struct Shift {
  static constexpr std::string_view name = "Shift";

  static schedule make_schedule(const grid_shape&, const range& r) {
    schedule out;
    std::vector<offset> held{zero_offset};
    for (int d = 0; d < max_dims; ++d) {
      if (r.k[d] == 0) continue;
      const offset e = unit(d);
      for (int s = 1; s <= r.k[d]; ++s) {
        round step;
        // What arrived from `-e` at step s-1 sits at `h - (s-1)e`; pass it on to `+e`.
        if (r.low(d) < 0) step.transfers.push_back({e, shifted(held, -(s - 1), e)});
        step.transfers.push_back({-e, shifted(held, s - 1, e)});
        out.rounds.push_back(std::move(step));
      }
      std::vector<offset> grown;
      for (int j = r.low(d); j <= r.high(d); ++j)
        for (const offset& h : held) grown.push_back(h + j * e);
      std::sort(grown.begin(), grown.end(), canonical_order{});
      held = std::move(grown);
    }
    return out;
  }

private:
  static std::vector<offset> shifted(const std::vector<offset>& held, int s, const offset& e) {
    std::vector<offset> out;
    out.reserve(held.size());
    for (const offset& h : held) out.push_back(h + s * e);
    return out;
  }
};

}  // namespace haloshift

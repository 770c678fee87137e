// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file team_shift.hpp
/// @brief TeamShift: Driscoll et al.'s processor teams, revised for a cut-off
/// (slr-data-exchange-strategies, Fig. 7b), one dimension after another.

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "../detail/compiled.hpp"
#include "../error.hpp"
#include "../grid/grid_shape.hpp"
#include "../grid/neighborhood.hpp"
#include "../strategy.hpp"
#include "schedule.hpp"
#include "shift.hpp"

namespace haloshift {

/// TeamShift with team size `c` per dimension (`strategy_parameters::team`).
/// Along each dimension, `c` consecutive boxes form a team; member `i` is the
/// box whose coordinate is `i` modulo `c`. With `K = ceil(k / c)` team
/// distances to cover, a phase runs
///  (A) team allgather: every member gets every member's data (the team's
///      super-block);
///  (B) member `i` fetches the super-blocks at team distances `i+1`,
///      `i+1+c`, `i+1+2c`, ... <= K on both sides: first straight from member
///      `i` of team `t +- (i+1)` (the skew), then stride-`c` daisy chaining from
///      member `i` of team `t +- c`;
///  (C) team allgather of what was fetched.
/// Each box then keeps the blocks within `k` and carries them into the next
/// dimension, as Shift does. Latency falls from Shift's `2k` steps per phase
/// to `3 + floor((K-1)/c)` rounds, at the price of more volume. `c = 1` is
/// exactly Shift. The team size must divide the number of boxes along its
/// dimension (teams must tile the ring); 0 picks the divisor of that number
/// closest to sqrt(k) from below.
struct TeamShift {
  /// The strategy's name (make_plan(grid, "TeamShift", ...), the registry, explain()).
  static constexpr std::string_view name = "TeamShift";
  /// Team rounds gather blocks inside a team, also back towards their
  /// source: a particle or field selection cannot follow them, so particle
  /// and field plans refuse TeamShift (whatever the team size) instead of
  /// running Shift under its name.
  static constexpr bool blocks_only = true;

  /// The team sizes used for `requested` (zeros resolved); throws
  /// haloshift::error for sizes that cannot work, naming the dimension.
  static offset team_sizes(const grid_shape& grid, const range& r, const offset& requested) {
    offset c{1, 1, 1};
    for (int d = 0; d < max_dims; ++d) {
      const int n = grid.dim(d);
      if (requested[d] < 0 || requested[d] > n)
        throw error("TeamShift: team[" + std::to_string(d) + "] = " + std::to_string(requested[d]) +
                    " must lie in 1.." + std::to_string(n) + " (the boxes along dimension " + std::to_string(d) +
                    "), or 0 to choose");
      if (requested[d] > 0 && n % requested[d] != 0)
        throw error("TeamShift: team[" + std::to_string(d) + "] = " + std::to_string(requested[d]) +
                    " must divide the " + std::to_string(n) + " boxes along dimension " + std::to_string(d) +
                    " so that teams tile it");
      c[d] = requested[d] > 0 ? requested[d] : default_team(n, r.k[d]);
    }
    return c;
  }

  /// TeamShift's rounds with the team sizes team_sizes(grid, r, p.team).
  HALOSHIFT_BUILDER static schedule make_schedule(const grid_shape& grid, const range& r, const strategy_parameters& p);

 private:
  static int default_team(int n, int k) {
    const int target = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(k))));
    for (int c = std::min(target, n); c > 1; --c)
      if (n % c == 0) return c;
    return 1;
  }

  /// Columns `first..last` along `d` of the blocks `held`.
  static std::vector<offset> columns(const std::vector<offset>& held, int d, int first, int last) {
    std::vector<offset> out;
    for (int j = first; j <= last; ++j) {
      auto col = detail::shifted(held, j, unit(d));
      out.insert(out.end(), col.begin(), col.end());
    }
    std::sort(out.begin(), out.end(), detail::canonical_order{});
    return out;
  }

  static void team_phase(schedule& out, const std::vector<offset>& held, int d, int c, const range& r) {
    const offset e = unit(d);
    const int teams = (r.k[d] + c - 1) / c;  // K
    std::vector<int> sides{+1};
    if (r.low(d) < 0) sides.push_back(-1);
    auto member = [&](int m) { return detail::sender_class{d, c, m}; };
    // The super-block of the team `distance` teams away, seen from member m.
    auto super_block = [&](int m, int distance) {
      return columns(held, d, distance * c - m, distance * c - m + c - 1);
    };
    auto allgather = [&](auto blocks_of_member) {
      schedule_round all;
      for (int m = 0; m < c; ++m)
        for (int j = -(c - 1); j <= c - 1; ++j)
          if (j != 0 && m + j >= 0 && m + j < c) {
            auto blocks = blocks_of_member(m);
            if (!blocks.empty()) all.transfers.push_back({j * e, std::move(blocks), member(m)});
          }
      out.rounds.push_back(std::move(all));
    };

    // (A) every member holds its team's super-block.
    allgather([&](int) { return detail::shifted(held, 0, e); });
    // (B) skew, then daisy chain: at step s member m fetches distance m+1+s*c from member m of team +-c.
    for (int s = 0; 1 + s * c <= teams; ++s) {
      schedule_round step;
      for (int m = 0; m < c; ++m) {
        const int distance = m + 1 + s * c;
        if (distance > teams) continue;
        for (int side : sides) {
          // Sent by member m of the team `side * (s ? c : m + 1)` away, which holds it at distance `side*(distance -
          // hop)`.
          const int hop = s == 0 ? m + 1 : c;
          step.transfers.push_back({-side * hop * c * e, super_block(m, side * (distance - hop)), member(m)});
        }
      }
      out.rounds.push_back(std::move(step));
    }
    // (C) every member holds every fetched super-block.
    allgather([&](int m) {
      std::vector<offset> fetched;
      for (int distance = m + 1; distance <= teams; distance += c)
        for (int side : sides) {
          auto b = super_block(m, side * distance);
          fetched.insert(fetched.end(), b.begin(), b.end());
        }
      std::sort(fetched.begin(), fetched.end(), detail::canonical_order{});
      return fetched;
    });
  }
};

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER schedule TeamShift::make_schedule(const grid_shape& grid, const range& r,
                                                    const strategy_parameters& p) {
  const offset c = team_sizes(grid, r, p.team);
  schedule out;
  std::vector<offset> held{zero_offset};
  for (int d = 0; d < max_dims; ++d) {
    if (r.k[d] == 0) continue;
    held = detail::forwardable(std::move(held), r.pattern);
    if (c[d] == 1)
      detail::shift_phase(out, held, d, r);
    else
      team_phase(out, held, d, c[d], r);
    held = detail::grown(held, d, r);
  }
  return out;
}
#endif

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// A user-written strategy: Shift with the dimensions taken in the order
// z, y, x. Nothing but a schedule; haloshift validates it when a plan is
// built and runs it on its shared executor. Its rows are columns of the
// canonical layout, so the executor packs its messages (Shift's do not need it).

#include <haloshift/haloshift.hpp>

#include <algorithm>
#include <string_view>
#include <vector>

struct ZyxShift {
  static constexpr std::string_view name = "ZyxShift";

  static haloshift::schedule make_schedule(const haloshift::grid_shape&, const haloshift::range& r) {
    using haloshift::offset;
    haloshift::schedule out;
    std::vector<offset> held{haloshift::zero_offset};
    for (int d = haloshift::max_dims - 1; d >= 0; --d) {
      if (r.k[d] == 0) continue;
      const offset e = haloshift::unit(d);
      for (int step = 1; step <= r.k[d]; ++step) {
        haloshift::schedule_round round;
        // Pass on what arrived from the other side one step earlier.
        if (r.low(d) < 0) round.transfers.push_back({e, moved(held, -(step - 1), e)});
        round.transfers.push_back({-e, moved(held, step - 1, e)});
        out.rounds.push_back(round);
      }
      std::vector<offset> grown;
      for (int j = r.low(d); j <= r.high(d); ++j) {
        auto column = moved(held, j, e);
        grown.insert(grown.end(), column.begin(), column.end());
      }
      held = grown;
    }
    return out;
  }

private:
  static std::vector<haloshift::offset> moved(const std::vector<haloshift::offset>& blocks, int s,
                                              const haloshift::offset& e) {
    std::vector<haloshift::offset> out;
    for (const auto& b : blocks) out.push_back(b + s * e);
    return out;
  }
};

static_assert(haloshift::strategy<ZyxShift>);

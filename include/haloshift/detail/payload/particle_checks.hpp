// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file particle_checks.hpp
/// @brief A particle plan's arguments: checked on each rank (positions in the
/// rank's box, a finite cutoff, the reach it gives) and what all ranks must
/// agree on, in the build's one agreement.

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../error.hpp"
#include "../../exchange/selection.hpp"
#include "../../grid/cartesian_grid.hpp"
#include "../mpi/agreement.hpp"
#include "../../payload/domain.hpp"
#include "domain_agreement.hpp"
#include "../../payload/position_views.hpp"

namespace haloshift::detail {

/// Throws unless every particle of `x` lies in the box at `coords` by the ownership rule migrate
/// uses (domain::owner_coordinate): the one box with edge(c) <= x < edge(c + 1), so comparing with
/// this box's edges is the same rule.
template <position_source V>
void check_in_box(const grid_shape& shape, const offset& coords, const domain& dom, const V& x) {
  const auto [lo, hi] = dom.box(shape, coords);
  const std::size_t n = x.size();
  // A dimension the grid lacks accepts everything; the scan takes no branch per particle (a
  // re-neighbouring runs it on every atom) and the error looks for the first offender after.
  position low = lo, high = hi;
  for (int d = shape.ndims(); d < max_dims; ++d) {
    low[d] = -std::numeric_limits<double>::infinity();
    high[d] = std::numeric_limits<double>::infinity();
  }
  const auto within = [](double v, double a, double b) {
    return static_cast<unsigned>(v >= a) & static_cast<unsigned>(v < b);
  };
  unsigned inside = 1;
  for (std::size_t i = 0; i < n; ++i) {
    const position p = x[i];
    inside &= within(p[0], low[0], high[0]) & within(p[1], low[1], high[1]) & within(p[2], low[2], high[2]);
  }
  if (inside) return;
  for (std::size_t i = 0; i < n; ++i) {
    const position p = x[i];
    for (int d = 0; d < shape.ndims(); ++d)
      if (!(p[d] >= lo[d] && p[d] < hi[d]))
        throw error("particle " + std::to_string(i) + " at coordinate " + number_text(p[d]) +
                    " along dimension " + std::to_string(d) + " lies outside this rank's box [" +
                    number_text(lo[d]) + ", " + number_text(hi[d]) + "): call migrate first");
  }
}


/// What a particle plan's ranks must agree on besides the plan options: the domain (corners and
/// cuts) and the cutoff (doubles compared through their bit patterns, equal values, equal bits, and
/// reported as numbers).
inline std::vector<mpi::agreed_value> agreed_particle_values(const grid_shape& shape, const domain& dom,
                                                             const position& cutoff) {
  static const char* names[max_dims] = {"cutoff[0]", "cutoff[1]", "cutoff[2]"};
  std::vector<mpi::agreed_value> agreed;
  append_agreed_domain(shape, dom, agreed);
  for (int d = 0; d < shape.ndims(); ++d) agreed.push_back(mpi::real_value(names[d], cutoff[d]));
  return agreed;
}

/// Raises unless the cutoff along `d` is a finite number >= 0.
inline void check_cutoff(int d, double cutoff) {
  if (!(std::isfinite(cutoff) && cutoff >= 0))
    throw error("cutoff[" + std::to_string(d) + "] must be finite and >= 0, got " + number_text(cutoff));
}

/// Checks a particle plan's arguments on this rank (no communication) and
/// returns how many boxes the cutoff reaches per dimension.
template <position_source V>
offset checked_particle_reach(const cartesian_grid& grid, const domain& dom, const position& cutoff, const V& x) {
  const grid_shape& shape = grid.shape();
  offset reach{0, 0, 0};
  dom.validate(shape);
  for (int d = 0; d < shape.ndims(); ++d) {
    check_cutoff(d, cutoff[d]);
    constexpr int max_boxes = 1000000;
    reach[d] = dom.cutoff_reach(shape, d, cutoff[d], max_boxes);  // at least 1: a zero cutoff takes the border
    if (reach[d] > max_boxes)
      throw error("cutoff[" + std::to_string(d) + "] = " + number_text(cutoff[d]) +
                  " spans more than a million boxes");
  }
  check_components(x, shape.ndims());
  check_in_box(shape, grid.coords(), dom, x);
  return reach;
}

/// Everything a particle plan's ranks must agree on: the domain, the cutoff,
/// the options and the requested strategy. The same list for Auto and for a
/// strategy, so that ranks asking for each meet in the same collective.
inline std::vector<mpi::agreed_value> particle_agreement(const grid_shape& shape, const domain& dom,
                                                         const position& cutoff, const plan_options& options,
                                                         std::string_view requested) {
  auto values = agreed_particle_values(shape, dom, cutoff);
  const auto plan_values = agreed_plan_values(zero_offset, options, requested, sizeof(position));
  values.insert(values.end(), plan_values.begin(), plan_values.end());
  return values;
}

/// The checks of a particle plan, collectively (the same error on every rank),
/// for Auto, which needs the reach before it chooses the strategy: the same
/// agreement as the build's first (values and as many spreads), so that a
/// rank asking Auto and one asking a strategy both raise. Also returns the
/// largest particle count on any rank (in a spread the build uses otherwise).
template <position_source V>
std::pair<offset, std::uint64_t> particle_reach(const cartesian_grid& grid, const domain& dom, const position& cutoff,
                                                const V& x, const plan_options& options, std::string_view requested) {
  offset reach{0, 0, 0};
  mpi::spread spreads[selective_builder::spread_count];
  spreads[0].mine = static_cast<std::int64_t>(x.size());
  mpi::agree(
      grid.comm(),
      [&] {
        check_plan_options(options);
        reach = checked_particle_reach(grid, dom, cutoff, x);
      },
      particle_agreement(grid.shape(), dom, cutoff, options, requested), spreads);
  return {reach, static_cast<std::uint64_t>(spreads[0].high)};
}

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file particle_builder.hpp
/// @brief How make_particle_plan builds a particle plan (one agreement, then
/// the selective build), and how Auto sizes a particle exchange.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "../../exchange/selection.hpp"
#include "../../grid/cartesian_grid.hpp"
#include "../../payload/domain.hpp"
#include "../../payload/particle_plan.hpp"
#include "../../payload/position_views.hpp"
#include "../compiled.hpp"
#include "cutoff_selection.hpp"
#include "particle_checks.hpp"

namespace haloshift::detail {

struct particle_builder {
  /// One agreement checks the arguments on every rank (the domain, cutoff and
  /// options agree, every particle lies in its rank's box) and starts the build.
  template <detail::position_source V>
  static particle_plan build(const cartesian_grid& grid, const domain& dom, const position& cutoff, const V& x,
                             const plan_options& options, const strategy_request& request);
};

template <detail::position_source V>
particle_plan particle_builder::build(const cartesian_grid& grid, const domain& dom, const position& cutoff, const V& x,
                                      const plan_options& options, const strategy_request& request) {
  offset reach{0, 0, 0};
  auto rc = std::make_unique<particle_plan::recipe>(selective_builder::prepare(
      grid, [&] { return reach = checked_particle_reach(grid, dom, cutoff, x); },
      particle_agreement(grid.shape(), dom, cutoff, options, request.name), within_cutoff{&grid.shape(), dom, cutoff},
      options, request));
  rc->needs.grid = &rc->shape;  // the plan may outlive the grid
  selective_plan plan = selective_builder::new_plan(grid, rc->strategy.name, options);
  std::vector<position> keys;
  selective_builder::fill(plan, *rc, x, keys);
  return particle_plan(std::move(plan), std::move(keys), dom, reach, std::move(rc));
}
#if HALOSHIFT_SHARES_INSTANCES
HALOSHIFT_INSTANCE particle_plan particle_builder::build(const cartesian_grid&, const domain&, const position&,
                                                         const std::span<const position>&, const plan_options&,
                                                         const strategy_request&);
#endif

/// How Auto sizes a particle exchange: the boxes the cutoff reaches and the
/// bytes of the slab of a box within the cutoff of a face neighbour (the
/// thinnest box's, the slowest rank's, when the domain has cuts).
struct particle_sizing {
  offset reach{0, 0, 0};
  double bytes = 0;
};
inline particle_sizing size_particle_blocks(const grid_shape& grid, const domain& dom, const position& cutoff,
                                            std::size_t particles, std::size_t bytes_per_particle) {
  particle_sizing out;
  double fraction = 0;
  dom.validate(grid);
  for (int d = 0; d < grid.ndims(); ++d) check_cutoff(d, cutoff[d]);
  for (int d = 0; d < grid.ndims(); ++d) {
    out.reach[d] = std::min(dom.cutoff_reach(grid, d, cutoff[d]), 1000000);
    // With cuts, the thinnest box that holds anything sends the largest share of its particles.
    for (int c = 0; c < (dom.has_cuts(grid, d) ? grid.dim(d) : 1); ++c) {
      const double width =
          dom.has_cuts(grid, d) ? dom.edge(grid, d, c + 1) - dom.edge(grid, d, c) : dom.length(d) / grid.dim(d);
      if (width > 0) fraction = std::max(fraction, std::min(1.0, cutoff[d] / width));
    }
  }
  out.bytes = static_cast<double>(particles) * static_cast<double>(bytes_per_particle) * fraction;  // no overflow
  return out;
}

}  // namespace haloshift::detail

namespace haloshift {

/// particle_plan::rebuild: the build again, from the plan's recipe.
template <detail::position_source V>
void particle_plan::rebuild(const V& x) {
  detail::check_not_moved(recipe_ != nullptr, "rebuild");
  mpi::agree(plan_.comm(), [&] {
    detail::check_idle(plan_.busy(), "rebuild");
    detail::check_components(x, recipe_->shape.ndims());
    detail::check_in_box(recipe_->shape, recipe_->coords, dom_, x);
  });
  detail::selective_builder::fill(plan_, *recipe_, x, positions_);
  adopt_blocks();
}
#if HALOSHIFT_SHARES_INSTANCES
HALOSHIFT_INSTANCE void particle_plan::rebuild(const std::span<const position>&);
#endif

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER std::vector<ghost_origin> particle_plan::ghost_origins() {
  detail::check_not_moved(recipe_ != nullptr, "ghost_origins");
  std::vector<std::uint64_t> index(size());
  for (std::size_t i = 0; i < owned(); ++i) index[i] = i;
  forward(std::span<std::uint64_t>(index));
  std::vector<ghost_origin> out(ghosts());
  for (const ghost_block& b : blocks_)
    for (std::size_t i = b.first; i < b.first + b.count; ++i)
      out[i - owned()] = {b.source, static_cast<std::size_t>(index[i])};
  return out;
}
#endif

}  // namespace haloshift

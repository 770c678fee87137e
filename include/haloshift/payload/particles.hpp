// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file particles.hpp
/// @brief Particle mode (molecular dynamics): each rank imports, as ghosts,
/// the particles that lie within a cutoff of its box, from as many boxes away
/// as the cutoff reaches, shifted across periodic boundaries; per-particle
/// arrays then move along the stored lists (forward) and contributions such
/// as forces are summed back onto the owners (reverse).

#include <cstdint>
#include <string_view>

#include "../auto_hook.hpp"
#include "../detail/payload/particle_builder.hpp"
#include "../strategy_registry.hpp"
#include "domain.hpp"
#include "particle_plan.hpp"
#include "position_views.hpp"

namespace haloshift {

/// Builds the ghost exchange for the particles at `x` (all inside this rank's
/// box: call migrate first) with a cutoff per dimension. Collective: the
/// domain, cutoff, strategy and options must agree on all ranks and are
/// checked; a bad argument on any rank raises the same haloshift::error on all.
/// Strategies: Shift, SingleHop, TtlMultiHop, NeighborAlltoall, custom
/// strategies whose blocks move away from their source, and Auto (with
/// <haloshift/auto.hpp>; see docs/particles.md).
/// Positions: a vector or span of hs::position, or any position_source
/// (array_positions, strided_positions, split_positions, member_positions:
/// float or double, as the code stores them).
template <strategy S, detail::position_source V>
particle_plan make_particle_plan(const cartesian_grid& grid, const domain& dom, const position& cutoff, const V& x,
                                 const plan_options& options = {}) {
  return detail::particle_builder::build(grid, dom, cutoff, x, options, {S::name, detail::entry_of<S>()});
}

/// The strategy named at run time: a registered name without regard to case
/// ("shift", "singlehop", ...), or "Auto" with <haloshift/auto.hpp> (rank 0
/// ranks the candidates that can carry particles by explain_particles, with
/// positions' bytes and the largest owned count, and broadcasts the choice,
/// the shared-memory path included where the model predicts it faster).
/// One plan type for every strategy, so choosing at run time instantiates
/// the plan code once.
template <detail::position_source V>
particle_plan make_particle_plan(const cartesian_grid& grid, std::string_view strategy, const domain& dom,
                                 const position& cutoff, const V& x, const plan_options& options = {}) {
  if (!detail::strategy_registry::same_name(strategy, Auto::name))
    return detail::particle_builder::build(grid, dom, cutoff, x, options, {strategy, std::nullopt});
  // Auto sizes its model from checked arguments and the largest count, in one agreement.
  const std::uint64_t largest = detail::particle_reach(grid, dom, cutoff, x, options, strategy).second;
  const detail::particle_sizing sized = detail::size_particle_blocks(grid.shape(), dom, cutoff, largest, sizeof(position));
  const detail::strategy_choice choice = detail::choose_automatically(
      grid, {.grid = grid.shape(), .r = range{sized.reach, shell::full, options.pattern}, .bytes = sized.bytes, .mode = options.mode,
             .payload = detail::payload_kind::selective,
             .shared_memory_possible = options.pack_threads <= 1,  // the path packs on one thread
             .shared_memory_asked = options.shared_memory});
  plan_options chosen = options;
  chosen.shared_memory = options.shared_memory || choice.shared_memory;  // the user's request stays
  return detail::particle_builder::build(grid, dom, cutoff, x, chosen, {choice.entry.name, choice.entry});
}
/// The strategy named at run time, the same cutoff along every dimension.
template <detail::position_source V>
particle_plan make_particle_plan(const cartesian_grid& grid, std::string_view strategy, const domain& dom,
                                 double cutoff, const V& x, const plan_options& options = {}) {
  return make_particle_plan(grid, strategy, dom, position{cutoff, cutoff, cutoff}, x, options);
}

/// The same cutoff along every dimension.
template <detail::strategy_or_auto S, detail::position_source V>
particle_plan make_particle_plan(const cartesian_grid& grid, const domain& dom, double cutoff, const V& x,
                                 const plan_options& options = {}) {
  return make_particle_plan<S>(grid, dom, position{cutoff, cutoff, cutoff}, x, options);
}

}  // namespace haloshift

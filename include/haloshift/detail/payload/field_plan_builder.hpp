// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file field_plan_builder.hpp
/// @brief How make_field_plan builds a field plan: a selective plan over the
/// shell's cells, relocated onto the padded array; and Auto's sizing for grids.

#include <mpi.h>

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../../auto_hook.hpp"
#include "../../error.hpp"
#include "../../exchange/selection.hpp"
#include "../../grid/cartesian_grid.hpp"
#include "../../payload/field_plan.hpp"
#include "../../payload/field_shape.hpp"
#include "../../strategy_registry.hpp"
#include "../compiled.hpp"
#include "../mpi/check.hpp"
#include "field_selection.hpp"

namespace haloshift::detail {

struct field_plan_builder {
  HALOSHIFT_BUILDER static field_plan build(const cartesian_grid& grid, const field_shape& shape,
                                            const plan_options& options, const strategy_request& request);

  /// The ghost cells a plan of `pattern` fills: per set of dimensions along which a ghost region
  /// lies outside the interior (a face, an edge, a corner region), no more than the pattern allows,
  /// the product of the ghost widths along those dimensions and the interior along the others.
  static std::uint64_t ghost_cells(const field_shape& shape, halo_pattern pattern) {
    std::uint64_t cells = 0;
    for (unsigned outside = 1; outside < (1u << max_dims); ++outside) {
      if (std::popcount(outside) > pattern_dims(pattern)) continue;
      std::uint64_t region = 1;
      for (int d = 0; d < max_dims; ++d)
        region *= outside >> d & 1u ? static_cast<std::uint64_t>(shape.ghost[d] + shape.ghost_high[d])
                                    : static_cast<std::uint64_t>(shape.interior[d]);
      cells += region;
    }
    return cells;
  }

  /// Auto for grids: blocks sized as the mean ghost bytes per imported box of
  /// the largest box; the model layer ranks the strategies that can select
  /// and, for fields in device memory (`device`), how their messages reach
  /// MPI: the plan then runs with that plan_options::device_mpi; for host
  /// fields, whether on the shared-memory path (plan_options::shared_memory).
  /// What Auto ranks the strategies for (collective): the plan's range and the block size, the mean
  /// ghost bytes per imported box of the largest box. The C interface's hs_explain_field ranks the same.
  HALOSHIFT_BUILDER static std::pair<range, double> auto_sizing(const cartesian_grid& grid, const field_shape& shape,
                                                                const plan_options& options, std::size_t element_size);

  /// `fields`: how many fields the `element_size` bytes per cell hold (a bundle's).
  HALOSHIFT_BUILDER static field_plan automatic(const cartesian_grid& grid, const field_shape& shape,
                                                const plan_options& options, std::size_t element_size,
                                                bool device = false, int fields = 1);
};

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER field_plan field_plan_builder::build(const cartesian_grid& grid, const field_shape& shape,
                                                       const plan_options& options, const strategy_request& request) {
  const grid_shape& g = grid.shape();
  offset k = shape.reach(g);
  // No ghosts at all still makes a (selecting nothing) plan, so the calls stay collective and uniform.
  if (k == zero_offset) k = along_grid(grid, 1);
  const std::vector<offset> own = shell_cells(shape);
  auto [plan, keys] = selective_builder::build<offset>(grid, k, std::span<const offset>(own), within_ghost{&g, shape},
                                                       options, request);
  // Owned cells stay where they are; a ghost goes to its unwrapped position: key + image * global.
  std::vector<std::size_t> place(keys.size());
  for (std::size_t i = 0; i < plan.owned(); ++i) place[i] = shape.index_of_global(keys[i]);
  for (const detail::block_slot& b : plan.blocks())
    for (std::size_t e = b.first; e < b.first + b.count; ++e) {
      offset u = keys[e];
      for (int d = 0; d < max_dims; ++d) u[d] += b.source.image[d] * shape.global[d];
      if (!shape.holds(u))
        throw error("grid field: ghost cell " + to_string(u) + " from offset " + to_string(b.off) +
                    " lies outside the padded box (internal error)");
      place[e] = shape.index_of_global(u);
    }
  plan.relocate(place, shape.size());
  // The options and the strategy were agreed in the build's first check: the same on every rank.
  const bool per_field = options.messages == field_messages::per_field;
  if (per_field && strategy_registry::instance().find(plan.strategy()).neighbor_collective)
    throw error("make_field_plan: " + std::string(plan.strategy()) +
                " sends one message per neighbour by construction: plan_options::messages = "
                "field_messages::per_field needs a point-to-point strategy (Shift, SingleHop, TtlMultiHop)");
  return field_plan(std::move(plan), shape, k, per_field);
}

HALOSHIFT_BUILDER std::pair<range, double> field_plan_builder::auto_sizing(const cartesian_grid& grid,
                                                                           const field_shape& shape,
                                                                           const plan_options& options,
                                                                           std::size_t element_size) {
  offset k = shape.reach(grid.shape());
  if (k == zero_offset) k = along_grid(grid, 1);
  const range r = make_range(grid.shape(), k, options.kind, options.pattern);
  std::uint64_t ghosts = ghost_cells(shape, options.pattern);
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &ghosts, 1, MPI_UINT64_T, MPI_MAX, grid.comm()), "MPI_Allreduce");
  return {r, static_cast<double>(ghosts * element_size) / static_cast<double>(offsets(r).size())};
}

HALOSHIFT_BUILDER field_plan field_plan_builder::automatic(const cartesian_grid& grid, const field_shape& shape,
                                                           const plan_options& options, std::size_t element_size,
                                                           bool device, int fields) {
  const auto [r, bytes] = auto_sizing(grid, shape, options, element_size);
  const detail::strategy_choice choice =
      detail::choose_automatically(grid, {.grid = grid.shape(),
                                          .r = r,
                                          .bytes = bytes,
                                          .mode = options.mode,
                                          .payload = detail::payload_kind::selective,
                                          .device = device,
                                          .device_mpi = options.device_mpi,
                                          .shared_memory_possible = options.pack_threads <= 1,  // else one thread
                                          .shared_memory_asked = options.shared_memory,
                                          .fields = fields,
                                          .messages = options.messages});
  plan_options picked = options;
  if (choice.staging != memory::mpi_path::detect) picked.device_mpi = choice.staging;
  picked.shared_memory = options.shared_memory || choice.shared_memory;
  if (options.messages == field_messages::automatic)
    picked.messages = choice.per_field ? field_messages::per_field : field_messages::per_neighbor;
  return build(grid, shape, picked, {choice.entry.name, choice.entry});
}
#endif

}  // namespace haloshift::detail

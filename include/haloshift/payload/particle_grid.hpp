// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file particle_grid.hpp
/// @brief The grid particle codes use (the smallest surface between boxes)
/// and a rank's box in the domain.

#include <mpi.h>

#include <cstddef>
#include <utility>

#include "../grid/cartesian_grid.hpp"
#include "domain.hpp"

namespace haloshift {

/// A grid for particles in `dom`: as `cartesian_grid(comm, options)`, with the
/// dims left at 0 chosen for the smallest surface between boxes, as MD codes
/// split space (a cube over 2 ranks is 1x1x2, over 4 ranks 1x2x2; see
/// grid_options::lengths), unless `options.lengths` says otherwise.
/// How it factors (smallest_surface_dims): every split of the ranks into
/// `options.dims.size()` factors that keeps the caller's nonzero dims is tried,
/// x's factor in the outer loop and y's next, and the first with the smallest
/// surface (the sum of one box's face areas, from the lengths `hi - lo`) wins,
/// as in LAMMPS's `processors * * *` and miniMD. Dims given in full are taken as
/// they are; `options.order` and `options.remainder` pass through.
/// Collective.
inline cartesian_grid make_particle_grid(MPI_Comm comm, const domain& dom, grid_options options = {}) {
  if (!options.lengths.empty()) return cartesian_grid(comm, options);
  for (std::size_t d = 0; d < options.dims.size() && d < static_cast<std::size_t>(max_dims); ++d)
    options.lengths.push_back(dom.length(static_cast<int>(d)));
  try {
    return cartesian_grid(comm, options);
  } catch (const error& e) {  // raised on every rank alike (the grid agrees first): say where the lengths came from
    throw error(std::string(e.what()).substr(std::string("haloshift: ").size()) +
                " (make_particle_grid takes the lengths from the domain: hi - lo)");
  }
}

/// The box `[lo, hi)` of this rank within `dom`.
inline std::pair<position, position> box_of(const cartesian_grid& grid, const domain& dom) {
  return dom.box(grid.shape(), grid.coords());
}

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file cartesian_grid.hpp
/// @brief A Cartesian grid of boxes, one per rank, over a communicator.

#include <algorithm>
#include <string>
#include <vector>

#include <mpi.h>

#include "../error.hpp"
#include "../mpi/check.hpp"
#include "../mpi/communicator.hpp"
#include "grid_shape.hpp"

namespace haloshift {

/// How to lay the ranks out. `dims` entries of 0 are chosen by
/// MPI_Dims_create; `periodic` has one entry per dimension.
struct grid_options {
  /// Boxes along each dimension (1 to 3 entries, their count is the grid's dimension); 0: chosen.
  std::vector<int> dims{0, 0, 0};
  /// Whether each dimension wraps around; as many entries as `dims`.
  std::vector<bool> periodic{true, true, true};
};

/// One box per rank of a communicator, arranged as a 1D, 2D or 3D grid.
/// Constructing it is collective; it works on its own duplicate of the
/// communicator. Rank numbers are those of the given communicator, mapped to
/// coordinates row-major (last dimension fastest) as MPI_Cart_create does
/// without reordering.
class cartesian_grid {
public:
  /// Lays the ranks of `comm` out as `options` says and duplicates `comm`
  /// (collective over `comm`). Throws haloshift::error when the dims do not fit
  /// the communicator's size or `periodic` does not have one entry per dimension.
  explicit cartesian_grid(MPI_Comm comm, const grid_options& options = {}) : comm_(comm) {
    std::vector<int> dims = options.dims;
    if (dims.empty() || dims.size() > static_cast<std::size_t>(max_dims))
      throw error("grid: dims must have 1, 2 or 3 entries, got " + std::to_string(dims.size()));
    int fixed = 1;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] < 0)
        throw error("grid: dims[" + std::to_string(d) + "] must be >= 1 (or 0 to choose), got " +
                    std::to_string(dims[d]));
      if (dims[d] > 0) fixed *= dims[d];
    }
    const bool all_fixed = std::find(dims.begin(), dims.end(), 0) == dims.end();
    if (all_fixed && fixed != comm_.size())
      throw error("grid: dims multiply to " + std::to_string(fixed) + " but the communicator has " +
                  std::to_string(comm_.size()) + " ranks");
    if (comm_.size() % fixed != 0)
      throw error("grid: the fixed dims multiply to " + std::to_string(fixed) +
                  ", which does not divide the communicator size " + std::to_string(comm_.size()));
    mpi::check(MPI_Dims_create(comm_.size(), static_cast<int>(dims.size()), dims.data()), "MPI_Dims_create");
    shape_ = grid_shape(dims, options.periodic);
    if (shape_.size() != comm_.size())
      throw error("grid: dims " + to_string(shape_) + " hold " + std::to_string(shape_.size()) +
                  " boxes but the communicator has " + std::to_string(comm_.size()) + " ranks");
    coords_ = shape_.coords_of(comm_.rank());
  }

  /// The grid's shape (dims and periodicity), without the communicator.
  const grid_shape& shape() const noexcept { return shape_; }
  /// Number of dimensions, 1 to 3.
  int ndims() const noexcept { return shape_.ndims(); }
  /// Boxes along dimension `d`; 1 for dimensions beyond ndims().
  int dim(int d) const noexcept { return shape_.dim(d); }
  /// Whether dimension `d` wraps around.
  bool periodic(int d) const noexcept { return shape_.periodic(d); }
  /// Number of boxes (= ranks).
  int size() const noexcept { return shape_.size(); }
  /// This rank (the same in the user's communicator and in comm()).
  int rank() const noexcept { return comm_.rank(); }
  /// This rank's box coordinates (0 along dimensions beyond ndims()).
  const offset& coords() const noexcept { return coords_; }
  /// The rank owning the box at `coords` (each within `[0, dim(d))`).
  int rank_of(const offset& coords) const noexcept { return shape_.rank_of(coords); }
  /// The box coordinates of `rank`.
  offset coords_of(int rank) const noexcept { return shape_.coords_of(rank); }
  /// The box at offset `o` from this rank's box, with its periodic image.
  std::optional<neighbor> neighbor_at(const offset& o) const noexcept { return shape_.neighbor_at(coords_, o); }

  /// The grid's own duplicate of the user's communicator.
  MPI_Comm comm() const noexcept { return comm_.get(); }

private:
  mpi::communicator comm_;
  grid_shape shape_;
  offset coords_{0, 0, 0};
};

}  // namespace haloshift

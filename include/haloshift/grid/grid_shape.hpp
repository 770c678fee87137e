// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file grid_shape.hpp
/// @brief The geometry of a Cartesian grid of boxes: sizes, periodicity,
/// rank <-> coordinates, neighbors with periodic images. No MPI: schedules,
/// the oracle and the cost model use it to reason about every rank at once.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../detail/arithmetic.hpp"
#include "../error.hpp"
#include "offset.hpp"

namespace haloshift {

namespace detail {
/// The box at some offset from a rank: its owner and how often the offset
/// wrapped around each periodic dimension (an MD code shifts coordinates by
/// `image[d] * box_length[d]`).
struct neighbor {
  /// The rank owning the box.
  int rank;
  /// Wraps per periodic dimension (negative: across the lower border).
  offset image;
  friend bool operator==(const neighbor&, const neighbor&) = default;
};
}  // namespace detail

/// The shape of a grid of boxes (dims and periodicity per dimension) and
/// its rank numbering, without a communicator: what the schedules, the
/// cost model and the advisor reason about.
class grid_shape {
public:
  /// Which dimension varies fastest in rank numbers: the last (row-major, as
  /// MPI_Cart_create numbers a Cartesian communicator; the default) or the
  /// first (x fastest, as PETSc's DMDA and many Fortran codes number ranks).
  enum class rank_order : int { last_fastest = 0, first_fastest = 1 };
  /// Which boxes take the cells left over when `P` boxes split `N` cells and
  /// `P` does not divide `N` (every box owns `floor(N/P)` cells or one more):
  /// `spread` (the default: box `c` starts at `floor(c N / P)`, the wider
  /// boxes spread out), the `first` `N mod P` boxes (PETSc's
  /// PetscSplitOwnership and DMDA), or the `last` ones.
  enum class remainder_cells : int { spread = 0, first = 1, last = 2 };

  grid_shape() = default;

  /// `dims` and `periodic` have 1 to 3 entries each, all dims >= 1.
  grid_shape(const std::vector<int>& dims, const std::vector<bool>& periodic)
      : grid_shape(dims, periodic, rank_order::last_fastest) {}
  /// With the rank order and the boxes that take the remainder cells of an even split.
  grid_shape(const std::vector<int>& dims, const std::vector<bool>& periodic, rank_order order,
             remainder_cells remainder = remainder_cells::spread) {
    if (dims.empty() || dims.size() > static_cast<std::size_t>(max_dims))
      throw error("grid: dims must have 1, 2 or 3 entries, got " + std::to_string(dims.size()));
    if (periodic.size() != dims.size())
      throw error("grid: periodic must have one entry per dimension (" + std::to_string(dims.size()) + "), got " +
                  std::to_string(periodic.size()));
    if (order != rank_order::last_fastest && order != rank_order::first_fastest)
      throw error("grid: order must be rank_order::last_fastest (0) or rank_order::first_fastest (1), got " +
                  std::to_string(static_cast<int>(order)));
    if (remainder != remainder_cells::spread && remainder != remainder_cells::first &&
        remainder != remainder_cells::last)
      throw error("grid: remainder must be remainder_cells::spread (0), first (1) or last (2), got " +
                  std::to_string(static_cast<int>(remainder)));
    order_ = order;
    remainder_ = remainder;
    ndims_ = static_cast<int>(dims.size());
    std::int64_t total = 1;
    for (int d = 0; d < ndims_; ++d) {
      if (dims[d] < 1)
        throw error("grid: dims[" + std::to_string(d) + "] must be >= 1, got " + std::to_string(dims[d]));
      dims_[d] = dims[d];
      periodic_[d] = periodic[d];
      total *= dims[d];
      if (total > INT32_MAX) throw error("grid: the product of dims exceeds the largest MPI rank");
    }
    size_ = static_cast<int>(total);
  }

  /// Number of dimensions, 1 to 3.
  int ndims() const noexcept { return ndims_; }
  /// Size along dimension `d`; 1 for dimensions beyond ndims().
  int dim(int d) const noexcept { return dims_[d]; }
  /// Sizes along all three dimensions (1 beyond ndims()).
  const offset& dims() const noexcept { return dims_; }
  /// Whether dimension `d` wraps around (false beyond ndims()).
  bool periodic(int d) const noexcept { return periodic_[d]; }
  /// Number of boxes.
  int size() const noexcept { return size_; }

  /// Which dimension varies fastest in rank numbers.
  rank_order order() const noexcept { return order_; }
  /// Which boxes take the remainder cells of an even split.
  remainder_cells remainder() const noexcept { return remainder_; }

  /// Rank of coordinates: row-major, the last dimension fastest, exactly as
  /// MPI_Cart_rank numbers a Cartesian communicator created without
  /// reordering; or the first dimension fastest (rank_order::first_fastest).
  int rank_of(const offset& coords) const noexcept {
    int r = 0;
    if (order_ == rank_order::first_fastest)
      for (int d = max_dims - 1; d >= 0; --d) r = r * dims_[d] + coords[d];
    else
      for (int d = 0; d < max_dims; ++d) r = r * dims_[d] + coords[d];
    return r;
  }

  /// Coordinates of `rank`, the inverse of rank_of().
  offset coords_of(int rank) const noexcept {
    offset c{0, 0, 0};
    const bool first = order_ == rank_order::first_fastest;
    for (int i = 0; i < max_dims; ++i) {  // the fastest dimension first
      const int d = first ? i : max_dims - 1 - i;
      c[d] = rank % dims_[d];
      rank /= dims_[d];
    }
    return c;
  }

  /// The box at `o` from the box at `coords`, or nothing when `o` leaves a
  /// non-periodic dimension.
  std::optional<detail::neighbor> neighbor_at(const offset& coords, const offset& o) const noexcept {
    offset target{}, image{};
    for (int d = 0; d < max_dims; ++d) {
      const int x = coords[d] + o[d];
      if (periodic_[d]) {
        image[d] = detail::floor_div(x, dims_[d]);
        target[d] = x - image[d] * dims_[d];
      } else {
        if (x < 0 || x >= dims_[d]) return std::nullopt;
        image[d] = 0;
        target[d] = x;
      }
    }
    return detail::neighbor{rank_of(target), image};
  }

  /// Whether the box at `o` from the box at `coords` exists (neighbor_at() without computing it).
  bool exists(const offset& coords, const offset& o) const noexcept {
    for (int d = 0; d < max_dims; ++d) {
      if (periodic_[d]) continue;
      const int x = coords[d] + o[d];
      if (x < 0 || x >= dims_[d]) return false;
    }
    return true;
  }

  friend bool operator==(const grid_shape&, const grid_shape&) = default;

private:
  int ndims_ = 1;
  offset dims_{1, 1, 1};
  std::array<bool, max_dims> periodic_{false, false, false};
  int size_ = 1;
  rank_order order_ = rank_order::last_fastest;
  remainder_cells remainder_ = remainder_cells::spread;
};

namespace detail {
/// The enumerator's name, for messages ("invalid" outside the enumeration).
inline const char* name_of(grid_shape::rank_order o) noexcept {
  return o == grid_shape::rank_order::last_fastest    ? "last_fastest"
         : o == grid_shape::rank_order::first_fastest ? "first_fastest"
                                                      : "invalid";
}
inline const char* name_of(grid_shape::remainder_cells r) noexcept {
  return r == grid_shape::remainder_cells::spread  ? "spread"
         : r == grid_shape::remainder_cells::first ? "first"
         : r == grid_shape::remainder_cells::last  ? "last"
                                                   : "invalid";
}
}  // namespace detail

/// "4x2x1" for messages.
inline std::string to_string(const grid_shape& g) {
  std::string s;
  // Appended piece by piece: GCC 12 at -O3 flags `"x" + std::string&&` with a false -Wrestrict.
  for (int d = 0; d < g.ndims(); ++d) {
    if (d) s += 'x';
    s += std::to_string(g.dim(d));
  }
  return s;
}

}  // namespace haloshift

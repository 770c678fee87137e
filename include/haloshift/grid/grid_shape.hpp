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
  grid_shape() = default;

  /// `dims` and `periodic` have 1 to 3 entries each, all dims >= 1.
  grid_shape(const std::vector<int>& dims, const std::vector<bool>& periodic) {
    if (dims.empty() || dims.size() > static_cast<std::size_t>(max_dims))
      throw error("grid: dims must have 1, 2 or 3 entries, got " + std::to_string(dims.size()));
    if (periodic.size() != dims.size())
      throw error("grid: periodic must have one entry per dimension (" + std::to_string(dims.size()) + "), got " +
                  std::to_string(periodic.size()));
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

  /// Row-major rank of coordinates, the last dimension fastest, exactly as
  /// MPI_Cart_rank numbers a Cartesian communicator created without reordering.
  int rank_of(const offset& coords) const noexcept {
    int r = 0;
    for (int d = 0; d < max_dims; ++d) r = r * dims_[d] + coords[d];
    return r;
  }

  /// Coordinates of `rank`, the inverse of rank_of().
  offset coords_of(int rank) const noexcept {
    offset c{0, 0, 0};
    for (int d = max_dims - 1; d >= 0; --d) {
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
};

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

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file shared_array.hpp
/// @brief An array in node-shared memory, the caller's own: exchanged by a
/// plan on the shared-memory path (plan_options::shared_memory), its node
/// partners copy their ghosts straight out of it, and nothing is packed
/// (zero copy: docs/node-aware.md, "Zero copy").

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include "../detail/checked_size.hpp"
#include "../detail/exchange/node_segment.hpp"
#include "../detail/mpi/agreement.hpp"
#include "../exchange/halo.hpp"
#include "../grid/cartesian_grid.hpp"
#include "../grid/nodes.hpp"

namespace haloshift {

/// `n` elements of `T` (zeroed) in memory that every rank of this rank's node
/// can map: this rank's part of an MPI-3 shared window on the grid's node
/// communicator (`MPI_Win_allocate_shared`; `grid_options::node_sizes` and
/// `HALOSHIFT_NODE_SIZE` split a machine into pretend nodes as for plans).
/// Use it as any array (`data()`, `size()`, `[i]`, a `std::span`): pass it, or
/// a field view of it, to a plan's forward and reverse. Making and destroying
/// one are collective over the grid: every rank makes its shared arrays of a
/// grid in one order (the size may differ by rank) and destroys them in one order.
/// Move-only.
template <transferable T>
class shared_array {
 public:
  /// An empty array (no memory, nothing shared).
  shared_array() = default;
  /// `n` elements on this rank (collective over `grid`: see the class). A size whose bytes
  /// overflow raises the same haloshift::error on every rank.
  shared_array(const cartesian_grid& grid, std::size_t n) : size_(n) {
    std::size_t bytes = 0;
    mpi::agree(grid.context()->comm.get(), [&] { bytes = detail::checked_mul(n, sizeof(T), bytes_what(n)); });
    segment_ = std::make_unique<detail::node_segment>(detail::nodes_of(grid), bytes);
    if (bytes) std::memset(segment_->data(), 0, bytes);
  }

  /// This rank's elements (null when empty).
  T* data() noexcept { return segment_ ? reinterpret_cast<T*>(segment_->data()) : nullptr; }
  /// This rank's elements (null when empty).
  const T* data() const noexcept { return segment_ ? reinterpret_cast<const T*>(segment_->data()) : nullptr; }
  /// The number of elements on this rank.
  std::size_t size() const noexcept { return segment_ ? size_ : 0; }
  /// No element on this rank.
  bool empty() const noexcept { return size() == 0; }
  /// Element `i` (unchecked).
  T& operator[](std::size_t i) noexcept { return data()[i]; }
  /// Element `i` (unchecked).
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  /// The first element.
  T* begin() noexcept { return data(); }
  /// One past the last element.
  T* end() noexcept { return data() + size(); }
  /// The first element.
  const T* begin() const noexcept { return data(); }
  /// One past the last element.
  const T* end() const noexcept { return data() + size(); }
  /// The elements as a span (what the plans take).
  operator std::span<T>() noexcept { return {data(), size()}; }
  /// The elements as a span (what the plans take).
  operator std::span<const T>() const noexcept { return {data(), size()}; }

 private:
  static std::string bytes_what(std::size_t n) {
    return "shared_array: n = " + std::to_string(n) + " elements of " + std::to_string(sizeof(T)) + " bytes";
  }

  std::unique_ptr<detail::node_segment> segment_;
  std::size_t size_ = 0;
};

}  // namespace haloshift

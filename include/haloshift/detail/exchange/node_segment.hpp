// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file node_segment.hpp
/// @brief One node-shared allocation (what haloshift::shared_array holds):
/// every rank of a node allocates its part of one MPI-3 shared window, and
/// each sees every partner's part in its own address space. Registered with
/// the node's layout, so that the shared-memory path recognises, by address,
/// data its node partners can read straight out of (zero copy).

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "../../grid/nodes.hpp"
#include "../mpi/check.hpp"
#include "../mpi/communicator.hpp"

namespace haloshift::detail {

/// Allocates this rank's `bytes` of a window shared by the ranks of `node` (collective over it),
/// each rank's part on its own NUMA node where the MPI can (`alloc_shared_noncontig`); sets
/// `base` to this rank's part.
inline MPI_Win allocate_node_shared(std::size_t bytes, MPI_Comm node, std::byte*& base) {
  MPI_Info info = MPI_INFO_NULL;
  mpi::check(MPI_Info_create(&info), "MPI_Info_create");
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  MPI_Win win = MPI_WIN_NULL;
  const int status = MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, node, &base, &win);
  MPI_Info_free(&info);
  mpi::check(status, "MPI_Win_allocate_shared");
  return win;
}

/// Every rank's part of one node-shared window, as this rank maps them.
class node_segment {
 public:
  /// Allocates `bytes` on this rank, and as many as each partner asks on theirs (collective
  /// over the node's communicator; every rank of the node makes its segments in one order).
  node_segment(const node_layout& nodes, std::size_t bytes)
      : registry_(nodes.segments), bytes_(bytes), number_(++registry_->made) {
    // Whole cache lines: where an MPI lays the parts out contiguously each still starts aligned.
    win_ = allocate_node_shared((bytes + line - 1) / line * line, nodes.comm.get(), mine_);
    parts_.resize(static_cast<std::size_t>(nodes.comm.size()));
    for (int r = 0; r < nodes.comm.size(); ++r) {
      MPI_Aint size = 0;
      int unit = 0;
      std::byte* base = nullptr;
      mpi::check(MPI_Win_shared_query(win_, r, &size, &unit, &base), "MPI_Win_shared_query");
      parts_[static_cast<std::size_t>(r)] = base;
    }
    registry_->live.push_back(this);
  }
  node_segment(const node_segment&) = delete;
  node_segment& operator=(const node_segment&) = delete;
  /// Frees the window (collective over the node, like the allocation).
  ~node_segment() {
    std::erase(registry_->live, this);
    mpi::free_unless_finalized(win_, MPI_WIN_NULL, MPI_Win_free);
  }

  std::byte* data() const noexcept { return mine_; }
  std::size_t bytes() const noexcept { return bytes_; }
  /// The segment's number on its node (the same on every rank of it).
  std::uint64_t number() const noexcept { return number_; }
  /// Where the part of node rank `r` (its rank in the node's communicator) lies in this process.
  const std::byte* part_of(int r) const noexcept { return parts_[static_cast<std::size_t>(r)]; }
  /// Whether `extent` bytes from `p` lie in this rank's part.
  bool holds(const void* p, std::size_t extent) const noexcept {
    const auto at = reinterpret_cast<std::uintptr_t>(p), first = reinterpret_cast<std::uintptr_t>(mine_);
    return mine_ && at >= first && at - first <= bytes_ && extent <= bytes_ - (at - first);
  }

  static constexpr std::size_t line = 64;

 private:
  std::shared_ptr<node_segments> registry_;
  std::size_t bytes_;
  std::uint64_t number_;
  std::byte* mine_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
  std::vector<const std::byte*> parts_;  ///< per node rank, its part as mapped here
};

/// The segment of `segments` whose part on this rank holds `extent` bytes from `p`, or null.
inline const node_segment* segment_holding(const node_segments& segments, const void* p, std::size_t extent) {
  for (const node_segment* s : segments.live)
    if (s->holds(p, extent)) return s;
  return nullptr;
}
/// The segment numbered `number` on this node, or null.
inline const node_segment* segment_numbered(const node_segments& segments, std::uint64_t number) {
  for (const node_segment* s : segments.live)
    if (s->number() == number) return s;
  return nullptr;
}

}  // namespace haloshift::detail

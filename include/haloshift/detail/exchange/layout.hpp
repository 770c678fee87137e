// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file layout.hpp
/// @brief Where each block a rank ever holds lives in its one halo buffer.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "../checked_size.hpp"
#include "../../grid/grid_shape.hpp"
#include "../../grid/neighborhood.hpp"
#include "../../grid/offset.hpp"
#include "../../grid/offset_box.hpp"

namespace haloshift::detail {

/// One block in the halo buffer: the offset it was imported from, the box's
/// owner and periodic image, and where its elements lie.
struct block_slot {
  offset off;
  neighbor source;
  std::size_t count = 0;  ///< elements
  std::size_t first = 0;  ///< index of the first element in the buffer
  bool visible = false;   ///< inside the requested range (not a strategy's transit block)
};

/// Where the own block goes in the buffer.
enum class own_place {
  canonical,  ///< in canonical order with the others (block mode: Shift's rows and planes stay contiguous)
  first,      ///< at the start, the imported blocks after it (selective payloads: owned elements, then ghosts)
};

/// All blocks of one rank, own block included. Slots are numbered in canonical
/// offset order; in the buffer they follow that order too (so rows and planes
/// of offsets are contiguous ranges), except that `own_place::first` puts the
/// own block at the start.
class block_layout {
 public:
  block_layout() = default;

  /// `held`: every offset the rank holds at some point (0 included), `count`
  /// gives each one's element count, `wanted` the user's range.
  template <class CountOf>
  block_layout(const grid_shape& grid, const offset& coords, std::vector<offset> held, const range& wanted,
               CountOf count, own_place place = own_place::canonical) {
    std::sort(held.begin(), held.end(), detail::canonical_order{});
    box_.lo = box_.hi = zero_offset;
    for (const offset& o : held)
      for (int d = 0; d < max_dims; ++d) {
        box_.lo[d] = std::min(box_.lo[d], o[d]);
        box_.hi[d] = std::max(box_.hi[d], o[d]);
      }
    index_.assign(box_.volume(), -1);
    std::size_t next = place == own_place::first ? count(zero_offset) : 0;
    for (const offset& o : held) {
      const bool own_at_start = place == own_place::first && o == zero_offset;
      block_slot s{o, *grid.neighbor_at(coords, o), count(o), own_at_start ? 0 : next,
                   o != zero_offset && contains(wanted, o)};
      if (!own_at_start) next = checked_add(next, s.count, "halo size (elements)");
      index_[box_.index(o)] = static_cast<int>(slots_.size());
      if (o == zero_offset) own_ = static_cast<int>(slots_.size());
      if (s.visible) ++visible_;
      slots_.push_back(s);
    }
    total_ = next;
  }

  const std::vector<block_slot>& slots() const noexcept { return slots_; }
  /// Slot index of offset `o`, or -1 when the rank never holds it.
  int find(const offset& o) const noexcept { return box_.contains(o) ? index_[box_.index(o)] : -1; }
  int own() const noexcept { return own_; }
  std::size_t total() const noexcept { return total_; }
  std::size_t visible_blocks() const noexcept { return visible_; }

 private:
  std::vector<block_slot> slots_;
  std::vector<int> index_;
  detail::offset_box box_;  ///< spans every held offset
  int own_ = -1;
  std::size_t total_ = 0;
  std::size_t visible_ = 0;
};

}  // namespace haloshift::detail

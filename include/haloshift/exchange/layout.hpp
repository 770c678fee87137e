#pragma once
/// @file layout.hpp
/// @brief Where each block a rank ever holds lives in its one halo buffer.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "../grid/grid_shape.hpp"
#include "../grid/neighborhood.hpp"
#include "../grid/offset.hpp"

namespace haloshift {

/// One block in the halo buffer: the offset it was imported from, the box's
/// owner and periodic image, and where its elements lie.
struct block_slot {
  offset off;
  neighbor source;
  std::size_t count = 0;  ///< elements
  std::size_t first = 0;  ///< index of the first element in the buffer
  bool visible = false;   ///< inside the requested range (not a strategy's transit block)
};

/// All blocks of one rank, own block included, in canonical offset order, so
/// rows and planes of offsets are contiguous ranges of the buffer.
class block_layout {
 public:
  block_layout() = default;

  /// `held`: every offset the rank holds at some point (0 included), `count`
  /// gives each one's element count, `wanted` the user's range.
  template <class CountOf>
  block_layout(const grid_shape& grid, const offset& coords, std::vector<offset> held, const range& wanted,
               CountOf count) {
    std::sort(held.begin(), held.end(), canonical_order{});
    lo_ = hi_ = zero_offset;
    for (const offset& o : held)
      for (int d = 0; d < max_dims; ++d) {
        lo_[d] = std::min(lo_[d], o[d]);
        hi_[d] = std::max(hi_[d], o[d]);
      }
    index_.assign(extent(), -1);
    std::size_t next = 0;
    for (const offset& o : held) {
      block_slot s{o, *grid.neighbor_at(coords, o), count(o), next, o != zero_offset && contains(wanted, o)};
      next += s.count;
      index_[linear(o)] = static_cast<int>(slots_.size());
      if (o == zero_offset) own_ = static_cast<int>(slots_.size());
      if (s.visible) ++visible_;
      slots_.push_back(s);
    }
    total_ = next;
  }

  const std::vector<block_slot>& slots() const noexcept { return slots_; }
  /// Slot index of offset `o`, or -1 when the rank never holds it.
  int find(const offset& o) const noexcept {
    for (int d = 0; d < max_dims; ++d)
      if (o[d] < lo_[d] || o[d] > hi_[d]) return -1;
    return index_[linear(o)];
  }
  int own() const noexcept { return own_; }
  std::size_t total() const noexcept { return total_; }
  std::size_t visible_blocks() const noexcept { return visible_; }

 private:
  std::size_t extent() const noexcept {
    std::size_t n = 1;
    for (int d = 0; d < max_dims; ++d) n *= static_cast<std::size_t>(hi_[d] - lo_[d] + 1);
    return n;
  }
  std::size_t linear(const offset& o) const noexcept {
    std::size_t i = 0;
    for (int d = max_dims - 1; d >= 0; --d)
      i = i * static_cast<std::size_t>(hi_[d] - lo_[d] + 1) + static_cast<std::size_t>(o[d] - lo_[d]);
    return i;
  }

  std::vector<block_slot> slots_;
  std::vector<int> index_;
  offset lo_{0, 0, 0}, hi_{0, 0, 0};
  int own_ = -1;
  std::size_t total_ = 0;
  std::size_t visible_ = 0;
};

}  // namespace haloshift

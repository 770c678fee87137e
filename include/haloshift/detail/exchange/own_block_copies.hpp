// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file own_block_copies.hpp
/// @brief The copies a block plan's exchange of a halo in a device space makes
/// besides its program's, run by the space's executor since the host may not
/// touch either side: the caller's own block into its slot of the halo (forward
/// and reverse), back out of it (reverse's last step), and the transit slots
/// (TeamShift's blocks beyond the range) set to the reduction's identity
/// before a reverse. One segment table in executor memory, uploaded on a
/// plan's first such exchange, three launches over it.

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../../error.hpp"
#include "../batch/batch_cache.hpp"
#include "layout.hpp"

namespace haloshift::detail {

/// The launches of a plan's own copies over their table. Bases: 0 the halo's buffer, 1 the
/// caller's own array, 2 the identity's cell.
struct own_copy_launches {
  batch::launch in, out, fill;
  std::size_t segments = 0;
};

/// The own copies of `layout` for elements of `T`: counted, and appended to `table` when given
/// (counting alone allocates nothing: every exchange does it).
template <class T>
own_copy_launches own_copy_segments(const block_layout& layout, std::vector<batch::segment>* table) {
  // A power of two that divides sizeof(T), every offset below and every base (aligned for T).
  constexpr std::uint32_t word = static_cast<std::uint32_t>(std::min<std::size_t>(8, alignof(T)));
  constexpr std::size_t eb = sizeof(T);
  own_copy_launches out;
  auto add = [&](batch::launch& l, batch::segment s) {
    s.first_word = l.words;
    l.words += std::uint64_t{s.repeat} * (s.row_bytes / word);
    ++l.count;
    ++out.segments;
    if (table) table->push_back(s);
  };
  const block_slot& own = layout.slots()[layout.own()];
  const std::size_t own_at = own.first * eb, bytes = own.count * eb;
  // A segment's row holds at most UINT32_MAX bytes: a larger block goes as rows of `row` bytes and a rest.
  constexpr std::size_t row = UINT32_MAX / eb * eb;
  auto contiguous = [&](batch::launch& l, std::uint16_t from_base, std::size_t from, std::uint16_t to_base,
                        std::size_t to) {
    l.first = out.segments;
    l.word_bytes = word;
    const std::size_t rows = bytes / row, rest = bytes % row;
    const auto at = [](std::size_t v) { return static_cast<std::int64_t>(v); };
    if (rows)
      add(l, {.from = at(from),
              .to = at(to),
              .from_stride = at(row),
              .to_stride = at(row),
              .row_bytes = static_cast<std::uint32_t>(row),
              .repeat = static_cast<std::uint32_t>(rows),
              .from_base = from_base,
              .to_base = to_base});
    if (rest)
      add(l, {.from = at(from + rows * row),
              .to = at(to + rows * row),
              .row_bytes = static_cast<std::uint32_t>(rest),
              .repeat = 1,
              .from_base = from_base,
              .to_base = to_base});
  };
  contiguous(out.in, 1, 0, 0, own_at);
  contiguous(out.out, 0, own_at, 1, 0);
  out.fill.first = out.segments;
  out.fill.word_bytes = word;
  const auto& slots = layout.slots();
  for (std::size_t s = 0; s < slots.size(); ++s) {
    if (slots[s].visible || static_cast<int>(s) == layout.own() || !slots[s].count) continue;
    if (slots[s].count > UINT32_MAX)
      throw error("reverse: a transit block of " + std::to_string(slots[s].count) +
                  " elements exceeds what a device launch fills (UINT32_MAX)");
    // Every element of the slot from the one identity cell (a source stride of 0).
    add(out.fill, {.to = static_cast<std::int64_t>(slots[s].first * eb),
                   .to_stride = static_cast<std::int64_t>(eb),
                   .row_bytes = static_cast<std::uint32_t>(eb),
                   .repeat = static_cast<std::uint32_t>(slots[s].count),
                   .from_base = 2,
                   .to_base = 0});
  }
  return out;
}

/// A block plan's own copies through the executor of `cache`, for one exchange.
template <class T>
class own_block_copies {
 public:
  /// Finds the table in `cache` (uploading it on first use) and counts the launches.
  own_block_copies(batch::batch_cache& cache, const block_layout& layout)
      : exec_(&cache.exec()), launches_(own_copy_segments<T>(layout, nullptr)) {
    static constexpr char key = 0;  // one table per plan (the cache is the plan's) and element type
    const std::size_t table_bytes = launches_.segments * sizeof(batch::segment);
    bool fresh = false;
    std::byte* memory = cache.scratch(&key, table_bytes + identity_bytes, fresh);
    table_ = reinterpret_cast<const batch::segment*>(memory);
    identity_ = memory + table_bytes;  // sizeof(segment) is a multiple of 8: aligned for any arithmetic T
    if (fresh && table_bytes) {
      std::vector<batch::segment> table;
      own_copy_segments<T>(layout, &table);
      exec_->upload(memory, table.data(), table_bytes);
    }
  }

  /// Enqueues the caller's own block (`own`) into its slot of `buffer` (on `stream`, null: the executor's).
  void copy_in(const T* own, T* buffer, void* stream) const { run(launches_.in, buffer, own, stream); }
  /// Enqueues every transit slot of `buffer` set to `identity` (uploaded now: nothing pending reads the cell).
  void fill_transit(T* buffer, const T& identity, void* stream) const {
    if (!launches_.fill.count) return;
    exec_->upload(identity_, &identity, sizeof(T));
    run(launches_.fill, buffer, nullptr, stream);
  }
  /// Enqueues the own slot of `buffer` back into `own`; waits for it unless stream-ordered.
  void copy_out(const T* buffer, T* own, void* stream) const {
    run(launches_.out, buffer, own, stream);
    if (!stream) exec_->synchronize();
  }
  /// Waits for what was enqueued (an exchange with no round to end with a wait of its own).
  void synchronize() const { exec_->synchronize(); }

 private:
  static constexpr std::size_t identity_bytes = (sizeof(T) + 7) / 8 * 8;

  void run(const batch::launch& l, const T* buffer, const T* own, void* stream) const {
    exec_->use_stream(stream);
    if (!l.count) return;
    batch::bases b;
    b.at[0] = reinterpret_cast<std::byte*>(const_cast<T*>(buffer));
    b.at[1] = reinterpret_cast<std::byte*>(const_cast<T*>(own));
    b.at[2] = identity_;
    exec_->run(table_, l, b);
  }

  batch::executor* exec_;
  own_copy_launches launches_;
  const batch::segment* table_ = nullptr;
  std::byte* identity_ = nullptr;
};

/// A reverse's last step in a device space: the combined own block back into the caller's array.
template <class T>
struct own_block_out {
  own_block_copies<T> copies;
  const T* buffer;  ///< the halo's whole buffer
  T* to;
  void* stream;
  void operator()() const { copies.copy_out(buffer, to, stream); }
};

}  // namespace haloshift::detail

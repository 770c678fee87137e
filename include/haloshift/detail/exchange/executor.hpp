// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file executor.hpp
/// @brief The copies a compiled schedule needs around its messages: packing
/// selected pieces and strided rows into consecutive staging, unpacking, and
/// pairing the blocks of a transfer to the rank itself. exchange_run.hpp runs
/// the rounds.

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <type_traits>
#include <vector>

#include "../mpi/check.hpp"
#include "program.hpp"
#include "strided_rows.hpp"
#include "../../exchange/protocol.hpp"

namespace haloshift::detail {


/// Calls `run(first, count)` for each range of the buffer that message `m`
/// carries, in message order: its one range, its selected pieces, or its slots.
template <class Run>
void for_each_run(const block_layout& layout, const message& m, Run&& run) {
  if (m.contiguous) {
    if (m.count) run(m.first, m.count);
    return;
  }
  if (!m.list.empty()) {
    for (std::uint32_t e : m.list) run(std::size_t{e}, std::size_t{1});
    return;
  }
  if (m.selected) {
    for (const element_run& r : m.pieces) run(r.first, r.count);
    return;
  }
  for (int s : m.slots) run(layout.slots()[s].first, layout.slots()[s].count);
}

/// Walks the ranges a message carries one at a time (see for_each_run),
/// without allocating: pairs the two sides of a copy to the rank itself.
class run_cursor {
 public:
  run_cursor(const block_layout& layout, const message& m) : layout_(layout), m_(m) {}
  /// The next non-empty range, or a range of count 0 at the end.
  element_run next() {
    if (m_.contiguous) return i_++ == 0 ? element_run{m_.first, m_.count} : element_run{};
    if (m_.selected) return i_ < m_.pieces.size() ? m_.pieces[i_++] : element_run{};
    while (i_ < m_.slots.size()) {
      const block_slot& b = layout_.slots()[m_.slots[i_++]];
      if (b.count) return {b.first, b.count};
    }
    return {};
  }

 private:
  const block_layout& layout_;
  const message& m_;
  std::size_t i_ = 0;
};

/// Packs (`Pack`) or unpacks the selected pieces of a message, group by group.
template <bool Pack, class Cell, class Packed>
void copy_selected(const message& m, Cell* buffer, Packed* packed) {
  using T = std::remove_const_t<Cell>;
  if (!m.list.empty()) {  // a send list: one element per index, a fixed-size copy each
    for (std::uint32_t e : m.list) {
      if constexpr (Pack)
        std::memcpy(packed, buffer + e, sizeof(T));
      else
        std::memcpy(buffer + e, packed, sizeof(T));
      packed += sizeof(T);
    }
    return;
  }
  for (const strided_run& g : m.strided) {
    const std::size_t bytes = g.count * sizeof(T);
    const auto stride = static_cast<std::ptrdiff_t>(g.stride * sizeof(T));
    const auto packed_stride = static_cast<std::ptrdiff_t>(bytes);  // the packed side: consecutive, unaligned
    if constexpr (Pack)
      copy_strided_rows(packed, buffer + g.first, bytes, g.repeat, packed_stride, stride);
    else
      copy_strided_rows(buffer + g.first, packed, bytes, g.repeat, stride, packed_stride);
    packed += bytes * g.repeat;
  }
}

/// Packs the elements of `buffer` that message `m` carries into the bytes at `out`, in message order.
template <class T>
void gather(const block_layout& layout, const message& m, const T* buffer, std::byte* out) {
  if (m.contiguous) {
    if (m.count) std::memcpy(out, buffer + m.first, m.count * sizeof(T));  // never memcpy a null pointer
    return;
  }
  if (m.selected) return copy_selected<true>(m, buffer, out);
  for (int s : m.slots) {
    const block_slot& b = layout.slots()[s];
    if (b.count) std::memcpy(out, buffer + b.first, b.count * sizeof(T));
    out += b.count * sizeof(T);
  }
}
template <class T>
  requires(!std::is_same_v<T, std::byte>)
void gather(const block_layout& layout, const message& m, const T* buffer, T* out) {
  gather(layout, m, buffer, reinterpret_cast<std::byte*>(out));
}

/// Unpacks message `m` from the bytes at `in` into the elements of `buffer` it carries.
template <class T>
void scatter(const block_layout& layout, const message& m, const std::byte* in, T* buffer) {
  if (m.contiguous) {
    if (m.count) std::memcpy(buffer + m.first, in, m.count * sizeof(T));
    return;
  }
  if (m.selected) return copy_selected<false>(m, buffer, in);
  for (int s : m.slots) {
    const block_slot& b = layout.slots()[s];
    if (b.count) std::memcpy(buffer + b.first, in, b.count * sizeof(T));
    in += b.count * sizeof(T);
  }
}
template <class T>
  requires(!std::is_same_v<T, std::byte>)
void scatter(const block_layout& layout, const message& m, const T* in, T* buffer) {
  scatter(layout, m, reinterpret_cast<const std::byte*>(in), buffer);
}

/// Applies `per_block(source slot, target slot)` to the blocks of a transfer to the rank itself:
/// the i-th block sent is the i-th block received (same owner, same size).
/// When both sides are contiguous (always for Shift) the blocks pair up as one range.
template <class PerBlock>
void pair_blocks(const block_layout& layout, const message& from, const message& to, PerBlock&& per_block) {
  if (from.contiguous && to.contiguous) return per_block(block_slot{{}, {}, from.count, from.first, false},
                                                         block_slot{{}, {}, to.count, to.first, false});
  if (from.selected || to.selected) {  // selective: pair the two element sequences run by run
    run_cursor a(layout, from), b(layout, to);
    element_run x = a.next(), y = b.next();
    while (x.count && y.count) {
      const std::size_t n = std::min(x.count, y.count);
      per_block(block_slot{{}, {}, n, x.first, false}, block_slot{{}, {}, n, y.first, false});
      x = x.count == n ? a.next() : element_run{x.first + n, x.count - n};
      y = y.count == n ? b.next() : element_run{y.first + n, y.count - n};
    }
    return;
  }
  for (std::size_t i = 0; i < from.slots.size(); ++i)
    per_block(layout.slots()[from.slots[i]], layout.slots()[to.slots[i]]);
}

/// Whether two selected messages are groups of runs of the same lengths and repeats, in order.
inline bool alike_groups(const message& from, const message& to) {
  if (!from.selected || !to.selected || from.strided.empty() || from.strided.size() != to.strided.size())
    return false;
  for (std::size_t g = 0; g < from.strided.size(); ++g)
    if (from.strided[g].count != to.strided[g].count || from.strided[g].repeat != to.strided[g].repeat) return false;
  return true;
}

/// `count` elements of a transfer to the rank itself, listed on one side: element `list[k]` to
/// `first + k` (`listed_from`), or `first + k` to `list[k]`, each by `one(a, b)`.
template <class One>
void each_listed(const std::uint32_t* list, bool listed_from, std::size_t first, std::size_t count, One&& one) {
  if (listed_from)
    for (std::size_t k = 0; k < count; ++k) one(list[k], first + k);
  else
    for (std::size_t k = 0; k < count; ++k) one(first + k, list[k]);
}

/// A transfer to the rank itself: element `a` to `b` by `one(a, b)`, a run by `runs(a, b, count)`;
/// `prefetch(a, b)` asks for elements a few single-cell copies ahead. `groups(from group, to group)`,
/// where it returns true, has copied two alike strided groups whole (data in bytes, field_segments:
/// one call per group, not per cell); `whole_runs`: the data copies a short run as one run.
/// `listed(list, listed_from, first, count)` copies a run against a send list (each_listed).
template <class One, class Runs, class Prefetch, class Groups, class Listed>
void copy_to_self(const block_layout& layout, const message& from, const message& to, One&& one, Runs&& runs,
                  Prefetch&& prefetch, Groups&& groups, bool whole_runs, Listed&& listed) {
  // A send list on either side (a particle transfer to the rank itself): element by element in
  // one pass, as LAMMPS copies its own periodic images, the other side walked run by run, each
  // run one call (the data's own loop keeps its pointers in registers: its byte copies could
  // alias a counter kept across calls).
  if (!from.list.empty() || !to.list.empty()) {
    const bool listed_from = !from.list.empty();
    const std::uint32_t* list = listed_from ? from.list.data() : to.list.data();
    for_each_run(layout, listed_from ? to : from, [&](std::size_t first, std::size_t count) {
      listed(list, listed_from, first, count);
      list += count;
    });
    return;
  }
  // Grid faces (a periodic dimension of one box): both sides are the same strided groups, copied
  // group by group; a group of single cells (an x face) as plain assignments, not a memcpy call each.
  // Short runs (x faces 1-4 cells wide) lie a row apart, often a page or more: each is a cache (and
  // TLB) miss, so the run `ahead` rows on is asked for while this one copies, cell by cell (a memcpy
  // call of a few bytes costs more than the copy).
  if (alike_groups(from, to)) {
    constexpr std::size_t ahead = 8;
    const std::size_t short_run = whole_runs ? 32 : 4;  // elements, or bytes
    for (std::size_t g = 0; g < from.strided.size(); ++g) {
      const strided_run &a = from.strided[g], &b = to.strided[g];
      if (groups(a, b)) continue;
      for (std::size_t r = 0; r < a.repeat; ++r) {
        const std::size_t x = a.first + r * a.stride, y = b.first + r * b.stride;
        if (a.count > short_run) {
          runs(x, y, a.count);
          continue;
        }
        if (r + ahead < a.repeat) prefetch(x + ahead * a.stride, y + ahead * b.stride);
        if (whole_runs)  // data in bytes (field_segments): a short run is one value, copied whole
          runs(x, y, a.count);
        else
          for (std::size_t e = 0; e < a.count; ++e) one(x + e, y + e);
      }
    }
    return;
  }
  pair_blocks(layout, from, to, [&](const block_slot& a, const block_slot& b) { runs(a.first, b.first, a.count); });
}

/// copy_to_self of data that copies element by element (every caller but the exchange's own).
template <class One, class Runs, class Prefetch>
void copy_to_self(const block_layout& layout, const message& from, const message& to, One&& one, Runs&& runs,
                  Prefetch&& prefetch) {
  copy_to_self(
      layout, from, to, one, std::forward<Runs>(runs), std::forward<Prefetch>(prefetch),
      [](const strided_run&, const strided_run&) { return false; }, false,
      [&](const std::uint32_t* list, bool listed_from, std::size_t first, std::size_t count) {
        each_listed(list, listed_from, first, count, one);
      });
}

}  // namespace haloshift::detail

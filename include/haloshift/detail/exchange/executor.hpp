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
#include <type_traits>
#include <vector>

#include "../mpi/check.hpp"
#include "program.hpp"
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

/// `repeat` rows of `bytes` bytes (at least 32) from `from` to `to`, advancing
/// by the given strides. A row is copied in vector moves of a compile-time
/// size (`Chunk`: 64 bytes with AVX-512, 32 with AVX2, 16 otherwise, picked at
/// run time) plus one last, overlapping move for the tail: a handful of loads
/// and stores, not a memcpy call, whose per-call cost halved the speed of
/// 272-byte rows (a y face of a 32^3 box). `Prefetch` names the side that
/// strides (the cells; the packed side is consecutive): its next row is
/// prefetched while this one copies, for rows spread too far apart to be in
/// cache, which the hardware prefetcher does not follow (they lie pages
/// apart). In cache the prefetches only take load slots, so they are off
/// there.
template <int Prefetch>  // 0: none, 1: the source strides, 2: the target strides
struct long_rows {
  /// The loop itself, written once. Always inlined: each ISA's function below
  /// compiles it with its own vector moves (a function of the default target
  /// may be inlined into an AVX one, and the fixed-size copies are expanded
  /// there, after inlining).
  template <std::size_t Chunk>
  [[gnu::always_inline]] static inline void rows(char* to, const char* from, std::size_t bytes, std::size_t repeat,
                                                 std::size_t to_stride, std::size_t from_stride) {
    for (std::size_t r = 0; r < repeat; ++r, to += to_stride, from += from_stride) {
      if (Prefetch != 0 && r + 1 < repeat)
        for (std::size_t b = 0; b < bytes; b += 64) {
          if (Prefetch == 1) __builtin_prefetch(from + from_stride + b, 0);
          if (Prefetch == 2) __builtin_prefetch(to + to_stride + b, 1);
        }
      std::size_t b = 0;
      for (; b + Chunk <= bytes; b += Chunk) __builtin_memcpy(to + b, from + b, Chunk);
      if (b < bytes) __builtin_memcpy(to + bytes - Chunk, from + bytes - Chunk, Chunk);
    }
  }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  /// The same with 256-bit and 512-bit moves, chosen at run time: the header needs no -m flags.
  __attribute__((target("avx2"))) static void avx2(char* to, const char* from, std::size_t bytes,
                                                   std::size_t repeat, std::size_t to_stride,
                                                   std::size_t from_stride) {
    rows<32>(to, from, bytes, repeat, to_stride, from_stride);
  }
  __attribute__((target("avx512f"))) static void avx512(char* to, const char* from, std::size_t bytes,
                                                        std::size_t repeat, std::size_t to_stride,
                                                        std::size_t from_stride) {
    if (bytes < 64) return avx2(to, from, bytes, repeat, to_stride, from_stride);
    rows<64>(to, from, bytes, repeat, to_stride, from_stride);
  }
#endif
  static void copy(char* to, const char* from, std::size_t bytes, std::size_t repeat, std::size_t to_stride,
                   std::size_t from_stride) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static const bool has_avx512 = __builtin_cpu_supports("avx512f");
    static const bool has_avx2 = __builtin_cpu_supports("avx2");
    if (has_avx512) return avx512(to, from, bytes, repeat, to_stride, from_stride);
    if (has_avx2) return avx2(to, from, bytes, repeat, to_stride, from_stride);
#endif
    rows<16>(to, from, bytes, repeat, to_stride, from_stride);
  }
};

/// Rows spread over more than this many bytes are taken to be out of cache (about an L2).
inline constexpr std::size_t prefetch_span = std::size_t{2} << 20;

/// Copies the rows of strided run `g` between the buffer at `cells` and the
/// consecutive bytes at `packed`; `Pack` gathers into `packed`, otherwise
/// scatters. `Bytes`, when not 0, is the row size known at compile time:
/// single cells (x faces) then copy as plain loads and stores, not one memcpy
/// call each. The packed side is bytes with no alignment assumed: a message of
/// several arrays packs each after the previous one's elements.
template <std::size_t Bytes, bool Pack, class Cell, class Packed>
void copy_rows(const strided_run& g, Cell* cells, Packed* packed) {
  static_assert(sizeof(Packed) == 1, "the packed side is bytes");
  const std::size_t bytes = Bytes ? Bytes : g.count * sizeof(*cells);
  if (Bytes == 0 && bytes >= 32) {
    const std::size_t stride = g.stride * sizeof(*cells);
    const bool far = stride * g.repeat > prefetch_span;
    if constexpr (Pack) {
      char* to = reinterpret_cast<char*>(packed);
      const char* from = reinterpret_cast<const char*>(cells);
      return far ? long_rows<1>::copy(to, from, bytes, g.repeat, bytes, stride)
                 : long_rows<0>::copy(to, from, bytes, g.repeat, bytes, stride);
    } else {
      char* to = reinterpret_cast<char*>(cells);
      const char* from = reinterpret_cast<const char*>(packed);
      return far ? long_rows<2>::copy(to, from, bytes, g.repeat, stride, bytes)
                 : long_rows<0>::copy(to, from, bytes, g.repeat, stride, bytes);
    }
  }
  for (std::size_t r = 0; r < g.repeat; ++r) {
    Cell* c = cells + r * g.stride;
    Packed* p = packed + r * bytes;
    if constexpr (Pack)
      std::memcpy(p, c, bytes);
    else
      std::memcpy(c, p, bytes);
  }
}

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
    if (g.count == 1)
      copy_rows<sizeof(T), Pack>(g, buffer + g.first, packed);
    else if (bytes == 8)  // a double or int64 of a field bundle's byte program
      copy_rows<8, Pack>(g, buffer + g.first, packed);
    else if (bytes == 4)
      copy_rows<4, Pack>(g, buffer + g.first, packed);
    else if (bytes == 16)  // x faces 2 and 3 doubles wide: fixed-size moves, not a memcpy call per row
      copy_rows<16, Pack>(g, buffer + g.first, packed);
    else if (bytes == 24)
      copy_rows<24, Pack>(g, buffer + g.first, packed);
    else
      copy_rows<0, Pack>(g, buffer + g.first, packed);
    packed += g.count * g.repeat * sizeof(T);
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

/// A transfer to the rank itself: element `a` to `b` by `one(a, b)`, a run by `runs(a, b, count)`;
/// `prefetch(a, b)` asks for elements a few single-cell copies ahead.
template <class One, class Runs, class Prefetch>
void copy_to_self(const block_layout& layout, const message& from, const message& to, One&& one, Runs&& runs,
                  Prefetch&& prefetch) {
  // A send list on either side (a particle transfer to the rank itself): element by element in
  // one pass, as LAMMPS copies its own periodic images, the other side walked run by run.
  if (!from.list.empty() || !to.list.empty()) {
    const bool listed_from = !from.list.empty();
    std::size_t i = 0;
    for_each_run(layout, listed_from ? to : from, [&](std::size_t first, std::size_t count) {
      for (std::size_t k = 0; k < count; ++k, ++i)
        listed_from ? one(from.list[i], first + k) : one(first + k, to.list[i]);
    });
    return;
  }
  // Grid faces (a periodic dimension of one box): both sides are the same strided groups, copied
  // group by group; a group of single cells (an x face) as plain assignments, not a memcpy call each.
  // Short runs (x faces 1-4 cells wide) lie a row apart, often a page or more: each is a cache (and
  // TLB) miss, so the run `ahead` rows on is asked for while this one copies, cell by cell (a memcpy
  // call of a few bytes costs more than the copy).
  if (alike_groups(from, to)) {
    constexpr std::size_t ahead = 8, short_run = 4;
    for (std::size_t g = 0; g < from.strided.size(); ++g) {
      const strided_run &a = from.strided[g], &b = to.strided[g];
      for (std::size_t r = 0; r < a.repeat; ++r) {
        const std::size_t x = a.first + r * a.stride, y = b.first + r * b.stride;
        if (a.count > short_run) {
          runs(x, y, a.count);
          continue;
        }
        if (r + ahead < a.repeat) prefetch(x + ahead * a.stride, y + ahead * b.stride);
        for (std::size_t e = 0; e < a.count; ++e) one(x + e, y + e);
      }
    }
    return;
  }
  pair_blocks(layout, from, to, [&](const block_slot& a, const block_slot& b) { runs(a.first, b.first, a.count); });
}

}  // namespace haloshift::detail

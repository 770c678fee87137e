// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file host_run.hpp
/// @brief A launch run on the host: the loop the host-thread and
/// emulated-device executors share, over a range of the launch's words so
/// that threads can split one launch evenly (the CUDA kernel maps one thread
/// to a word the same way).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../compiled.hpp"
#include "../exchange/strided_rows.hpp"
#include "segment.hpp"

namespace haloshift::detail::batch {

/// Combines one element at `to` with the one at `from`.
template <class T>
inline void combine_element(std::byte* to, const std::byte* from, batch_op op) {
  T a, b;
  std::memcpy(&a, to, sizeof(T));
  std::memcpy(&b, from, sizeof(T));
  switch (op) {
    case batch_op::plus: a = static_cast<T>(a + b); break;
    case batch_op::min: a = b < a ? b : a; break;
    case batch_op::max: a = a < b ? b : a; break;
    case batch_op::copy: a = b; break;
    case batch_op::shift: {  // the source is a double (rows of one element: `from` is its row's)
      double by;
      std::memcpy(&by, from, sizeof by);
      a = static_cast<T>(static_cast<double>(a) + by);
      break;
    }
  }
  std::memcpy(to, &a, sizeof(T));
}

/// Combines `repeat` rows of `bytes` bytes of elements of kind `k` (strides as in
/// copy_strided_rows): the element type is picked once, not per row (an x face's rows are one
/// element each).
HALOSHIFT_BUILDER void combine_rows(std::byte* to, const std::byte* from, std::size_t bytes, std::size_t repeat,
                                    std::ptrdiff_t to_stride, std::ptrdiff_t from_stride, scalar_kind k, batch_op op);
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER void combine_rows(std::byte* to, const std::byte* from, std::size_t bytes, std::size_t repeat,
                                    std::ptrdiff_t to_stride, std::ptrdiff_t from_stride, scalar_kind k, batch_op op) {
  auto each = [&]<class T>(T*) {
    for (std::size_t r = 0; r < repeat; ++r, to += to_stride, from += from_stride)
      for (std::size_t b = 0; b < bytes; b += sizeof(T)) combine_element<T>(to + b, from + b, op);
  };
  switch (k) {
    case scalar_kind::f32: return each(static_cast<float*>(nullptr));
    case scalar_kind::f64: return each(static_cast<double*>(nullptr));
    case scalar_kind::i8: return each(static_cast<std::int8_t*>(nullptr));
    case scalar_kind::i16: return each(static_cast<std::int16_t*>(nullptr));
    case scalar_kind::i32: return each(static_cast<std::int32_t*>(nullptr));
    case scalar_kind::i64: return each(static_cast<std::int64_t*>(nullptr));
    case scalar_kind::u8: return each(static_cast<std::uint8_t*>(nullptr));
    case scalar_kind::u16: return each(static_cast<std::uint16_t*>(nullptr));
    case scalar_kind::u32: return each(static_cast<std::uint32_t*>(nullptr));
    case scalar_kind::u64: return each(static_cast<std::uint64_t*>(nullptr));
    case scalar_kind::none: return copy_strided_rows(to, from, bytes, repeat, to_stride, from_stride);
  }
}
#endif

/// Rows `[r, r + repeat)` of segment `g`, from byte `at` of each row on, `bytes` bytes of each.
inline void run_rows(const segment& g, const launch& l, const bases& b, std::uint64_t r, std::uint64_t repeat,
                     std::uint64_t at, std::uint64_t bytes) {
  if (repeat == 0 || bytes == 0) return;
  const auto row = static_cast<std::int64_t>(r), offset = static_cast<std::int64_t>(at);
  std::byte* to = b.at[g.to_base] + (g.to + row * g.to_stride + offset);
  const std::byte* from = b.at[g.from_base] + (g.from + row * g.from_stride + offset);
  if (l.op == batch_op::copy)
    copy_strided_rows(to, from, bytes, repeat, g.to_stride, g.from_stride);
  else
    combine_rows(to, from, bytes, repeat, g.to_stride, g.from_stride, l.scalar, l.op);
}

/// The segment holding word `w` of a launch: the last whose first_word is at most `w`.
inline std::size_t segment_of(const segment* table, const launch& l, std::uint64_t w) {
  const segment* first = table + l.first;
  const segment* s = std::upper_bound(first, first + l.count, w,
                                      [](std::uint64_t word, const segment& g) { return word < g.first_word; });
  return static_cast<std::size_t>(s - first) - 1 + l.first;
}

/// Runs words `[begin, end)` of launch `l` over `table` (host memory): per segment, the part of
/// a row the range starts in, the whole rows as one strided copy (copy_strided_rows: fixed-size
/// moves, prefetching rows far apart), the part of a row it ends in.
HALOSHIFT_BUILDER void run_words(const segment* table, const launch& l, const bases& b, std::uint64_t begin,
                                 std::uint64_t end);
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER void run_words(const segment* table, const launch& l, const bases& b, std::uint64_t begin,
                                 std::uint64_t end) {
  if (begin >= end) return;
  const std::uint64_t wb = l.word_bytes;
  for (std::size_t s = segment_of(table, l, begin); s < l.first + l.count && begin < end; ++s) {
    const segment& g = table[s];
    const std::uint64_t row = g.row_bytes, words = row / wb * g.repeat;
    if (words == 0) continue;
    // The range within this segment, in bytes of its rows laid end to end.
    std::uint64_t lo = (begin - g.first_word) * wb;
    const std::uint64_t hi = std::min<std::uint64_t>(end - g.first_word, words) * wb;
    std::uint64_t r = lo / row;
    if (lo % row != 0) {  // starts mid-row
      const std::uint64_t n = std::min(row - lo % row, hi - lo);
      run_rows(g, l, b, r++, 1, lo % row, n);
      lo += n;
    }
    const std::uint64_t whole = lo < hi ? (hi - lo) / row : 0;
    run_rows(g, l, b, r, whole, 0, row);
    lo += whole * row;
    if (lo < hi) run_rows(g, l, b, r + whole, 1, 0, hi - lo);  // ends mid-row
    begin = g.first_word + hi / wb;
  }
}
#endif

/// Runs the whole launch.
inline void run_all(const segment* table, const launch& l, const bases& b) { run_words(table, l, b, 0, l.words); }

}  // namespace haloshift::detail::batch

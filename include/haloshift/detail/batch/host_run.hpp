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
  }
  std::memcpy(to, &a, sizeof(T));
}

/// Combines `n` consecutive elements of kind `k`.
inline void combine_run(std::byte* to, const std::byte* from, std::size_t bytes, scalar_kind k, batch_op op) {
  auto each = [&]<class T>(T*) {
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
    case scalar_kind::none: std::memcpy(to, from, bytes); return;
  }
}

/// The segment holding word `w` of a launch: the last whose first_word is at most `w`.
inline std::size_t segment_of(const segment* table, const launch& l, std::uint64_t w) {
  const segment* first = table + l.first;
  const segment* s = std::upper_bound(first, first + l.count, w,
                                      [](std::uint64_t word, const segment& g) { return word < g.first_word; });
  return static_cast<std::size_t>(s - first) - 1 + l.first;
}

/// Runs words `[begin, end)` of launch `l` over `table` (host memory): row by row, a row cut
/// at the range's ends.
inline void run_words(const segment* table, const launch& l, const bases& b, std::uint64_t begin,
                      std::uint64_t end) {
  if (begin >= end) return;
  const std::uint64_t wb = l.word_bytes;
  for (std::size_t s = segment_of(table, l, begin); s < l.first + l.count && begin < end; ++s) {
    const segment& g = table[s];
    const std::uint64_t row_words = g.row_bytes / wb;
    if (row_words == 0) continue;
    std::uint64_t local = begin - g.first_word;
    const std::uint64_t segment_end = std::min<std::uint64_t>(end - g.first_word, row_words * g.repeat);
    while (local < segment_end) {
      const std::uint64_t r = local / row_words, w = local % row_words;
      const std::uint64_t n = std::min(row_words - w, segment_end - local);
      std::byte* to = b.at[g.to_base] + g.to + static_cast<std::int64_t>(r) * g.to_stride + w * wb;
      const std::byte* from = b.at[g.from_base] + g.from + static_cast<std::int64_t>(r) * g.from_stride + w * wb;
      if (l.op == batch_op::copy)
        std::memcpy(to, from, n * wb);
      else
        combine_run(to, from, n * wb, l.scalar, l.op);
      local += n;
    }
    begin = g.first_word + local;
  }
}

/// Runs the whole launch.
inline void run_all(const segment* table, const launch& l, const bases& b) { run_words(table, l, b, 0, l.words); }

}  // namespace haloshift::detail::batch

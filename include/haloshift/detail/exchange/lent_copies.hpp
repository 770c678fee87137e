// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file lent_copies.hpp
/// @brief The copies of zero copy on the shared-memory path (zero_copy.hpp):
/// a receiver's copies out of a sender's array pair the sender's elements of a
/// message with its own, found once when the plan's window is built; at run
/// time a copy is a memcpy per run (or strided runs), from the sender's array
/// as this process maps it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "program.hpp"
#include "run_markers.hpp"

namespace haloshift::detail {

/// `repeat` runs of `count` elements from the sender's element `from` to this
/// rank's element `to`, each run `from_stride` and `to_stride` after the
/// previous one (a face of a field: a row per run, at each side's row pitch).
struct lent_copy {
  std::size_t from = 0, to = 0, count = 0, from_stride = 0, to_stride = 0, repeat = 1;
};

/// Appends the copy of `count` elements from `from` to `to` to `out`, joining the copies made
/// since `begin` where it continues the last one (adjacent on both sides, or one more run at the
/// same strides).
inline void add_copy(std::vector<lent_copy>& out, std::size_t begin, std::size_t from, std::size_t to,
                     std::size_t count) {
  if (out.size() > begin) {
    lent_copy& g = out.back();
    const std::size_t last_from = g.from + (g.repeat - 1) * g.from_stride;
    const std::size_t last_to = g.to + (g.repeat - 1) * g.to_stride;
    if (g.repeat == 1 && from == g.from + g.count && to == g.to + g.count) {
      g.count += count;
      return;
    }
    const bool onward = g.count == count && from > last_from && to > last_to;
    if (onward && (g.repeat == 1 || (from - last_from == g.from_stride && to - last_to == g.to_stride))) {
      g.from_stride = from - last_from;
      g.to_stride = to - last_to;
      ++g.repeat;
      return;
    }
  }
  out.push_back({from, to, count, 0, 0, 1});
}

/// Appends to `out` the copies that move one message from the sender's elements `theirs` to
/// this rank's `mine` (both its runs in message order: the i-th element sent is the i-th received).
inline void pair_runs(std::span<const element_run> theirs, std::span<const element_run> mine,
                      std::vector<lent_copy>& out) {
  const std::size_t begin = out.size();
  std::size_t a = 0, b = 0;
  element_run x = theirs.empty() ? element_run{} : theirs[0], y = mine.empty() ? element_run{} : mine[0];
  while (x.count && y.count) {
    const std::size_t n = std::min(x.count, y.count);
    add_copy(out, begin, x.first, y.first, n);
    x = x.count > n ? element_run{x.first + n, x.count - n} : (++a < theirs.size() ? theirs[a] : element_run{});
    y = y.count > n ? element_run{y.first + n, y.count - n} : (++b < mine.size() ? mine[b] : element_run{});
  }
}

/// Runs `copies` from the sender's array `from` (as mapped here) into this rank's `to`: stored
/// (forward) or combined with `op` (reverse).
template <class T, class Op>
void copy_lent(std::span<const lent_copy> copies, const T* from, T* to, [[maybe_unused]] Op& op) {
  constexpr bool combines = !std::is_same_v<Op, store_arrivals>;
  for (const lent_copy& c : copies)
    for (std::size_t r = 0; r < c.repeat; ++r) {
      const T* src = from + c.from + r * c.from_stride;
      T* dst = to + c.to + r * c.to_stride;
      if constexpr (combines) {
        for (std::size_t e = 0; e < c.count; ++e) dst[e] = op(dst[e], src[e]);
      } else if (c.count <= 4) {  // a face's short rows: assignments, not a call each
        for (std::size_t e = 0; e < c.count; ++e) dst[e] = src[e];
      } else {
        std::memcpy(dst, src, c.count * sizeof(T));
      }
    }
}

/// Runs `copies` (in elements of `element_bytes` bytes) from the sender's array `from` (as
/// mapped here) into `to`, stored: a lent message gathered into a packed buffer.
inline void gather_lent(std::span<const lent_copy> copies, const std::byte* from, std::byte* to,
                        std::size_t element_bytes) {
  for (const lent_copy& c : copies)
    for (std::size_t r = 0; r < c.repeat; ++r)
      std::memcpy(to + (c.to + r * c.to_stride) * element_bytes, from + (c.from + r * c.from_stride) * element_bytes,
                  c.count * element_bytes);
}

}  // namespace haloshift::detail

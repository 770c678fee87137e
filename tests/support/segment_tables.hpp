// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Hand-made launches of the batched executors (detail/batch/segment.hpp) over four host arrays,
// and a reference that runs a launch word by word from the definition of a segment, with none of
// the library's row loops: what detail/batch/host_run.hpp and the executors are checked against.
// Targets of one launch never overlap (as compile.hpp guarantees), so any split of its words,
// in any order, must give the reference's bytes.
#include <haloshift/detail/batch/segment.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace segment_tables {

namespace hb = haloshift::detail::batch;

/// Four arrays (bases 0 to 3: a field read, a field written, the staging packed into, the staging
/// unpacked from) and one launch over them.
struct launch_case {
  std::vector<std::vector<std::byte>> arrays;
  std::vector<hb::segment> table;
  hb::launch l;
  hb::bases b() {
    hb::bases out;
    for (std::size_t i = 0; i < arrays.size(); ++i) out.at[i] = arrays[i].data();
    return out;
  }
};

/// How a case is drawn: element size, operation, the row lengths (in words) to draw from.
struct recipe {
  std::uint32_t word_bytes = 8;
  hb::batch_op op = hb::batch_op::copy;
  hb::scalar_kind scalar = hb::scalar_kind::none;
  std::vector<std::uint32_t> row_words{1, 2, 3, 5, 6, 7, 12, 13, 33};
  int segments = 12;
  std::uint32_t max_repeat = 9;
  std::int64_t max_gap_words = 40;  ///< extra words between rows, on a strided side
};

/// Small integer values in every element of the kind (no NaN: min and max are then exact).
inline void fill(std::vector<std::byte>& a, hb::scalar_kind k, std::uint32_t word_bytes, std::mt19937& rng) {
  std::uniform_int_distribution<int> value(-100, 100);
  for (std::size_t at = 0; at + word_bytes <= a.size(); at += word_bytes) {
    const int v = value(rng);
    auto put = [&](auto x) { std::memcpy(a.data() + at, &x, sizeof x); };
    switch (k) {
      case hb::scalar_kind::f32: put(static_cast<float>(v) * 0.5f); break;
      case hb::scalar_kind::f64: put(static_cast<double>(v) * 0.25); break;
      case hb::scalar_kind::i8: case hb::scalar_kind::u8: put(static_cast<std::int8_t>(v)); break;
      case hb::scalar_kind::i16: case hb::scalar_kind::u16: put(static_cast<std::int16_t>(v * 300)); break;
      case hb::scalar_kind::i32: case hb::scalar_kind::u32: put(static_cast<std::int32_t>(v * 70000)); break;
      case hb::scalar_kind::i64: case hb::scalar_kind::u64: put(std::int64_t{v} * 1000000007); break;
      default: for (std::uint32_t i = 0; i < word_bytes; ++i) a[at + i] = static_cast<std::byte>(rng()); break;
    }
  }
}

/// A random launch: each segment packs (field -> staging), unpacks (staging -> field) or copies
/// field to field, both sides strided or consecutive, sources anywhere (a negative stride now and
/// then), targets in disjoint places.
inline launch_case draw(const recipe& r, std::mt19937& rng) {
  launch_case c;
  const std::int64_t wb = r.word_bytes;
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  std::int64_t target_end[4] = {};  // targets go one after the other in each array
  struct draft {
    hb::segment s;
    std::int64_t from_extent;
  };
  std::vector<draft> drafts;
  for (int i = 0; i < r.segments; ++i) {
    hb::segment s;
    const std::int64_t row = wb * r.row_words[static_cast<std::size_t>(pick(0, std::ssize(r.row_words) - 1))];
    s.row_bytes = static_cast<std::uint32_t>(row);
    s.repeat = static_cast<std::uint32_t>(pick(1, r.max_repeat));
    const int kind = static_cast<int>(pick(0, 2));  // 0 pack, 1 unpack, 2 field to field
    s.from_base = static_cast<std::uint16_t>(kind == 1 ? 3 : 0);
    s.to_base = static_cast<std::uint16_t>(kind == 0 ? 2 : 1);
    s.from_stride = kind == 1 ? row : row + wb * pick(0, r.max_gap_words);
    if (kind != 1 && pick(0, 5) == 0) s.from_stride = -s.from_stride;
    s.to_stride = kind == 0 ? row : row + wb * pick(0, r.max_gap_words);
    s.to = target_end[s.to_base] + wb * pick(0, 3);
    target_end[s.to_base] = s.to + s.to_stride * (s.repeat - 1) + row;
    const std::int64_t extent = (s.from_stride < 0 ? -s.from_stride : s.from_stride) * (s.repeat - 1) + row;
    drafts.push_back({s, extent});
  }
  std::int64_t size = std::max(target_end[1], target_end[2]) + 64 * wb;
  for (const draft& d : drafts) size = std::max(size, d.from_extent + 64 * wb);
  c.arrays.assign(4, std::vector<std::byte>(static_cast<std::size_t>(size)));
  for (auto& a : c.arrays) fill(a, r.scalar, r.word_bytes, rng);
  std::uint64_t words = 0;
  for (draft& d : drafts) {  // sources: anywhere their extent fits, word aligned
    d.s.from = wb * pick(0, (size - d.from_extent) / wb);
    if (d.s.from_stride < 0) d.s.from += -d.s.from_stride * (d.s.repeat - 1);
    d.s.first_word = words;
    words += d.s.row_bytes / r.word_bytes * d.s.repeat;
    c.table.push_back(d.s);
  }
  c.l = {0, c.table.size(), words, r.word_bytes, r.op, r.scalar};
  return c;
}

/// `a` op `b` for one element, by the definitions of the operations.
template <class T>
T apply(T a, T b, hb::batch_op op) {
  switch (op) {
    case hb::batch_op::plus: return static_cast<T>(a + b);
    case hb::batch_op::min: return std::min(a, b);
    case hb::batch_op::max: return std::max(a, b);
    case hb::batch_op::copy: break;
    case hb::batch_op::shift: break;  // not drawn here (tests/device/test_particles_emulate.cpp)
  }
  return b;
}

/// Word `w` of the launch, one at a time: its segment, row and place found by walking the table.
inline void reference_word(const std::vector<hb::segment>& table, const hb::launch& l, hb::bases b, std::uint64_t w) {
  for (const hb::segment& s : table) {
    const std::uint64_t row_words = s.row_bytes / l.word_bytes, n = row_words * s.repeat;
    if (w >= n) {
      w -= n;
      continue;
    }
    const auto r = static_cast<std::int64_t>(w / row_words);
    const auto at = static_cast<std::int64_t>(w % row_words * l.word_bytes);
    std::byte* to = b.at[s.to_base] + s.to + r * s.to_stride + at;
    const std::byte* from = b.at[s.from_base] + s.from + r * s.from_stride + at;
    auto one = [&](auto x) {
      decltype(x) a, y;
      std::memcpy(&a, to, sizeof a);
      std::memcpy(&y, from, sizeof y);
      a = apply(a, y, l.op);
      std::memcpy(to, &a, sizeof a);
    };
    switch (l.op == hb::batch_op::copy ? hb::scalar_kind::none : l.scalar) {
      case hb::scalar_kind::f32: return one(float{});
      case hb::scalar_kind::f64: return one(double{});
      case hb::scalar_kind::i8: return one(std::int8_t{});
      case hb::scalar_kind::i16: return one(std::int16_t{});
      case hb::scalar_kind::i32: return one(std::int32_t{});
      case hb::scalar_kind::i64: return one(std::int64_t{});
      case hb::scalar_kind::u8: return one(std::uint8_t{});
      case hb::scalar_kind::u16: return one(std::uint16_t{});
      case hb::scalar_kind::u32: return one(std::uint32_t{});
      case hb::scalar_kind::u64: return one(std::uint64_t{});
      case hb::scalar_kind::none: std::memcpy(to, from, l.word_bytes); return;
    }
  }
}

/// The arrays after words `[begin, end)` of the launch, run by the reference on a copy.
inline std::vector<std::vector<std::byte>> reference(launch_case c, std::uint64_t begin, std::uint64_t end) {
  for (std::uint64_t w = begin; w < end; ++w) reference_word(c.table, c.l, c.b(), w);
  return c.arrays;
}

/// The scalar kinds of a word size, for the combining recipes.
inline std::vector<hb::scalar_kind> kinds_of(std::uint32_t word_bytes) {
  switch (word_bytes) {
    case 1: return {hb::scalar_kind::i8, hb::scalar_kind::u8};
    case 2: return {hb::scalar_kind::i16, hb::scalar_kind::u16};
    case 4: return {hb::scalar_kind::f32, hb::scalar_kind::i32, hb::scalar_kind::u32};
    default: return {hb::scalar_kind::f64, hb::scalar_kind::i64, hb::scalar_kind::u64};
  }
}

/// Every recipe the tests run: each word size copied, and combined with each of its kinds.
inline std::vector<recipe> recipes() {
  std::vector<recipe> out;
  for (std::uint32_t wb : {1u, 2u, 4u, 8u}) {
    out.push_back({wb, hb::batch_op::copy, hb::scalar_kind::none});
    const hb::batch_op ops[] = {hb::batch_op::plus, hb::batch_op::min, hb::batch_op::max};
    std::size_t i = 0;
    for (hb::scalar_kind k : kinds_of(wb)) out.push_back({wb, ops[i++ % 3], k});
  }
  return out;
}

}  // namespace segment_tables

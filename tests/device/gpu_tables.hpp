// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Hand-made segment tables and their data, for the device executor's tests: test_gpu.cu runs them on
// a GPU, tests/unit/test_utilities.cpp runs the kernel's word arithmetic (gpu_words.hpp) over them on
// the host; both against the host loop (detail/batch/host_run.hpp).
#include <haloshift/detail/batch/segment.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace gpu_tables {

namespace batch = haloshift::detail::batch;

inline constexpr std::size_t area = 1 << 19;  // bytes of each source and target array (room for 2000 segments)

// Typed values of kind `k` (words of `wb` bytes): random integers, or finite floats (a GPU's sum of
// NaNs may carry another payload than the host's; sums of finite values round alike everywhere).
inline std::vector<std::byte> values(batch::scalar_kind k, std::mt19937_64& rng) {
  std::vector<std::byte> v(area);
  for (std::size_t i = 0; i < area; i += 8) {
    const std::uint64_t bits = rng();
    std::memcpy(v.data() + i, &bits, 8);
  }
  // Signed sums must not overflow (undefined behaviour on the host): each byte's top two bits equal, so
  // that any element read, misaligned ones too, lies within a half of the range.
  if (k == batch::scalar_kind::i32 || k == batch::scalar_kind::i64)
    for (std::byte& b : v) b = (b & std::byte{0x80}) != std::byte{0} ? b | std::byte{0xc0} : b & std::byte{0x3f};
  std::uniform_real_distribution<double> real(-1e3, 1e3);
  if (k == batch::scalar_kind::f64)
    for (std::size_t i = 0; i < area; i += 8) {
      const double x = real(rng);
      std::memcpy(v.data() + i, &x, 8);
    }
  if (k == batch::scalar_kind::f32)
    for (std::size_t i = 0; i < area; i += 4) {
      const float x = static_cast<float>(real(rng));
      std::memcpy(v.data() + i, &x, 4);
    }
  // A combine's misaligned elements straddle two values, so their bits are any: with each byte below
  // 0x40 every float or double read anywhere is finite and positive (seen on an H200: a NaN summed on
  // the GPU carried another payload than on the host).
  if (k == batch::scalar_kind::f32 || k == batch::scalar_kind::f64)
    for (std::byte& b : v) b &= std::byte{0x3f};
  return v;
}

// A table of `count` segments of `wb`-byte words from bases 0/2 (sources) to bases 1/3 (targets),
// targets disjoint (as every real table's are: a GPU runs its words in any order), rows of 0-6
// words (empty ones included), 0-4 rows, gaps between rows, one negative source stride; a combine's
// offsets misaligned now and then (views of several types share a staging buffer).
inline std::vector<batch::segment> table_of(std::uint32_t wb, int count, std::mt19937_64& rng, batch::launch& l) {
  std::vector<batch::segment> t;
  std::int64_t cursor[2] = {0, 0};
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  l.words = 0;
  for (int s = 0; s < count; ++s) {
    batch::segment g;
    g.row_bytes = wb * static_cast<std::uint32_t>(pick(7));
    g.repeat = static_cast<std::uint32_t>(pick(5));
    g.from_base = static_cast<std::uint16_t>(2 * pick(2));
    g.to_base = static_cast<std::uint16_t>(1 + 2 * pick(2));
    g.from_stride = (s % 7 == 3 ? -1 : 1) * std::int64_t(g.row_bytes + wb * pick(4));
    g.from = std::int64_t(wb) * pick(64) + (g.from_stride < 0 ? 4 * std::int64_t(-g.from_stride) : 0);
    g.to_stride = g.row_bytes + wb * pick(3);
    const int skew = l.op == batch::batch_op::copy || wb == 1 ? 0 : pick(int(wb));
    g.from += skew;
    std::int64_t& c = cursor[g.to_base / 2];
    g.to = c + skew;
    c += g.to_stride * g.repeat + wb * pick(3) + skew;
    g.first_word = l.words;
    l.words += std::uint64_t(g.repeat) * (g.row_bytes / wb);
    t.push_back(g);
  }
  if (cursor[0] > std::int64_t(area) || cursor[1] > std::int64_t(area))
    throw std::logic_error("table_of: the targets outgrow the arrays (make area larger)");
  l.first = 0;
  l.count = t.size();
  l.word_bytes = wb;
  return t;
}

/// Every element type a combine reads, with its size.
inline constexpr std::pair<batch::scalar_kind, std::uint32_t> combine_kinds[] = {
    {batch::scalar_kind::f32, 4}, {batch::scalar_kind::f64, 8}, {batch::scalar_kind::i8, 1},
    {batch::scalar_kind::i16, 2}, {batch::scalar_kind::i32, 4}, {batch::scalar_kind::i64, 8},
    {batch::scalar_kind::u8, 1},  {batch::scalar_kind::u16, 2}, {batch::scalar_kind::u32, 4},
    {batch::scalar_kind::u64, 8}};

}  // namespace gpu_tables

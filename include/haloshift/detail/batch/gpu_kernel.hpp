// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file gpu_kernel.hpp
/// @brief A launch (segment.hpp) as one CUDA/HIP kernel: a thread per word,
/// grid-stride, each finding its segment by binary search on first_word
/// (copied into shared memory by each block where it fits); words move as
/// integers of word_bytes bytes, combines (plus, min, max) read the launch's
/// scalar type (misaligned elements byte by byte). The same arithmetic as
/// host_run.hpp, so device and host results are bit-identical.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "gpu_api.hpp"
#include "segment.hpp"

namespace haloshift::detail::batch::gpu {

/// Where word `w` of a launch is read and written.
struct word_place {
  std::byte* to;
  const std::byte* from;
};

/// The segment of a word: the last whose first_word is at most the word (empty segments share their
/// successor's first_word, so the search never lands on one), by binary search of the first_word values.
/// Where they fit, the block copies them into shared memory first: every step of a search in the table
/// itself waits for a load from memory (nine steps for 300 segments), the copy for one.
inline constexpr std::size_t shared_starts = 1024;
struct segment_finder {
  const segment* table;
  const std::uint64_t* starts;  ///< the first_word values in shared memory, or null: read from the table
  std::size_t first, count;

  __device__ const segment& operator()(std::uint64_t w) const {
    std::size_t lo = 0, hi = count;
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if ((starts ? starts[mid] : table[first + mid].first_word) <= w) lo = mid; else hi = mid;
    }
    return table[first + lo];
  }
};

/// A kernel's prologue, run by every thread of the block: the finder of launch `l`, its first_word
/// values copied into `shared` (shared_starts of them) when they fit.
__device__ inline segment_finder finder_of(const segment* table, const launch& l, std::uint64_t* shared) {
  if (l.count > shared_starts) return {table, nullptr, l.first, l.count};
  for (std::size_t i = threadIdx.x; i < l.count; i += blockDim.x) shared[i] = table[l.first + i].first_word;
  __syncthreads();  // the same branch in every thread: the condition depends on the launch alone
  return {table, shared, l.first, l.count};
}

/// The place of word `w` in its segment `g`.
template <std::uint32_t WordBytes>
__device__ inline word_place place_of(const segment& g, const bases& b, std::uint64_t w) {
  const std::uint64_t row_words = g.row_bytes / WordBytes, local = w - g.first_word;
  // 32-bit division where it fits: a 64-bit one costs a GPU tens of instructions per word.
  const std::uint64_t r = local <= 0xffffffffu ? std::uint32_t(local) / std::uint32_t(row_words) : local / row_words;
  const std::uint64_t in_row = (local - r * row_words) * WordBytes;
  const auto row = static_cast<std::int64_t>(r);
  return {b.at[g.to_base] + g.to + row * g.to_stride + in_row,
          b.at[g.from_base] + g.from + row * g.from_stride + in_row};
}

/// A copy launch: words of type W (1, 2, 4 or 8 bytes) stored as read.
template <class W>
__global__ void copy_words(const segment* table, launch l, bases b) {
  __shared__ std::uint64_t starts[shared_starts];
  const segment_finder find = finder_of(table, l, starts);
  const std::uint64_t step = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t w = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; w < l.words; w += step) {
    const word_place p = place_of<sizeof(W)>(find(w), b, w);
    *reinterpret_cast<W*>(p.to) = *reinterpret_cast<const W*>(p.from);
  }
}

/// An element of T at `p`: a combine's offsets need not be multiples of its size (several views of
/// different types share a staging buffer), so a misaligned one is read byte by byte.
template <class T>
__device__ inline T load(const std::byte* p) {
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) == 0) return *reinterpret_cast<const T*>(p);
  T v;
  memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
__device__ inline void store(std::byte* p, T v) {
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) == 0)
    *reinterpret_cast<T*>(p) = v;
  else
    memcpy(p, &v, sizeof(T));
}

/// A combining launch over elements of type T: as host_run's combine_element.
template <class T>
__global__ void combine_words(const segment* table, launch l, bases b) {
  __shared__ std::uint64_t starts[shared_starts];
  const segment_finder find = finder_of(table, l, starts);
  const std::uint64_t step = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t w = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; w < l.words; w += step) {
    const word_place p = place_of<sizeof(T)>(find(w), b, w);
    T a = load<T>(p.to);
    const T v = load<T>(p.from);
    switch (l.op) {
      case batch_op::plus: a = static_cast<T>(a + v); break;
      case batch_op::min: a = v < a ? v : a; break;
      case batch_op::max: a = a < v ? v : a; break;
      case batch_op::copy: a = v; break;
    }
    store<T>(p.to, a);
  }
}

using kernel = void (*)(const segment*, launch, bases);

/// The combining kernel over T, when the launch's words are T's size.
template <class T>
kernel combine_kernel(const launch& l) {
  if (l.word_bytes != sizeof(T))
    throw error("device launch: word_bytes is " + std::to_string(l.word_bytes) + " for a combine of " +
                std::to_string(sizeof(T)) + "-byte elements");
  return combine_words<T>;
}

/// The kernel of launch `l`, or haloshift::error for a word size or scalar kind it cannot have.
inline kernel kernel_of(const launch& l) {
  if (l.op == batch_op::copy) {
    switch (l.word_bytes) {
      case 1: return copy_words<std::uint8_t>;
      case 2: return copy_words<std::uint16_t>;
      case 4: return copy_words<std::uint32_t>;
      case 8: return copy_words<std::uint64_t>;
      default: throw error("device launch: word_bytes is " + std::to_string(l.word_bytes) + ", not 1, 2, 4 or 8");
    }
  }
  switch (l.scalar) {
    case scalar_kind::f32: return combine_kernel<float>(l);
    case scalar_kind::f64: return combine_kernel<double>(l);
    case scalar_kind::i8: return combine_kernel<std::int8_t>(l);
    case scalar_kind::i16: return combine_kernel<std::int16_t>(l);
    case scalar_kind::i32: return combine_kernel<std::int32_t>(l);
    case scalar_kind::i64: return combine_kernel<std::int64_t>(l);
    case scalar_kind::u8: return combine_kernel<std::uint8_t>(l);
    case scalar_kind::u16: return combine_kernel<std::uint16_t>(l);
    case scalar_kind::u32: return combine_kernel<std::uint32_t>(l);
    case scalar_kind::u64: return combine_kernel<std::uint64_t>(l);
    case scalar_kind::none: break;
  }
  throw error("device launch: a combining launch (op " + std::to_string(int(l.op)) + ") without its scalar kind");
}

/// Enqueues launch `l` over `table` (device memory) on `s`: one kernel, none for an empty launch.
inline void run_launch(const segment* table, const launch& l, const bases& b, stream s) {
  if (l.words == 0) return;
  const kernel k = kernel_of(l);
  constexpr std::uint64_t threads = 256, max_blocks = 1u << 16;  // grid-stride beyond 16M words
  const auto blocks = static_cast<unsigned>(std::min((l.words + threads - 1) / threads, max_blocks));
  k<<<blocks, unsigned(threads), 0, s>>>(table, l, b);
  check_launch("kernel launch of a device pack (" HALOSHIFT_GPU_RUNTIME "GetLastError)");
}

}  // namespace haloshift::detail::batch::gpu

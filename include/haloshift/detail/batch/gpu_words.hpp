// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file gpu_words.hpp
/// @brief What the device kernel (gpu_kernel.hpp) does for one word of a
/// launch: find its segment, its place, and copy or combine it. Plain C++
/// outside nvcc and hipcc (HALOSHIFT_DEVICE is empty there), so that host
/// tests run the kernel's own arithmetic word by word against the host loop
/// (host_run.hpp) on every compiler CI has.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "../../error.hpp"
#include "segment.hpp"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define HALOSHIFT_DEVICE __device__
#else
#define HALOSHIFT_DEVICE
#endif

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

  HALOSHIFT_DEVICE const segment& operator()(std::uint64_t w) const {
    std::size_t lo = 0, hi = count;
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if ((starts ? starts[mid] : table[first + mid].first_word) <= w) lo = mid; else hi = mid;
    }
    return table[first + lo];
  }
};

/// The place of word `w` in its segment `g`.
template <std::uint32_t WordBytes>
HALOSHIFT_DEVICE inline word_place place_of(const segment& g, const bases& b, std::uint64_t w) {
  const std::uint64_t row_words = g.row_bytes / WordBytes, local = w - g.first_word;
  // 32-bit division where it fits: a 64-bit one costs a GPU tens of instructions per word.
  const std::uint64_t r = local <= 0xffffffffu ? std::uint32_t(local) / std::uint32_t(row_words) : local / row_words;
  const std::uint64_t in_row = (local - r * row_words) * WordBytes;
  const auto row = static_cast<std::int64_t>(r);
  return {b.at[g.to_base] + g.to + row * g.to_stride + in_row,
          b.at[g.from_base] + g.from + row * g.from_stride + in_row};
}

/// An element of T at `p`: a combine's offsets need not be multiples of its size (several views of
/// different types share a staging buffer), so a misaligned one is read byte by byte, in a loop of
/// single bytes: a device memcpy of a constant size became one wide load that faulted on an H200
/// ("misaligned address").
template <class T>
HALOSHIFT_DEVICE inline T load(const std::byte* p) {
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) == 0) return *reinterpret_cast<const T*>(p);
  unsigned char raw[sizeof(T)];
  const volatile unsigned char* from = reinterpret_cast<const volatile unsigned char*>(p);
  for (std::size_t i = 0; i < sizeof(T); ++i) raw[i] = from[i];
  T v;
  memcpy(&v, raw, sizeof(T));  // both aligned: a register move
  return v;
}
template <class T>
HALOSHIFT_DEVICE inline void store(std::byte* p, T v) {
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) == 0) {
    *reinterpret_cast<T*>(p) = v;
    return;
  }
  unsigned char raw[sizeof(T)];
  memcpy(raw, &v, sizeof(T));
  volatile unsigned char* to = reinterpret_cast<volatile unsigned char*>(p);
  for (std::size_t i = 0; i < sizeof(T); ++i) to[i] = raw[i];
}

/// Word `w` of a copy launch, in its segment `g`: W (1, 2, 4 or 8 bytes) stored as read.
template <class W>
HALOSHIFT_DEVICE inline void copy_word(const segment& g, const bases& b, std::uint64_t w) {
  const word_place p = place_of<sizeof(W)>(g, b, w);
  *reinterpret_cast<W*>(p.to) = *reinterpret_cast<const W*>(p.from);
}

/// Word `w` of a combining launch of `op` over elements of type T: as host_run's combine_element.
template <class T>
HALOSHIFT_DEVICE inline void combine_word(const segment& g, const bases& b, std::uint64_t w, batch_op op) {
  const word_place p = place_of<sizeof(T)>(g, b, w);
  T a = load<T>(p.to);
  if (op == batch_op::shift) {  // rows of one element: p.from is the row's double
    store<T>(p.to, static_cast<T>(static_cast<double>(a) + load<double>(p.from)));
    return;
  }
  const T v = load<T>(p.from);
  switch (op) {
    case batch_op::plus: a = static_cast<T>(a + v); break;
    case batch_op::min: a = v < a ? v : a; break;
    case batch_op::max: a = a < v ? v : a; break;
    case batch_op::copy:
    case batch_op::shift: a = v; break;  // (shift: above)
  }
  store<T>(p.to, a);
}

/// `f(static_cast<W*>(nullptr))` with W the unsigned integer of a copy launch's word size, or
/// haloshift::error for a size other than 1, 2, 4 or 8 (host code: picks a kernel).
template <class F>
decltype(auto) with_copy_type(const launch& l, F&& f) {
  switch (l.word_bytes) {
    case 1: return f(static_cast<std::uint8_t*>(nullptr));
    case 2: return f(static_cast<std::uint16_t*>(nullptr));
    case 4: return f(static_cast<std::uint32_t*>(nullptr));
    case 8: return f(static_cast<std::uint64_t*>(nullptr));
  }
  throw error("device launch: word_bytes is " + std::to_string(l.word_bytes) + ", not 1, 2, 4 or 8");
}

/// `f(static_cast<T*>(nullptr))` with T the element type of a combining launch, or haloshift::error
/// when it has none or its word size is not T's.
template <class F>
decltype(auto) with_scalar_type(const launch& l, F&& f) {
  auto checked = [&]<class T>(T* tag) -> decltype(auto) {
    if (l.word_bytes != sizeof(T))
      throw error("device launch: word_bytes is " + std::to_string(l.word_bytes) + " for a combine of " +
                  std::to_string(sizeof(T)) + "-byte elements");
    return f(tag);
  };
  switch (l.scalar) {
    case scalar_kind::f32: return checked(static_cast<float*>(nullptr));
    case scalar_kind::f64: return checked(static_cast<double*>(nullptr));
    case scalar_kind::i8: return checked(static_cast<std::int8_t*>(nullptr));
    case scalar_kind::i16: return checked(static_cast<std::int16_t*>(nullptr));
    case scalar_kind::i32: return checked(static_cast<std::int32_t*>(nullptr));
    case scalar_kind::i64: return checked(static_cast<std::int64_t*>(nullptr));
    case scalar_kind::u8: return checked(static_cast<std::uint8_t*>(nullptr));
    case scalar_kind::u16: return checked(static_cast<std::uint16_t*>(nullptr));
    case scalar_kind::u32: return checked(static_cast<std::uint32_t*>(nullptr));
    case scalar_kind::u64: return checked(static_cast<std::uint64_t*>(nullptr));
    case scalar_kind::none: break;
  }
  throw error("device launch: a combining launch (op " + std::to_string(int(l.op)) + ") without its scalar kind");
}

}  // namespace haloshift::detail::batch::gpu

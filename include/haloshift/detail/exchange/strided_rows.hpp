// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file strided_rows.hpp
/// @brief Copies of rows at a stride (faces of a field): the one loop that
/// packs and unpacks them, for the plan's own executor (executor.hpp) and for
/// the batched host loop (detail/batch/host_run.hpp).

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace haloshift::detail {

/// `repeat` rows of `bytes` bytes (at least 32) from `from` to `to`, advancing
/// by the given strides. A row is copied in vector moves of a compile-time
/// size (`Chunk`: 64 bytes with AVX-512, 32 with AVX2, 16 otherwise, picked at
/// run time) plus one last, overlapping move for the tail: a handful of loads
/// and stores, not a memcpy call, whose per-call cost halved the speed of
/// 272-byte rows (a y face of a 32^3 box). With `Prefetch`, the source's
/// next row is prefetched while this one copies (see copy_strided_rows for
/// when).
template <bool Prefetch>
struct long_rows {
  /// The loop itself, written once. Always inlined: each ISA's function below
  /// compiles it with its own vector moves (a function of the default target
  /// may be inlined into an AVX one, and the fixed-size copies are expanded
  /// there, after inlining).
  template <std::size_t Chunk>
  [[gnu::always_inline]] static inline void rows(char* to, const char* from, std::size_t bytes, std::size_t repeat,
                                                 std::ptrdiff_t to_stride, std::ptrdiff_t from_stride) {
    for (std::size_t r = 0; r < repeat; ++r, to += to_stride, from += from_stride) {
      if (Prefetch && r + 1 < repeat)
        for (std::size_t b = 0; b < bytes; b += 64) __builtin_prefetch(from + from_stride + b, 0);
      std::size_t b = 0;
      for (; b + Chunk <= bytes; b += Chunk) __builtin_memcpy(to + b, from + b, Chunk);
      if (b < bytes) __builtin_memcpy(to + bytes - Chunk, from + bytes - Chunk, Chunk);
    }
  }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  /// The same with 256-bit and 512-bit moves, chosen at run time: the header needs no -m flags.
  __attribute__((target("avx2"))) static void avx2(char* to, const char* from, std::size_t bytes,
                                                   std::size_t repeat, std::ptrdiff_t to_stride,
                                                   std::ptrdiff_t from_stride) {
    rows<32>(to, from, bytes, repeat, to_stride, from_stride);
  }
  __attribute__((target("avx512f"))) static void avx512(char* to, const char* from, std::size_t bytes,
                                                        std::size_t repeat, std::ptrdiff_t to_stride,
                                                        std::ptrdiff_t from_stride) {
    if (bytes < 64) return avx2(to, from, bytes, repeat, to_stride, from_stride);
    rows<64>(to, from, bytes, repeat, to_stride, from_stride);
  }
#endif
  static void copy(char* to, const char* from, std::size_t bytes, std::size_t repeat, std::ptrdiff_t to_stride,
                   std::ptrdiff_t from_stride) {
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
/// A page: source rows this many bytes apart or more each sit on a page of their own, so they are
/// not prefetched, and rows of whole words go as far_word_rows (see copy_strided_rows).
inline constexpr std::size_t page_pitch = 4096;

/// `repeat` rows of fewer than 32 bytes: `Bytes`, when not 0, is the row size known at compile
/// time, so that single cells (x faces, 1-3 doubles wide) copy as plain loads and stores, not one
/// memcpy call each. Such rows lie a row pitch apart: each is a cache miss that the hardware
/// prefetcher does not follow, so with `Prefetch` the source row `ahead` rows on is asked for
/// while this one copies.
template <std::size_t Bytes, bool Prefetch>
void short_rows(char* to, const char* from, std::size_t bytes, std::size_t repeat, std::ptrdiff_t to_stride,
                std::ptrdiff_t from_stride) {
  constexpr std::size_t ahead = 8;
  std::size_t r = 0;
  if (Prefetch)
    for (; r + ahead < repeat; ++r, to += to_stride, from += from_stride) {
      __builtin_prefetch(from + static_cast<std::ptrdiff_t>(ahead) * from_stride, 0);
      std::memcpy(to, from, Bytes ? Bytes : bytes);
    }
  for (; r < repeat; ++r, to += to_stride, from += from_stride) std::memcpy(to, from, Bytes ? Bytes : bytes);
}

/// `repeat` rows of `words` 8-byte words whose source rows lie a page or more apart (the x face of
/// a 2D field, 1-3 cells wide), copied as a hand-written exchange packs them: a row at a time, a
/// loop over its words whose count is known only at run time. Each row's load misses the TLB, and
/// short_rows' loop of six instructions issues rows faster than the page walks complete: packing a
/// 4000-row face of doubles took 35.1 us with it and 30.3 us this way in one run (AMD EPYC; 8-16
/// idle instructions per row took the short loop from 33 to 24 us, 32 to 45 us: docs/performance.md,
/// "Face exchanges of fields against a hand-written one"). Out of line so that `words` stays a run-
/// time count: a known count would turn it back into the short loop.
[[gnu::noinline]] inline void far_word_rows(char* to, const char* from, std::size_t words, std::size_t repeat,
                                            std::ptrdiff_t to_stride, std::ptrdiff_t from_stride) {
  for (std::size_t r = 0; r < repeat; ++r, to += to_stride, from += from_stride)
    for (std::size_t w = 0; w < words; ++w) std::memcpy(to + 8 * w, from + 8 * w, 8);
}

/// `repeat` rows of `bytes` bytes from `from` to `to`, each `to_stride` and `from_stride` bytes
/// after the previous: packing (the target consecutive), unpacking (the source consecutive) or a
/// copy to the rank itself (both strided). The common row sizes run as fixed-size copies, rows of
/// whole words whose source rows lie a page or more apart as far_word_rows. The source is
/// prefetched when its rows are spread beyond prefetch_span (out of cache) but lie less than a
/// page apart; the target never is. Measured on AMD EPYC and Intel Xeon (docs/performance.md,
/// "Face exchanges of fields against a hand-written one"): a prefetch of each target row (an
/// unpack) made the copy of rows 2 KB or more apart 11-57 % slower; a prefetch of source rows a
/// page or more apart (a 2D x face) cost 3-9 %, below a page (a 3D x face) it saved 1-8 % on the
/// AMD machine.
inline void copy_strided_rows(void* to, const void* from, std::size_t bytes, std::size_t repeat,
                              std::ptrdiff_t to_stride, std::ptrdiff_t from_stride) {
  char* t = static_cast<char*>(to);
  const char* f = static_cast<const char*>(from);
  const std::size_t pitch = static_cast<std::size_t>(from_stride < 0 ? -from_stride : from_stride);
  const bool spread = pitch != bytes && pitch * repeat > prefetch_span;  // out of cache
  if (spread && pitch >= page_pitch && bytes < 32 && bytes % 8 == 0)
    return far_word_rows(t, f, bytes / 8, repeat, to_stride, from_stride);
  const bool prefetch = spread && pitch < page_pitch;
  auto with = [&]<bool P>() {
    if (bytes >= 32) return long_rows<P>::copy(t, f, bytes, repeat, to_stride, from_stride);
    switch (bytes) {
      case 1: return short_rows<1, P>(t, f, bytes, repeat, to_stride, from_stride);
      case 2: return short_rows<2, P>(t, f, bytes, repeat, to_stride, from_stride);
      case 4: return short_rows<4, P>(t, f, bytes, repeat, to_stride, from_stride);
      case 8: return short_rows<8, P>(t, f, bytes, repeat, to_stride, from_stride);
      case 12: return short_rows<12, P>(t, f, bytes, repeat, to_stride, from_stride);  // 3 floats or ints
      case 16: return short_rows<16, P>(t, f, bytes, repeat, to_stride, from_stride);
      case 24: return short_rows<24, P>(t, f, bytes, repeat, to_stride, from_stride);
      default: return short_rows<0, P>(t, f, bytes, repeat, to_stride, from_stride);
    }
  };
  if (prefetch) return with.template operator()<true>();
  with.template operator()<false>();
}

}  // namespace haloshift::detail

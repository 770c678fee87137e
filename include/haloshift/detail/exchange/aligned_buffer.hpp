// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file aligned_buffer.hpp
/// @brief Storage for halo buffers, aligned to a cache line.

#include <cstddef>
#include <new>
#include <vector>

namespace haloshift::detail {

/// Allocator that aligns to a cache line (64 bytes), so where a halo buffer
/// lands does not decide how many lines a block straddles or whether the
/// copies and the MPI library see split lines: without it malloc's 16-byte
/// alignment makes the same exchange a few per cent faster or slower from one
/// allocation to the next.
template <class T>
struct cache_aligned_allocator {
  using value_type = T;
  static constexpr std::align_val_t alignment{64};

  cache_aligned_allocator() noexcept = default;
  template <class U>
  cache_aligned_allocator(const cache_aligned_allocator<U>&) noexcept {}

  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, alignment); }

  template <class U>
  bool operator==(const cache_aligned_allocator<U>&) const noexcept {
    return true;
  }
};

/// A vector whose data starts on a cache line.
template <class T>
using aligned_vector = std::vector<T, cache_aligned_allocator<T>>;

}  // namespace haloshift::detail

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
#include <string>

#include "gpu_api.hpp"
#include "gpu_words.hpp"
#include "segment.hpp"

namespace haloshift::detail::batch::gpu {

/// A kernel's prologue, run by every thread of the block: the finder of launch `l`, its first_word
/// values copied into `shared` (shared_starts of them) when they fit.
__device__ inline segment_finder finder_of(const segment* table, const launch& l, std::uint64_t* shared) {
  if (l.count > shared_starts) return {table, nullptr, l.first, l.count};
  for (std::size_t i = threadIdx.x; i < l.count; i += blockDim.x) shared[i] = table[l.first + i].first_word;
  __syncthreads();  // the same branch in every thread: the condition depends on the launch alone
  return {table, shared, l.first, l.count};
}

/// A launch: words of type W (1, 2, 4 or 8 bytes) stored as read, or (`Combine`) elements of
/// type W combined with the launch's operation.
template <class W, bool Combine>
__global__ void launch_words(const segment* table, launch l, bases b) {
  __shared__ std::uint64_t starts[shared_starts];
  const segment_finder find = finder_of(table, l, starts);
  const std::uint64_t step = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t w = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; w < l.words; w += step) {
    if constexpr (Combine)
      combine_word<W>(find(w), b, w, l.op);
    else
      copy_word<W>(find(w), b, w);
  }
}

using kernel = void (*)(const segment*, launch, bases);

/// The kernel of launch `l`, or haloshift::error for a word size or scalar kind it cannot have.
inline kernel kernel_of(const launch& l) {
  if (l.op == batch_op::copy) return with_copy_type(l, []<class W>(W*) -> kernel { return launch_words<W, false>; });
  return with_scalar_type(l, []<class T>(T*) -> kernel { return launch_words<T, true>; });
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

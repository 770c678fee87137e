// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file spaces.hpp
/// @brief Where the memory of a field view lives. Host memory is the default
/// (every view made without a space); a device space names the executor that
/// packs, unpacks and combines its cells without the host ever touching them
/// (docs/gpu.md). The spaces themselves: memory/emulated_device.hpp (the GPU
/// code path on host memory the host cannot touch, for tests) and
/// memory/device.hpp (CUDA or HIP, for a file compiled by nvcc or hipcc).

#include <concepts>
#include <memory>

namespace haloshift::detail::batch {
class executor;
}

namespace haloshift::memory {

/// Host memory: packed by the plan's own code, on the calling thread, or on
/// plan_options::pack_threads threads.
struct host {};

/// How messages of device memory reach MPI.
enum class mpi_path {
  detect,  ///< direct when the MPI says it is GPU-aware (HALOSHIFT_GPU_AWARE=0 or 1 overrides), else staged
  direct,  ///< MPI reads and writes device memory itself (a GPU-aware MPI)
  staged,  ///< through pinned host buffers, with asynchronous copies
};

}  // namespace haloshift::memory

namespace haloshift::detail {

/// A device space: a type whose `make_executor(mpi_path)` returns the executor of its memory.
template <class S>
concept device_space = !std::same_as<S, memory::host> && requires(memory::mpi_path p) {
  { S::make_executor(p) } -> std::same_as<std::unique_ptr<batch::executor>>;
};

/// The stream a space orders its exchanges on (its `stream` member), null for none.
template <class S>
void* stream_of(const S& space) noexcept {
  if constexpr (requires { space.stream; })
    return static_cast<void*>(space.stream);
  else
    return nullptr;
}

}  // namespace haloshift::detail

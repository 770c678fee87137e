// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file gpu_api.hpp
/// @brief The GPU runtime, written once for CUDA and HIP: HALOSHIFT_GPU(Malloc)
/// is cudaMalloc under nvcc and hipMalloc under hipcc (the two runtimes name
/// their calls, types and constants alike), and every call's status goes
/// through check(), which raises haloshift::error naming the call. Only for
/// a translation unit compiled by nvcc or hipcc (memory/device.hpp).

#include <cstddef>
#include <string>

#include "../../error.hpp"

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define HALOSHIFT_GPU(name) hip##name
#define HALOSHIFT_GPU_RUNTIME "hip"
#elif defined(__CUDACC__)
#include <cuda_runtime.h>
#define HALOSHIFT_GPU(name) cuda##name
#define HALOSHIFT_GPU_RUNTIME "cuda"
#else
// clang-format off
#error "haloshift/memory/device.hpp is for a translation unit compiled by nvcc (CUDA) or hipcc (HIP): \
use haloshift/haloshift.hpp with a host compiler (docs/gpu.md)"
// clang-format on
#endif

namespace haloshift::detail::batch::gpu {

using status = HALOSHIFT_GPU(Error_t);
using stream = HALOSHIFT_GPU(Stream_t);

/// Raises haloshift::error "<call> failed: <the runtime's message> (<code name>)" unless `s` is success.
inline void check(status s, const char* call) {
  if (s == HALOSHIFT_GPU(Success)) return;
  throw error(std::string(call) + " failed: " + HALOSHIFT_GPU(GetErrorString)(s) + " (" +
              HALOSHIFT_GPU(GetErrorName)(s) + ")");
}

/// Checks a kernel launch: a bad configuration shows only in the runtime's last error.
inline void check_launch(const char* kernel) { check(HALOSHIFT_GPU(GetLastError)(), kernel); }

/// `bytes` bytes copied, synchronously (none: nothing, whatever the pointers).
inline void copy(void* to, const void* from, std::size_t bytes, HALOSHIFT_GPU(MemcpyKind) kind, const char* call) {
  if (bytes != 0) check(HALOSHIFT_GPU(Memcpy)(to, from, bytes, kind), call);
}
/// `bytes` bytes copied, enqueued on `s` (none: nothing).
inline void copy_async(void* to, const void* from, std::size_t bytes, HALOSHIFT_GPU(MemcpyKind) kind, stream s,
                       const char* call) {
  if (bytes != 0) check(HALOSHIFT_GPU(MemcpyAsync)(to, from, bytes, kind, s), call);
}

}  // namespace haloshift::detail::batch::gpu

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file device.hpp
/// @brief memory::device: memory of the GPU, for a translation unit compiled
/// by nvcc (CUDA) or hipcc (HIP); written once over the macro layer of
/// detail/batch/gpu_api.hpp. Its executor packs, unpacks and combines a
/// whole phase of an exchange in one kernel launch on a stream of its own,
/// and stages messages through pinned host memory unless MPI reads device
/// memory itself (docs/gpu.md, "Staging").
///
/// The executor's stream is a blocking one: it waits for work the program
/// enqueued on the legacy default stream before the exchange, as a plain
/// cudaMemcpy would. Work on other streams must be complete (or the stream
/// synchronized) before an exchange reads the arrays.

#include <cstddef>
#include <memory>
#include <string>

#include "../detail/batch/gpu_api.hpp"
#include "../detail/batch/gpu_aware.hpp"
#include "../detail/batch/gpu_kernel.hpp"
#include "../detail/batch/segment.hpp"
#include "../detail/checked_size.hpp"
#include "spaces.hpp"

namespace haloshift::detail::batch::gpu {

/// The runtime whose MPI query applies: HIP on an NVIDIA platform runs on CUDA.
#if defined(__HIPCC__) && !defined(__HIP_PLATFORM_NVIDIA__) && !defined(__HIP_PLATFORM_NVCC__)
inline constexpr gpu_runtime this_runtime = gpu_runtime::rocm;
#else
inline constexpr gpu_runtime this_runtime = gpu_runtime::cuda;
#endif

/// Page-locked host memory: cudaMallocHost / hipHostMalloc (HIP deprecates hipMallocHost).
inline void* host_alloc(std::size_t bytes) {
  void* p = nullptr;
#if defined(__HIPCC__)
  check(hipHostMalloc(&p, bytes, hipHostMallocDefault), "hipHostMalloc");
#else
  check(cudaMallocHost(&p, bytes), "cudaMallocHost");
#endif
  return p;
}
inline void host_free(void* p) noexcept {
#if defined(__HIPCC__)
  static_cast<void>(hipHostFree(p));
#else
  static_cast<void>(cudaFreeHost(p));
#endif
}

/// The device executor: everything but allocation and upload is enqueued on its stream.
class device_executor final : public executor {
 public:
  explicit device_executor(memory::mpi_path path) {
    check(HALOSHIFT_GPU(StreamCreate)(&stream_), HALOSHIFT_GPU_RUNTIME "StreamCreate");
    try {
      direct_ = mpi_reaches_device(path, this_runtime, HALOSHIFT_GPU_RUNTIME);
    } catch (...) {
      static_cast<void>(HALOSHIFT_GPU(StreamDestroy)(stream_));
      throw;
    }
  }
  ~device_executor() override { static_cast<void>(HALOSHIFT_GPU(StreamDestroy)(stream_)); }
  device_executor(const device_executor&) = delete;
  device_executor& operator=(const device_executor&) = delete;

  const char* name() const noexcept override { return HALOSHIFT_GPU_RUNTIME; }
  bool host_accessible() const noexcept override { return false; }
  bool mpi_reaches_memory() const noexcept override { return direct_; }

  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    check(HALOSHIFT_GPU(Malloc)(&p, bytes), HALOSHIFT_GPU_RUNTIME "Malloc");
    return p;
  }
  void deallocate(void* p, std::size_t) noexcept override { static_cast<void>(HALOSHIFT_GPU(Free)(p)); }
  void* allocate_pinned(std::size_t bytes) override { return host_alloc(bytes); }
  void deallocate_pinned(void* p, std::size_t) noexcept override { host_free(p); }

  void upload(void* to, const void* from, std::size_t bytes) override {
    check(HALOSHIFT_GPU(Memcpy)(to, from, bytes, HALOSHIFT_GPU(MemcpyHostToDevice)), HALOSHIFT_GPU_RUNTIME "Memcpy");
  }
  void to_host(void* to, const void* from, std::size_t bytes) override {
    check(HALOSHIFT_GPU(MemcpyAsync)(to, from, bytes, HALOSHIFT_GPU(MemcpyDeviceToHost), stream_),
          HALOSHIFT_GPU_RUNTIME "MemcpyAsync (device to host)");
  }
  void to_device(void* to, const void* from, std::size_t bytes) override {
    check(HALOSHIFT_GPU(MemcpyAsync)(to, from, bytes, HALOSHIFT_GPU(MemcpyHostToDevice), stream_),
          HALOSHIFT_GPU_RUNTIME "MemcpyAsync (host to device)");
  }
  void run(const segment* table, const launch& l, const bases& b) override { run_launch(table, l, b, stream_); }
  void synchronize() override {
    check(HALOSHIFT_GPU(StreamSynchronize)(stream_), HALOSHIFT_GPU_RUNTIME "StreamSynchronize");
  }

 private:
  stream stream_{};
  bool direct_ = false;
};

}  // namespace haloshift::detail::batch::gpu

namespace haloshift::memory {

/// GPU memory (CUDA or HIP, whichever compiles the file). Field views over it are made with
/// `make_field_view(memory::device{}, ptr, ...)`; the helpers below allocate and fill such memory
/// (synchronously, for tests and examples: a program may use its own allocations just as well).
struct device {
  /// `n` elements of T in device memory (cudaMalloc / hipMalloc), uninitialised.
  template <class T>
  static T* allocate(std::size_t n) {
    void* p = nullptr;
    const std::size_t bytes = detail::checked_mul(n, sizeof(T), "memory::device::allocate: n (elements)");
    detail::batch::gpu::check(HALOSHIFT_GPU(Malloc)(&p, bytes), HALOSHIFT_GPU_RUNTIME "Malloc");
    return static_cast<T*>(p);
  }
  /// Frees what allocate returned (nullptr is fine).
  static void deallocate(void* p) noexcept { static_cast<void>(HALOSHIFT_GPU(Free)(p)); }
  /// `bytes` bytes from host memory to device memory, synchronous.
  static void copy_to_device(void* to, const void* from, std::size_t bytes) {
    detail::batch::gpu::check(HALOSHIFT_GPU(Memcpy)(to, from, bytes, HALOSHIFT_GPU(MemcpyHostToDevice)),
                              HALOSHIFT_GPU_RUNTIME "Memcpy (host to device)");
  }
  /// `bytes` bytes from device memory to host memory, synchronous.
  static void copy_to_host(void* to, const void* from, std::size_t bytes) {
    detail::batch::gpu::check(HALOSHIFT_GPU(Memcpy)(to, from, bytes, HALOSHIFT_GPU(MemcpyDeviceToHost)),
                              HALOSHIFT_GPU_RUNTIME "Memcpy (device to host)");
  }
  /// The executor of this memory, its messages reaching MPI as `path` says (plan_options::device_mpi).
  static std::unique_ptr<detail::batch::executor> make_executor(mpi_path path) {
    return std::make_unique<detail::batch::gpu::device_executor>(path);
  }
};

}  // namespace haloshift::memory

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
/// Without a stream (`memory::device{}`), an exchange runs on the executor's
/// own stream, a blocking one: it waits for work the program enqueued on the
/// legacy default stream before the exchange, as a plain cudaMemcpy would, and
/// returns with the ghosts written. With one (`memory::device{s}`), the
/// exchange is stream-ordered: packing is enqueued on `s` after the program's
/// work there, unpacking too, and wait() returns without waiting for the
/// device (docs/gpu.md, "Streams").

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

/// The device executor: everything but allocation and upload is enqueued on its current stream (its
/// own, or the caller's from use_stream on: a stream-ordered exchange).
class device_executor final : public executor {
 public:
  explicit device_executor(memory::mpi_path path) {
    check(HALOSHIFT_GPU(StreamCreate)(&own_), HALOSHIFT_GPU_RUNTIME "StreamCreate");
    try {
      check(HALOSHIFT_GPU(EventCreateWithFlags)(&mark_, HALOSHIFT_GPU(EventDisableTiming)),
            HALOSHIFT_GPU_RUNTIME "EventCreateWithFlags");
      direct_ = mpi_reaches_device(path, this_runtime, HALOSHIFT_GPU_RUNTIME);
    } catch (...) {
      release();
      throw;
    }
    current_ = own_;
  }
  ~device_executor() override { release(); }
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
    copy(to, from, bytes, HALOSHIFT_GPU(MemcpyHostToDevice), HALOSHIFT_GPU_RUNTIME "Memcpy (segment table)");
  }
  void to_host(void* to, const void* from, std::size_t bytes) override {
    copy_async(to, from, bytes, HALOSHIFT_GPU(MemcpyDeviceToHost), current_,
               HALOSHIFT_GPU_RUNTIME "MemcpyAsync (device to host)");
  }
  void to_device(void* to, const void* from, std::size_t bytes) override {
    copy_async(to, from, bytes, HALOSHIFT_GPU(MemcpyHostToDevice), current_,
               HALOSHIFT_GPU_RUNTIME "MemcpyAsync (host to device)");
  }
  void run(const segment* table, const launch& l, const bases& b) override { run_launch(table, l, b, current_); }
  void synchronize() override {
    check(HALOSHIFT_GPU(StreamSynchronize)(current_), HALOSHIFT_GPU_RUNTIME "StreamSynchronize");
  }

  void use_stream(void* s) override { current_ = s ? static_cast<stream>(s) : own_; }
  void mark() override { check(HALOSHIFT_GPU(EventRecord)(mark_, current_), HALOSHIFT_GPU_RUNTIME "EventRecord"); }
  bool marked_done() override {
    const status s = HALOSHIFT_GPU(EventQuery)(mark_);
    if (s == HALOSHIFT_GPU(ErrorNotReady)) return false;
    check(s, HALOSHIFT_GPU_RUNTIME "EventQuery");
    return true;
  }
  void wait_mark() override { check(HALOSHIFT_GPU(EventSynchronize)(mark_), HALOSHIFT_GPU_RUNTIME "EventSynchronize"); }

 private:
  void release() noexcept {
    if (mark_) static_cast<void>(HALOSHIFT_GPU(EventDestroy)(mark_));
    static_cast<void>(HALOSHIFT_GPU(StreamDestroy)(own_));
  }

  stream own_{}, current_{};
  HALOSHIFT_GPU(Event_t) mark_{};
  bool direct_ = false;
};

}  // namespace haloshift::detail::batch::gpu

namespace haloshift::memory {

/// GPU memory (CUDA or HIP, whichever compiles the file). Field views over it are made with
/// `make_field_view(memory::device{}, ptr, ...)`; the helpers below allocate and fill such memory
/// (synchronously, for tests and examples: a program may use its own allocations just as well).
struct device {
  /// The stream exchanges of this space's views are ordered on (null: none, each exchange is synchronous).
  HALOSHIFT_GPU(Stream_t) stream = nullptr;

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
    detail::batch::gpu::copy(to, from, bytes, HALOSHIFT_GPU(MemcpyHostToDevice),
                             HALOSHIFT_GPU_RUNTIME "Memcpy (host to device)");
  }
  /// `bytes` bytes from device memory to host memory, synchronous.
  static void copy_to_host(void* to, const void* from, std::size_t bytes) {
    detail::batch::gpu::copy(to, from, bytes, HALOSHIFT_GPU(MemcpyDeviceToHost),
                             HALOSHIFT_GPU_RUNTIME "Memcpy (device to host)");
  }
  /// The executor of this memory, its messages reaching MPI as `path` says (plan_options::device_mpi).
  static std::unique_ptr<detail::batch::executor> make_executor(mpi_path path) {
    return std::make_unique<detail::batch::gpu::device_executor>(path);
  }
};

}  // namespace haloshift::memory

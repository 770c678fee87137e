// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file emulated_device.hpp
/// @brief A device space for tests without a GPU: the device code path (one
/// batched launch per phase, staging, executor memory) run on host memory
/// that the host code path cannot touch. Its memory is mapped PROT_NONE and
/// opened (READ|WRITE) only inside the executor's launches and copies, so a
/// place where the library (or a test) dereferences "device" memory on the
/// host dies with SIGSEGV instead of passing (docs/gpu.md, "The emulated
/// device"). Its streams (emulated_device::queue) run their work only when
/// synchronised or polled, so that a stream-ordered exchange that does not
/// wait for its packing sends stale bytes. POSIX only (mmap, mprotect).

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../detail/batch/gpu_aware.hpp"
#include "../detail/batch/host_run.hpp"
#include "../detail/batch/segment.hpp"
#include "../error.hpp"
#include "spaces.hpp"

namespace haloshift::detail::emulated {

/// A pointer as error messages print it.
inline std::string pointer_text(const void* p) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", p);
  return text;
}

/// Every mapping of emulated device memory in the process, with how many openers hold it open.
/// Process-wide (one per program, not per plan): a user's arrays and every executor's memory are
/// opened together by a launch, whichever plan made them.
class registry {
 public:
  static registry& instance() {
    static registry r;
    return r;
  }

  /// Maps `bytes` (at least one page, so that every pointer is distinct) PROT_NONE; `call` names
  /// the caller in errors.
  std::byte* map(std::size_t bytes, const char* call) {
    const std::size_t page = page_bytes();
    if (bytes > std::numeric_limits<std::size_t>::max() - page)
      throw error(std::string(call) + ": " + std::to_string(bytes) + " bytes cannot be rounded to pages");
    const std::size_t mapped = bytes == 0 ? page : (bytes + page - 1) / page * page;
    void* p = ::mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      throw error(std::string(call) + ": mmap of " + std::to_string(mapped) + " bytes failed: " + std::strerror(errno));
    std::lock_guard lock(mutex_);
    regions_[key(p)] = region{mapped, 0};
    return static_cast<std::byte*>(p);
  }

  /// Unmaps a pointer map() returned; false (and nothing done) for any other pointer.
  bool unmap(const void* p) noexcept {
    std::size_t bytes = 0;
    {
      std::lock_guard lock(mutex_);
      const auto it = regions_.find(key(p));
      if (it == regions_.end()) return false;
      bytes = it->second.bytes;
      regions_.erase(it);
    }
    ::munmap(const_cast<void*>(p), bytes);
    return true;
  }

  /// Whether [p, p + bytes) lies inside one mapping.
  bool holds(const void* p, std::size_t bytes) const {
    std::lock_guard lock(mutex_);
    const auto it = containing(key(p));
    return it != regions_.end() && key(p) + bytes <= it->first + it->second.bytes;
  }

  /// Opens the mappings that overlap [p, p + bytes) (every mapping when `p` is null), appending
  /// their keys to `opened`; close() undoes it. Counted: a mapping closes when its last opener closes.
  void open(const void* p, std::size_t bytes, std::vector<std::uintptr_t>& opened) {
    std::lock_guard lock(mutex_);
    auto it = p ? containing(key(p)) : regions_.begin();
    if (it == regions_.end() && p) it = regions_.upper_bound(key(p));
    for (; it != regions_.end() && (!p || it->first < key(p) + bytes); ++it) {
      if (it->second.open == 0 && ::mprotect(address(it->first), it->second.bytes, PROT_READ | PROT_WRITE) != 0)
        throw error("emulated device: mprotect(" + pointer_text(address(it->first)) + ", " +
                    std::to_string(it->second.bytes) + ", PROT_READ | PROT_WRITE) failed: " + std::strerror(errno));
      ++it->second.open;
      opened.push_back(it->first);
    }
  }

  /// Closes what open() opened. A mapping freed meanwhile is skipped; an mprotect that fails
  /// leaves it readable (nothing better to do in a destructor), which only weakens the check.
  void close(const std::vector<std::uintptr_t>& opened) noexcept {
    std::lock_guard lock(mutex_);
    for (const std::uintptr_t k : opened) {
      const auto it = regions_.find(k);
      if (it != regions_.end() && --it->second.open == 0) ::mprotect(address(k), it->second.bytes, PROT_NONE);
    }
  }

 private:
  struct region {
    std::size_t bytes = 0;
    int open = 0;
  };
  using table = std::map<std::uintptr_t, region>;

  static std::size_t page_bytes() {
    static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return page;
  }
  static std::uintptr_t key(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
  static void* address(std::uintptr_t k) { return reinterpret_cast<void*>(k); }
  /// The mapping that holds address `k`, or end().
  table::iterator containing(std::uintptr_t k) const {
    auto it = regions_.upper_bound(k);
    if (it == regions_.begin()) return regions_.end();
    --it;
    return k < it->first + it->second.bytes ? it : regions_.end();
  }

  mutable std::mutex mutex_;
  mutable table regions_;
};

/// Emulated device memory held open for one launch or copy (RAII).
class opened {
 public:
  /// Every mapping of the process (a launch: its bases may be any of them).
  opened() { registry::instance().open(nullptr, 0, keys_); }
  /// The mappings a copy from `from` to `to` touches.
  opened(void* to, const void* from, std::size_t bytes) {
    auto& r = registry::instance();
    try {
      r.open(to, bytes, keys_);
      r.open(from, bytes, keys_);
    } catch (...) {
      r.close(keys_);
      throw;
    }
  }
  opened(const opened&) = delete;
  opened& operator=(const opened&) = delete;
  ~opened() { registry::instance().close(keys_); }

 private:
  std::vector<std::uintptr_t> keys_;
};

/// A copy between any mix of host and emulated device memory, opened while it copies.
inline void copy(void* to, const void* from, std::size_t bytes) {
  if (bytes == 0) return;
  const opened open(to, from, bytes);
  std::memcpy(to, from, bytes);
}

/// Whether the emulated device's messages go to MPI directly: as a GPU's (detail/batch/gpu_aware.hpp:
/// the option, else HALOSHIFT_GPU_AWARE), except that `detect` has no MPI to ask and stages.
inline bool mpi_direct(memory::mpi_path p) {
  return batch::logged(
      batch::decide_mpi_reach(p, [] { return batch::mpi_reach{false, "the emulated device has no GPU-aware MPI"}; }),
      "emulated device");
}

/// Host memory for staging MPI reads (the "pinned" buffers, and executor memory when MPI is
/// "GPU-aware"): plain and unregistered, since MPI itself must be able to touch it.
inline void* host_allocate(std::size_t bytes) { return ::operator new(bytes == 0 ? 1 : bytes); }
inline void host_free(void* p) noexcept { ::operator delete(p); }

/// An emulated device stream: work enqueued on it runs later, in order, with all emulated memory
/// open (as a kernel would), only when the stream is synchronised or polled, so that an exchange
/// that hands MPI a buffer before its packing has run sends stale bytes and fails its test.
class stream {
 public:
  /// Enqueues `work` (a "kernel": it may read and write emulated device memory).
  void enqueue(std::function<void()> work) {
    queue_.push_back(std::move(work));
    ++enqueued_;
  }
  /// Runs the oldest pending work; false when nothing was pending.
  bool step() {
    if (queue_.empty()) return false;
    const std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    const opened all;
    work();
    ++done_;
    return true;
  }
  /// Runs everything enqueued (cudaStreamSynchronize).
  void synchronize() {
    while (step()) {
    }
  }
  /// Work enqueued so far, and run so far.
  std::uint64_t enqueued() const noexcept { return enqueued_; }
  std::uint64_t done() const noexcept { return done_; }

 private:
  std::deque<std::function<void()>> queue_;
  std::uint64_t enqueued_ = 0, done_ = 0;
};

/// The executor of the emulated device: every launch runs on the calling thread through
/// batch::run_all with all emulated memory opened, every copy with only its two ranges opened.
class executor final : public batch::executor {
 public:
  explicit executor(bool direct) : direct_(direct) {}
  const char* name() const noexcept override { return "emulated device"; }
  bool host_accessible() const noexcept override { return false; }
  bool mpi_reaches_memory() const noexcept override { return direct_; }
  void* allocate(std::size_t bytes) override {
    return direct_ ? host_allocate(bytes) : registry::instance().map(bytes, "emulated device executor: allocate");
  }
  void deallocate(void* p, std::size_t bytes) noexcept override {
    if (!p) return;
    if (direct_) return host_free(p);
    // A pointer this executor never returned is a library bug: say so loudly (a noexcept call cannot raise).
    if (!registry::instance().unmap(p)) {
      std::fprintf(stderr, "haloshift: emulated device executor: deallocate(%p, %zu) of memory it never allocated\n", p,
                   bytes);
      std::abort();
    }
  }
  void* allocate_pinned(std::size_t bytes) override { return host_allocate(bytes); }
  void deallocate_pinned(void* p, std::size_t) noexcept override { host_free(p); }
  void upload(void* to, const void* from, std::size_t bytes) override { copy(to, from, bytes); }
  void to_host(void* to, const void* from, std::size_t bytes) override { copy_ordered(to, from, bytes); }
  void to_device(void* to, const void* from, std::size_t bytes) override { copy_ordered(to, from, bytes); }
  void run(const batch::segment* table, const batch::launch& l, const batch::bases& b) override {
    if (stream_) return stream_->enqueue([table, l, b] { batch::run_all(table, l, b); });
    const opened all;
    batch::run_all(table, l, b);
  }
  void synchronize() override {
    if (stream_) stream_->synchronize();
  }
  // Stream-ordered exchanges: the work goes on the view's stream and runs when polled or waited for.
  void use_stream(void* s) override { stream_ = static_cast<stream*>(s); }
  void mark() override { mark_ = stream_ ? stream_->enqueued() : 0; }
  /// Not done while work before the mark is pending: runs one item of it and says "not yet", so
  /// that the exchange's polling path (test(), progress()) runs too.
  bool marked_done() override {
    if (!stream_ || stream_->done() >= mark_) return true;
    stream_->step();
    return false;
  }
  void wait_mark() override {
    while (stream_ && stream_->done() < mark_) stream_->step();
  }

 private:
  void copy_ordered(void* to, const void* from, std::size_t bytes) {
    if (!stream_) return copy(to, from, bytes);
    stream_->enqueue([to, from, bytes] { std::memcpy(to, from, bytes); });
  }

  bool direct_;
  stream* stream_ = nullptr;
  std::uint64_t mark_ = 0;
};

}  // namespace haloshift::detail::emulated

namespace haloshift::memory {

/// Emulated device memory: host memory that only the executor may touch (every other access
/// dies with SIGSEGV). For tests of code that runs on a GPU, without one (docs/gpu.md).
struct emulated_device {
  /// An emulated stream: work enqueued on it runs, in order, when it is synchronised or polled.
  using queue = detail::emulated::stream;
  /// The stream a view of this space orders its exchanges on (null: none, the exchange completes
  /// in wait()). With one, unpacking is still pending when wait() returns: `stream->synchronize()`
  /// before reading the arrays.
  queue* stream = nullptr;

  /// `n` elements of uninitialised emulated device memory (fill it with copy_to_device).
  template <class T>
  static T* allocate(std::size_t n) {
    static_assert(std::is_trivially_copyable_v<T>, "emulated device memory holds trivially copyable elements");
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T))
      throw error("emulated_device::allocate: n = " + std::to_string(n) + " elements of " + std::to_string(sizeof(T)) +
                  " bytes exceed the address space");
    return reinterpret_cast<T*>(detail::emulated::registry::instance().map(n * sizeof(T), "emulated_device::allocate"));
  }
  /// Frees what allocate() returned (null: nothing); raises for any other pointer.
  static void deallocate(void* p) {
    if (p && !detail::emulated::registry::instance().unmap(p))
      throw error("emulated_device::deallocate: p = " + detail::emulated::pointer_text(p) +
                  " was not returned by emulated_device::allocate (or was freed already)");
  }
  /// Host memory -> emulated device memory (`to` must lie inside one allocation).
  static void copy_to_device(void* to, const void* from, std::size_t bytes) {
    check_inside("copy_to_device", "to", to, bytes);
    detail::emulated::copy(to, from, bytes);
  }
  /// Emulated device memory -> host memory (`from` must lie inside one allocation).
  static void copy_to_host(void* to, const void* from, std::size_t bytes) {
    check_inside("copy_to_host", "from", from, bytes);
    detail::emulated::copy(to, from, bytes);
  }
  /// The executor of this space (detail::device_space).
  static std::unique_ptr<detail::batch::executor> make_executor(mpi_path path) {
    return std::make_unique<detail::emulated::executor>(detail::emulated::mpi_direct(path));
  }

 private:
  static void check_inside(const char* call, const char* name, const void* p, std::size_t bytes) {
    if (bytes != 0 && !detail::emulated::registry::instance().holds(p, bytes))
      throw error(std::string("emulated_device::") + call + ": " + name + " = " + detail::emulated::pointer_text(p) +
                  " (" + std::to_string(bytes) + " bytes) is not inside memory from emulated_device::allocate");
  }
};

static_assert(detail::device_space<emulated_device>);

}  // namespace haloshift::memory

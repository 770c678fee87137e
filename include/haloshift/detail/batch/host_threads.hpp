// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file host_threads.hpp
/// @brief The executor of host memory on plan_options::pack_threads threads:
/// each launch's words split in equal shares, a few per thread, that the
/// threads (the calling thread one of them) claim as they come and run with
/// run_words. Threads only pack and unpack: MPI stays on the
/// calling thread (MPI_THREAD_FUNNELED is enough). With OpenMP (`_OPENMP`,
/// the user compiles with -fopenmp) the team is OpenMP's; otherwise a pool of
/// std::threads made with the executor, woken per launch without allocating
/// or locking.
///
/// A launch's segments write disjoint targets (compile.hpp puts copies that
/// must be ordered into later launches), so the shares need no ordering
/// between them; run returns when all are done, so there is nothing to
/// synchronize.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "../../error.hpp"
#include "../spin_wait.hpp"
#include "host_run.hpp"
#include "segment.hpp"

namespace haloshift::detail::batch {

/// Launches smaller than this run on the calling thread alone: waking the others costs a few
/// microseconds, about what copying this much from cache does (not tuned by timing).
inline constexpr std::uint64_t min_threaded_bytes = 32 * 1024;

/// min_threaded_bytes, or the environment's HALOSHIFT_PACK_THREADS_MIN_BYTES (0 threads every
/// launch: how the tests make small fields run on the threads).
inline std::uint64_t threaded_bytes_from_environment() {
  return number_from_environment("HALOSHIFT_PACK_THREADS_MIN_BYTES", "bytes", min_threaded_bytes);
}

/// Equal shares of a launch's words per thread, claimed by whichever thread is free: a thread
/// woken late (a futex wake-up is microseconds, a share of a 128^3 face tens of them) then leaves
/// the others fewer idle microseconds than with one share each.
inline constexpr int shares_per_thread = 4;

/// Share `t` of `k` of a launch's words.
inline void run_share(const segment* table, const launch& l, const bases& b, int t, int k) {
  const auto share = [&](int i) { return l.words * static_cast<std::uint64_t>(i) / static_cast<std::uint64_t>(k); };
  run_words(table, l, b, share(t), share(t + 1));
}

/// The most threads a plan packs on (a bound far above any machine's cores: a larger value is
/// a mistake, not a request).
inline constexpr int max_pack_threads = 1024;

/// The pack_threads option checked: 1 to max_pack_threads.
inline void check_pack_threads(int n) {
  if (n < 1 || n > max_pack_threads)
    throw error("plan_options::pack_threads is " + std::to_string(n) + ", must be 1 to " +
                std::to_string(max_pack_threads) + " (1: pack on the calling thread alone)");
}

/// `n` - 1 std::threads that, with the calling thread, run each launch's shares. A launch
/// publishes its job and bumps `generation_` (release); the workers, spinning briefly and then
/// blocked in an atomic wait on it, wake and claim shares, as the caller does, from `ticket_`
/// (the launch's generation and its next unclaimed share); the caller then waits until every
/// share is done. A share no worker has claimed by then the caller runs itself: on a machine
/// whose cores are all busy (other ranks, other jobs) a launch costs what it does on one thread,
/// not a scheduler's time slice spent waiting for a worker to be woken. One launch at a time, from
/// one thread.
class thread_pool {
 public:
  explicit thread_pool(int n) : size_((check_pack_threads(n), n)), shares_(n * shares_per_thread) {
    workers_.reserve(static_cast<std::size_t>(n - 1));
    try {
      for (int t = 1; t < n; ++t) workers_.emplace_back([this] { work(); });
    } catch (...) {  // a thread that could not start: end those that did (else ~thread terminates)
      stop();
      throw;
    }
  }
  ~thread_pool() { stop(); }
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;

  int size() const noexcept { return size_; }

  void run(const segment* table, const launch& l, const bases& b) {
    table_ = table;
    launch_ = &l;
    bases_ = &b;
    const std::uint32_t g = generation_.load(std::memory_order_relaxed) + 1;
    done_.store(0, std::memory_order_relaxed);
    ticket_.store(std::uint64_t{g} << 32, std::memory_order_release);
    generation_.store(g, std::memory_order_release);
    generation_.notify_all();
    claim(g);
    while (!spin([&] { return done_.load(std::memory_order_acquire) == shares_; }))
      if (const int d = done_.load(std::memory_order_acquire); d != shares_) done_.wait(d, std::memory_order_acquire);
  }

 private:
  /// Claims and runs shares of generation `g` until none is left. The job is read only after a
  /// claim: the caller does not move on to the next launch before a claimed share is done.
  void claim(std::uint32_t g) {
    std::uint64_t t = ticket_.load(std::memory_order_acquire);
    while (t >> 32 == g && static_cast<int>(t & 0xffffffffu) < shares_) {
      if (!ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
      run_share(table_, *launch_, *bases_, static_cast<int>(t & 0xffffffffu), shares_);
      if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == shares_) done_.notify_one();
      t = ticket_.load(std::memory_order_acquire);
    }
  }

  /// Whether `done()` holds within spin_ (spin_from_environment); past it the thread blocks.
  template <class Done>
  bool spin(Done&& done) const {
    return spin_for(spin_, std::forward<Done>(done));
  }

  void work() {
    for (std::uint32_t seen = 0;;) {
      while (!spin([&] { return generation_.load(std::memory_order_acquire) != seen; }))
        generation_.wait(seen, std::memory_order_acquire);
      seen = generation_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_relaxed)) return;
      claim(seen);
    }
  }

  void stop() noexcept {
    stop_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (std::thread& w : workers_) w.join();
  }

  int size_, shares_;
  std::chrono::microseconds spin_ = spin_from_environment();
  // The job of the current launch: written before ticket_ is published, read after a claim.
  const segment* table_ = nullptr;
  const launch* launch_ = nullptr;
  const bases* bases_ = nullptr;
  std::atomic<std::uint32_t> generation_{0};  ///< the latest launch (what idle workers wait on)
  std::atomic<std::uint64_t> ticket_{0};      ///< generation << 32 | the next share to claim
  std::atomic<int> done_{0};                  ///< shares of the latest launch done
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;  // last: started once the members above exist
};

#if defined(_OPENMP)
/// OpenMP's team: one parallel loop over the shares per launch. Inside a user's parallel region (nested
/// parallelism off) the region has one thread, which then runs the whole launch.
class openmp_team {
 public:
  explicit openmp_team(int n) : size_(n) { check_pack_threads(n); }
  int size() const noexcept { return size_; }
  void run(const segment* table, const launch& l, const bases& b) {
    const int k = size_ * shares_per_thread;
#pragma omp parallel for schedule(dynamic, 1) num_threads(size_)
    for (int i = 0; i < k; ++i) run_share(table, l, b, i, k);
  }

 private:
  int size_;
};
#endif

/// The executor: host memory, MPI reads it directly, `Team` runs the launches.
template <class Team>
class host_threads final : public executor {
 public:
  /// `n` threads (at least 1; 1: the calling thread alone); launches of fewer than
  /// `min_bytes` bytes run on the calling thread.
  explicit host_threads(int n, std::uint64_t min_bytes = min_threaded_bytes) : team_(n), min_bytes_(min_bytes) {}

  const char* name() const noexcept override { return name_of(static_cast<Team*>(nullptr)); }
  bool host_accessible() const noexcept override { return true; }
  bool mpi_reaches_memory() const noexcept override { return true; }
  void* allocate(std::size_t bytes) override { return ::operator new(bytes, alignment); }
  void deallocate(void* p, std::size_t) noexcept override { ::operator delete(p, alignment); }
  void* allocate_pinned(std::size_t bytes) override { return allocate(bytes); }
  void deallocate_pinned(void* p, std::size_t bytes) noexcept override { deallocate(p, bytes); }
  void upload(void* to, const void* from, std::size_t bytes) override { copy(to, from, bytes); }
  void to_host(void* to, const void* from, std::size_t bytes) override { copy(to, from, bytes); }
  void to_device(void* to, const void* from, std::size_t bytes) override { copy(to, from, bytes); }
  void run(const segment* table, const launch& l, const bases& b) override {
    if (team_.size() == 1 || l.words * l.word_bytes < min_bytes_) return run_all(table, l, b);
    team_.run(table, l, b);
  }
  void synchronize() override {}

 private:
  static constexpr std::align_val_t alignment{64};  // a cache line, as aligned_buffer.hpp's staging
  static void copy(void* to, const void* from, std::size_t bytes) {
    if (bytes) std::memcpy(to, from, bytes);  // never memcpy a null pointer
  }
  static const char* name_of(thread_pool*) { return "host threads (std::thread)"; }
#if defined(_OPENMP)
  static const char* name_of(openmp_team*) { return "host threads (OpenMP)"; }
#endif

  Team team_;
  std::uint64_t min_bytes_;
};

// Which team make_host_threads builds depends on -fopenmp: a program may compile some files with
// it and some without, so each choice is its own function (an inline namespace), not two
// definitions of one.
#if defined(_OPENMP)
inline namespace openmp_abi {
#else
inline namespace thread_abi {
#endif
/// The executor of plan_options::pack_threads = `n` threads: OpenMP's where this file is compiled
/// with OpenMP, else a pool of std::threads; launches under threaded_bytes_from_environment()
/// run on the calling thread.
inline std::unique_ptr<executor> make_host_threads(int n) {
#if defined(_OPENMP)
  return std::make_unique<host_threads<openmp_team>>(n, threaded_bytes_from_environment());
#else
  return std::make_unique<host_threads<thread_pool>>(n, threaded_bytes_from_environment());
#endif
}
}  // namespace openmp_abi / thread_abi

}  // namespace haloshift::detail::batch

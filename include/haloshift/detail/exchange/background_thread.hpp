// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file background_thread.hpp
/// @brief A plan's own thread for its split-phase exchanges
/// (plan_options::background): start hands the whole exchange (packing,
/// messages, unpacking) to it, and the calling thread computes meanwhile.
/// Packing and unpacking are copies on a core: without a core of their own,
/// split phase can hide only the time messages are in flight, a quarter of a
/// 2D face exchange on one node (docs/grids.md, "Overlap").
///
/// One job at a time, handed over through `state_`: the caller queues it, the
/// thread claims and runs it, and a caller that needs the result before the
/// thread has claimed it takes it back and runs it itself (so a blocking
/// exchange, start then wait at once, costs no thread wake-up). Only one of
/// the two threads ever runs a job's MPI calls, and the hand-over orders them
/// (release and acquire): MPI_THREAD_SERIALIZED is enough.

#include <atomic>
#include <chrono>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

#include "../spin_wait.hpp"

namespace haloshift::detail {

class background_thread {
 public:
  /// A job: a function, what it runs on, and the thread (to poll cancelled()).
  using job = void (*)(void* context, const background_thread& thread) noexcept;

  background_thread() : thread_([this] { serve(); }) {}
  ~background_thread() {
    state_.store(quit, std::memory_order_release);
    state_.notify_all();
    thread_.join();
  }
  background_thread(const background_thread&) = delete;
  background_thread& operator=(const background_thread&) = delete;

  /// Queues `run(context)`. The thread must be idle (no job queued or unfinished).
  void submit(job run, void* context) noexcept {
    job_ = run;
    context_ = context;
    cancelled_.store(false, std::memory_order_relaxed);
    state_.store(queued, std::memory_order_release);
    state_.notify_one();
  }
  /// Takes the queued job back if the thread has not claimed it: true if so (the caller then runs
  /// it, or queues it again).
  bool take_back() noexcept {
    int expected = queued;
    return state_.compare_exchange_strong(expected, idle, std::memory_order_acq_rel, std::memory_order_acquire);
  }
  /// Whether the job has finished (the caller may read what it wrote).
  bool finished() const noexcept { return state_.load(std::memory_order_acquire) == done; }
  /// Waits until the job the thread claimed has finished (it stays finished).
  void wait_finished() const noexcept {
    for (int s = state_.load(std::memory_order_acquire); s != done;) s = wait_while_equal(state_, s, spin_);
  }
  /// Waits as wait_finished(), then makes the thread ready for the next job.
  void collect() noexcept {
    wait_finished();
    state_.store(idle, std::memory_order_relaxed);
  }
  /// Asks the running job to stop early (it polls cancelled()); collect() still waits for it.
  void cancel() noexcept { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const noexcept { return cancelled_.load(std::memory_order_relaxed); }

 private:
  enum : int { idle, queued, running, done, quit };

  void serve() noexcept {
    for (int s = state_.load(std::memory_order_acquire);;) {
      if (s == quit) return;
      if (s == queued) {
        if (state_.compare_exchange_strong(s, running, std::memory_order_acq_rel, std::memory_order_acquire)) {
          job_(context_, *this);
          s = running;
          if (!state_.compare_exchange_strong(s, done, std::memory_order_acq_rel, std::memory_order_acquire))
            return;  // quit came during the job: the plan went before its handle
          state_.notify_all();
          s = done;
        }
        continue;  // taken back (s is what it became)
      }
      s = wait_while_equal(state_, s, spin_);
    }
  }

  /// Spinning pays only where the two threads can run at once: a rank bound to one core (what
  /// mpiexec does by default) would spend its own time slice spinning for the other thread.
  static std::chrono::microseconds spin_budget() {
#if defined(__linux__)
    cpu_set_t cores;
    if (sched_getaffinity(0, sizeof cores, &cores) == 0 && CPU_COUNT(&cores) < 2) return {};
#endif
    return spin_from_environment();
  }

  std::chrono::microseconds spin_ = spin_budget();
  job job_ = nullptr;
  void* context_ = nullptr;
  std::atomic<int> state_{idle};
  std::atomic<bool> cancelled_{false};
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace haloshift::detail

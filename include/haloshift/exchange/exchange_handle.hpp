// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file exchange_handle.hpp
/// @brief The handle of a split-phase exchange: what `start_forward` and
/// `start_reverse` of every plan kind return. The blocking `forward` and
/// `reverse` are `start_...(...).wait()`.

#include <exception>
#include <string>
#include <thread>
#include <utility>

#include "../detail/exchange/background_thread.hpp"
#include "../detail/exchange/exchange_run.hpp"
#include "../error.hpp"

namespace haloshift {

namespace detail {
/// Nothing to do once the messages have arrived.
struct no_epilogue {
  void operator()() const noexcept {}
};
}  // namespace detail

/// An exchange in flight. Its first round's messages were posted when it
/// started; `test()` and `progress()` complete what has arrived and post the
/// next round (multi-round strategies advance round by round; `progress()`
/// leaves the last round's arrivals to `wait()`), and `wait()` finishes it. Until `wait()` returns (or `test()` returns true) the plan's
/// arrays are off-limits: the exchange reads the owned entries and writes the
/// ghosts (forward), or reads and combines the ghosts into the owned entries
/// (reverse). The plan may be moved meanwhile but must outlive the handle.
///
/// Destroying a handle whose exchange has not completed finishes the exchange
/// and then throws haloshift::error (every rank does the same, so none hangs);
/// while an exception is already unwinding, it lets go of the messages in
/// flight instead (receives cancelled, so none lands in arrays being
/// destroyed; sends freed), and the plan must not be used again.
template <class Run, class Epilogue = detail::no_epilogue>
class [[nodiscard]] exchange_handle {
 public:
  /// Marks the plan busy and posts the first round, or, for a plan built with
  /// plan_options::background, hands the whole exchange to the plan's thread. The plan stays busy
  /// until the caller sees the exchange
  /// complete, through test() or wait(), even when it had nothing to wait
  /// for: so whether a second start is refused does not depend on timing or
  /// on the rank (a refusal on some ranks only would leave the others waiting).
  exchange_handle(Run run, detail::exchange_resources& res, Epilogue epilogue = {})
      : run_(std::move(run)),
        epilogue_(std::move(epilogue)),
        res_(&res),
        background_(res.background.get()),
        unwinding_(std::uncaught_exceptions()) {
    res.busy = true;
    if (background_) {
      background_->submit(&run_in_background, this);
      return;
    }
    or_let_go([&] { run_.start(); });
  }
  /// Takes over `other`'s exchange; `other` is left done (empty). A background exchange runs on the
  /// handle's address: one its thread has begun is waited for first.
  exchange_handle(exchange_handle&& other) noexcept
      : run_((other.hold_still(), std::move(other.run_))),
        epilogue_(std::move(other.epilogue_)),
        res_(std::exchange(other.res_, nullptr)),
        background_(std::exchange(other.background_, nullptr)),
        failure_(std::move(other.failure_)),
        requeue_(std::exchange(other.requeue_, false)),
        unwinding_(other.unwinding_) {
    if (requeue_) {
      requeue_ = false;
      background_->submit(&run_in_background, this);
    }
  }
  exchange_handle(const exchange_handle&) = delete;
  exchange_handle& operator=(const exchange_handle&) = delete;
  exchange_handle& operator=(exchange_handle&&) = delete;

  /// Completes what has arrived and posts what can go next, without waiting.
  /// True once the whole exchange is done (the arrays are the caller's again).
  bool test() {
    if (!res_) return true;
    if (background_) {
      if (!background_->finished()) {
        // A caller polling in a loop gives way: on a core it shares with the plan's thread (a rank
        // bound to one core) the thread runs only when the caller does not.
        std::this_thread::yield();
        return false;
      }
      collect();
    } else if (!advance(false)) {
      return false;
    }
    complete();
    return true;
  }
  /// For codes that call it between chunks of compute: moves the messages along and posts later
  /// rounds as test() does, but leaves the last round's arrivals to be unpacked by wait() (or
  /// test()), right before the code reads the ghosts. Unpacked here, they scattered a face's
  /// cells (a row, often pages, apart) through the middle of the compute and its caches: on 2
  /// ranks, 2D 4000^2, SingleHop hid -13 % of its exchange with 8 progress calls, 23 % now.
  /// A background exchange's thread moves it along by itself: nothing to do.
  void progress() {
    if (res_ && !background_) (void)advance(false, true);
  }
  /// Waits for and completes the rest of the exchange.
  void wait() {
    if (!res_) return;
    if (background_)
      collect();
    else
      advance(true);
    complete();
  }
  /// Whether the exchange has completed.
  bool done() const noexcept { return res_ == nullptr; }

  /// Finishes an exchange not yet seen to complete and raises (see the class comment).
  ~exchange_handle() noexcept(false) {
    if (!res_) return;
    if (std::uncaught_exceptions() > unwinding_) {  // the peers may have failed too: do not wait for them
      if (background_ && !background_->take_back()) {
        background_->cancel();
        background_->collect();
      }
      run_.abandon();
      release();
      return;
    }
    wait();
    throw error(
        "exchange_handle destroyed before its exchange completed: the destructor finished it; call wait() (or "
        "test() until it returns true) before the handle goes out of scope");
  }

 private:
  /// Runs a step of the exchange on the calling thread. A step that raises lets go of what is still
  /// in flight and of the plan, so the handle is done and its destructor has nothing to wait for.
  template <class Step>
  decltype(auto) or_let_go(Step step) {
    try {
      return step();
    } catch (...) {
      run_.abandon();
      release();
      throw;
    }
  }
  bool advance(bool block, bool hold_last = false) {
    return or_let_go([&] { return run_.advance(block, hold_last); });
  }
  /// The background thread's job: the whole exchange, polled so that a cancel (the caller
  /// unwinding) ends it. A failure is kept for wait() to raise, its messages let go of.
  static void run_in_background(void* self, const detail::background_thread& thread) noexcept {
    exchange_handle& h = *static_cast<exchange_handle*>(self);  // only run_ and failure_: the caller owns the rest
    try {
      h.run_.start();
      while (!h.run_.advance(false))
        if (thread.cancelled()) return;
    } catch (...) {
      h.failure_ = std::current_exception();
      h.run_.abandon();
    }
  }
  /// Ends the background part of the exchange on the calling thread: runs it here if the thread
  /// has not begun it (a wait right after the start: no wake-up paid), else waits for the thread.
  /// Raises what the exchange raised.
  void collect() {
    detail::background_thread* background = std::exchange(background_, nullptr);
    if (background->take_back()) {
      or_let_go([&] {
        run_.start();
        run_.advance(true);
      });
      return;
    }
    background->collect();
    if (failure_) {
      release();
      std::rethrow_exception(std::exchange(failure_, nullptr));
    }
  }
  /// Before a move: no thread may be running this handle's exchange. A job not yet begun is
  /// taken back (and queued again from the new address), one begun is waited for.
  void hold_still() noexcept {
    if (!background_) return;
    if (background_->take_back())
      requeue_ = true;
    else
      background_->wait_finished();
  }

  void release() noexcept {
    res_->busy = false;
    res_ = nullptr;
  }
  void complete() {
    release();
    epilogue_();
  }

  Run run_;
  Epilogue epilogue_;
  detail::exchange_resources* res_;
  /// The plan's background thread while it holds this handle's exchange (queued, running or
  /// finished but not yet collected); else null.
  detail::background_thread* background_ = nullptr;
  std::exception_ptr failure_;  ///< what the background exchange raised
  bool requeue_ = false;        ///< hold_still took the job back: the new handle queues it
  int unwinding_;
};

namespace detail {
/// The check every plan makes before an exchange: one at a time per plan.
inline void check_idle(bool busy, const char* call) {
  if (busy)
    throw error(std::string(call) +
                ": this plan already has an exchange in flight; call wait() on its handle before starting another");
}
/// Raises naming `call` unless the plan is `built`: a moved-from plan of any
/// kind keeps nothing to run (only this rank can know; its peers keep theirs).
/// `builder`, given only for an empty plan that was never built (a default-constructed
/// one), names the call that builds one.
inline void check_not_moved(bool built, const char* call, const char* builder = nullptr) {
  if (built) return;
  if (builder)
    throw error(std::string(call) + ": the plan was never built (it is empty: assign it the plan " + builder +
                " returns)");
  throw error(std::string(call) + ": the plan was moved from (use the plan it was moved to, or build a new one)");
}
}  // namespace detail

}  // namespace haloshift

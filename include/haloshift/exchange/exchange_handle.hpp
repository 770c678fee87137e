// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file exchange_handle.hpp
/// @brief The handle of a split-phase exchange: what `start_forward` and
/// `start_reverse` of every plan kind return. The blocking `forward` and
/// `reverse` are `start_...(...).wait()`.

#include <exception>
#include <string>
#include <utility>

#include "../error.hpp"
#include "../detail/exchange/exchange_run.hpp"

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
  /// Marks the plan busy and posts the first round. The plan stays busy until the caller sees the exchange
  /// complete, through test() or wait(), even when it had nothing to wait
  /// for: so whether a second start is refused does not depend on timing or
  /// on the rank (a refusal on some ranks only would leave the others waiting).
  exchange_handle(Run run, detail::exchange_resources& res, Epilogue epilogue = {})
      : run_(std::move(run)), epilogue_(std::move(epilogue)), res_(&res), unwinding_(std::uncaught_exceptions()) {
    res.busy = true;
    try {
      run_.start();
    } catch (...) {
      run_.abandon();
      release();
      throw;
    }
  }
  /// Takes over `other`'s exchange; `other` is left done (empty).
  exchange_handle(exchange_handle&& other) noexcept
      : run_(std::move(other.run_)), epilogue_(std::move(other.epilogue_)), res_(std::exchange(other.res_, nullptr)),
        unwinding_(other.unwinding_) {}
  exchange_handle(const exchange_handle&) = delete;
  exchange_handle& operator=(const exchange_handle&) = delete;
  exchange_handle& operator=(exchange_handle&&) = delete;

  /// Completes what has arrived and posts what can go next, without waiting.
  /// True once the whole exchange is done (the arrays are the caller's again).
  bool test() {
    if (!res_) return true;
    if (!run_.advance(false)) return false;
    complete();
    return true;
  }
  /// For codes that call it between chunks of compute: moves the messages along and posts later
  /// rounds as test() does, but leaves the last round's arrivals to be unpacked by wait() (or
  /// test()), right before the code reads the ghosts. Unpacked here, they scattered a face's
  /// cells (a row, often pages, apart) through the middle of the compute and its caches: on 2
  /// ranks, 2D 4000^2, SingleHop hid -13 % of its exchange with 8 progress calls, 23 % now.
  void progress() {
    if (res_) (void)run_.advance(false, true);
  }
  /// Waits for and completes the rest of the exchange.
  void wait() {
    if (!res_) return;
    run_.advance(true);
    complete();
  }
  /// Whether the exchange has completed.
  bool done() const noexcept { return res_ == nullptr; }

  /// Finishes an exchange not yet seen to complete and raises (see the class comment).
  ~exchange_handle() noexcept(false) {
    if (!res_) return;
    if (std::uncaught_exceptions() > unwinding_) {  // the peers may have failed too: do not wait for them
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

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file spin_wait.hpp
/// @brief How the library's own threads wait for one another (the pack
/// threads of detail/batch/host_threads.hpp, the background thread of
/// detail/exchange/background_thread.hpp): spin a while, then block in an
/// atomic wait.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "../error.hpp"

namespace haloshift::detail {

/// The environment's `name`, a number (`unit` says of what, for the error), or `otherwise`
/// where it is unset or empty.
inline std::uint64_t number_from_environment(const char* name, const char* unit, std::uint64_t otherwise) {
  const char* text = std::getenv(name);
  if (!text || !*text) return otherwise;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (*end || *text < '0' || *text > '9')
    throw error(std::string("environment variable ") + name + " is '" + text + "', expected a number of " + unit);
  return v;
}

/// How long an idle library thread spins before it blocks, in microseconds: 1000, or the
/// environment's HALOSHIFT_PACK_THREADS_SPIN_US. A blocked thread takes a futex wake-up, tens of
/// microseconds on a virtual machine, to take up the next job, while a share of a 128^3 face is
/// a few; a spinning one takes it up at once, but keeps a core busy the user's other threads or
/// ranks might have used. OpenMP runtimes make the same trade (GOMP_SPINCOUNT, KMP_BLOCKTIME:
/// about a millisecond and 200 ms by default).
inline std::chrono::microseconds spin_from_environment() {
  return std::chrono::microseconds(
      static_cast<std::int64_t>(number_from_environment("HALOSHIFT_PACK_THREADS_SPIN_US", "microseconds", 1000)));
}

/// Whether `done()` holds within `budget`; past it the caller blocks. Timed rather than counted:
/// a pause instruction takes 10 to 140 cycles, by processor.
template <class Done>
bool spin_for(std::chrono::microseconds budget, Done&& done) {
  const auto until = std::chrono::steady_clock::now() + budget;
  for (unsigned i = 1;; ++i) {
    if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (i % 32 == 0 && std::chrono::steady_clock::now() > until) return done();
  }
}

/// Waits until `value` no longer holds `old`: spinning for `budget`, then blocked (it must be
/// notified when it changes). Returns the new value.
template <class T>
T wait_while_equal(const std::atomic<T>& value, T old, std::chrono::microseconds budget) {
  T now = old;
  if (spin_for(budget, [&] { return (now = value.load(std::memory_order_acquire)) != old; })) return now;
  while ((now = value.load(std::memory_order_acquire)) == old) value.wait(old, std::memory_order_acquire);
  return now;
}

}  // namespace haloshift::detail

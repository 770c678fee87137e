// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// How a test drives a split-phase exchange: blocking, or progress() once and
// then wait(), or test() until it is done (every handle kind has the three).

/// How an exchange is driven.
enum class driving { blocking, progress_once, test_until_done };

/// Completes `h` the way `how` says (blocking: wait() alone).
template <class Handle>
void drive(Handle h, driving how) {
  if (how == driving::progress_once) h.progress();
  if (how == driving::test_until_done)
    while (!h.test()) {
    }
  h.wait();
}

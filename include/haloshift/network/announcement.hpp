// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file announcement.hpp
/// @brief A message as the global announcement network delivers it.

#include <cstdint>

namespace haloshift {

namespace detail {
/// One delivered announcement: who posted it, its number among that rank's
/// posts, the step it was sent in, how many hops it took to get here (0 on
/// the rank that posted it) and the message itself.
template <class T>
struct announcement {
  /// The rank that posted it.
  int origin;
  /// Its number among the origin's posts, from 0.
  std::uint32_t sequence;
  /// The step (counting step() calls from 0) in which it was posted.
  long posted_step;
  /// Hops it took to get here; 0 on the rank that posted it.
  int hops;
  /// The message.
  T value;
};
}  // namespace detail

}  // namespace haloshift

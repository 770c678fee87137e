// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file announcement.hpp
/// @brief A message as the global announcement network delivers it.

#include <cstdint>

namespace haloshift {

/// One delivered announcement: who posted it, its number among that rank's
/// posts, the step it was sent in, how many hops it took to get here (0 on
/// the rank that posted it) and the message itself.
template <class T>
struct announcement {
  int origin;
  std::uint32_t sequence;
  long posted_step;
  int hops;
  T value;
};

}  // namespace haloshift

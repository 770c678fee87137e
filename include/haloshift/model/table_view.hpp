// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file table_view.hpp
/// @brief The inner loop of a rendezvous transfer simulated from
/// per-dimension tables (class_simulation::table_transfer): partners,
/// colours and held blocks read off the tables as the recursion reaches a
/// class, nothing stored per class but its send's time.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "../grid/offset.hpp"
#include "transfer_links.hpp"

namespace haloshift::detail {

enum class visit_state : std::uint8_t { none, open, done };  // not a char type: its stores alias nothing else
/// What a message of a given number of blocks costs.
struct message_cost {
  double bytes, seconds, pack, unpack;
};
/// A table transfer's tables as plain pointers, for the recursion that is the simulation's inner
/// loop; the same rules as sent() and received(), with sends and partners read off the tables.
template <bool Alike>
struct table_view {
  std::array<const int*, max_dims> ahead, behind;
  std::array<const std::uint64_t*, max_dims> held;
  std::size_t words;
  int blocks;
  const char* first;
  int colour_dim;
  std::size_t along1, along2;
  const double* now;
  double* done;
  visit_state* state;
  const message_cost* by_count;
  double delta;
  std::size_t deadlocked = static_cast<std::size_t>(-1);  ///< a class caught in a cycle, if any

  bool sends_first(int a, int b, int z) const {
    return colour_dim < 0 || first[colour_dim == 0 ? a : colour_dim == 1 ? b : z] != 0;
  }
  std::size_t at(int a, int b, int z) const {
    return (static_cast<std::size_t>(a) * along1 + static_cast<std::size_t>(b)) * along2 + static_cast<std::size_t>(z);
  }
  /// The blocks class (a, b, z) sends in the transfer: 0 when it sends nothing.
  int sends(int a, int b, int z) const {
    if constexpr (Alike) return blocks;  // every partner there, every block held
    if (ahead[0][a] < 0 || ahead[1][b] < 0 || ahead[2][z] < 0) return 0;
    return words == 0 ? blocks : transfer_links::count_held(held, words, a, b, z);
  }
  bool receives(int a, int b, int z) const {
    if constexpr (Alike) return true;
    return behind[0][a] >= 0 && behind[1][b] >= 0 && behind[2][z] >= 0 &&
           sends(behind[0][a], behind[1][b], behind[2][z]) > 0;
  }
  /// When the receive of class (a, b, z) completes, after unpacking.
  double received(int a, int b, int z) {
    const int fa = behind[0][a], fb = behind[1][b], fz = behind[2][z];
    return sent(fa, fb, fz) + by_count[sends(fa, fb, fz)].unpack;
  }
  /// When the send of class (a, b, z) completes (as class_simulation::sent).
  double sent(int a, int b, int z) {
    const std::size_t c = at(a, b, z);
    if (state[c] == visit_state::done) return done[c];
    if (state[c] == visit_state::open) {  // reported after the pass, not thrown through the recursion
      deadlocked = c;
      return 0;
    }
    state[c] = visit_state::open;
    const bool receives_first = !sends_first(a, b, z) && receives(a, b, z);
    const double ready = receives_first ? received(a, b, z) : now[c];
    const int ta = ahead[0][a], tb = ahead[1][b], tz = ahead[2][z];
    const bool to_sends_first = sends_first(ta, tb, tz) && sends(ta, tb, tz) > 0;
    const double partner = to_sends_first ? sent(ta, tb, tz) : now[at(ta, tb, tz)];
    const message_cost& x = by_count[sends(a, b, z)];
    // as sent() adds them; adding 0 is exact, and skipping it shortens the chain of dependent adds
    // the recursion waits on
    double time = x.pack != 0 ? ready + x.pack : ready;
    time = std::max(time, partner) + x.seconds;
    done[c] = delta != 0 ? time + delta : time;
    state[c] = visit_state::done;
    return done[c];
  }
};

}  // namespace haloshift::detail

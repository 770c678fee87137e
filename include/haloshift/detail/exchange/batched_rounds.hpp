// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file batched_rounds.hpp
/// @brief A batched exchange's rounds (batched_round.hpp) as exchange_run
/// takes them, on a plan with a shared-memory window too: the in-node messages
/// of a batched round go through the window as the plan's host path sends
/// them, so that the way a message takes never depends on the memory either of
/// its ends exchanges (a rank exchanging device memory meets a node partner
/// exchanging host memory in the window). The executor packs every departure
/// into its staging in one launch; a departure the window carries is copied to
/// host memory (batch_run::host: pinned staging, whatever MPI reaches), from
/// there into its slot, and published. An arrival is copied out of its slot
/// (or, lent by a host partner, out of the partner's array: zero copy's
/// gather into the sender's idle slot first) into host memory, then unpacked
/// by the executor with the round's others. A batched sender never lends
/// (device arrays are no shared arrays).

#include <mpi.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "../batch/batched_round.hpp"
#include "../compiled.hpp"
#include "shared_window.hpp"
#include "zero_copy.hpp"

namespace haloshift::detail {

/// A batched exchange's state and steps (exchange_run::batched), forwards or backwards, with
/// the node's window of the plan or without one.
class batched_rounds {
 public:
  batched_rounds() = default;
  batched_rounds(const batch::batch_run& b, shared_window* window, bool backward) noexcept
      : b_(b), window_(window), backward_(backward) {}

  /// Whether the exchange runs batched.
  explicit operator bool() const noexcept { return b_.program != nullptr; }
  const batch::batch_run& run() const noexcept { return b_; }
  const batch::batched_round& round(std::size_t i) const noexcept { return b_.program->rounds[i]; }

  /// Enqueues the packing of batched round `i` (program round `r`); whether its messages wait for
  /// the device (stream-ordered: packed() says when they may go) rather than going at once.
  bool pack(std::size_t i, std::size_t r) {
    batch::pack_round(b_, round(i), windowed(r));
    if (b_.stream) {
      b_.exec->mark();
      return true;
    }
    b_.exec->synchronize();  // MPI and the window read what the executor wrote
    return false;
  }
  /// Whether a stream-ordered round's packing has run (`block`: waits until it has).
  bool packed(bool block) {
    if (block) {
      b_.exec->wait_mark();
      return true;
    }
    return b_.exec->marked_done();
  }

  /// Posts batched round `i`'s messages (program round `r`, packed by now): by MPI, or through
  /// the window, at once where a departure's slot is free, else once it is (take()). Returns how
  /// many receives lead `requests`.
  HALOSHIFT_BUILDER std::size_t post(std::size_t i, std::size_t r, MPI_Comm comm, std::vector<MPI_Request>& requests);

  /// Moves round `i`'s messages through the window that can go (`block`: all); whether all did.
  template <class Data, class Op>
  bool take(std::size_t i, std::size_t r, bool block, MPI_Comm comm, const Data& data, Op& op) {
    const batch::batched_round& br = round(i);
    return window_->take(
        backward_, r, block, comm, [&](std::size_t j, const shared_route& s) { depart(find(br.sends, j), s); },
        [&](std::size_t j, const shared_route& s) {
          const batch::staged_post& c = find(br.receives, j);
          // Never straight into `data` (executor memory): own_layout false gathers a lent array's
          // elements into the sender's idle slot.
          const std::byte* packed = take_arrival(*window_, s, data, op, false, c.bytes);
          if (c.bytes) std::memcpy(b_.host + c.offset, packed, c.bytes);
        });
  }

  /// Enqueues the unpacking of batched round `i` (program round `r`).
  void unpack(std::size_t i, std::size_t r) { batch::unpack_round(b_, round(i), windowed(r)); }

 private:
  /// The route through the window of message `c` of program round `r` (`out`: a departure), or
  /// null where it goes by MPI (no window, another node, above a slot: both ends decide by bytes).
  const shared_route* route(std::size_t r, const batch::staged_post& c, bool out) const {
    if (!window_ || !shared_window::fits(c.bytes)) return nullptr;
    return window_->route(backward_, out, r, c.transfer);
  }
  /// Whether a message of program round `r` goes through the window (what batched_round.hpp asks).
  struct windowed_in {
    const batched_rounds* self;
    std::size_t r;
    bool operator()(const batch::staged_post& c, bool out) const { return self->route(r, c, out) != nullptr; }
  };
  windowed_in windowed(std::size_t r) const noexcept { return {this, r}; }
  /// Copies departure `c` from the host into its free slot `s` and publishes it.
  void depart(const batch::staged_post& c, const shared_route& s) const {
    s.lend(0, 0);
    if (c.bytes) std::memcpy(s.data(), b_.host + c.offset, c.bytes);
    publish(s);
  }
  /// The message of round transfer `j` among `posts` (a round's few: a search is cheap).
  static const batch::staged_post& find(const std::vector<batch::staged_post>& posts, std::size_t j) {
    for (const batch::staged_post& c : posts)
      if (c.transfer == j) return c;
    return posts.front();  // unreachable: the window routes only the round's messages
  }

  batch::batch_run b_{};
  shared_window* window_ = nullptr;
  bool backward_ = false;
};

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER std::size_t batched_rounds::post(std::size_t i, std::size_t r, MPI_Comm comm,
                                                   std::vector<MPI_Request>& requests) {
  const batch::batched_round& br = round(i);
  const std::size_t receives = batch::post_round(b_, br, comm, requests, windowed(r));
  if (!window_) return receives;
  for (const batch::staged_post& c : br.receives)
    if (route(r, c, false)) window_->expect(c.transfer);
  for (const batch::staged_post& c : br.sends)
    if (const shared_route* s = route(r, c, true); s && !window_->defer(c.transfer, *s)) depart(c, *s);
  return receives;
}
#endif

}  // namespace haloshift::detail

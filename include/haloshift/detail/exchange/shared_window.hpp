// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file shared_window.hpp
/// @brief The shared-memory path inside a node (docs/node-aware.md): a plan's
/// messages between two ranks of one node go through an MPI-3 shared window
/// instead of MPI. The sender packs a message into its slot of the window and
/// raises the slot's `ready` counter; the receiver unpacks straight out of the
/// sender's slot and raises its `consumed` counter, which the sender waits for
/// before it writes the slot again (in the next exchange: every message of a
/// program has a slot of its own). No barrier per exchange, no MPI message.

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../../error.hpp"
#include "../../exchange/plan_options.hpp"
#include "../../grid/nodes.hpp"
#include "../mpi/check.hpp"
#include "../mpi/communicator.hpp"
#include "program.hpp"

namespace haloshift::detail {

/// Bytes a message may have to go through the window: larger ones go by MPI
/// (whose single copy through its own shared memory costs as much by then), so
/// a window holds a few MiB per rank at most. Both ends of a message know its
/// size, so they decide alike without telling each other.
inline constexpr std::size_t shared_slot_bytes = 64 * 1024;

/// One message's way through the window, as one end sees it: its slot (two
/// counters, each on its own cache line, then the data) and this end's count
/// of the messages it moved through the slot.
struct shared_route {
  std::byte* slot = nullptr;  ///< null: the message goes by MPI
  std::uint64_t* moved = nullptr;
  std::byte* data() const noexcept { return slot + 2 * line; }
  std::atomic_ref<std::uint64_t> ready() const noexcept { return counter(0); }
  std::atomic_ref<std::uint64_t> consumed() const noexcept { return counter(line); }
  static constexpr std::size_t line = 64;

 private:
  std::atomic_ref<std::uint64_t> counter(std::size_t at) const noexcept {
    return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(slot + at));
  }
};
// The counters are shared between processes: only lock-free atomics are address-free.
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free);

/// Lets MPI progress while a rank waits on a peer of its node: a peer may be
/// waiting on this rank's messages between nodes.
inline void progress_while_waiting(MPI_Comm comm) {
  int flag = 0;
  mpi::check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE), "MPI_Iprobe");
}

/// The sender's side: waits until the receiver took the slot's previous
/// message, then returns where to pack this one.
inline std::byte* claim(const shared_route& r, MPI_Comm comm) {
  while (r.consumed().load(std::memory_order_acquire) != *r.moved) progress_while_waiting(comm);
  return r.data();
}
/// The sender's side: the message is packed; the receiver may read it.
inline void publish(const shared_route& r) { r.ready().store(++*r.moved, std::memory_order_release); }
/// The receiver's side: whether the next message has been published.
inline bool arrived(const shared_route& r) {
  return r.ready().load(std::memory_order_acquire) == *r.moved + 1;
}
/// The receiver's side: the message is unpacked; the sender may reuse the slot.
inline void release(const shared_route& r) { r.consumed().store(++*r.moved, std::memory_order_release); }

/// A plan's window on its node and the routes of its program's messages
/// through it. Built collectively over the node (plan build); the routes are
/// looked up in the senders' directories then, so an exchange only follows
/// pointers.
class shared_window {
 public:
  /// Allocates this rank's slots for `p`'s messages to ranks of its node and
  /// finds the slots of the messages it receives from them (collective over the node).
  shared_window(const program& p, const node_layout& nodes, int rank) : program_(&p), rank_(rank) {
    const std::vector<entry> mine = slots_of(p, nodes);
    const std::size_t bytes = directory_bytes(mine.size()) + mine.size() * slot_bytes;
    MPI_Info info = MPI_INFO_NULL;
    mpi::check(MPI_Info_create(&info), "MPI_Info_create");
    MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each rank's slots on its own NUMA node
    std::byte* base = nullptr;
    const int status = MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, nodes.comm.get(), &base, &win_);
    MPI_Info_free(&info);
    mpi::check(status, "MPI_Win_allocate_shared");
    std::memset(base, 0, bytes);
    const std::uint64_t count = mine.size();
    std::memcpy(base, &count, sizeof count);
    if (!mine.empty()) std::memcpy(base + sizeof count, mine.data(), mine.size() * sizeof(entry));
    sent_.assign(mine.size(), 0);
    // Every directory written and every counter zeroed before any rank reads a peer's.
    mpi::check(MPI_Barrier(nodes.comm.get()), "MPI_Barrier");
    route(p, nodes, base, mine);
  }
  shared_window(const shared_window&) = delete;
  shared_window& operator=(const shared_window&) = delete;
  ~shared_window() { mpi::free_unless_finalized(win_, MPI_WIN_NULL, MPI_Win_free); }

  /// Whether the window carries the messages of `p` (not those of another program run with the same resources).
  bool serves(const program& p) const noexcept { return &p == program_; }
  /// Whether a message of `bytes` goes through the window (both ends decide alike).
  static bool fits(std::size_t bytes) noexcept { return bytes <= shared_slot_bytes; }
  /// The route of the message transfer `j` of program round `r` sends (`out`) or receives,
  /// forwards or `backward`; its slot is null when the message goes by MPI.
  const shared_route& at(bool backward, bool out, std::size_t r, std::size_t j) const noexcept {
    return routes_[backward][out][first_[r] + j];
  }
  /// Whether program round `r` moves any message through the window.
  bool used_in(std::size_t r) const noexcept { return used_[r]; }
  /// Marks the arrival of the current round's transfer `j` as expected through the window.
  bool expect(std::size_t j) noexcept {
    pending_[j] = 1;
    ++waiting_;
    return true;
  }
  /// Unpacks (`deliver(j, data)`) the current round's expected arrivals that are ready, program
  /// round `r` forwards or `backward`; `block`: all of them, letting MPI progress meanwhile.
  /// Whether none is left.
  template <class Deliver>
  bool take(bool backward, std::size_t r, bool block, MPI_Comm comm, Deliver&& deliver) {
    while (waiting_ != 0) {
      for (std::size_t j = 0; j < pending_.size(); ++j) {
        if (!pending_[j]) continue;
        const shared_route& s = at(backward, false, r, j);
        if (!arrived(s)) continue;
        deliver(j, s.data());
        release(s);
        pending_[j] = 0;
        --waiting_;
      }
      if (!block || waiting_ == 0) break;
      progress_while_waiting(comm);
    }
    return waiting_ == 0;
  }
  /// Forgets the expected arrivals (an exchange abandoned by an exception).
  void forget() noexcept {
    std::fill(pending_.begin(), pending_.end(), 0);
    waiting_ = 0;
  }

 private:
  /// A directory entry: the slot (by position) of the message to `receiver` of round `round`, tag `tag`.
  struct entry {
    std::int32_t round, tag, backward, receiver;
  };
  static constexpr std::size_t slot_bytes = 2 * shared_route::line + (shared_slot_bytes + 63) / 64 * 64;
  static std::size_t directory_bytes(std::size_t entries) {
    return (sizeof(std::uint64_t) + entries * sizeof(entry) + 2 * shared_route::line - 1) / (2 * shared_route::line) *
           (2 * shared_route::line);
  }
  /// The message of a transfer this rank sends (`out`) or receives, in direction `backward`.
  static const message& of(const transfer_program& t, bool backward, bool out) {
    return (out != backward) ? t.send : t.recv;
  }
  static bool in_node(const transfer_program& t, const message& m, const node_layout& nodes) {
    return !t.self && m.exists() && nodes.same_node(m.peer);
  }

  /// This rank's slots: every message it sends to a rank of its node, both directions.
  static std::vector<entry> slots_of(const program& p, const node_layout& nodes) {
    std::vector<entry> out;
    for (std::size_t r = 0; r < p.rounds.size(); ++r)
      for (const transfer_program& t : p.rounds[r].transfers)
        for (int backward = 0; backward < 2; ++backward) {
          const message& m = of(t, backward != 0, true);
          if (in_node(t, m, nodes)) out.push_back({static_cast<std::int32_t>(r), t.tag, backward, m.peer});
        }
    return out;
  }

  /// Finds every route: this rank's own slots for what it sends, the senders' for what it receives.
  void route(const program& p, const node_layout& nodes, std::byte* base, const std::vector<entry>& mine) {
    first_.assign(p.rounds.size() + 1, 0);
    std::size_t widest = 0;
    for (std::size_t r = 0; r < p.rounds.size(); ++r) {
      first_[r + 1] = first_[r] + p.rounds[r].transfers.size();
      widest = std::max(widest, p.rounds[r].transfers.size());
    }
    pending_.assign(widest, 0);
    used_.assign(p.rounds.size(), false);
    for (auto& by_direction : routes_)
      for (auto& v : by_direction) v.assign(first_.back(), {});
    std::size_t incoming = 0;
    for (std::size_t r = 0; r < p.rounds.size(); ++r)
      for (std::size_t j = 0; j < p.rounds[r].transfers.size(); ++j)
        for (int backward = 0; backward < 2; ++backward)
          incoming += in_node(p.rounds[r].transfers[j], of(p.rounds[r].transfers[j], backward, false), nodes);
    received_.assign(incoming, 0);  // sized first: routes point into it
    std::size_t next_received = 0;
    for (std::size_t r = 0; r < p.rounds.size(); ++r)
      for (std::size_t j = 0; j < p.rounds[r].transfers.size(); ++j)
        for (int backward = 0; backward < 2; ++backward) {
          const transfer_program& t = p.rounds[r].transfers[j];
          const message& out = of(t, backward, true);
          if (in_node(t, out, nodes)) {
            const std::size_t s = find(mine, {static_cast<std::int32_t>(r), t.tag, backward, out.peer});
            routes_[backward][1][first_[r] + j] = {base + directory_bytes(mine.size()) + s * slot_bytes, &sent_[s]};
            used_[r] = true;
          }
          const message& in = of(t, backward, false);
          if (in_node(t, in, nodes)) {
            routes_[backward][0][first_[r] + j] = {slot_of_sender(nodes, in.peer, {static_cast<std::int32_t>(r),
                                                                                    t.tag, backward, rank_}),
                                                   &received_[next_received++]};
            used_[r] = true;
          }
        }
  }

  /// Where sender `peer` (a grid rank of this node) keeps the message `wanted` describes.
  std::byte* slot_of_sender(const node_layout& nodes, int peer, const entry& wanted) const {
    MPI_Aint size = 0;
    int unit = 0;
    std::byte* base = nullptr;
    mpi::check(MPI_Win_shared_query(win_, node_rank(nodes, peer), &size, &unit, &base), "MPI_Win_shared_query");
    std::uint64_t count = 0;
    std::memcpy(&count, base, sizeof count);
    std::vector<entry> theirs(count);
    if (count) std::memcpy(theirs.data(), base + sizeof count, count * sizeof(entry));
    return base + directory_bytes(count) + find(theirs, wanted) * slot_bytes;
  }
  static std::size_t find(const std::vector<entry>& in, const entry& wanted) {
    for (std::size_t s = 0; s < in.size(); ++s)
      if (in[s].round == wanted.round && in[s].tag == wanted.tag && in[s].backward == wanted.backward &&
          in[s].receiver == wanted.receiver)
        return s;
    throw error("shared-memory path: no slot for a message of round " + std::to_string(wanted.round) + ", tag " +
                std::to_string(wanted.tag) + " (the ranks of a node built different programs)");
  }
  /// The rank of grid rank `peer` in the node's communicator (ordered by grid rank: nodes.hpp).
  static int node_rank(const node_layout& nodes, int peer) {
    int below = 0;
    for (int r = 0; r < peer; ++r) below += nodes.same_node(r);
    return below;
  }

  const program* program_;
  int rank_;
  MPI_Win win_ = MPI_WIN_NULL;
  std::vector<std::size_t> first_;  ///< per round, its first transfer's index in the routes
  std::vector<shared_route> routes_[2][2];  ///< [backward][out][transfer]
  std::vector<bool> used_;
  std::vector<char> pending_;  ///< per transfer of the round being run: its arrival is expected through the window
  std::size_t waiting_ = 0;    ///< how many are
  std::vector<std::uint64_t> sent_, received_;  ///< messages moved through each route, counted by its end here
};

/// Makes `window` carry `p`'s messages inside the node when `options` ask for
/// the shared-memory path (point-to-point, overlapping protocol). Collective
/// over the grid (a plan build). A selective plan rebuilt drops its window
/// first (its transfers follow the new selection) and makes a new one.
inline void share_node_memory(std::unique_ptr<shared_window>& window, const program& p, grid_context& context,
                              const plan_options& options) {
  window.reset();
  if (options.shared_memory && options.mode == protocol::overlapping)
    window = std::make_unique<shared_window>(p, nodes_of(context), context.comm.rank());
}

}  // namespace haloshift::detail

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
/// Where the sender's array lives in node-shared memory (shared_array), the
/// slot carries no data: it lends the array (zero_copy.hpp), and the receiver
/// copies out of it before it raises `consumed`.

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "../../error.hpp"
#include "../../exchange/plan_options.hpp"
#include "../../grid/nodes.hpp"
#include "../compiled.hpp"
#include "../mpi/check.hpp"
#include "../mpi/communicator.hpp"
#include "executor.hpp"
#include "lent_copies.hpp"
#include "node_segment.hpp"
#include "program.hpp"
#include "shared_route.hpp"

namespace haloshift::detail {

/// A plan's window on its node and the routes of its program's messages
/// through it. Built collectively over the node (plan build); the routes are
/// looked up in the senders' directories then, so an exchange only follows
/// pointers. A sender's part of the window: its directory (an entry per slot),
/// its slots, then the element runs of each slot's message in the sender's
/// array, from which each receiver pairs the sender's elements with its own
/// once, for zero copy.
class shared_window {
 public:
  /// Allocates this rank's slots for `p`'s messages to ranks of its node and
  /// finds the slots of the messages it receives from them (collective over the node).
  /// `headroom`: half as much again, for a plan rebuilt often (refit()).
  shared_window(const program& p, const node_layout& nodes, int rank, bool headroom = false)
      : rank_(rank), segments_(nodes.segments) {
    const part mine = part_of(p, nodes);
    capacity_ = headroom ? mine.bytes + mine.bytes / 2 : mine.bytes;
    win_ = allocate_node_shared(capacity_, nodes.comm.get(), base_);  // each rank's slots on its own NUMA node
    std::memset(base_, 0, capacity_);
    open(p, nodes, mine);
  }
  /// Carries `p` (a rebuilt plan's program) in the memory the window has, where every rank's
  /// new slots fit in its part; whether they did (if not, nothing changed: make a new window).
  /// Collective over the node. A particle plan rebuilds every few steps, and a new window cost
  /// 400-550 us a rebuild at 2 ranks (allocation, first touch and freeing), more than the
  /// exchanges between rebuilds saved.
  HALOSHIFT_BUILDER bool refit(const program& p, const node_layout& nodes);
  /// Serves no program until refit() (a rebuild compiles the new program where the old one was,
  /// and runs its count exchange first: neither may take the old routes).
  void retire() noexcept {
    program_ = nullptr;
    lineage_ = 0;
  }
  shared_window(const shared_window&) = delete;
  shared_window& operator=(const shared_window&) = delete;
  ~shared_window() { mpi::free_unless_finalized(win_, MPI_WIN_NULL, MPI_Win_free); }

  /// Whether the window carries the messages of `p`: its program, or one derived from it (a field
  /// view of another layout, a bundle, several fields: remap.hpp), whose rounds, transfers and
  /// peers are its program's, so both ends of every message take the window whatever array each
  /// passes; not another program run with the same resources (a plan build's count exchange).
  bool serves(const program& p) const noexcept { return &p == program_ || (lineage_ && p.lineage == lineage_); }
  /// Whether `p` is the window's own program, laid out as the runs its copies pair (zero copy
  /// lends and copies straight into arrays of that layout only).
  bool lays_out(const program& p) const noexcept { return &p == program_; }
  /// Whether a message of `bytes` goes through the window (both ends decide alike).
  static bool fits(std::size_t bytes) noexcept { return bytes <= shared_slot_bytes; }
  /// The route of the message transfer `j` of program round `r` sends (`out`) or receives,
  /// forwards or `backward`; its slot is null when the message goes by MPI.
  const shared_route& at(bool backward, bool out, std::size_t r, std::size_t j) const noexcept {
    return routes_[backward][out][first_[r] + j];
  }
  /// The same, or null when the message goes by MPI.
  const shared_route* route(bool backward, bool out, std::size_t r, std::size_t j) const noexcept {
    const shared_route& s = at(backward, out, r, j);
    return s.slot ? &s : nullptr;
  }
  /// Whether program round `r` moves any message through the window.
  bool used_in(std::size_t r) const noexcept { return used_[r]; }

  /// The node's shared arrays (what a sender may lend, where a receiver finds a lent one).
  const node_segments& segments() const noexcept { return *segments_; }
  /// Elements from its start an array must hold for this rank to lend it, forwards or
  /// `backward`: past the last element its messages through the window carry.
  std::size_t extent(bool backward) const noexcept { return extent_[backward]; }
  /// The receiver's copies out of the sender's array for the message of route `in`.
  std::span<const lent_copy> copies_of(const shared_route& in) const noexcept {
    return {copies_.data() + in.copies_first, in.copies_last - in.copies_first};
  }
  /// The same copies into the message packed, in message order (for a program of another layout).
  std::span<const lent_copy> packed_copies_of(const shared_route& in) const noexcept {
    return {copies_.data() + in.copies_last, in.packed_last - in.copies_last};
  }
  /// Notes that the message of `out` was lent (published as the sender's array): the exchange
  /// completes only once its receiver has copied it (returned()).
  void lent(const shared_route& out) { lent_.push_back(&out); }  // capacity: every route out
  /// Whether the receivers of every lent message have copied it (`block`: waits until they
  /// have, letting MPI progress meanwhile): until then the sender's array must not change.
  bool returned(bool block, MPI_Comm comm) {
    for (unsigned spins = 0;;) {
      while (!lent_.empty() && writable(*lent_.back())) lent_.pop_back();
      if (lent_.empty() || !block) return lent_.empty();
      progress_while_waiting(comm, spins);
    }
  }

  /// Marks the arrival of the current round's transfer `j` as expected through the window.
  bool expect(std::size_t j) noexcept {
    pending_[j] |= arrival;
    ++waiting_;
    return true;
  }
  /// Whether the departure of the current round's transfer `j` through `out` waits (its
  /// receiver has not taken the previous exchange's message yet: a split-phase exchange still in
  /// flight there); take() sends it once the slot is free, so that start() never blocks.
  bool defer(std::size_t j, const shared_route& out) noexcept {
    if (writable(out)) return false;
    pending_[j] |= departure;
    ++waiting_;
    return true;
  }
  /// Sends (`depart(j, route)`: packs or lends, then publishes) the current round's deferred
  /// departures whose slots are free and takes (`arrive(j, route)`) its expected arrivals that
  /// are ready, program round `r` forwards or `backward`; `block`: all of them, letting MPI
  /// progress meanwhile. Whether none is left.
  template <class Depart, class Arrive>
  bool take(bool backward, std::size_t r, bool block, MPI_Comm comm, Depart&& depart, Arrive&& arrive) {
    for (unsigned spins = 0; waiting_ != 0;) {
      for (std::size_t j = 0; j < pending_.size(); ++j) {
        const shared_route& out = at(backward, true, r, j);
        if ((pending_[j] & departure) && writable(out)) {
          depart(j, out);
          pending_[j] &= ~departure;
          --waiting_;
        }
        const shared_route& in = at(backward, false, r, j);
        if (!(pending_[j] & arrival) || !arrived(in)) continue;
        arrive(j, in);
        release(in);
        pending_[j] &= ~arrival;
        --waiting_;
      }
      if (!block || waiting_ == 0) break;
      progress_while_waiting(comm, spins);
    }
    return waiting_ == 0;
  }
  /// Forgets the expected arrivals and the lent messages (an exchange abandoned by an exception).
  void forget() noexcept {
    std::fill(pending_.begin(), pending_.end(), 0);
    waiting_ = 0;
    lent_.clear();
  }

 private:
  /// A directory entry: the slot (by position) of the message to `receiver` of round `round`,
  /// tag `tag`, and where its runs lie among the part's runs.
  struct entry {
    std::int32_t round, tag, backward, receiver;
    std::uint64_t runs_first, runs_count;
  };
  static constexpr std::size_t slot_bytes = 2 * shared_route::line + (shared_slot_bytes + 63) / 64 * 64;
  static std::size_t directory_bytes(std::size_t entries) {
    return (sizeof(std::uint64_t) + entries * sizeof(entry) + 2 * shared_route::line - 1) / (2 * shared_route::line) *
           (2 * shared_route::line);
  }
  /// Where the runs of a part with `entries` slots begin.
  static std::byte* runs_of(std::byte* base, std::size_t entries) {
    return base + directory_bytes(entries) + entries * slot_bytes;
  }
  /// This rank's part of the window for a program: its slots (directory entries), their runs, its bytes.
  struct part {
    std::vector<entry> slots;
    std::vector<element_run> runs;
    std::size_t bytes = 0;
  };
  HALOSHIFT_BUILDER part part_of(const program& p, const node_layout& nodes);
  /// Writes `mine`'s directory and runs, then (once every rank of the node has) finds the routes.
  HALOSHIFT_BUILDER void open(const program& p, const node_layout& nodes, const part& mine);
  /// The message of a transfer this rank sends (`out`) or receives, in direction `backward`.
  static const message& of(const transfer_program& t, bool backward, bool out) {
    return (out != backward) ? t.send : t.recv;
  }
  static bool in_node(const transfer_program& t, const message& m, const node_layout& nodes) {
    return !t.self && m.exists() && nodes.same_node(m.peer);
  }
  /// The runs message `m` carries in `layout`'s array, in message order, appended to `runs`
  /// (empty blocks left out: pair_runs ends at an empty run).
  static void append_runs(const block_layout& layout, const message& m, std::vector<element_run>& runs) {
    for_each_run(layout, m, [&](std::size_t first, std::size_t count) {
      if (count) runs.push_back({first, count});
    });
  }

  /// This rank's slots: every message it sends to a rank of its node, both directions; their
  /// runs appended to `runs`, and the extent of each direction's.
  HALOSHIFT_BUILDER std::vector<entry> slots_of(const program& p, const node_layout& nodes,
                                                std::vector<element_run>& runs);

  /// Finds every route: this rank's own slots for what it sends, the senders' for what it receives.
  HALOSHIFT_BUILDER void route(const program& p, const node_layout& nodes, std::byte* base,
                               const std::vector<entry>& mine);

  /// The route of arrival `in`, described by `wanted`: the slot in its sender's part, and the
  /// copies that pair the sender's elements (its runs there) with this rank's.
  shared_route route_from(const block_layout& layout, const node_layout& nodes, const message& in,
                          const entry& wanted) {
    shared_route r;
    r.sender = node_rank(nodes, in.peer);
    MPI_Aint size = 0;
    int unit = 0;
    std::byte* base = nullptr;
    mpi::check(MPI_Win_shared_query(win_, r.sender, &size, &unit, &base), "MPI_Win_shared_query");
    std::uint64_t count = 0;
    std::memcpy(&count, base, sizeof count);
    std::vector<entry> theirs(count);
    if (count) std::memcpy(theirs.data(), base + sizeof count, count * sizeof(entry));
    const std::size_t s = find(theirs, wanted);
    r.slot = base + directory_bytes(count) + s * slot_bytes;
    std::vector<element_run> sent(theirs[s].runs_count), received;
    if (!sent.empty())
      std::memcpy(sent.data(), runs_of(base, count) + theirs[s].runs_first * sizeof(element_run),
                  sent.size() * sizeof(element_run));
    append_runs(layout, in, received);
    r.copies_first = copies_.size();
    pair_runs(sent, received, copies_);
    r.copies_last = copies_.size();
    for (const element_run& e : sent) r.lent_elements += e.count;
    const element_run packed{0, r.lent_elements};
    pair_runs(sent, std::span<const element_run>(&packed, 1), copies_);
    r.packed_last = copies_.size();
    return r;
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

  const program* program_ = nullptr;
  std::uint64_t lineage_ = 0;  ///< program_'s (serves())
  int rank_;
  std::shared_ptr<node_segments> segments_;
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* base_ = nullptr;  ///< this rank's part
  std::size_t capacity_ = 0;   ///< its bytes
  std::vector<std::size_t> first_;  ///< per round, its first transfer's index in the routes
  std::vector<shared_route> routes_[2][2];  ///< [backward][out][transfer]
  std::vector<bool> used_;
  static constexpr char arrival = 1, departure = 2;
  std::vector<char> pending_;  ///< per transfer of the round being run: its arrival, its deferred departure
  std::size_t waiting_ = 0;    ///< how many are
  std::vector<std::uint64_t> sent_, received_;  ///< messages moved through each route, counted by its end here
  std::size_t extent_[2] = {0, 0};             ///< per direction: extent()
  std::vector<lent_copy> copies_;              ///< the receiver's copies of every route in (copies_of)
  std::vector<const shared_route*> lent_;      ///< the current exchange's lent messages not yet seen copied
};

/// Makes `window` carry `p`'s messages inside the node when `options` ask for the shared-memory path
/// (point-to-point, overlapping protocol). Collective over the grid (a plan build). A plan rebuilt or
/// relocated (it has a window) keeps its window's memory where the new slots fit, else grows a new one.
HALOSHIFT_BUILDER void share_node_memory(std::unique_ptr<shared_window>& window, const program& p,
                                         grid_context& context, const plan_options& options);
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER void share_node_memory(std::unique_ptr<shared_window>& window, const program& p,
                                         grid_context& context, const plan_options& options) {
  const bool rebuilt = window != nullptr;
  if (rebuilt && window->refit(p, nodes_of(context))) return;
  window.reset();
  if (options.shared_memory && options.mode == protocol::overlapping)
    window = std::make_unique<shared_window>(p, nodes_of(context), context.comm.rank(), rebuilt);
}
#endif

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER bool shared_window::refit(const program& p, const node_layout& nodes) {
  const part mine = part_of(p, nodes);
  int fits = mine.bytes <= capacity_, all = 0;
  // Also the point after which no partner reads this rank's old slots: each one enters the
  // rebuild only once its exchanges are done.
  mpi::check(MPI_Allreduce(&fits, &all, 1, MPI_INT, MPI_MIN, nodes.comm.get()), "MPI_Allreduce");
  if (!all) return false;
  const std::size_t count = mine.slots.size();
  for (std::size_t s = 0; s < count; ++s)  // the new slots' counters (the old ones' bytes may lie there)
    std::memset(base_ + directory_bytes(count) + s * slot_bytes, 0, 2 * shared_route::line);
  copies_.clear();
  lent_.clear();
  open(p, nodes, mine);
  return true;
}

HALOSHIFT_BUILDER shared_window::part shared_window::part_of(const program& p, const node_layout& nodes) {
  part mine;
  extent_[0] = extent_[1] = 0;
  mine.slots = slots_of(p, nodes, mine.runs);
  mine.bytes =
      directory_bytes(mine.slots.size()) + mine.slots.size() * slot_bytes + mine.runs.size() * sizeof(element_run);
  return mine;
}

HALOSHIFT_BUILDER void shared_window::open(const program& p, const node_layout& nodes, const part& mine) {
  program_ = &p;
  lineage_ = p.lineage;
  const std::uint64_t count = mine.slots.size();
  std::memcpy(base_, &count, sizeof count);
  if (count) std::memcpy(base_ + sizeof count, mine.slots.data(), count * sizeof(entry));
  if (!mine.runs.empty()) std::memcpy(runs_of(base_, count), mine.runs.data(), mine.runs.size() * sizeof(element_run));
  sent_.assign(count, 0);
  lent_.reserve(count);
  // Every directory written and every counter zeroed before any rank reads a peer's.
  mpi::check(MPI_Barrier(nodes.comm.get()), "MPI_Barrier");
  route(p, nodes, base_, mine.slots);
}

HALOSHIFT_BUILDER std::vector<shared_window::entry> shared_window::slots_of(const program& p, const node_layout& nodes,
                                                                            std::vector<element_run>& runs) {
  std::vector<entry> out;
  for (std::size_t r = 0; r < p.rounds.size(); ++r)
    for (const transfer_program& t : p.rounds[r].transfers)
      for (int backward = 0; backward < 2; ++backward) {
        const message& m = of(t, backward != 0, true);
        if (!in_node(t, m, nodes)) continue;
        const std::size_t first = runs.size();
        append_runs(p.layout, m, runs);
        for (std::size_t i = first; i < runs.size(); ++i)
          extent_[backward] = std::max(extent_[backward], runs[i].first + runs[i].count);
        out.push_back({static_cast<std::int32_t>(r), t.tag, backward, m.peer, first, runs.size() - first});
      }
  return out;
}

HALOSHIFT_BUILDER void shared_window::route(const program& p, const node_layout& nodes, std::byte* base,
                                            const std::vector<entry>& mine) {
  first_.assign(p.rounds.size() + 1, 0);
  std::size_t widest = 0, incoming = 0;
  for (std::size_t r = 0; r < p.rounds.size(); ++r) {
    first_[r + 1] = first_[r] + p.rounds[r].transfers.size();
    widest = std::max(widest, p.rounds[r].transfers.size());
    for (const transfer_program& t : p.rounds[r].transfers)
      for (int backward = 0; backward < 2; ++backward) incoming += in_node(t, of(t, backward, false), nodes);
  }
  pending_.assign(widest, 0);
  used_.assign(p.rounds.size(), false);
  for (auto& by_direction : routes_)
    for (auto& v : by_direction) v.assign(first_.back(), {});
  received_.assign(incoming, 0);  // sized first: routes point into it
  std::size_t next_received = 0;
  for (std::size_t r = 0; r < p.rounds.size(); ++r)
    for (std::size_t j = 0; j < p.rounds[r].transfers.size(); ++j)
      for (int backward = 0; backward < 2; ++backward) {
        const transfer_program& t = p.rounds[r].transfers[j];
        const message& out = of(t, backward, true);
        const entry key{static_cast<std::int32_t>(r), t.tag, backward, out.peer, 0, 0};
        if (in_node(t, out, nodes)) {
          const std::size_t s = find(mine, key);
          shared_route& to = routes_[backward][1][first_[r] + j];
          to = {base + directory_bytes(mine.size()) + s * slot_bytes, &sent_[s]};
          to.runs = mine[s].runs_count;
          to.elements = out.count;
          used_[r] = true;
        }
        const message& in = of(t, backward, false);
        if (!in_node(t, in, nodes)) continue;
        shared_route& from = routes_[backward][0][first_[r] + j];
        from = route_from(p.layout, nodes, in, {key.round, key.tag, key.backward, rank_, 0, 0});
        from.moved = &received_[next_received++];
        used_[r] = true;
      }
}
#endif

}  // namespace haloshift::detail

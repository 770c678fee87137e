// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file maxplus_engine.hpp
/// @brief The max-plus engine: one schedule simulated on classes of ranks
/// (model/simulation/rank_classes.hpp), one representative per class.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "../../grid/grid_shape.hpp"
#include "../../detail/schedule/colouring.hpp"
#include "../../schedule/schedule.hpp"
#include "class_messages.hpp"
#include "partner_tables.hpp"
#include "rank_classes.hpp"
#include "round_slots.hpp"
#include "simulation_setup.hpp"

namespace haloshift::detail {

/// One simulation over the classes of ranks a schedule cannot tell apart
/// (model/simulation/rank_classes.hpp): every class is simulated once, by its
/// representative, and a message between ranks is looked up from the
/// receiver's side, so each class reads the times of its partners' classes.
/// With every rank its own class this is the plain max-plus simulation of
/// every rank; with coarser classes it computes the same numbers, bit for
/// bit, because the operations each class performs are those of each of its
/// members, in the same order.
class maxplus_engine : class_messages {
 public:
  /// `uniform_bytes`: the size of every rank's block, or < 0 when they differ.
  maxplus_engine(const grid_shape& grid, const schedule& s, const simulation_setup& setup, rank_classes classes,
                 double uniform_bytes)
      : class_messages(grid, s, setup, std::move(classes), uniform_bytes),
        listed_(names_senders(s) && n_ == grid.size()) {
    now_.assign(static_cast<std::size_t>(n_), 0.0);
  }

  simulation_result run() {
    for (std::size_t round = 0; round < s_.rounds.size(); ++round) {
      if (setup_.mode == protocol::overlapping || setup_.launches)  // a batched round never blocks in a send
        overlapping_round(round);
      else
        for (std::size_t ti = 0; ti < s_.rounds[round].transfers.size(); ++ti) rendezvous_transfer(round, ti);
    }
    return result();
  }

  const rank_classes& classes() const noexcept { return classes_; }  ///< The classes simulated now.
  /// Merges the classes whose times agree bit for bit (rank_classes::merged_where_equal), never across
  /// classes of `keep_apart` (those the staging bits follow). Max-plus times forget where they came
  /// from: a border's effect reaches a few boxes inward, so merging after each rendezvous transfer keeps
  /// a handful of classes per dimension; the next transfer's window tells apart what it must (`also`).
  void merge_alike(const rank_classes* keep_apart) {
    rank_classes coarser = classes_.merged_where_equal(now_, keep_apart);
    if (coarser.size() < classes_.size()) refine(std::move(coarser));
  }

  /// Goes on with other classes on which the times so far are constant: finer ones (each a part of
  /// one of the current classes), or unions of current classes with equal times (merge_alike). Every
  /// class starts from the time of the class its representative is in now.
  void refine(rank_classes finer) {
    // Room for the finer classes at once in every per-class array, so that none of them grows (and
    // moves) step by step afterwards.
    for (std::vector<double>* times : {&now_, &next_, &done_}) times->reserve(static_cast<std::size_t>(finer.size()));
    std::array<std::vector<int>, max_dims> was;  // per finer class along d: the class along d it was in
    for (int d = 0; d < max_dims; ++d)
      for (int j = 0; j < finer.classes_along(d); ++j)
        was[d].push_back(classes_.class_along(d, finer.first_along(d, j)));
    next_.resize(static_cast<std::size_t>(finer.size()));
    const std::array<int, max_dims> before = along_;
    for (int d = 0; d < max_dims; ++d) along_[d] = finer.classes_along(d);
    each_class([&](std::size_t c, int a, int b, int z) {
      const std::size_t old =
          (static_cast<std::size_t>(was[0][static_cast<std::size_t>(a)]) * static_cast<std::size_t>(before[1]) +
           static_cast<std::size_t>(was[1][static_cast<std::size_t>(b)])) *
              static_cast<std::size_t>(before[2]) +
          static_cast<std::size_t>(was[2][static_cast<std::size_t>(z)]);
      next_[c] = now_[old];
    });
    now_.swap(next_);
    classes_ = std::move(finer);
    n_ = classes_.size();
  }

  /// Rendezvous, one transfer: every class has at most a send and a receive, in its colour's order; a
  /// synchronous message starts when both ends have reached it and is a dependency step of both.
  void rendezvous_transfer(std::size_t round, std::size_t ti) {
    const transfer& t = s_.rounds[round].transfers[ti];
    const std::size_t n = static_cast<std::size_t>(n_);
    link(t, links_);
    state_.resize(n);
    done_.resize(n);
    next_.resize(n);
    const auto colour = [this](int a, int b, int z) {
      const int d = links_.colour_dim;
      return d < 0 || links_.first[static_cast<std::size_t>(partner_tables::along_dim(d, a, b, z))];
    };
    const double copy_beta = setup_.cost.copy_beta();
    from_.resize(n);
    first_send_.resize(n);
    if (listed_ && !t.senders.only.empty()) {  // named senders, a class per rank: only they send
      sends_.assign(n, send{});
      for (const offset& x : t.senders.only) {
        const auto c = static_cast<std::size_t>(classes_.class_of(x));
        sends_[c] = send_of(c, links_, t, classes_.class_along(0, x[0]), classes_.class_along(1, x[1]),
                            classes_.class_along(2, x[2]));
      }
    } else {
      sends_.resize(n);
      each_class([&](std::size_t c, int a, int b, int z) { sends_[c] = send_of(c, links_, t, a, b, z); });
    }
    count(sends_, 1);
    each_class([&](std::size_t c, int a, int b, int z) {
      if (copy_beta > 0 && !sends_[c].exists) now_[c] += copy_beta * copy_bytes(c, links_, t, a, b, z);
      const std::size_t from = sender_of(links_, sends_, 0, 1, a, b, z);
      from_[c] = from == none ? no_class : static_cast<std::uint32_t>(from);
      first_send_[c] = colour(a, b, z);
      state_[c] = 0;
    });
    complete(round, ti);
  }

  /// The times so far, per rank, and the messages counted.
  simulation_result result() const {
    return {n_ ? *std::max_element(now_.begin(), now_.end()) : 0.0, classes_.per_rank(grid_, now_), messages_, bytes_};
  }

 private:
  /// Overlapping: each class posts its sends in order (packing, then gap + beta m each), a message
  /// completes `time(m)` after both ends are in the round, a class's round ends with its last message,
  /// then the round's delta (if it communicated) and the unpacking of its staged receives.
  void overlapping_round(std::size_t round) {
    const schedule_round& r = s_.rounds[round];
    const std::size_t transfers = r.transfers.size(), n = static_cast<std::size_t>(n_);
    const bool device = static_cast<bool>(setup_.launches);
    const double copy_beta = device ? 0.0 : setup_.cost.copy_beta();  // on a device packing is a launch's
    if (round_links_.size() < transfers) round_links_.resize(transfers);
    for (std::size_t ti = 0; ti < transfers; ++ti) link(r.transfers[ti], round_links_[ti]);
    if (!listed_) slots_.dense(transfers);
    const std::size_t slots = listed_ ? slots_.list(classes_, r) : n * transfers;
    sends_.assign(slots, send{});
    departs_.assign(slots, 0.0);
    next_ = now_;
    each_class([&](std::size_t c, int a, int b, int z) {
      each_slot(c, [&](std::size_t slot, std::size_t ti) {
        sends_[slot] = send_of(c, round_links_[ti], r.transfers[ti], a, b, z);
      });
    });
    if (listed_) slots_.list_receivers(sends_);
    count(sends_, listed_ ? 0 : transfers);
    each_class([&](std::size_t c, int a, int b, int z) {
      const std::size_t first = slots_.first(c), last = slots_.last(c);
      // The gap grows with the messages a class posts in the round: counted only when it matters.
      double posted = 1;
      if (setup_.cost.gamma_growth() > 0) {
        posted = 0;
        for (std::size_t slot = first; slot < last; ++slot) posted += sends_[slot].exists;
      }
      double port = device ? device_cost(c, round, a, b, z).first : 0.0;  // the packing launches first
      next_[c] += port;  // next_ is now_ here
      const bool mixed = routes_differ(sends_.data() + first, last - first);
      jobs_.clear();
      each_slot(c, [&](std::size_t slot, std::size_t ti) {
        send& x = sends_[slot];
        if (!x.exists) {
          if (copy_beta > 0) {  // a copy delays the class's later sends and its end of round
            port += copy_beta * copy_bytes(c, round_links_[ti], r.transfers[ti], a, b, z);
            next_[c] = std::max(next_[c], now_[c] + port);
          }
          return;
        }
        // Packed before it leaves (through the window: into the slot, its one copy, in x.seconds).
        if (!x.route.windowed(x.bytes) && staging(c, round, ti) & 1u) port += copy_beta * x.bytes;
        const double depart = departs_[slot] = now_[c] + port, inject = x.route.injection(x.bytes, posted);
        if (mixed) jobs_.push_back({depart + std::max(0.0, x.seconds - inject), inject, 0, slot});
        if (mixed) return;  // served latency first below
        next_[c] = std::max(next_[c], std::max(depart, now_[x.to]) + x.seconds);
        port += inject;
      });
      // Listed slots skip the transfers a class does not send in, where a dense slot meets `port` as a copy
      // of nothing would: after its last slot (earlier ones are covered by the sends after them).
      if (listed_ && copy_beta > 0 && (first == last || slots_.transfer_of(c, last - 1) + 1 < transfers))
        next_[c] = std::max(next_[c], now_[c] + port);
      serve_latency_first(c);
    });
    receive_round(round, copy_beta);
  }

  /// Calls f(slot, transfer) for class c's slots of the round, in transfer order.
  template <class F>
  void each_slot(std::size_t c, F&& f) const {
    for (std::size_t slot = slots_.first(c), last = slots_.last(c); slot < last; ++slot)
      f(slot, slots_.transfer_of(c, slot));
  }
  /// Calls f(slot, transfer) for every send to class c in the round, in transfer order.
  template <class F>
  void each_receive(std::size_t c, std::size_t round, int a, int b, int z, F&& f) const {
    if (listed_) return slots_.each_receive(c, f);
    const std::size_t transfers = s_.rounds[round].transfers.size();
    for (std::size_t ti = 0; ti < transfers; ++ti)
      if (const std::size_t from = sender_of(round_links_[ti], sends_, ti, transfers, a, b, z); from != none)
        f(from * transfers + ti, ti);
  }

  /// Class c's sends across levels (jobs_), latency first; departs_ as if each left `seconds` before its end.
  void serve_latency_first(std::size_t c) {
    serve_by_readiness(jobs_);
    for (const port_job& j : jobs_) {
      const send& x = sends_[j.slot];
      departs_[j.slot] = j.done - x.seconds;
      next_[c] = std::max(next_[c], std::max(departs_[j.slot], now_[x.to]) + x.seconds);
    }
  }

  /// The end of an overlapping round: every class's receives, its round's delta and its unpacking.
  void receive_round(std::size_t round, double copy_beta) {
    const bool device = static_cast<bool>(setup_.launches);
    const double delta = setup_.cost.round_delta();
    each_class([&](std::size_t c, int a, int b, int z) {
      bool active = false;
      double unpack = 0;
      for (std::size_t slot = slots_.first(c), last = slots_.last(c); slot < last; ++slot)
        active = active || sends_[slot].exists;
      each_receive(c, round, a, b, z, [&](std::size_t slot, std::size_t ti) {
        const send& x = sends_[slot];
        next_[c] = std::max(next_[c], std::max(departs_[slot], now_[c]) + x.seconds);
        // Unpacked after the Waitall.
        if (!x.route.windowed(x.bytes) && staging(c, round, ti) & 2u) unpack += copy_beta * x.bytes;
        active = true;
      });
      if (delta > 0 && active) next_[c] += delta;  // each communicating rank's Waitall: one dependency step
      next_[c] += device ? device_cost(c, round, a, b, z).second : unpack;
    });
    now_.swap(next_);
  }

  /// Class c's device_round_cost in `round` (overlapping_round's links and sends).
  std::pair<double, double> device_cost(std::size_t c, std::size_t round, int a, int b, int z) const {
    double sent = 0, self = 0, received = 0;
    each_slot(c, [&](std::size_t slot, std::size_t ti) {
      if (sends_[slot].exists) sent += sends_[slot].bytes;
      else self += copy_bytes(c, round_links_[ti], s_.rounds[round].transfers[ti], a, b, z);
    });
    each_receive(c, round, a, b, z, [&](std::size_t slot, std::size_t) { received += sends_[slot].bytes; });
    return device_round_cost(setup_.cost.device(), setup_.launches(rank(c), round), setup_.staged, sent + self, sent,
                             received);
  }

  [[noreturn]] void deadlock(std::size_t c, std::size_t round, std::size_t ti) const {
    const transfer& t = s_.rounds[round].transfers[ti];
    throw error("simulate: rendezvous schedule deadlocks at rank " + std::to_string(rank(c)) + " (transfer along " +
                to_string(t.direction) + ")");
  }

  /// Ends a rendezvous transfer: every class's time after it, from its send and its receive.
  void complete(std::size_t round, std::size_t ti) {
    for (std::size_t c = 0; c < static_cast<std::size_t>(n_); ++c) {
      const bool sends = sends_[c].exists, receives = from_[c] != no_class;
      if (sends && (!receives || first_send_[c]))
        next_[c] = receives ? received(c, round, ti) : sent(c, round, ti);
      else if (receives)
        next_[c] = sends ? sent(c, round, ti) : received(c, round, ti);
      else
        next_[c] = now_[c];
    }
    now_.swap(next_);
  }

  /// When class c's receive completes (after unpacking).
  double received(std::size_t c, std::size_t round, std::size_t ti) {
    const double done = sent(from_[c], round, ti);
    const send& x = sends_[from_[c]];  // unpacked after the message, unless copied from shared memory
    return done + (!x.route.windowed(x.bytes) && staging(c, round, ti) & 2u ? setup_.cost.copy_beta() * x.bytes : 0.0);
  }
  /// When class c's send completes: it starts when c has reached it (its receive done first, if its
  /// colour says so) and the receiver has reached its receive (its send done first, likewise).
  double sent(std::size_t c, std::size_t round, std::size_t ti) {
    if (state_[c] == 2) return done_[c];
    if (state_[c] == 1) deadlock(c, round, ti);
    state_[c] = 1;
    const bool c_receives_first = from_[c] != no_class && !first_send_[c];
    const double ready = c_receives_first ? received(c, round, ti) : now_[c];
    const std::size_t to = sends_[c].to;
    const bool to_sends_first = sends_[to].exists && first_send_[to];
    const double partner = to_sends_first ? sent(to, round, ti) : now_[to];
    const send& x = sends_[c];
    const bool packs = !x.route.windowed(x.bytes) && staging(c, round, ti) & 1u;
    const double pack = packs ? setup_.cost.copy_beta() * x.bytes : 0.0;
    done_[c] = std::max(ready + pack, partner) + x.seconds + setup_.cost.round_delta();
    state_[c] = 2;
    return done_[c];
  }

  static constexpr std::uint32_t no_class = static_cast<std::uint32_t>(-1);
  std::vector<double> now_, next_, done_;
  std::vector<send> sends_;
  std::vector<double> departs_;      // overlapping: when each send leaves (after the earlier ones and its packing)
  std::vector<port_job> jobs_;       // overlapping: a class's sends across levels
  std::vector<std::uint32_t> from_;  // rendezvous: the class that sends to each class, or no_class
  std::vector<char> first_send_, state_;
  partner_tables links_;                     // rendezvous: the transfer's
  std::vector<partner_tables> round_links_;  // overlapping: the round's, per transfer
  round_slots slots_;                        // overlapping: where the round's sends sit in sends_
  bool listed_ = false;                      // named senders on a class per rank: slots listed (round_slots)
};

}  // namespace haloshift::detail

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
#include <tuple>
#include <utility>
#include <vector>

#include "../../grid/grid_shape.hpp"
#include "../../detail/schedule/colouring.hpp"
#include "../../schedule/schedule.hpp"
#include "partner_tables.hpp"
#include "rank_classes.hpp"
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
class maxplus_engine {
 public:
  /// `uniform_bytes`: the size of every rank's block, or < 0 when they differ.
  maxplus_engine(const grid_shape& grid, const schedule& s, const simulation_setup& setup, rank_classes classes,
                 double uniform_bytes)
      : grid_(grid),
        s_(s),
        setup_(setup),
        classes_(std::move(classes)),
        n_(classes_.size()),
        uniform_bytes_(uniform_bytes) {
    now_.assign(static_cast<std::size_t>(n_), 0.0);
    for (int d = 0; d < max_dims; ++d) along_[d] = classes_.classes_along(d);
    every_box_exists_ = every_box_exists(grid, s);
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
      return links_.colour_dim < 0 || links_.first[static_cast<std::size_t>(along_dim(links_.colour_dim, a, b, z))];
    };
    const double copy_beta = setup_.cost.copy_beta();
    from_.resize(n);
    first_send_.resize(n);
    sends_.resize(n);
    each_class([&](std::size_t c, int a, int b, int z) { sends_[c] = send_of(c, links_, t, a, b, z); });
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
  /// A class's send in one transfer, as its representative makes it.
  struct send {
    double bytes = 0, seconds = 0;
    std::uint32_t to = 0;  ///< the receiver's class
    bool exists = false;
    message_route route;  ///< the level it crosses (node_placement) and what prices it
  };

  offset coords(std::size_t c) const { return classes_.representative(static_cast<int>(c)); }
  int rank(std::size_t c) const { return grid_.rank_of(coords(c)); }

  /// The class with these classes along the dimensions, or `none` when one is -1 (no box).
  std::size_t product(int a, int b, int c) const {
    if (a < 0 || b < 0 || c < 0) return none;
    return (static_cast<std::size_t>(a) * static_cast<std::size_t>(along_[1]) + static_cast<std::size_t>(b)) *
               static_cast<std::size_t>(along_[2]) +
           static_cast<std::size_t>(c);
  }
  /// Calls f(c, a, b, z) for every class c, with its classes a, b, z along the dimensions.
  template <class F>
  void each_class(F&& f) const {
    std::size_t c = 0;
    for (int a = 0; a < along_[0]; ++a)
      for (int b = 0; b < along_[1]; ++b)
        for (int z = 0; z < along_[2]; ++z) f(c++, a, b, z);
  }

  unsigned staging(std::size_t c, std::size_t round, std::size_t ti) const {
    return charges_staging() ? setup_.staging(rank(c), round, ti) : 0u;
  }
  bool charges_staging() const { return setup_.staging && !setup_.launches && setup_.cost.copy_beta() > 0; }
  /// Fills `l` for transfer `t` on the current classes.
  void link(const transfer& t, partner_tables& l) const {
    l.fill(grid_, classes_, t, setup_.mode, !every_box_exists_ && uniform_bytes_ >= 0);
  }

  static int along_dim(int d, int a, int b, int z) { return d == 0 ? a : d == 1 ? b : z; }
  bool sends_in(const partner_tables& l, const transfer& t, int a, int b, int z) const {
    return l.sender.empty() || l.sender[static_cast<std::size_t>(along_dim(t.senders.dim, a, b, z))];
  }

  /// Bytes class c (classes a, b, z along the dimensions) sends in transfer `t`, or copies to itself.
  /// With blocks of one size that is the size times the blocks that exist around it.
  double block_bytes(std::size_t c, const partner_tables& l, const transfer& t, int a, int b, int z) const {
    if (uniform_bytes_ >= 0 && l.words == 0) return uniform_bytes_ * static_cast<double>(t.blocks.size());
    return counted_block_bytes(c, l, t, a, b, z);
  }
  double counted_block_bytes(std::size_t c, const partner_tables& l, const transfer& t, int a, int b, int z) const {
    if (uniform_bytes_ < 0) {
      double bytes = 0;
      for (const offset& o : t.blocks)
        if (const auto owner = grid_.neighbor_at(coords(c), o)) bytes += setup_.block_bytes(owner->rank);
      return bytes;
    }
    return uniform_bytes_ * static_cast<double>(l.blocks_held(a, b, z));
  }

  /// Class c's send in transfer `t` (none to itself, none without bytes).
  send send_of(std::size_t c, const partner_tables& l, const transfer& t, int a, int b, int z) {
    send out;
    if (l.self || !sends_in(l, t, a, b, z)) return out;
    const std::size_t to = product(l.ahead[0][static_cast<std::size_t>(a)], l.ahead[1][static_cast<std::size_t>(b)],
                                   l.ahead[2][static_cast<std::size_t>(z)]);
    if (to == none) return out;
    const double bytes = block_bytes(c, l, t, a, b, z);
    if (bytes <= 0) return out;
    out.exists = true;
    out.to = static_cast<std::uint32_t>(to);
    out.bytes = bytes;
    // The partner itself, not its class's representative; a class's members cross the same levels (node_boxes).
    out.route = route_of(setup_, rank(c), grid_.neighbor_at(coords(c), t.direction)->rank);
    out.seconds = setup_.link_time ? setup_.link_time(rank(c), rank(to), bytes) : seconds(out.route, bytes);
    return out;
  }
  /// Counts the messages of `sends` (one per member of each sending class) into the totals.
  void count(const std::vector<send>& sends, std::size_t stride) {
    double bytes = 0;  // summed per call, then added (the order the totals always had)
    for (std::size_t i = 0; i < sends.size(); ++i) {
      const std::int64_t members = sends[i].exists ? classes_.members(static_cast<int>(i / stride)) : 0;
      messages_ += static_cast<std::size_t>(members);
      bytes += static_cast<double>(members) * sends[i].bytes;
    }
    bytes_ += bytes;
  }
  /// The time of a message of `bytes` on `route`, kept for the last size and route asked (a transfer's are alike).
  double seconds(const message_route& route, double bytes) {
    if (bytes != last_bytes_ || route.model != last_route_.model || route.shm != last_route_.shm)
      std::tie(last_bytes_, last_route_, last_seconds_) = std::tuple(bytes, route, route.seconds(bytes));
    return last_seconds_;
  }
  /// The class that sends to class c in a transfer (the rank at -direction), if it sends to c.
  std::size_t sender_of(const partner_tables& l, const std::vector<send>& sends, std::size_t ti, std::size_t stride,
                        int a, int b, int z) const {
    if (l.self) return none;
    const std::size_t from = product(l.behind[0][static_cast<std::size_t>(a)], l.behind[1][static_cast<std::size_t>(b)],
                                     l.behind[2][static_cast<std::size_t>(z)]);
    return from != none && sends[from * stride + ti].exists ? from : none;
  }
  /// Bytes class c copies to itself in a transfer (its neighbour along the direction is itself).
  double copy_bytes(std::size_t c, const partner_tables& l, const transfer& t, int a, int b, int z) const {
    return l.self && sends_in(l, t, a, b, z) ? block_bytes(c, l, t, a, b, z) : 0.0;
  }

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
    sends_.assign(n * transfers, send{});
    departs_.assign(n * transfers, 0.0);
    next_ = now_;
    each_class([&](std::size_t c, int a, int b, int z) {
      for (std::size_t ti = 0; ti < transfers; ++ti)
        sends_[c * transfers + ti] = send_of(c, round_links_[ti], r.transfers[ti], a, b, z);
    });
    count(sends_, transfers);
    each_class([&](std::size_t c, int a, int b, int z) {
      // The gap grows with the messages a class posts in the round: counted only when it matters.
      double posted = 1;
      if (setup_.cost.gamma_growth() > 0) {
        posted = 0;
        for (std::size_t ti = 0; ti < transfers; ++ti) posted += sends_[c * transfers + ti].exists;
      }
      double port = device ? device_cost(c, round, a, b, z).first : 0.0;  // the packing launches first
      next_[c] += port;  // next_ is now_ here
      const bool mixed = routes_differ(&sends_[c * transfers], transfers);
      jobs_.clear();
      for (std::size_t ti = 0; ti < transfers; ++ti) {
        send& x = sends_[c * transfers + ti];
        if (!x.exists) {
          if (copy_beta > 0) {  // a copy delays the class's later sends and its end of round
            port += copy_beta * copy_bytes(c, round_links_[ti], r.transfers[ti], a, b, z);
            next_[c] = std::max(next_[c], now_[c] + port);
          }
          continue;
        }
        if (!x.route.shm && staging(c, round, ti) & 1u) port += copy_beta * x.bytes;  // packed before it leaves
        const double depart = departs_[c * transfers + ti] = now_[c] + port, inject = x.route.injection(x.bytes, posted);
        if (mixed) jobs_.push_back({depart + std::max(0.0, x.seconds - inject), inject, 0, c * transfers + ti});
        if (mixed) continue;  // served latency first below
        next_[c] = std::max(next_[c], std::max(depart, now_[x.to]) + x.seconds);
        port += inject;
      }
      serve_latency_first(c);
    });
    receive_round(round, copy_beta);
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
    const std::size_t transfers = s_.rounds[round].transfers.size();
    const bool device = static_cast<bool>(setup_.launches);
    const double delta = setup_.cost.round_delta();
    each_class([&](std::size_t c, int a, int b, int z) {
      bool active = false;
      double unpack = 0;
      for (std::size_t ti = 0; ti < transfers; ++ti) {
        active = active || sends_[c * transfers + ti].exists;
        const std::size_t from = sender_of(round_links_[ti], sends_, ti, transfers, a, b, z);
        if (from == none) continue;
        const send& x = sends_[from * transfers + ti];
        next_[c] = std::max(next_[c], std::max(departs_[from * transfers + ti], now_[c]) + x.seconds);
        if (!x.route.shm && staging(c, round, ti) & 2u) unpack += copy_beta * x.bytes;  // unpacked after the Waitall
        active = true;
      }
      if (delta > 0 && active) next_[c] += delta;  // each communicating rank's Waitall: one dependency step
      next_[c] += device ? device_cost(c, round, a, b, z).second : unpack;
    });
    now_.swap(next_);
  }

  /// Class c's device_round_cost in `round` (overlapping_round's links and sends).
  std::pair<double, double> device_cost(std::size_t c, std::size_t round, int a, int b, int z) const {
    const std::size_t transfers = s_.rounds[round].transfers.size();
    double sent = 0, self = 0, received = 0;
    for (std::size_t ti = 0; ti < transfers; ++ti) {
      const send& x = sends_[c * transfers + ti];
      if (x.exists) sent += x.bytes;
      else self += copy_bytes(c, round_links_[ti], s_.rounds[round].transfers[ti], a, b, z);
      if (const std::size_t from = sender_of(round_links_[ti], sends_, ti, transfers, a, b, z); from != none)
        received += sends_[from * transfers + ti].bytes;
    }
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
    return done + (!x.route.shm && staging(c, round, ti) & 2u ? setup_.cost.copy_beta() * x.bytes : 0.0);
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
    const double pack = !x.route.shm && staging(c, round, ti) & 1u ? setup_.cost.copy_beta() * x.bytes : 0.0;
    done_[c] = std::max(ready + pack, partner) + x.seconds + setup_.cost.round_delta();
    state_[c] = 2;
    return done_[c];
  }

  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  static constexpr std::uint32_t no_class = static_cast<std::uint32_t>(-1);
  const grid_shape& grid_;
  const schedule& s_;
  const simulation_setup& setup_;
  rank_classes classes_;
  int n_ = 0;
  std::vector<double> now_, next_, done_;
  std::vector<send> sends_;
  std::vector<double> departs_;      // overlapping: when each send leaves (after the earlier ones and its packing)
  std::vector<port_job> jobs_;       // overlapping: a class's sends across levels
  std::vector<std::uint32_t> from_;  // rendezvous: the class that sends to each class, or no_class
  std::vector<char> first_send_, state_;
  std::array<int, max_dims> along_{};        // classes along each dimension
  partner_tables links_;                     // rendezvous: the transfer's
  std::vector<partner_tables> round_links_;  // overlapping: the round's, per transfer
  double uniform_bytes_ = -1;
  bool every_box_exists_ = false;
  std::size_t messages_ = 0;
  double bytes_ = 0;
  double last_bytes_ = -1, last_seconds_ = 0;
  message_route last_route_;  // of the time kept
};

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file simulator.hpp
/// @brief Max-plus evaluation of a schedule on a whole grid: the longest path
/// through every rank's message dependencies, in time linear in the number of
/// messages (the Petri-net paper's (max,+) method without its matrices).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../exchange/program.hpp"
#include "../exchange/protocol.hpp"
#include "../grid/grid_shape.hpp"
#include "../schedule/schedule.hpp"
#include "arguments.hpp"
#include "hockney.hpp"
#include "rank_classes.hpp"

namespace haloshift {

/// What the simulation predicts.
struct simulation_result {
  double makespan = 0;         ///< seconds until the last rank finishes
  std::vector<double> finish;  ///< per rank
  std::size_t messages = 0;    ///< messages between different ranks, all ranks together
  double bytes = 0;            ///< bytes in those messages
};

/// Inputs besides the schedule. `block_bytes(rank)` is the size of a rank's
/// block (block mode); `link_time(from, to, bytes)`, when set, replaces the
/// Hockney time of a message per link (non-uniform networks; gamma still
/// applies to bursts).
struct simulation_setup {
  /// The message-time model.
  hockney cost;
  /// The protocol the exchange runs.
  protocol mode = protocol::overlapping;
  /// Bytes of `rank`'s block (default: 0).
  std::function<double(int)> block_bytes = [](int) { return 0.0; };
  /// Time of a message of `bytes` from rank `from` to rank `to`; empty: the Hockney time.
  std::function<double(int, int, double)> link_time{};
  /// Which messages the executor stages, when set: bit 1 of
  /// `staging(rank, round, transfer)` says that rank packs its send of that
  /// transfer into scratch, bit 2 that it unpacks its receive from scratch.
  /// Each costs `copy_beta` per byte of the rank's own time (see
  /// model/staging.hpp, which reads this off the compiled programs).
  std::function<unsigned(int, std::size_t, std::size_t)> staging{};
};

namespace detail {
/// The setup's protocol is an enumerator and every rank's block a finite number of bytes >= 0.
/// Returns whether every rank's block has the same size.
inline bool check_simulation_setup(const char* where, const grid_shape& grid, const simulation_setup& setup) {
  check_protocol(where, setup.mode);
  if (!setup.block_bytes) throw error(std::string(where) + ": setup.block_bytes is empty");
  bool uniform = true;
  const double first = grid.size() ? setup.block_bytes(0) : 0.0;
  for (int rank = 0; rank < grid.size(); ++rank) {
    const double b = setup.block_bytes(rank);
    if (!std::isfinite(b) || b < 0)
      throw error(std::string(where) + ": setup.block_bytes(" + std::to_string(rank) +
                  ") must be >= 0 bytes and finite, got " + value_text(b));
    uniform = uniform && b == first;
  }
  return uniform;
}
}  // namespace detail

namespace detail {

struct sim_message {
  int from = -1, to = -1;
  double bytes = 0;
};

/// The message rank `s` (at `c`) sends in transfer `t`: none to itself (a
/// local copy) and none without bytes, exactly as the executor does.
inline bool message_of(const grid_shape& grid, const offset& c, int s, const transfer& t,
                       const std::function<double(int)>& block_bytes, sim_message& out) {
  if (!t.senders.contains(c)) return false;
  const auto to = grid.neighbor_at(c, t.direction);
  if (!to || to->rank == s) return false;
  double bytes = 0;
  for (const offset& o : t.blocks)
    if (const auto owner = grid.neighbor_at(c, o)) bytes += block_bytes(owner->rank);
  if (bytes <= 0) return false;
  out = {s, to->rank, bytes};
  return true;
}

/// Bytes rank `s` (at `c`) copies to itself in transfer `t` (its neighbour
/// along the direction is its own periodic image); 0 otherwise.
inline double local_copy_bytes(const grid_shape& grid, const offset& c, int s, const transfer& t,
                               const std::function<double(int)>& block_bytes) {
  if (!t.senders.contains(c)) return 0;
  const auto to = grid.neighbor_at(c, t.direction);
  if (!to || to->rank != s) return 0;
  double bytes = 0;
  for (const offset& o : t.blocks)
    if (const auto owner = grid.neighbor_at(c, o)) bytes += block_bytes(owner->rank);
  return bytes;
}

}  // namespace detail

namespace detail {

/// One simulation over the classes of ranks a schedule cannot tell apart
/// (model/rank_classes.hpp): every class is simulated once, by its
/// representative, and a message between ranks is looked up from the
/// receiver's side, so each class reads the times of its partners' classes.
/// With every rank its own class this is the plain max-plus simulation of
/// every rank; with coarser classes it computes the same numbers, bit for
/// bit, because the operations each class performs are those of each of its
/// members, in the same order.
class class_simulation {
 public:
  /// `uniform_bytes`: the size of every rank's block, or < 0 when they differ.
  class_simulation(const grid_shape& grid, const schedule& s, const simulation_setup& setup, rank_classes classes,
                   double uniform_bytes)
      : grid_(grid), s_(s), setup_(setup), classes_(std::move(classes)), n_(classes_.size()),
        uniform_bytes_(uniform_bytes) {
    now_.assign(static_cast<std::size_t>(n_), 0.0);
    for (int c = 0; c < n_; ++c) rank_.push_back(grid_.rank_of(classes_.representative(c)));
    // Every block of every message exists when no block lies across a non-periodic dimension.
    every_box_exists_ = true;
    for (const schedule_round& r : s.rounds)
      for (const transfer& t : r.transfers)
        for (const offset& o : t.blocks)
          for (int d = 0; d < max_dims; ++d) every_box_exists_ = every_box_exists_ && (o[d] == 0 || grid.periodic(d));
  }

  simulation_result run() {
    for (std::size_t round = 0; round < s_.rounds.size(); ++round) {
      if (setup_.mode == protocol::overlapping)
        overlapping_round(round);
      else
        for (std::size_t ti = 0; ti < s_.rounds[round].transfers.size(); ++ti) rendezvous_transfer(round, ti);
    }
    simulation_result out;
    out.messages = messages_;
    out.bytes = bytes_;
    const int ranks = grid_.size();
    out.finish.resize(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) out.finish[static_cast<std::size_t>(r)] = now_[at(grid_.coords_of(r))];
    out.makespan = n_ ? *std::max_element(now_.begin(), now_.end()) : 0.0;
    return out;
  }

 private:
  /// A class's send in one transfer, as its representative makes it.
  struct send {
    bool exists = false;
    std::size_t to = 0;  ///< the receiver's class
    double bytes = 0, seconds = 0;
    double depart = 0;   ///< overlapping: when it leaves (after the earlier sends' injection and its packing)
  };

  std::size_t at(const offset& coords) const { return static_cast<std::size_t>(classes_.class_of(coords)); }
  const offset& coords(std::size_t c) const { return classes_.representative(static_cast<int>(c)); }

  unsigned staging(std::size_t c, std::size_t round, std::size_t ti) const {
    return setup_.staging && setup_.cost.copy_beta() > 0 ? setup_.staging(rank_[c], round, ti) : 0u;
  }

  /// The box at `o` from class c's representative: its coordinates, or false beyond a non-periodic border.
  bool box_at(std::size_t c, const offset& o, offset& target) const {
    const offset& x = coords(c);
    for (int d = 0; d < max_dims; ++d) {
      const int n = grid_.dim(d);
      int y = x[d] + o[d];
      if (y < 0 || y >= n) {
        if (!grid_.periodic(d)) return false;
        y = ((y % n) + n) % n;
      }
      target[d] = y;
    }
    return true;
  }

  /// Class c's send in transfer `t` (none to itself, none without bytes), counted once per member.
  /// With blocks of one size a message's bytes are that size times the blocks that exist, so ranks
  /// are not looked up block by block.
  send send_of(std::size_t c, const transfer& t) {
    send out;
    const offset& x = coords(c);
    offset to{};
    if (!t.senders.contains(x) || !box_at(c, t.direction, to) || to == x) return out;
    double bytes = 0;
    if (uniform_bytes_ >= 0) {
      std::size_t existing = t.blocks.size();
      if (!every_box_exists_) {
        existing = 0;
        for (const offset& o : t.blocks) existing += grid_.exists(x, o);
      }
      bytes = uniform_bytes_ * static_cast<double>(existing);
    } else {
      for (const offset& o : t.blocks)
        if (const auto owner = grid_.neighbor_at(x, o)) bytes += setup_.block_bytes(owner->rank);
    }
    if (bytes <= 0) return out;
    out.exists = true;
    out.to = at(to);
    out.bytes = bytes;
    out.seconds = setup_.link_time ? setup_.link_time(rank_[c], grid_.rank_of(to), bytes) : setup_.cost.time(bytes);
    const auto members = classes_.members(static_cast<int>(c));
    messages_ += static_cast<std::size_t>(members);
    bytes_ += static_cast<double>(members) * bytes;
    return out;
  }
  /// The class that sends to class c in transfer `t` (the rank at -direction), if it sends to c.
  bool sender_of(std::size_t c, const transfer& t, const std::vector<send>& sends, std::size_t ti, std::size_t stride,
                 std::size_t& from) const {
    offset peer{};
    if (!box_at(c, -t.direction, peer) || peer == coords(c)) return false;
    from = at(peer);
    return sends[from * stride + ti].exists;
  }
  double copy_bytes(std::size_t c, const transfer& t) const {
    return local_copy_bytes(grid_, coords(c), rank_[c], t, setup_.block_bytes);
  }

  /// Overlapping: each class posts its sends in order (packing, then gap + beta m each), a message
  /// completes `time(m)` after both ends are in the round, a class's round ends with its last message,
  /// then the round's delta (if it communicated) and the unpacking of its staged receives.
  void overlapping_round(std::size_t round) {
    const schedule_round& r = s_.rounds[round];
    const std::size_t transfers = r.transfers.size(), n = static_cast<std::size_t>(n_);
    const double copy_beta = setup_.cost.copy_beta();
    sends_.assign(n * transfers, send{});
    next_ = now_;
    for (std::size_t c = 0; c < n; ++c)
      for (std::size_t ti = 0; ti < transfers; ++ti) sends_[c * transfers + ti] = send_of(c, r.transfers[ti]);
    for (std::size_t c = 0; c < n; ++c) {
      // The gap grows with the messages a class posts in the round: counted only when it matters.
      double posted = 1;
      if (setup_.cost.gamma_growth() > 0) {
        posted = 0;
        for (std::size_t ti = 0; ti < transfers; ++ti) posted += sends_[c * transfers + ti].exists;
      }
      double port = 0;
      for (std::size_t ti = 0; ti < transfers; ++ti) {
        send& x = sends_[c * transfers + ti];
        if (!x.exists) {
          if (copy_beta > 0) {  // a copy delays the class's later sends and its end of round
            port += copy_beta * copy_bytes(c, r.transfers[ti]);
            next_[c] = std::max(next_[c], now_[c] + port);
          }
          continue;
        }
        if (staging(c, round, ti) & 1u) port += copy_beta * x.bytes;  // packed before it leaves
        x.depart = now_[c] + port;
        next_[c] = std::max(next_[c], std::max(x.depart, now_[x.to]) + x.seconds);
        port += setup_.cost.gap(x.bytes, posted) + setup_.cost.beta(x.bytes) * x.bytes;
      }
    }
    const double delta = setup_.cost.round_delta();
    for (std::size_t c = 0; c < n; ++c) {
      bool active = false;
      double unpack = 0;
      for (std::size_t ti = 0; ti < transfers; ++ti) {
        active = active || sends_[c * transfers + ti].exists;
        std::size_t from = 0;
        if (!sender_of(c, r.transfers[ti], sends_, ti, transfers, from)) continue;
        const send& x = sends_[from * transfers + ti];
        next_[c] = std::max(next_[c], std::max(x.depart, now_[c]) + x.seconds);
        if (staging(c, round, ti) & 2u) unpack += copy_beta * x.bytes;  // unpacked after the Waitall
        active = true;
      }
      if (delta > 0 && active) next_[c] += delta;  // each communicating rank's Waitall: one dependency step
      next_[c] += unpack;
    }
    now_.swap(next_);
  }

  /// Rendezvous, one transfer: every class has at most a send and a receive, in its colour's order; a
  /// synchronous message starts when both ends have reached it and is a dependency step of both.
  void rendezvous_transfer(std::size_t round, std::size_t ti) {
    const transfer& t = s_.rounds[round].transfers[ti];
    const std::size_t n = static_cast<std::size_t>(n_);
    const double copy_beta = setup_.cost.copy_beta();
    sends_.assign(n, send{});
    for (std::size_t c = 0; c < n; ++c) sends_[c] = send_of(c, t);
    from_.assign(n, none);
    first_send_.assign(n, 0);
    done_.assign(n, 0.0);
    state_.assign(n, 0);
    for (std::size_t c = 0; c < n; ++c) {
      if (copy_beta > 0 && !sends_[c].exists) now_[c] += copy_beta * copy_bytes(c, t);
      std::size_t from = 0;
      if (sender_of(c, t, sends_, 0, 1, from)) from_[c] = from;
      first_send_[c] = sends_first(grid_, coords(c), t.direction);
    }
    next_ = now_;
    for (std::size_t c = 0; c < n; ++c) {
      const bool sends = sends_[c].exists, receives = from_[c] != none;
      if (sends && (!receives || first_send_[c]))
        next_[c] = receives ? received(c, round, ti) : sent(c, round, ti);
      else if (receives)
        next_[c] = sends ? sent(c, round, ti) : received(c, round, ti);
    }
    now_.swap(next_);
  }

  /// When class c's receive completes (after unpacking).
  double received(std::size_t c, std::size_t round, std::size_t ti) {
    const double done = sent(from_[c], round, ti);
    return done + (staging(c, round, ti) & 2u ? setup_.cost.copy_beta() * sends_[from_[c]].bytes : 0.0);
  }
  /// When class c's send completes: it starts when c has reached it (its receive done first, if its
  /// colour says so) and the receiver has reached its receive (its send done first, likewise).
  double sent(std::size_t c, std::size_t round, std::size_t ti) {
    if (state_[c] == 2) return done_[c];
    if (state_[c] == 1) {
      const transfer& t = s_.rounds[round].transfers[ti];
      throw error("simulate: rendezvous schedule deadlocks at rank " + std::to_string(rank_[c]) +
                  " (transfer along " + to_string(t.direction) + ")");
    }
    state_[c] = 1;
    const send& x = sends_[c];
    const bool c_receives_first = from_[c] != none && !first_send_[c];
    const double ready = c_receives_first ? received(c, round, ti) : now_[c];
    const std::size_t to = x.to;
    const bool to_sends_first = sends_[to].exists && first_send_[to];
    const double partner = to_sends_first ? sent(to, round, ti) : now_[to];
    const double pack = staging(c, round, ti) & 1u ? setup_.cost.copy_beta() * x.bytes : 0.0;
    done_[c] = std::max(ready + pack, partner) + x.seconds + setup_.cost.round_delta();
    state_[c] = 2;
    return done_[c];
  }

  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  const grid_shape& grid_;
  const schedule& s_;
  const simulation_setup& setup_;
  rank_classes classes_;
  int n_ = 0;
  std::vector<int> rank_;  // the representative's rank, per class
  std::vector<double> now_, next_, done_;
  std::vector<send> sends_;
  std::vector<std::size_t> from_;
  std::vector<char> first_send_, state_;
  double uniform_bytes_ = -1;
  bool every_box_exists_ = false;
  std::size_t messages_ = 0;
  double bytes_ = 0;
};

}  // namespace detail

namespace detail {

/// Rounds [first, last) that move blocks along one dimension only.
struct phase {
  std::size_t first = 0, last = 0;
  int dim = -1;
};

/// The phases of a dimension-by-dimension schedule (Shift, TeamShift), when
/// its times may add up phase by phase; empty otherwise. That needs (1) every
/// round's transfers to move along one dimension, consecutive rounds of the
/// same dimension forming its phase, no dimension in two phases, and (2)
/// every rank to hold every block (each dimension periodic or of one box),
/// so a message's size is the same wherever its line lies. A phase then
/// couples ranks only along the lines of its dimension; when each line
/// starts it at one time, max-plus time being shift-invariant (every step is
/// a maximum of sums), the phase adds to each rank the time it takes from a
/// common start, and the slowest rank of the whole schedule is the slowest
/// sum of the phases' additions.
///
/// A line along d starts at one time when no earlier phase's addition
/// depends on the coordinate along d. Without packing that holds: a phase's
/// addition depends on the coordinate along its own dimension only. With
/// packing, which messages a rank packs depends on its layout, and
/// TeamShift's layout depends on its member index along other dimensions
/// too; simulate() checks the condition on the additions themselves and
/// simulates the schedule whole where it fails.
inline std::vector<phase> separable_phases(const grid_shape& grid, const schedule& s) {
  for (int d = 0; d < max_dims; ++d)
    if (!grid.periodic(d) && grid.dim(d) > 1) return {};
  std::vector<phase> out;
  for (std::size_t i = 0; i < s.rounds.size(); ++i) {
    int dim = -1;
    for (const transfer& t : s.rounds[i].transfers)
      for (int d = 0; d < max_dims; ++d)
        if (t.direction[d] != 0) {
          if (dim >= 0 && dim != d) return {};
          dim = d;
        }
    if (!out.empty() && (dim < 0 || dim == out.back().dim)) {
      out.back().last = i + 1;  // a round that sends nothing joins the phase before it
      continue;
    }
    for (const phase& p : out)
      if (p.dim == dim) return {};
    out.push_back({i, i + 1, dim});
  }
  return out;
}

}  // namespace detail

namespace detail {
/// Whether per-rank `times` do not depend on the coordinate along `d`.
inline bool constant_along(const grid_shape& grid, const std::vector<double>& times, int d) {
  for (int r = 0; r < grid.size(); ++r) {
    offset c = grid.coords_of(r);
    if (c[d] == 0) continue;
    c[d] = 0;
    if (times[static_cast<std::size_t>(r)] != times[static_cast<std::size_t>(grid.rank_of(c))]) return false;
  }
  return true;
}
}  // namespace detail

namespace detail {
/// Every rank simulated on its own: the reference the classes are tested against, and what `simulate`
/// does for blocks of different sizes or per-link times.
inline simulation_result simulate_every_rank(const grid_shape& grid, const schedule& s, const simulation_setup& setup) {
  const bool uniform = check_simulation_setup("simulate", grid, setup);
  return class_simulation(grid, s, setup, rank_classes::each_rank(grid), uniform ? setup.block_bytes(0) : -1).run();
}
}  // namespace detail

/// Predicts the time of schedule `s` on every rank of `grid`. Overlapping
/// mode: in each round a rank posts its sends in order; the i-th leaves after
/// the injection of the earlier ones (gamma + beta * m each) and completes
/// `time(m)` after both ends are in the round; a rank's round ends with its
/// last sent or received message. Rendezvous mode: the executor's order
/// (transfers one after another, send-first or receive-first by the chain
/// colouring), each synchronous message starting when both ends reach it.
/// A copy to the rank itself takes `copy_beta` per byte of the rank's own
/// time, in transfer order, as the executor does it (free when 0). A rank
/// that sends or receives in a round ends it `round_delta` after its last
/// message; with `gamma_growth` the gap of a rank's sends grows with the
/// number it posts in that round (both 0: the papers' model). With
/// `setup.staging`, packing a send costs the sender `copy_beta` per byte
/// before it leaves and unpacking a receive costs the receiver as much after
/// its round's messages are in (overlapping) or after the message
/// (rendezvous), as the executor does it.
///
/// Ranks the schedule cannot tell apart are simulated once per class
/// (model/rank_classes.hpp) when every block has the same size and no
/// `link_time` is set: exactly the times of simulating every rank, at a cost
/// that no longer grows with the grid on periodic grids (a million ranks in
/// tens of milliseconds); otherwise every rank is its own class. `setup.staging` must
/// then give the same bits to ranks of one class, as detail::staging_of does.
/// On periodic grids a dimension-by-dimension schedule is simulated phase
/// by phase (detail::separable_phases), each phase on its own classes; the
/// times then equal those of the whole simulation up to the rounding of the
/// sums (relative 1e-15).
inline simulation_result simulate(const grid_shape& grid, const schedule& s, const simulation_setup& setup) {
  const bool uniform = detail::check_simulation_setup("simulate", grid, setup);
  const bool colours = setup.mode == protocol::rendezvous;
  if (!uniform || setup.link_time)
    return detail::class_simulation(grid, s, setup, detail::rank_classes::each_rank(grid), -1).run();
  const std::vector<detail::phase> phases = detail::separable_phases(grid, s);
  const double bytes = setup.block_bytes(0);
  const auto whole = [&] {
    return detail::class_simulation(grid, s, setup, detail::rank_classes::of(grid, s, colours), bytes).run();
  };
  if (phases.size() < 2) return whole();
  // Phase by phase: a phase's addition is simulated from a common start on its own classes, those of
  // its rounds told apart by the whole schedule's packing classes as well (detail::staging_of packs
  // by those), and the phases add up while no addition depends on a later phase's coordinate.
  const bool packing = setup.staging && setup.cost.copy_beta() > 0;
  const detail::rank_classes packed = packing ? detail::rank_classes::of(grid, s, false) : detail::rank_classes{};
  simulation_result out;
  out.finish.assign(static_cast<std::size_t>(grid.size()), 0.0);
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const detail::phase& p = phases[i];
    schedule part;
    part.rounds.assign(s.rounds.begin() + static_cast<std::ptrdiff_t>(p.first),
                       s.rounds.begin() + static_cast<std::ptrdiff_t>(p.last));
    simulation_setup own = setup;
    if (setup.staging)
      own.staging = [&setup, first = p.first](int rank, std::size_t round, std::size_t transfer) {
        return setup.staging(rank, first + round, transfer);
      };
    const simulation_result added =
        detail::class_simulation(grid, part, own,
                                 detail::rank_classes::of(grid, part, colours, packing ? &packed : nullptr), bytes)
            .run();
    if (packing)
      for (std::size_t later = i + 1; later < phases.size(); ++later)
        if (!detail::constant_along(grid, added.finish, phases[later].dim)) return whole();
    out.makespan = 0;
    out.messages += added.messages;
    out.bytes += added.bytes;
    for (std::size_t r = 0; r < out.finish.size(); ++r) {
      out.finish[r] += added.finish[r];
      out.makespan = std::max(out.makespan, out.finish[r]);
    }
  }
  return out;
}

}  // namespace haloshift

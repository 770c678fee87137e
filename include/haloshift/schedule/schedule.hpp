// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file schedule.hpp
/// @brief A strategy's communication described as data: rounds of transfers.

#include <algorithm>
#include <string>
#include <vector>

#include "../detail/compiled.hpp"
#include "../grid/offset.hpp"
#include "../grid/offset_box.hpp"

namespace haloshift {

namespace detail {
/// Restricts a transfer to the senders whose coordinate along `dim` is
/// `residue` modulo `period` (TeamShift's team members), or to the ranks at
/// the coordinates `only` (NodeAggregate's leaders: node membership is no
/// property of one coordinate); `dim < 0` and `only` empty: every rank.
struct sender_class {
  /// Dimension whose coordinate selects the senders; < 0: every rank sends.
  int dim = -1;
  /// Senders' coordinate along `dim` is taken modulo `period`.
  int period = 1;
  /// The remainder the senders have.
  int residue = 0;
  /// The senders' coordinates, in canonical order; empty: `dim` decides.
  std::vector<offset> only{};
  /// Whether the rank at `coords` is one of the senders.
  bool contains(const offset& coords) const noexcept {
    if (!only.empty()) return std::binary_search(only.begin(), only.end(), coords, canonical_order{});
    return dim < 0 || coords[dim] % period == residue;
  }
  friend bool operator==(const sender_class&, const sender_class&) = default;
};
}  // namespace detail

/// Every rank sends the blocks it holds at offsets `blocks` (relative to
/// itself) to the rank at `direction`, and so receives from the rank at
/// `-direction` that rank's blocks `blocks`, which are at `blocks - direction`
/// relative to the receiver. Blocks whose owner lies outside a non-periodic
/// border do not exist and are skipped; a message with no existing block is
/// not sent. With `senders` set, only ranks of that class send (and a rank
/// receives only if the rank at `-direction` is of that class).
struct transfer {
  /// Where every sender sends, relative to itself.
  offset direction;
  /// The held blocks sent, as offsets relative to the sender.
  std::vector<offset> blocks;
  /// Which ranks send (default: all).
  detail::sender_class senders{};
  friend bool operator==(const transfer&, const transfer&) = default;
};

/// Transfers that may run concurrently: a round may send only blocks held
/// before it starts.
struct schedule_round {
  /// The round's transfers.
  std::vector<transfer> transfers;
  friend bool operator==(const schedule_round&, const schedule_round&) = default;
};

/// The same for every rank (translation invariant), so the cost model, the
/// simulator, the tests and the executor all read one description.
struct schedule {
  /// The rounds, in order: blocks received in one round can be sent on in later ones.
  std::vector<schedule_round> rounds;
  friend bool operator==(const schedule&, const schedule&) = default;
};

namespace detail {
/// The box of every offset a schedule can make a rank hold: the own block,
/// every block sent and where each one lands.
inline detail::offset_box offsets_reached(const schedule& s) {
  detail::offset_box box;
  auto include = [&box](const offset& o) {
    for (int d = 0; d < max_dims; ++d) {
      box.lo[d] = std::min(box.lo[d], o[d]);
      box.hi[d] = std::max(box.hi[d], o[d]);
    }
  };
  for (const schedule_round& r : s.rounds)
    for (const transfer& t : r.transfers)
      for (const offset& o : t.blocks) {
        include(o);
        include(o - t.direction);
      }
  return box;
}

/// `s` with every transfer moved to the earliest round at whose start a rank
/// holds all its blocks, in their order within each round. Strategies write
/// their rounds step after step (Shift: phase x, then y, then z); where a step
/// needs nothing an earlier one delivers (a faces-only Shift carries only the
/// own block into each phase), its messages go out with the earlier ones, so a
/// blocking exchange waits once and a split-phase one posts them all in
/// start() instead of unpacking mid-compute to post the next. A schedule that
/// restricts its senders (TeamShift, NodeAggregate), or sends a block no round
/// delivers, is returned as it is: there what a rank holds depends on its
/// class, and the plan's check names the faulty round of the original.
HALOSHIFT_BUILDER schedule earliest_rounds(schedule s);
}  // namespace detail

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER schedule detail::earliest_rounds(schedule s) {
  constexpr std::size_t never = std::size_t(-1);
  const offset_box box = offsets_reached(s);
  std::vector<std::size_t> held_from(box.volume(), never);  // per offset, the first round that holds it
  held_from[box.index(zero_offset)] = 0;
  std::vector<std::size_t> moved_to;  // per transfer, in schedule order
  for (const schedule_round& r : s.rounds)
    for (const transfer& t : r.transfers) {
      std::size_t round = 0;
      for (const offset& o : t.blocks) round = std::max(round, held_from[box.index(o)]);
      if (round == never || t.senders != sender_class{}) return s;
      for (const offset& o : t.blocks) {
        std::size_t& arrives = held_from[box.index(o - t.direction)];
        arrives = std::min(arrives, round + 1);
      }
      moved_to.push_back(round);
    }
  schedule out;
  auto next = moved_to.begin();
  for (schedule_round& r : s.rounds)
    for (transfer& t : r.transfers) {
      const std::size_t round = *next++;
      if (out.rounds.size() <= round) out.rounds.resize(round + 1);
      out.rounds[round].transfers.push_back(std::move(t));
    }
  return out;
}
#endif

}  // namespace haloshift

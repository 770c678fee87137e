// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file schedule.hpp
/// @brief A strategy's communication described as data: rounds of transfers.

#include <algorithm>
#include <string>
#include <vector>

#include "../grid/offset.hpp"

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

}  // namespace haloshift

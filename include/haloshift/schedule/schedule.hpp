// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file schedule.hpp
/// @brief A strategy's communication described as data: rounds of transfers.

#include <string>
#include <vector>

#include "../grid/offset.hpp"

namespace haloshift {

/// Restricts a transfer to the senders whose coordinate along `dim` is
/// `residue` modulo `period` (TeamShift's team members); `dim < 0`: every rank.
struct sender_class {
  int dim = -1;
  int period = 1;
  int residue = 0;
  bool contains(const offset& coords) const noexcept { return dim < 0 || coords[dim] % period == residue; }
  friend bool operator==(const sender_class&, const sender_class&) = default;
};

/// Every rank sends the blocks it holds at offsets `blocks` (relative to
/// itself) to the rank at `direction`, and so receives from the rank at
/// `-direction` that rank's blocks `blocks`, which are at `blocks - direction`
/// relative to the receiver. Blocks whose owner lies outside a non-periodic
/// border do not exist and are skipped; a message with no existing block is
/// not sent. With `senders` set, only ranks of that class send (and a rank
/// receives only if the rank at `-direction` is of that class).
struct transfer {
  offset direction;
  std::vector<offset> blocks;
  sender_class senders{};
  friend bool operator==(const transfer&, const transfer&) = default;
};

/// Transfers that may run concurrently: a round may send only blocks held
/// before it starts.
struct round {
  std::vector<transfer> transfers;
  friend bool operator==(const round&, const round&) = default;
};

/// The same for every rank (translation invariant), so the cost model, the
/// simulator, the tests and the executor all read one description.
struct schedule {
  std::vector<round> rounds;
  friend bool operator==(const schedule&, const schedule&) = default;
};

}  // namespace haloshift

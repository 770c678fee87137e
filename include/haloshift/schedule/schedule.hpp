#pragma once
/// @file schedule.hpp
/// @brief A strategy's communication described as data: rounds of transfers.

#include <string>
#include <vector>

#include "../grid/offset.hpp"

namespace haloshift {

/// Every rank sends the blocks it holds at offsets `blocks` (relative to
/// itself) to the rank at `direction`, and so receives from the rank at
/// `-direction` that rank's blocks `blocks`, which are at `blocks - direction`
/// relative to the receiver. Blocks whose owner lies outside a non-periodic
/// border do not exist and are skipped; a message with no existing block is
/// not sent.
struct transfer {
  offset direction;
  std::vector<offset> blocks;
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

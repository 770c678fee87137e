// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file simulation_setup.hpp
/// @brief What a max-plus simulation takes (the model, the protocol, block
/// sizes, staging) and what it predicts.

#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "../../exchange/protocol.hpp"
#include "../../grid/grid_shape.hpp"
#include "../../schedule/schedule.hpp"
#include "../cost/arguments.hpp"
#include "../cost/hockney.hpp"

namespace haloshift::detail {

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
  /// model/simulation/staging.hpp, which reads this off the compiled programs).
  std::function<unsigned(int, std::size_t, std::size_t)> staging{};
};

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

}  // namespace haloshift::detail

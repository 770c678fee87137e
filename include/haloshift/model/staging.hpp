// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file staging.hpp
/// @brief Which messages of a schedule the executor packs or unpacks, read
/// off the compiled programs, for the simulator's packing charge.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "../exchange/program.hpp"
#include "../grid/grid_shape.hpp"
#include "../grid/neighborhood.hpp"
#include "../schedule/schedule.hpp"

namespace haloshift::detail {

/// Staging bits (1: the send is packed, 2: the receive is unpacked) of every
/// transfer of every round, for the ranks of a grid. Block mode with blocks
/// of one element each: whether a message is contiguous depends only on which
/// blocks it carries and the rank's layout, not on their size.
///
/// Grids of up to `exact_ranks` ranks compile every rank's program; larger
/// ones compile one rank at the grid's centre and use its bits for all (exact
/// on periodic grids where all ranks hold the same offsets; an estimate near
/// non-periodic borders and for TeamShift, whose senders depend on the
/// position in the team).
class staging_table {
 public:
  staging_table(const grid_shape& grid, const schedule& s, const range& wanted, std::string_view strategy,
                int exact_ranks = 16) {
    const int n = grid.size();
    const bool exact = n <= exact_ranks;
    offset centre{0, 0, 0};
    for (int d = 0; d < max_dims; ++d) centre[d] = grid.dim(d) / 2;
    const int ranks = exact ? n : 1;
    bits_.resize(static_cast<std::size_t>(ranks));
    representative_ = !exact;
    for (int i = 0; i < ranks; ++i) {
      const offset coords = exact ? grid.coords_of(i) : centre;
      const program p =
          compile(s, grid, coords, wanted, [](const offset&) { return std::size_t{1}; }, strategy);
      auto& rounds = bits_[static_cast<std::size_t>(i)];
      rounds.resize(p.rounds.size());
      for (std::size_t r = 0; r < p.rounds.size(); ++r) {
        rounds[r].assign(s.rounds[r].transfers.size(), 0);
        for (const transfer_program& t : p.rounds[r].transfers) {
          if (t.self) continue;  // copies to the rank itself are charged as copies
          const auto index = static_cast<std::size_t>(t.tag);  // compile tags a transfer by its index
          if (index >= rounds[r].size()) continue;             // beyond 32767 transfers the tag wraps: no charge
          std::uint8_t b = 0;
          if (t.send.exists() && !t.send.contiguous) b |= 1u;
          if (t.recv.exists() && !t.recv.contiguous) b |= 2u;
          rounds[r][index] = b;
        }
      }
    }
  }

  /// The bits of `rank` in transfer `transfer` of round `round`.
  unsigned operator()(int rank, std::size_t round, std::size_t transfer) const {
    const auto& rounds = bits_[representative_ ? 0 : static_cast<std::size_t>(rank)];
    return round < rounds.size() && transfer < rounds[round].size() ? rounds[round][transfer] : 0u;
  }

 private:
  std::vector<std::vector<std::vector<std::uint8_t>>> bits_;  // [rank][round][transfer]
  bool representative_ = false;
};

/// The simulator's `staging` callback for `s` (shares the table).
inline auto staging_of(const grid_shape& grid, const schedule& s, const range& wanted, std::string_view strategy) {
  auto table = std::make_shared<const staging_table>(grid, s, wanted, strategy);
  return [table](int rank, std::size_t round, std::size_t transfer) { return (*table)(rank, round, transfer); };
}

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file staging.hpp
/// @brief Which messages of a schedule the executor packs or unpacks, and
/// how many launches a batched exchange of device data runs per round, read
/// off the compiled programs, for the simulator's packing and device charges.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../detail/batch/compile.hpp"
#include "../../detail/exchange/program.hpp"
#include "../../grid/grid_shape.hpp"
#include "../../grid/neighborhood.hpp"
#include "../../schedule/schedule.hpp"
#include "rank_classes.hpp"
#include "simulation_setup.hpp"

namespace haloshift::detail {

/// Staging bits (1: the send is packed, 2: the receive is unpacked) of every
/// transfer of every round, for the ranks of a grid. Block mode with blocks
/// of one element each: whether a message is contiguous depends only on which
/// blocks it carries and the rank's layout, not on their size.
///
/// A rank's program depends on its coordinates only through its sender
/// classes and which boxes exist within one transfer's reach of it
/// (rank_classes::programs), so one program is compiled per class of
/// programs, when a rank of the class is first asked about: exact for every
/// rank, borders and TeamShift's members included, one compilation on a
/// periodic grid of any size, and 729 on a non-periodic grid at k = 3 for
/// Shift (15^3 = 3,375 with the simulation's wider windows).
class staging_table {
 public:
  staging_table(const grid_shape& grid, const schedule& s, const range& wanted, std::string_view strategy)
      : grid_(grid),
        s_(s),
        wanted_(wanted),
        strategy_(strategy),
        classes_(rank_classes::programs(grid, s)),
        bits_(static_cast<std::size_t>(classes_.size())),
        launches_(static_cast<std::size_t>(classes_.size())),
        compiled_(static_cast<std::size_t>(classes_.size()), 0) {
    if (names_senders(s)) index_named_senders();
  }

  /// The bits of `rank` in transfer `transfer` of round `round`.
  unsigned operator()(int rank, std::size_t round, std::size_t transfer) const {
    const auto c = static_cast<std::size_t>(classes_.class_of(grid_.coords_of(rank)));
    if (!compiled_[c]) compile_class(c);
    const auto& rounds = bits_[c];
    return round < rounds.size() && transfer < rounds[round].size() ? rounds[round][transfer] : 0u;
  }
  /// The launches of `rank` in round `round` of the batched exchange (one per wave and phase).
  device_launches launches(int rank, std::size_t round) const {
    const auto c = static_cast<std::size_t>(classes_.class_of(grid_.coords_of(rank)));
    if (!compiled_[c]) compile_class(c);
    return round < launches_[c].size() ? launches_[c][round] : device_launches{};
  }

 private:
  /// A rank's place in the schedule named by its transfer: (round, index of the transfer).
  using place = std::pair<std::uint32_t, std::uint32_t>;

  /// Named senders (NodeAggregate's): each rank's program depends only on the transfers it sends or
  /// receives in, a few of the schedule's many; listed per rank once, so that compiling a rank's
  /// program reads its own transfers, not the whole schedule (a grid of 32^3 ranks compiles in time
  /// linear in the schedule, not in ranks times transfers).
  void index_named_senders() {
    own_.resize(static_cast<std::size_t>(grid_.size()));
    for (std::size_t r = 0; r < s_.rounds.size(); ++r)
      for (std::size_t ti = 0; ti < s_.rounds[r].transfers.size(); ++ti) {
        const transfer& t = s_.rounds[r].transfers[ti];
        const place at{static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(ti)};
        const auto mark = [&](int rank) {  // once per transfer: a rank may send and receive in it
          std::vector<place>& mine = own_[static_cast<std::size_t>(rank)];
          if (mine.empty() || mine.back() != at) mine.push_back(at);
        };
        const auto add = [&](const offset& sender) {
          if (const auto to = grid_.neighbor_at(sender, t.direction)) {
            mark(grid_.rank_of(sender));
            mark(to->rank);
          }
        };
        if (!t.senders.only.empty())
          for (const offset& sender : t.senders.only) add(sender);
        else
          for (int rank = 0; rank < grid_.size(); ++rank) add(grid_.coords_of(rank));
      }
  }
  /// The part of the schedule that rank `rank` takes part in (named senders) and, per round, the index
  /// each of its transfers has in the whole schedule. Of each transfer's senders it keeps those the
  /// rank's program asks about: the rank itself and the rank it would hear from.
  schedule own_part(int rank, std::vector<std::vector<std::size_t>>& index) const {
    const offset coords = grid_.coords_of(rank);
    schedule part;
    part.rounds.resize(s_.rounds.size());
    index.assign(s_.rounds.size(), {});
    for (const auto& [r, ti] : own_[static_cast<std::size_t>(rank)]) {
      const transfer& t = s_.rounds[r].transfers[ti];
      transfer& mine = part.rounds[r].transfers.emplace_back(transfer{t.direction, t.blocks, {}});
      index[r].push_back(ti);
      if (t.senders.only.empty()) continue;  // every rank sends
      const auto from = grid_.neighbor_at(coords, -t.direction);
      std::vector<offset>& kept = mine.senders.only;
      for (const offset& x : {coords, from ? grid_.coords_of(from->rank) : coords})
        if (t.senders.contains(x)) kept.push_back(x);
      std::sort(kept.begin(), kept.end(), canonical_order{});
      kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
    }
    return part;
  }

  void compile_class(std::size_t c) const {
    const offset coords = classes_.representative(static_cast<int>(c));
    std::vector<std::vector<std::size_t>> index;  // named senders: per round, the whole schedule's index
    const schedule part = own_.empty() ? schedule{} : own_part(grid_.rank_of(coords), index);
    const program p = compile(
        own_.empty() ? s_ : part, grid_, coords, wanted_, [](const offset&) { return std::size_t{1}; }, strategy_);
    auto& rounds = bits_[c];
    rounds.resize(p.rounds.size());
    for (std::size_t r = 0; r < p.rounds.size(); ++r) {
      rounds[r].assign(s_.rounds[r].transfers.size(), 0);
      for (const transfer_program& t : p.rounds[r].transfers) {
        if (t.self) continue;                   // copies to the rank itself are charged as copies
        auto index_of = static_cast<std::size_t>(t.tag);  // compile tags a transfer by its index
        if (!index.empty()) index_of = index[r][index_of];
        if (index_of >= rounds[r].size()) continue;  // beyond 32767 transfers the tag wraps: no charge
        std::uint8_t b = 0;
        if (t.send.exists() && !t.send.contiguous) b |= 1u;
        if (t.recv.exists() && !t.recv.contiguous) b |= 2u;
        rounds[r][index_of] = b;
      }
    }
    const batch::array_shape one_byte[] = {{1, 1}};  // blocks of one element: the waves depend on which blocks only
    const batch::compiled_program batched = batch::program_compiler(p, false, one_byte, false).run();
    for (const batch::batched_round& r : batched.rounds)
      launches_[c].push_back({static_cast<unsigned>(r.pack.size()), static_cast<unsigned>(r.unpack.size())});
    compiled_[c] = 1;
  }

  grid_shape grid_;
  schedule s_;
  range wanted_;
  std::string strategy_;
  rank_classes classes_;
  // Filled on first use of a class ([class][round][transfer]); the callback that owns the table is
  // called by one simulation at a time.
  mutable std::vector<std::vector<std::vector<std::uint8_t>>> bits_;
  mutable std::vector<std::vector<device_launches>> launches_;  // [class][round]
  mutable std::vector<char> compiled_;
  std::vector<std::vector<place>> own_;  // named senders: per rank, the transfers it takes part in
};

/// The simulator's `staging` callback for `s` (shares the table).
inline auto staging_of(const grid_shape& grid, const schedule& s, const range& wanted, std::string_view strategy) {
  auto table = std::make_shared<const staging_table>(grid, s, wanted, strategy);
  return [table](int rank, std::size_t round, std::size_t transfer) { return (*table)(rank, round, transfer); };
}

/// The simulator's `launches` callback for `s` (device data).
inline auto launches_of(const grid_shape& grid, const schedule& s, const range& wanted, std::string_view strategy) {
  auto table = std::make_shared<const staging_table>(grid, s, wanted, strategy);
  return [table](int rank, std::size_t round) { return table->launches(rank, round); };
}

}  // namespace haloshift::detail

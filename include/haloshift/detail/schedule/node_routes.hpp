// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file node_routes.hpp
/// @brief NodeAggregate's routing: which ranks of a node gather and scatter
/// for which node pair, and the schedule's rounds built from every rank's
/// wanted blocks (schedule/node_aggregate.hpp says why).

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../../error.hpp"
#include "../../grid/grid_shape.hpp"
#include "../../grid/neighborhood.hpp"
#include "../../schedule/schedule.hpp"
#include "colouring.hpp"

namespace haloshift::detail {

/// The nodes of a grid's ranks and who speaks for each node pair.
class node_pairs {
 public:
  /// `node_of[rank]`: the node of each grid rank (numbers >= 0, any order).
  node_pairs(const grid_shape& grid, const std::vector<int>& node_of) : node_of_(node_of) {
    if (node_of.size() != static_cast<std::size_t>(grid.size()))
      throw error("NodeAggregate: node_of has " + std::to_string(node_of.size()) + " entries, the grid " +
                  std::to_string(grid.size()) + " ranks (one node per rank)");
    for (std::size_t r = 0; r < node_of.size(); ++r) {
      if (node_of[r] < 0)
        throw error("NodeAggregate: node_of[" + std::to_string(r) + "] = " + std::to_string(node_of[r]) +
                    " must be >= 0");
      ranks_[node_of[r]].push_back(static_cast<int>(r));  // ascending: r grows
    }
  }

  int node(int rank) const { return node_of_[static_cast<std::size_t>(rank)]; }

  /// Records that node `to` wants blocks of node `from` (before any leader is asked for).
  void link(int from, int to) {
    insert_sorted(sends_to_[from], to);
    insert_sorted(hears_from_[to], from);
  }

  /// The rank of `from` that sends `from`'s blocks to node `to`, and the rank of `to` that
  /// receives them. The pairs of a node are dealt round robin over its ranks, in node order,
  /// so that a node with many partners and many ranks has no single bottleneck rank; with
  /// fewer partners than ranks each pair gets a rank of its own, the lowest ones.
  int sender(int from, int to) const { return dealt(from, sends_to_.at(from), to); }
  int receiver(int from, int to) const { return dealt(to, hears_from_.at(to), from); }

 private:
  // Sorted vectors, not std::set: hipcc (clang 15) crashes instantiating a map of sets.
  static void insert_sorted(std::vector<int>& v, int x) {
    const auto at = std::lower_bound(v.begin(), v.end(), x);
    if (at == v.end() || *at != x) v.insert(at, x);
  }
  int dealt(int node, const std::vector<int>& partners, int partner) const {
    const auto index = static_cast<std::size_t>(
        std::distance(partners.begin(), std::lower_bound(partners.begin(), partners.end(), partner)));
    const std::vector<int>& ranks = ranks_.at(node);
    return ranks[index % ranks.size()];
  }

  const std::vector<int>& node_of_;
  std::map<int, std::vector<int>> ranks_;
  std::map<int, std::vector<int>> sends_to_, hears_from_;
};

/// One block a rank wants: from the box of rank `from`, as its periodic image `image` (a
/// multiple of the grid's sizes along periodic dimensions: the wanted offset is
/// `coords(from) + image - coords(to)`).
struct wanted_block {
  int from = 0, to = 0;
  offset image{0, 0, 0};
};

/// The rounds of a node-aware schedule under construction: per round, per sending rank and
/// direction, the blocks sent (one message per pair of ranks per round, whatever it carries).
class aggregated_rounds {
 public:
  aggregated_rounds(const grid_shape& grid, int rounds) : grid_(grid), sends_(static_cast<std::size_t>(rounds)) {}

  /// Rank `from` sends the block it holds at `held` to rank `to` in round `round`; returns where
  /// the block lands at `to`. Directions are plain coordinate differences (a rank to itself: a
  /// multiple of the sizes, the copy of a periodic image).
  offset send(int round, int from, int to, const offset& held) {
    const offset direction = grid_.coords_of(to) - grid_.coords_of(from);
    add_block(sends_[static_cast<std::size_t>(round)][{from, direction}], held);
    return held - direction;
  }
  /// A copy of the rank's own block to its periodic image `image` (round `round`).
  void copy_image(int round, int rank, const offset& image) {
    add_block(sends_[static_cast<std::size_t>(round)][{rank, -image}], zero_offset);
  }

  /// The schedule: in each round the senders that send the same blocks along the same direction
  /// share one transfer; rounds with no transfer are left out.
  schedule build() const {
    schedule out;
    for (const auto& round : sends_) {
      // Keyed by the direction and the blocks, flattened: what a shared transfer has in common.
      std::map<std::vector<int>, transfer> shared;
      for (const auto& [who, blocks] : round) {
        std::vector<int> key(who.direction.begin(), who.direction.end());
        for (const offset& b : blocks) key.insert(key.end(), b.begin(), b.end());
        transfer& t = shared[key];
        if (t.blocks.empty()) t = transfer{who.direction, {blocks.begin(), blocks.end()}, {}};
        t.senders.only.push_back(grid_.coords_of(who.rank));
      }
      schedule_round r;
      for (auto& [key, t] : shared) {
        std::sort(t.senders.only.begin(), t.senders.only.end(), canonical_order{});
        if (t.senders.only.size() == static_cast<std::size_t>(grid_.size())) t.senders.only.clear();  // every rank
        r.transfers.push_back(std::move(t));
      }
      order_by_colour(grid_, r.transfers);
      if (!r.transfers.empty()) out.rounds.push_back(std::move(r));
    }
    return out;
  }

 private:
  struct sender_key {
    int rank;
    offset direction;
    friend bool operator<(const sender_key& a, const sender_key& b) {
      return a.rank != b.rank ? a.rank < b.rank : canonical_less(a.direction, b.direction);
    }
  };
  grid_shape grid_;
  // Each sender's blocks sorted in canonical order, once each (a sorted vector, not std::set: hipcc
  // (clang 15) crashes instantiating a map of sets).
  static void add_block(std::vector<offset>& blocks, const offset& b) {
    const auto at = std::lower_bound(blocks.begin(), blocks.end(), b, canonical_order{});
    if (at == blocks.end() || *at != b) blocks.insert(at, b);
  }
  std::vector<std::map<sender_key, std::vector<offset>>> sends_;
};

}  // namespace haloshift::detail

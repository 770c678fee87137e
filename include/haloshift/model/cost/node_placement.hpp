// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file node_placement.hpp
/// @brief Which ranks of a grid share a node, as the two-level model prices
/// them (docs/node-aware.md, "The two-level model"): consecutive blocks of a
/// node size (as launchers place ranks by default, the last node possibly
/// smaller), or a node per rank. A node size costs no memory per rank, so a
/// million-rank prediction needs nothing more.

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <vector>

#include "../../error.hpp"
#include "../../grid/grid_shape.hpp"
#include "../../grid/nodes.hpp"

namespace haloshift::detail {

/// Where the ranks of a job live. Empty (the default): one level, every pair
/// of ranks priced alike, as before two levels existed.
struct node_placement {
  /// Ranks per node in consecutive blocks of rank numbers (0 or 1 with `node_of` empty: no layout).
  int ranks_per_node = 0;
  /// The node of each rank, when ranks are not placed in blocks (overrides `ranks_per_node`).
  std::vector<int> node_of{};

  /// Some node holds more than one rank: in-node transfers exist.
  bool two_levels() const noexcept { return !node_of.empty() || ranks_per_node > 1; }
  /// The node of `rank`.
  int node(int rank) const noexcept {
    if (!node_of.empty()) return node_of[static_cast<std::size_t>(rank)];
    return ranks_per_node > 1 ? rank / ranks_per_node : rank;
  }
  /// Ranks `a` and `b` share a node.
  bool same_node(int a, int b) const noexcept { return a == b || (two_levels() && node(a) == node(b)); }
};

/// The placement of the nodes `node_of` (per rank, numbered in the order of their lowest ranks): a
/// node size where they are consecutive blocks of ranks (the last possibly smaller), which keeps the
/// simulator's classes cheap, else the list.
inline node_placement placement_of(std::vector<int> node_of) {
  const int first = static_cast<int>(std::count(node_of.begin(), node_of.end(), 0));  // ranks on node 0
  bool blocks = first > 0;
  for (std::size_t r = 0; r < node_of.size() && blocks; ++r) blocks = node_of[r] == static_cast<int>(r) / first;
  if (blocks) return {first};
  return {0, std::move(node_of)};
}

/// `layout` must fit a grid of `ranks` ranks: a node size >= 0, or one node number >= 0 per rank.
inline void check_node_placement(const char* where, const node_placement& layout, int ranks) {
  if (layout.ranks_per_node < 0)
    throw error(std::string(where) + ": ranks_per_node must be >= 0, got " + std::to_string(layout.ranks_per_node));
  if (layout.node_of.empty()) return;
  if (layout.node_of.size() != static_cast<std::size_t>(ranks))
    throw error(std::string(where) + ": node_of has " + std::to_string(layout.node_of.size()) +
                " entries for a grid of " + std::to_string(ranks) + " ranks");
  for (std::size_t r = 0; r < layout.node_of.size(); ++r)
    if (layout.node_of[r] < 0)
      throw error(std::string(where) + ": node_of[" + std::to_string(r) + "] must be >= 0, got " +
                  std::to_string(layout.node_of[r]));
}

/// The pretend node sizes of HALOSHIFT_NODE_SIZE (empty when unset), read as the grid reads them
/// (parse_node_sizes: "N", nodes of N consecutive ranks, the last one smaller, or "A,B,C", the
/// list repeated), so that tests and calibrations see two levels on one machine.
inline std::vector<int> pretend_node_sizes() {
  const char* text = std::getenv("HALOSHIFT_NODE_SIZE");
  if (!text || !*text) return {};
  return parse_node_sizes(text, "HALOSHIFT_NODE_SIZE");
}

/// The placement of `ranks` ranks in pretend nodes of `sizes` (pretend_node_sizes, not empty).
inline node_placement pretend_placement(const std::vector<int>& sizes, int ranks) {
  node_placement out;
  if (sizes.size() == 1) {
    out.ranks_per_node = sizes[0];
    return out;
  }
  for (std::size_t i = 0, node = 0; static_cast<int>(out.node_of.size()) < ranks; i = (i + 1) % sizes.size(), ++node)
    for (int r = 0; r < sizes[i] && static_cast<int>(out.node_of.size()) < ranks; ++r)
      out.node_of.push_back(static_cast<int>(node));
  return out;
}

/// Nodes that are boxes of the grid: along each dimension the coordinates fall into segments of
/// `length[d]` (the last one possibly shorter) and two ranks share a node exactly when they lie in
/// the same segment along every dimension. Then whether a transfer stays in a node is a property of
/// each coordinate (rank_classes), and the simulation keeps its classes at any scale.
struct node_boxes {
  std::array<int, max_dims> length{1, 1, 1};
  /// The segment of coordinate `x` along `d`.
  int segment(int d, int x) const noexcept { return x / length[d]; }
};

/// The boxes of `layout` on `grid`, if its nodes are boxes: blocks of a node size that cover whole
/// lines (planes) along the dimensions numbered fastest, and divide the next one (only the slowest
/// may end in a shorter node). False otherwise (a node list, or nodes that wrap across lines).
inline bool boxes_of(const grid_shape& grid, const node_placement& layout, node_boxes& out) {
  if (!layout.node_of.empty()) return false;
  out = node_boxes{};
  if (layout.ranks_per_node >= grid.size()) {  // one node holds every rank
    for (int d = 0; d < max_dims; ++d) out.length[d] = grid.dim(d);
    return true;
  }
  long long rest = layout.ranks_per_node > 1 ? layout.ranks_per_node : 1;
  const bool first = grid.order() == grid_shape::rank_order::first_fastest;
  for (int i = 0; i < max_dims && rest > 1; ++i) {
    const int d = first ? i : max_dims - 1 - i;
    const int n = grid.dim(d);
    if (rest >= n) {
      if (rest % n != 0) return false;
      out.length[d] = n;
      rest /= n;
      continue;
    }
    bool slower_trivial = true;  // only the slowest dimension that splits may end in a shorter node
    for (int j = i + 1; j < max_dims; ++j) slower_trivial = slower_trivial && grid.dim(first ? j : max_dims - 1 - j) == 1;
    if (n % rest != 0 && !slower_trivial) return false;
    out.length[d] = static_cast<int>(rest);
    rest = 1;
  }
  return true;
}

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file node_aggregate.hpp
/// @brief NodeAggregate: one message per node pair between nodes (gather,
/// exchange, scatter), direct messages inside a node.

#include <string_view>
#include <vector>

#include "../detail/compiled.hpp"
#include "../error.hpp"
#include "../grid/grid_shape.hpp"
#include "../grid/neighborhood.hpp"
#include "../strategy.hpp"
#include "schedule.hpp"

#if HALOSHIFT_DEFINE_BUILDERS
#include "../detail/schedule/node_routes.hpp"  // make_schedule's, defined where the builders are
#endif

namespace haloshift {

/// NodeAggregate (docs/node-aware.md, "Aggregation between nodes"): what a
/// node's ranks send to another node travels as one message per node pair,
/// the three-step local/global/local scheme of MPI Advance's node-aware
/// neighbourhood collectives, on SingleHop's direct messages otherwise:
///  - round 0 (only where a rank needs a periodic image of its own block,
///    `k` at least a periodic dimension's size): copies to the rank itself;
///  - round 1, inside each node: every rank sends each rank of its node, in
///    one message, the blocks that rank wants from it (SingleHop inside the
///    node) together with what that rank forwards to other nodes for it
///    (the gather);
///  - round 2, between nodes: for each ordered node pair, one message from
///    the pair's sending rank to its receiving rank with every block the
///    receiving node wants from the sending node;
///  - round 3, inside each node: the receiving ranks scatter what arrived.
/// The pairs of a node are dealt round robin over its ranks (lowest first),
/// so with many partner nodes no one leader carries them all. The node
/// layout comes from `strategy_parameters::node_of` (the plan fills it from
/// the grid's nodes: shared memory or pretend nodes). Blocks travel back
/// towards their source on the way to a leader, which a particle or field
/// selection cannot follow: block payloads only.
struct NodeAggregate {
  /// The strategy's name (make_plan(grid, "NodeAggregate", ...), the registry).
  static constexpr std::string_view name = "NodeAggregate";
  /// Gathering at a node's leader moves blocks back towards their source.
  static constexpr bool blocks_only = true;
  /// The plan passes the grid's node layout in strategy_parameters::node_of.
  static constexpr bool node_aware = true;

  /// The rounds for `r` on `grid` with the nodes `p.node_of` (required).
  HALOSHIFT_BUILDER static schedule make_schedule(const grid_shape& grid, const range& r, const strategy_parameters& p);
};

#if HALOSHIFT_DEFINE_BUILDERS
namespace detail {
/// Every block every rank wants, in rank order, then the range's offset order.
inline std::vector<wanted_block> node_wanted_blocks(const grid_shape& grid, const range& r) {
  std::vector<wanted_block> out;
  const std::vector<offset> all = offsets(r);
  for (int to = 0; to < grid.size(); ++to) {
    const offset c = grid.coords_of(to);
    for (const offset& o : all)
      if (const auto owner = grid.neighbor_at(c, o)) {
        const int from = owner->rank;
        out.push_back({from, to, c + o - grid.coords_of(from)});
      }
  }
  return out;
}

/// The path of one wanted block. Its source holds it at `image` (round 0 makes the copy when
/// that is not 0); each hop along a plain coordinate difference moves it by minus that
/// difference, so it reaches `to` at coords(from) + image - coords(to), the offset wanted.
inline void route_wanted_block(aggregated_rounds& rounds, const node_pairs& nodes, const wanted_block& w) {
  if (w.image != zero_offset) rounds.copy_image(0, w.from, w.image);
  if (w.from == w.to) return;  // the copy was all
  const int a = nodes.node(w.from), b = nodes.node(w.to);
  if (a == b) {
    rounds.send(1, w.from, w.to, w.image);
    return;
  }
  const int sender = nodes.sender(a, b), receiver = nodes.receiver(a, b);
  offset held = w.image;
  if (w.from != sender) held = rounds.send(1, w.from, sender, held);
  held = rounds.send(2, sender, receiver, held);
  if (receiver != w.to) rounds.send(3, receiver, w.to, held);
}
}  // namespace detail

HALOSHIFT_BUILDER schedule NodeAggregate::make_schedule(const grid_shape& grid, const range& r,
                                                        const strategy_parameters& p) {
  if (!p.node_of)
    throw error("NodeAggregate needs the grid's node layout (strategy_parameters::node_of, which plans fill)");
  detail::node_pairs nodes(grid, *p.node_of);
  const std::vector<detail::wanted_block> wanted = detail::node_wanted_blocks(grid, r);
  for (const detail::wanted_block& w : wanted)
    if (nodes.node(w.from) != nodes.node(w.to)) nodes.link(nodes.node(w.from), nodes.node(w.to));
  detail::aggregated_rounds rounds(grid, 4);
  for (const detail::wanted_block& w : wanted) detail::route_wanted_block(rounds, nodes, w);
  return rounds.build();
}
#endif

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file simulator.hpp
/// @brief Max-plus evaluation of a schedule on a whole grid: the longest path
/// through every rank's message dependencies, in time linear in the number of
/// messages (the Petri-net paper's (max,+) method without its matrices).

#include <algorithm>
#include <cstddef>
#include <vector>

#include "../../grid/grid_shape.hpp"
#include "../../detail/schedule/colouring.hpp"
#include "../../schedule/schedule.hpp"
#include "maxplus_engine.hpp"
#include "rank_classes.hpp"
#include "simulation_setup.hpp"

namespace haloshift::detail {

/// Rendezvous, on classes that follow the schedule transfer by transfer. A
/// run of transfers coloured along one dimension (and the times it started
/// from) tells ranks apart only by their coordinate along that dimension, and
/// each transfer only within its own window: every transfer is simulated on
/// the classes that it and the times before it tell apart (rank_classes::of
/// the transfer, with the current classes as `also`), and afterwards the
/// classes whose times agree are merged (maxplus_engine::merge_alike). With
/// a round's transfers ordered by colour (order_by_colour) a round of
/// SingleHop on an odd 101^3 ring runs 294 transfers on at most 101 classes,
/// 42 on 101^2 and the last 6 on a million; a non-periodic grid, where the
/// whole schedule's windows tell every rank apart, keeps a few classes per
/// dimension near each border. `packed`: the classes the staging bits
/// follow, if any (never merged across).
inline simulation_result by_colour_runs(const grid_shape& grid, const schedule& s, const simulation_setup& setup,
                                        double bytes, const rank_classes* packed, const node_boxes* nodes) {
  struct step {
    std::size_t round, transfer;
  };
  std::vector<std::vector<step>> runs;
  int dim = -2;
  for (std::size_t round = 0; round < s.rounds.size(); ++round)
    for (std::size_t ti = 0; ti < s.rounds[round].transfers.size(); ++ti) {
      const int d = colour_dimension(grid, s.rounds[round].transfers[ti].direction);
      if (runs.empty() || d != dim) runs.emplace_back();
      runs.back().push_back({round, ti});
      dim = d;
    }
  const auto classes_of = [&](const std::vector<step>& run, const rank_classes* also) {
    schedule part{{schedule_round{}}};
    for (const step& x : run) part.rounds[0].transfers.push_back(s.rounds[x.round].transfers[x.transfer]);
    return rank_classes::of(grid, part, true, also, nodes);
  };
  if (runs.empty()) return maxplus_engine(grid, s, setup, rank_classes::of(grid, s, true, packed, nodes), bytes).run();
  maxplus_engine simulation(grid, s, setup, classes_of({runs.front().front()}, packed), bytes);
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (std::size_t j = 0; j < runs[i].size(); ++j) {
      const step& x = runs[i][j];
      // Each transfer on the classes its own window tells apart, then the classes whose times agree
      // merged again (maxplus_engine::merge_alike).
      if ((i > 0 || j > 0) && simulation.classes().size() < grid.size()) {
        rank_classes finer = classes_of({x}, &simulation.classes());
        if (finer.size() > simulation.classes().size()) simulation.refine(std::move(finer));
      }
      simulation.rendezvous_transfer(x.round, x.transfer);
      simulation.merge_alike(packed);
    }
  return simulation.result();
}

/// Predicts the time of schedule `s` on every rank of `grid`. Overlapping
/// mode: in each round a rank posts its sends in order; the i-th leaves after
/// the injection of the earlier ones (gamma + beta * m each) and completes
/// `time(m)` after both ends are in the round; a rank's round ends with its
/// last sent or received message. Rendezvous mode: the executor's order
/// (transfers one after another, send-first or receive-first by the chain
/// colouring), each synchronous message starting when both ends reach it.
/// A copy to the rank itself takes `copy_beta` per byte of the rank's own
/// time, in transfer order, as the executor does it (free when 0). A rank
/// that sends or receives in a round ends it `round_delta` after its last
/// message; with `gamma_growth` the gap of a rank's sends grows with the
/// number it posts in that round (both 0: the papers' model). With
/// `setup.staging`, packing a send costs the sender `copy_beta` per byte
/// before it leaves and unpacking a receive costs the receiver as much after
/// its round's messages are in (overlapping) or after the message
/// (rendezvous), as the executor does it. With `setup.launches` (device
/// data) each rank's round costs device_round_cost() instead: its pack
/// launches before its sends leave, the copies and unpack launches after its
/// round's messages are in, always nonblocking.
///
/// Ranks the schedule cannot tell apart are simulated once per class
/// (model/simulation/rank_classes.hpp) when every block has the same size and no
/// `link_time` is set: exactly the times of simulating every rank, at a cost
/// that no longer grows with the grid on periodic grids (a million ranks in
/// tens of milliseconds); otherwise every rank is its own class. `setup.staging` must
/// then give the same bits to the ranks of one class of programs
/// (rank_classes::programs: which boxes exist within one transfer's reach), as
/// detail::staging_of does.
///
/// With two levels (`setup.nodes`) each message is priced by the level it
/// crosses (route_of); nodes that are boxes of the grid (node_boxes: a node
/// size in the launchers' block placement, covering whole lines or planes)
/// keep the classes, any other layout simulates every rank. So does a
/// schedule whose transfers name their senders (NodeAggregate's: which ranks
/// lead a node is no property of one coordinate; rank_classes::of).
inline simulation_result simulate(const grid_shape& grid, const schedule& s, const simulation_setup& setup) {
  const bool uniform = detail::check_simulation_setup("simulate", grid, setup);
  const bool colours = setup.mode == protocol::rendezvous && !setup.launches;  // batched: never blocking
  node_boxes boxes;
  const bool levels = setup.nodes.two_levels();
  if (!uniform || setup.link_time || (levels && !boxes_of(grid, setup.nodes, boxes)))
    return detail::maxplus_engine(grid, s, setup, detail::rank_classes::each_rank(grid), -1).run();
  const double bytes = setup.block_bytes(0);
  if (names_senders(s))  // exact rank by rank, still with the blocks' one size
    return detail::maxplus_engine(grid, s, setup, detail::rank_classes::each_rank(grid), bytes).run();
  const node_boxes* nodes = levels ? &boxes : nullptr;
  const bool packing = setup.staging && setup.cost.copy_beta() > 0;
  const detail::rank_classes packed = packing ? detail::rank_classes::programs(grid, s) : detail::rank_classes{};
  if (colours) return detail::by_colour_runs(grid, s, setup, bytes, packing ? &packed : nullptr, nodes);
  return detail::maxplus_engine(grid, s, setup, detail::rank_classes::of(grid, s, false, nullptr, nodes), bytes).run();
}

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file auto.hpp
/// @brief Auto's ranking: predict every strategy with the cost model, cheapest first (explain();
/// Auto's choice from it: auto_choice.hpp).

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../detail/batch/gpu_aware.hpp"
#include "../exchange/plan.hpp"
#include "../exchange/selection.hpp"
#include "../log.hpp"
#include "../payload/grid_field.hpp"
#include "../payload/particles.hpp"
#include "../strategy_registry.hpp"
#include "../auto_hook.hpp"
#include "../model/calibration/calibration.hpp"
#include "../model/cost/node_placement.hpp"
#include "../model/cost/arguments.hpp"
#include "../model/simulation/simulator.hpp"
#include "../model/simulation/staging.hpp"
#include "../schedule/shift.hpp"
#include "../schedule/single_hop.hpp"
#include "../schedule/team_shift.hpp"
#include "../schedule/ttl_multi_hop.hpp"

namespace haloshift {

/// One candidate and its predicted time.
struct prediction {
  std::string strategy;  ///< a registered strategy's name ("Shift", "TeamShift", ...)
  offset team{0, 0, 0};  ///< TeamShift's team sizes
  /// Predicted time of one exchange, in seconds.
  double seconds = 0;
  /// Device data (explain() with a plan_options::device_mpi): "direct" (MPI reads device memory)
  /// or "staged" (through pinned host memory); empty for host data.
  std::string staging;
  /// Why: the option, the environment or the MPI's answer where one way alone is possible, the
  /// model's two predictions where both are.
  std::string staging_why;
  /// Of `seconds`, what the device adds: launches, packing on the device, copies to the host and back.
  double device_seconds = 0;
  /// How transfers inside a node travel: "" (flat: MPI messages, priced by the level they cross), or
  /// "shm" (the same strategy with the shared-memory path inside nodes; docs/node-aware.md).
  std::string inside_nodes;
  /// Several fields in one exchange (explain()'s `fields` above 1): "per_neighbor" (one message per
  /// neighbour, packed) or "per_field" (one per neighbour and field: plan_options::messages); empty
  /// for one field.
  std::string messages;
};

namespace detail {
/// Whether a schedule can carry particles and grid fields (blocks only move away from their source).
inline bool carries_selective(const schedule& s) {
  try {
    check_away_from_source(s, "");
    return true;
  } catch (const error&) {
    return false;
  }
}

/// The ways device data's messages may reach MPI under plan_options::device_mpi `path`: staged
/// always unless the option says direct; direct where the option, HALOSHIFT_GPU_AWARE or the
/// MPI's query (CUDA, then ROCm) says MPI reads device memory (detail/batch/gpu_aware.hpp).
struct device_paths {
  bool direct = false, staged = true;
  std::string why;  ///< the decision's reason, as the executor logs it
};
inline device_paths allowed_paths(memory::mpi_path path) {
  if (path == memory::mpi_path::staged) return {false, true, "plan_options::device_mpi = mpi_path::staged"};
  const batch::mpi_reach reach = batch::decide_mpi_reach(path, [] {
    const batch::mpi_reach cuda = batch::query_mpi(batch::gpu_runtime::cuda);
    if (cuda.direct) return cuda;
    const batch::mpi_reach rocm = batch::query_mpi(batch::gpu_runtime::rocm);
    return rocm.direct ? rocm : batch::mpi_reach{false, cuda.why + "; " + rocm.why};
  });
  return {reach.direct, path != memory::mpi_path::direct, reach.why};
}

/// `p` with the time of `s` on device data, the cheaper of the ways `ways` allows (direct on a tie:
/// the detection's way), and what the device charges add to it.
inline prediction predict_on_device(const grid_shape& grid, const schedule& s, simulation_setup setup,
                                    const device_paths& ways, prediction p) {
  const double never = std::numeric_limits<double>::infinity();
  const auto time = [&](bool staged) {
    setup.staged = staged;
    return simulate(grid, s, setup).makespan;
  };
  const double direct = ways.direct ? time(false) : never, staged = ways.staged ? time(true) : never;
  const bool go_direct = direct <= staged;
  p.seconds = std::min(direct, staged);
  p.staging = go_direct ? "direct" : "staged";
  p.staging_why = ways.why;
  if (ways.direct && ways.staged && setup.cost.device().any())
    p.staging_why = "model: direct " + std::to_string(direct * 1e6) + " us, staged " + std::to_string(staged * 1e6) +
                    " us (direct possible: " + ways.why + ")";
  setup.cost = setup.cost.with_device({});
  p.device_seconds = p.seconds - time(!go_direct);
  return p;
}

/// `s` with each transfer repeated `parts` times in a row: what a field plan runs with one message
/// per field (detail::split_per_part), for the simulator.
inline schedule per_part(const schedule& s, int parts) {
  schedule out;
  for (const schedule_round& r : s.rounds) {
    schedule_round& o = out.rounds.emplace_back();
    for (const transfer& t : r.transfers)
      for (int i = 0; i < parts; ++i) o.transfers.push_back(t);
  }
  return out;
}

/// Several fields (`fields` above 1) in one exchange of `s` under `setup` (blocks of all fields'
/// bytes): `p` as one message per field, or nothing for a neighbourhood collective (one message per
/// neighbour by construction). Both ways pack what a single field's message packs (`setup.staging`,
/// per transfer): a field's face is strided whether it travels alone or with the others', so the
/// two differ by the messages' number and size (latencies, bursts, protocol pieces), not by copies.
inline std::optional<prediction> price_field_messages(const grid_shape& grid, const schedule& s,
                                                      const simulation_setup& setup, int fields, bool collective,
                                                      prediction& p) {
  p.messages = "per_neighbor";
  if (collective) return std::nullopt;
  simulation_setup apart = setup;
  const double bytes = setup.block_bytes(0) / fields;
  apart.block_bytes = [bytes](int) { return bytes; };
  if (setup.staging)
    apart.staging = [one = setup.staging, fields](int rank, std::size_t round, std::size_t t) {
      return one(rank, round, t / static_cast<std::size_t>(fields));
    };
  prediction split = p;
  split.messages = "per_field";
  split.seconds = simulate(grid, per_part(s, fields), apart).makespan;
  return split;
}

/// TeamShift's candidate teams: the same c along every dimension that it divides (1 elsewhere), c >= 2.
inline std::vector<offset> team_sizes(const grid_shape& grid, const range& r) {
  std::vector<offset> out;
  int largest = 1;
  for (int d = 0; d < max_dims; ++d) largest = std::max(largest, std::min(grid.dim(d), r.k[d]));
  for (int c = 2; c <= largest; ++c) {
    offset team{1, 1, 1};
    bool any = false;
    for (int d = 0; d < max_dims; ++d)
      if (r.k[d] > 0 && grid.dim(d) % c == 0) {
        team[d] = c;
        any = true;
      }
    if (any) out.push_back(team);
  }
  return out;
}

/// The most blocks wanted over all ranks (ranks times the range's offsets) for which explain() prices
/// the node-aware strategies. NodeAggregate's schedule lists every rank's wanted blocks and the
/// simulator runs it rank by rank (its leaders are no property of a coordinate), so its price takes
/// time linear in that count: about 2.5 s per million blocks on the 2-core build machine (a periodic
/// 32^3 grid at k = 1, 0.85 million, explain() in 2.1 s). Above it (80,659 ranks at k = 1 in 3D,
/// 16,912 at k = 2) explain() and Auto leave NodeAggregate out rather than take minutes.
inline constexpr double node_aware_priced_blocks = 2097152;

/// Per rank its node under `placement`, for the node-aware schedules (strategy_parameters::node_of),
/// or null where there is nothing to aggregate (no layout, one node, or no node holding two ranks) or
/// the grid is too large to price them (node_aware_priced_blocks).
inline std::shared_ptr<const std::vector<int>> aggregating_nodes(const node_placement& placement,
                                                                 const grid_shape& grid, const range& r) {
  const int ranks = grid.size();
  if (!placement.two_levels() || ranks < 2) return nullptr;
  if (static_cast<double>(ranks) * static_cast<double>(offsets(r).size()) > node_aware_priced_blocks) return nullptr;
  auto out = std::make_shared<std::vector<int>>(static_cast<std::size_t>(ranks));
  for (int rank = 0; rank < ranks; ++rank) (*out)[static_cast<std::size_t>(rank)] = placement.node(rank);
  std::vector<int> sorted = *out;
  std::sort(sorted.begin(), sorted.end());
  const bool shared = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
  return shared && sorted.front() != sorted.back() ? out : nullptr;
}

/// Every Auto candidate of the registry (TeamShift once per team size), with
/// its predicted time, cheapest first; `selective` keeps only the schedules
/// that can carry particles and grid fields; `device`, when set: blocks in
/// device memory, each candidate the cheaper of the ways it allows. `nodes`:
/// which ranks share a node (messages priced by the level they cross); with
/// `node_rows` and ranks sharing nodes, each host candidate once more with the
/// shared-memory path inside nodes (prediction::inside_nodes). Node-aware
/// strategies (NodeAggregate) are candidates only where `nodes` has several
/// nodes and some node holds several ranks, their schedule built on those nodes.
/// `fields` above 1 (host data): `bytes` hold that many fields, and each
/// candidate comes as one message per neighbour and as one per field
/// (prediction::messages; the shared-memory rows only per neighbour, since one
/// message per field goes by MPI).
inline std::vector<prediction> rank_candidates(const grid_shape& grid, const range& r, double bytes,
                                               const hockney& cost, protocol mode, detail::payload_kind payload,
                                               const std::vector<std::string>& only,
                                               const char* where = "explain", const device_paths* device = nullptr,
                                               const node_placement& nodes = {}, bool node_rows = false,
                                               int fields = 1) {
  detail::check_range(where, grid, r);
  detail::check_bytes(where, "bytes", bytes);
  detail::check_protocol(where, mode);
  detail::check_node_placement(where, nodes, grid.size());
  if (fields < 1) throw error(std::string(where) + ": fields must be >= 1, got " + std::to_string(fields));
  simulation_setup setup;
  setup.cost = cost;
  setup.mode = mode;
  setup.block_bytes = [bytes](int) { return bytes; };
  setup.nodes = nodes;
  std::vector<prediction> out;
  std::optional<std::shared_ptr<const std::vector<int>>> node_list;  // for node-aware entries, made once
  auto add = [&](const detail::strategy_entry& e, const offset& team) {
    if (payload == detail::payload_kind::selective && !e.selective_payloads) return;
    strategy_parameters parameters{.team = team};
    if (e.needs_nodes) {  // NodeAggregate: priced with the placement's nodes, where nodes share ranks
      if (!node_list) node_list = aggregating_nodes(nodes, grid, r);
      if (!*node_list) return;
      parameters.node_of = *node_list;
    }
    const schedule s = e.make_schedule(grid, r, parameters);
    if (payload == detail::payload_kind::selective && !carries_selective(s)) return;
    simulation_setup own = setup;
    prediction p;
    p.strategy = e.name;
    p.team = team;
    if (device) {
      own.launches = detail::launches_of(grid, s, r, e.name);
      out.push_back(predict_on_device(grid, s, own, *device, std::move(p)));
      return;
    }
    if (cost.copy_beta() > 0) own.staging = detail::staging_of(grid, s, r, e.name);  // packing costs copies too
    std::optional<prediction> per_field;
    if (fields > 1) per_field = price_field_messages(grid, s, own, fields, e.neighbor_collective, p);
    p.seconds = simulate(grid, s, own).makespan;
    out.push_back(p);
    if (per_field) out.push_back(std::move(*per_field));  // after: a tie keeps the fewer messages
    if (node_rows && nodes.two_levels()) {  // the strategy again, with the shared-memory path inside nodes
      own.shm = true;
      p.inside_nodes = "shm";
      p.seconds = simulate(grid, s, own).makespan;
      out.push_back(std::move(p));
    }
  };
  for (const detail::strategy_entry& e : detail::strategy_registry::instance().entries()) {
    if (!e.auto_candidate) continue;
    if (!only.empty() && std::find(only.begin(), only.end(), std::string(e.name)) == only.end()) continue;
    if (e.team_sizes)
      for (const offset& team : team_sizes(grid, r)) add(e, team);
    else
      add(e, {0, 0, 0});
  }
  std::stable_sort(out.begin(), out.end(), [](const prediction& a, const prediction& b) { return a.seconds < b.seconds; });
  return out;
}
}  // namespace detail

/// Predicted time of every Auto candidate in the strategy registry (the
/// built-in Shift, SingleHop, TtlMultiHop and TeamShift per team size, and
/// registered custom strategies) for blocks of `bytes` per rank on `grid`,
/// cheapest first, each simulated exactly (max-plus, borders included) at
/// any grid size: ranks the schedule cannot tell apart are simulated once
/// (model/simulation/rank_classes.hpp), so a periodic grid of a million ranks costs
/// about as much as a small one. Pure and deterministic: the same inputs give the
/// same ranking. `only`, when not empty, restricts the candidates to those
/// names (the advisor's Shift / TeamShift boundary needs just two, many times).
/// `device_mpi`, when given, predicts blocks in device memory with that
/// plan_options::device_mpi: each candidate staged and, where detection
/// allows it, direct, the cheaper reported (prediction::staging, its reason
/// and the device's share of the time; docs/model.md, "Device data").
/// `ranks_per_node` > 1: ranks share nodes in consecutive blocks of that many
/// (the last node possibly smaller; docs/node-aware.md, "The two-level
/// model"): every message is priced by the level it crosses, and each host
/// candidate comes once more with the shared-memory path inside nodes
/// (prediction::inside_nodes "shm"), NodeAggregate among them where there
/// are several nodes (one message per node pair between nodes, flat and
/// "shm"). 0 or 1: one level, as without nodes. `fields` above 1 (host
/// data): `bytes` hold that many fields exchanged together (a field_bundle,
/// several views), and each candidate comes twice, as one message per neighbour
/// and as one per neighbour and field (prediction::messages,
/// plan_options::messages; docs/grids.md, "Several fields").
inline std::vector<prediction> explain(const grid_shape& grid, const range& r, double bytes, const hockney& cost,
                                       protocol mode = protocol::overlapping,
                                       const std::vector<std::string>& only = {},
                                       std::optional<memory::mpi_path> device_mpi = std::nullopt,
                                       int ranks_per_node = 0, int fields = 1) {
  const detail::node_placement nodes{ranks_per_node};
  if (!device_mpi)
    return detail::rank_candidates(grid, r, bytes, cost, mode, detail::payload_kind::block, only, "explain", nullptr,
                                   nodes, true, fields);
  const detail::device_paths ways = detail::allowed_paths(*device_mpi);
  return detail::rank_candidates(grid, r, bytes, cost, mode, detail::payload_kind::block, only, "explain", &ways,
                                 nodes);
}

/// Predicted time of every strategy that can carry particles, cheapest first.
/// A block is sized as the slab of a box within the cutoff of a face
/// neighbour (`particles * min(1, cutoff / width)` particles of
/// `bytes_per_particle`), the first-phase message of Shift; later Shift phases
/// carry more, so this ranks the strategies rather than predicting the time.
inline std::vector<prediction> explain_particles(const grid_shape& grid, const domain& dom, const position& cutoff,
                                                 std::size_t particles, std::size_t bytes_per_particle,
                                                 const hockney& cost, protocol mode = protocol::overlapping) {
  const detail::particle_sizing sized = detail::size_particle_blocks(grid, dom, cutoff, particles, bytes_per_particle);
  return detail::rank_candidates(grid, range{sized.reach, shell::full}, sized.bytes, cost, mode,
                                 detail::payload_kind::selective, {}, "explain_particles");
}

}  // namespace haloshift

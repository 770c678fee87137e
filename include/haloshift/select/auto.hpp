// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file auto.hpp
/// @brief Auto: predict every strategy with the cost model, run the cheapest.

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <exception>
#include <limits>
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

/// Every Auto candidate of the registry (TeamShift once per team size), with
/// its predicted time, cheapest first; `selective` keeps only the schedules
/// that can carry particles and grid fields; `device`, when set: blocks in
/// device memory, each candidate the cheaper of the ways it allows. `nodes`:
/// which ranks share a node (messages priced by the level they cross); with
/// `node_rows` and ranks sharing nodes, each host candidate once more with the
/// shared-memory path inside nodes (prediction::inside_nodes).
inline std::vector<prediction> rank_candidates(const grid_shape& grid, const range& r, double bytes,
                                               const hockney& cost, protocol mode, detail::payload_kind payload,
                                               const std::vector<std::string>& only,
                                               const char* where = "explain", const device_paths* device = nullptr,
                                               const node_placement& nodes = {}, bool node_rows = false) {
  detail::check_range(where, grid, r);
  detail::check_bytes(where, "bytes", bytes);
  detail::check_protocol(where, mode);
  detail::check_node_placement(where, nodes, grid.size());
  simulation_setup setup;
  setup.cost = cost;
  setup.mode = mode;
  setup.block_bytes = [bytes](int) { return bytes; };
  setup.nodes = nodes;
  std::vector<prediction> out;
  auto add = [&](const detail::strategy_entry& e, const offset& team) {
    if (payload == detail::payload_kind::selective && !e.selective_payloads) return;
    const schedule s = e.make_schedule(grid, r, strategy_parameters{.team = team});
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
    p.seconds = simulate(grid, s, own).makespan;
    out.push_back(p);
    if (node_rows && nodes.two_levels()) {  // the node-aware variant (an aggregating one would join here)
      own.shm = true;
      p.inside_nodes = "shm";
      p.seconds = simulate(grid, s, own).makespan;
      out.push_back(std::move(p));
    }
  };
  for (const detail::strategy_entry& e : detail::strategy_registry::instance().entries()) {
    if (!e.auto_candidate) continue;
    if (!only.empty() && std::find(only.begin(), only.end(), std::string(e.name)) == only.end()) continue;
    if (!e.team_sizes) {
      add(e, {0, 0, 0});
      continue;
    }
    // Team sizes: the same c along every dimension that it divides (1 elsewhere), c >= 2.
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
      if (any) add(e, team);
    }
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
/// (prediction::inside_nodes "shm"). 0 or 1: one level, as without nodes.
inline std::vector<prediction> explain(const grid_shape& grid, const range& r, double bytes, const hockney& cost,
                                       protocol mode = protocol::overlapping,
                                       const std::vector<std::string>& only = {},
                                       std::optional<memory::mpi_path> device_mpi = std::nullopt,
                                       int ranks_per_node = 0) {
  const detail::node_placement nodes{ranks_per_node};
  if (!device_mpi)
    return detail::rank_candidates(grid, r, bytes, cost, mode, detail::payload_kind::block, only, "explain", nullptr,
                                   nodes, true);
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

namespace detail {
/// Whether Auto prices the shared-memory path for `request` (its rows, prediction::inside_nodes "shm"):
/// where the plan can take it (host data, not batched; the overlapping protocol: rendezvous keeps MPI's
/// synchronisation) and the model knows its price (shm_alpha measured: a calibration where rank 0 had
/// a node partner). Whether some node holds 2 or more ranks is the placement's to say.
inline bool prices_shared_memory(const hockney& model, const auto_request& request) {
  return request.shared_memory_possible && !request.device && request.mode == protocol::overlapping &&
         model.shm_alpha() > 0;
}

/// The row Auto runs: the cheapest that the plan can run as priced. A shared-memory row of a
/// neighbourhood collective cannot be (it keeps MPI); where the user asked for the path, the plan
/// takes it whatever Auto picks, so a flat row is skipped when the ranking holds shared-memory rows.
inline const prediction* runnable_front(const std::vector<prediction>& ranked, bool shared_memory_asked) {
  const auto shm = [](const prediction& p) {
    return p.inside_nodes == "shm" && !strategy_registry::instance().find(p.strategy).neighbor_collective;
  };
  const bool only_shm = shared_memory_asked && std::any_of(ranked.begin(), ranked.end(), shm);
  for (const prediction& p : ranked)
    if (p.inside_nodes.empty() ? !only_shm : shm(p)) return &p;
  return nullptr;
}

/// Rank 0's pick, as it is broadcast: the winner's name (or, `failed`, why there is none), its team,
/// the staging of device data and whether it runs the shared-memory path.
struct auto_pick {
  std::string name;
  offset team{0, 0, 0};
  int failed = 0, staging = static_cast<int>(memory::mpi_path::detect), shared_memory = 0;
};

/// Rank 0 ranks the candidates for `request` with `model` on `nodes` (the shared-memory rows where
/// `shm`) and reports its pick through the log. Never raises: its peers already wait in the broadcast,
/// so a failure travels in the pick.
inline auto_pick pick_on_rank0(const hockney& model, const auto_request& request, const node_placement& nodes,
                               bool shm) {
  auto_pick out;
  try {
    // Device data: staging picked too, where the model knows the device (else the executor decides, as without Auto).
    const bool device = request.device && model.device().any();
    const device_paths ways = device ? allowed_paths(request.device_mpi) : device_paths{};
    const std::vector<prediction> ranked = rank_candidates(request.grid, request.r, request.bytes, model, request.mode,
                                                           request.payload, {}, "Auto", device ? &ways : nullptr,
                                                           nodes, shm);
    const prediction* p = runnable_front(ranked, request.shared_memory_asked);
    if (!p) return out;
    out.name = p->strategy;
    out.team = p->team;
    out.shared_memory = p->inside_nodes == "shm";
    if (device) out.staging = static_cast<int>(p->staging == "direct" ? memory::mpi_path::direct : memory::mpi_path::staged);
    log_message(log_level::info,
                "Auto chose " + out.name + (out.name == TeamShift::name ? " team " + to_string(out.team) : "") +
                    (out.shared_memory ? " +shm" : "") +
                    (request.payload == detail::payload_kind::selective ? " (particles or fields)" : "") +
                    ", predicted " + std::to_string(p->seconds * 1e6) + " us" +
                    (device ? ", messages " + p->staging + " (" + p->staging_why + "), device " +
                                  std::to_string(p->device_seconds * 1e6) + " us of it"
                            : ""));
  } catch (const std::exception& e) {
    const std::string_view what = e.what(), prefix = "haloshift: ";
    out.name = what.starts_with(prefix) ? std::string(what.substr(prefix.size())) : "Auto: " + std::string(what);
    out.failed = 1;
  }
  return out;
}

/// Auto's choice for a plan (collective): the agreed model, rank 0 ranks the
/// candidates on the grid's own nodes and broadcasts the winner's name, team,
/// staging and shared-memory flag; every rank looks the name up (the same
/// error everywhere if a rank lacks it).
inline detail::strategy_choice choose_by_model(const cartesian_grid& grid, const detail::auto_request& request) {
  const hockney model = agreed_model(grid.comm());
  // Priced on the nodes the plan runs on (grid_options::node_sizes, HALOSHIFT_NODE_SIZE, else shared
  // memory), wherever the model tells the levels apart: between nodes, or by the shared-memory path,
  // which pays most where one node holds every rank. Decided by the agreed model alone, so that every
  // rank takes part in the layout's collectives (on first use), or none.
  const bool levels = model.between_nodes() || model.shm_alpha() > 0;
  const node_placement nodes = levels ? placement_of(*nodes_of(grid).node_of) : node_placement{};
  auto_pick pick;
  if (grid.rank() == 0) pick = pick_on_rank0(model, request, nodes, prices_shared_memory(model, request));
  int head[7] = {static_cast<int>(pick.name.size()), pick.team[0], pick.team[1], pick.team[2], pick.failed,
                 pick.staging, pick.shared_memory};
  mpi::check(MPI_Bcast(head, 7, MPI_INT, 0, grid.comm()), "MPI_Bcast");
  std::string& name = pick.name;
  name.resize(static_cast<std::size_t>(head[0]));
  mpi::check(MPI_Bcast(name.data(), head[0], MPI_CHAR, 0, grid.comm()), "MPI_Bcast");
  detail::strategy_choice choice;
  mpi::agree(grid.comm(), [&] {
    if (head[4] != 0) throw error(name);  // rank 0's failure, raised on every rank
    if (name.empty()) throw error("Auto: no registered strategy can carry this payload");
    choice.entry = detail::strategy_registry::instance().find(name);
  });
  choice.team = {head[1], head[2], head[3]};
  choice.staging = static_cast<memory::mpi_path>(head[5]);
  choice.shared_memory = head[6] != 0;
  return choice;
}

/// Installs the model layer's chooser (idempotent).
inline bool install_auto_chooser() {
  installed_auto_chooser().store(&choose_by_model);
  return true;
}
/// Including this header installs it before main.
inline const bool auto_chooser_installed = install_auto_chooser();
}  // namespace detail

/// make_plan<Auto>: collective. Validates the arguments like every plan
/// (before measuring anything, agreeing on the name "Auto"), reads the agreed
/// cost model (agreed_model: calibration file, or one quick measurement per
/// process), sizes blocks by the largest local_count, and runs the strategy
/// rank 0 predicts fastest (explain()). HALOSHIFT_VERBOSE=1 (or
/// set_verbose(true)) reports the choice through the log sink (log.hpp).
template <class S, transferable T>
  requires std::same_as<S, Auto>
plan<T> make_plan(const cartesian_grid& grid, const offset& k, std::size_t local_count,
                  const plan_options& options = {}) {
  detail::install_auto_chooser();
  return make_plan<T>(grid, Auto::name, k, local_count, options);
}
/// `make_plan<Auto>` with the same `k` along every dimension.
template <class S, transferable T>
  requires std::same_as<S, Auto>
plan<T> make_plan(const cartesian_grid& grid, int k, std::size_t local_count, const plan_options& options = {}) {
  detail::install_auto_chooser();
  return make_plan<T>(grid, Auto::name, k, local_count, options);
}

/// make_particle_plan<Auto>: validates like every particle plan, reads the
/// agreed cost model, and builds the plan of the strategy rank 0 ranks first
/// by explain_particles (positions' bytes, the largest owned count).
/// Positions in any layout, as for every strategy (position_source).
template <class S, detail::position_source V>
  requires std::same_as<S, Auto>
particle_plan make_particle_plan(const cartesian_grid& grid, const domain& dom, const position& cutoff, const V& x,
                                 const plan_options& options = {}) {
  detail::install_auto_chooser();
  return make_particle_plan(grid, Auto::name, dom, cutoff, x, options);
}

/// make_field_plan<Auto>: rank 0 ranks the strategies that can select (blocks
/// sized as the mean ghost bytes per imported box of the largest box). With a
/// device space (make_field_plan<Auto, memory::device>) it picks how the
/// messages reach MPI too, among the ways plan_options::device_mpi and the
/// detection allow, where the model knows the device's costs (a calibration
/// that measured it); the plan runs with that choice as its device_mpi.
template <class S, class Space = memory::host>
  requires std::same_as<S, Auto>
field_plan make_field_plan(const cartesian_grid& grid, const field_shape& shape, const plan_options& options = {},
                           std::size_t element_size = sizeof(double)) {
  detail::install_auto_chooser();
  if constexpr (detail::device_space<Space>) {
    const field_shape checked = detail::agreed_shape(grid, shape, {}, detail::strategy_value(Auto::name));
    return detail::field_plan_builder::automatic(grid, checked, options, element_size, true);
  } else {
    return make_field_plan(grid, Auto::name, shape, options, element_size);
  }
}

}  // namespace haloshift

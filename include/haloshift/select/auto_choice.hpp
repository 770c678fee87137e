// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file auto_choice.hpp
/// @brief Auto's choice for a plan: rank 0 ranks the candidates (auto.hpp) with the agreed model
/// on the grid's own nodes, the shared-memory path among them where the plan can take it, and
/// broadcasts the winner; make_plan<Auto>, make_particle_plan<Auto> and make_field_plan<Auto>.

#include <algorithm>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "../auto_hook.hpp"
#include "../grid/nodes.hpp"
#include "../log.hpp"
#include "../model/calibration/calibration.hpp"
#include "../model/cost/node_placement.hpp"
#include "../payload/grid_field.hpp"
#include "../payload/particles.hpp"
#include "../schedule/team_shift.hpp"
#include "auto.hpp"

namespace haloshift {

namespace detail {
/// Whether Auto prices the shared-memory path for `request` (its rows, prediction::inside_nodes "shm"):
/// where the plan can take it (host data: device data's in-node messages take the window too, staged
/// through the host, which the model prices as MPI's staged messages, not as the path's copies;
/// the overlapping protocol: rendezvous keeps MPI's synchronisation) and the model knows its price (shm_alpha measured: a calibration where rank 0 had
/// a node partner). Whether some node holds 2 or more ranks is the placement's to say.
inline bool prices_shared_memory(const hockney& model, const auto_request& request) {
  return request.shared_memory_possible && !request.device && request.mode == protocol::overlapping &&
         model.shm_alpha() > 0;
}

/// The rows of `ranked` a plan can run as priced, in order: Auto runs the first. A shared-memory row
/// of a neighbourhood collective cannot be (it keeps MPI); where the user asked for the path, the plan
/// takes it whatever Auto picks, so the flat rows go when the ranking holds shared-memory rows. Where
/// the user chose how several fields travel (`messages`), only its rows stay.
inline std::vector<prediction> runnable_rows(std::vector<prediction> ranked, bool shared_memory_asked,
                                             field_messages messages = field_messages::automatic) {
  const auto shm = [](const prediction& p) {
    return p.inside_nodes == "shm" && !strategy_registry::instance().find(p.strategy).neighbor_collective;
  };
  const bool only_shm = shared_memory_asked && std::any_of(ranked.begin(), ranked.end(), shm);
  std::erase_if(ranked, [&](const prediction& p) { return p.inside_nodes.empty() ? only_shm : !shm(p); });
  if (messages != field_messages::automatic)
    std::erase_if(ranked, [&](const prediction& p) {
      return !p.messages.empty() && (p.messages == "per_field") != (messages == field_messages::per_field);
    });
  return ranked;
}

/// The nodes Auto prices on (collective on first use: the grid's node layout): the grid's own
/// (grid_options::node_sizes, HALOSHIFT_NODE_SIZE, else shared memory), as the plan runs on them,
/// wherever the model tells the levels apart: between nodes, or by the shared-memory path, which pays
/// most where one node holds every rank. Decided by the agreed model alone, so that every rank takes
/// part in the layout's collectives, or none.
inline node_placement auto_placement(const cartesian_grid& grid, const hockney& model) {
  const bool levels = model.between_nodes() || model.shm_alpha() > 0;
  return levels ? placement_of(*nodes_of(grid).node_of) : node_placement{};
}

/// Rank 0's pick, as it is broadcast: the winner's name (or, `failed`, why there is none), its team,
/// the staging of device data and whether it runs the shared-memory path.
struct auto_pick {
  std::string name;
  offset team{0, 0, 0};
  int failed = 0, staging = static_cast<int>(memory::mpi_path::detect), shared_memory = 0, per_field = 0;
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
    const std::vector<prediction> ranked =
        runnable_rows(rank_candidates(request.grid, request.r, request.bytes, model, request.mode, request.payload, {},
                                      "Auto", device ? &ways : nullptr, nodes, shm, request.device ? 1 : request.fields),
                      request.shared_memory_asked, request.messages);
    if (ranked.empty()) return out;
    const prediction* p = &ranked.front();
    out.name = p->strategy;
    out.team = p->team;
    out.shared_memory = p->inside_nodes == "shm";
    out.per_field = p->messages == "per_field";
    if (device) out.staging = static_cast<int>(p->staging == "direct" ? memory::mpi_path::direct : memory::mpi_path::staged);
    log_message(log_level::info,
                "Auto chose " + out.name + (out.name == TeamShift::name ? " team " + to_string(out.team) : "") +
                    (out.shared_memory ? " +shm" : "") + (out.per_field ? ", one message per field" : "") +
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
  const node_placement nodes = auto_placement(grid, model);
  auto_pick pick;
  if (grid.rank() == 0) pick = pick_on_rank0(model, request, nodes, prices_shared_memory(model, request));
  int head[8] = {static_cast<int>(pick.name.size()), pick.team[0], pick.team[1], pick.team[2], pick.failed,
                 pick.staging, pick.shared_memory, pick.per_field};
  mpi::check(MPI_Bcast(head, 8, MPI_INT, 0, grid.comm()), "MPI_Bcast");
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
  choice.per_field = head[7] != 0;
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
/// that measured it); the plan runs with that choice as its device_mpi. For
/// host data and `fields` above 1 (the fields one exchange moves, whose cells
/// take `element_size` bytes together) it also picks plan_options::messages,
/// where that is automatic.
template <class S, class Space = memory::host>
  requires std::same_as<S, Auto>
field_plan make_field_plan(const cartesian_grid& grid, const field_shape& shape, const plan_options& options = {},
                           std::size_t element_size = sizeof(double), int fields = 1) {
  detail::install_auto_chooser();
  if constexpr (detail::device_space<Space>) {
    const field_shape checked = detail::agreed_shape(grid, shape, {}, detail::strategy_value(Auto::name));
    return detail::field_plan_builder::automatic(grid, checked, options, element_size, true);
  } else {
    return make_field_plan(grid, Auto::name, shape, options, element_size, fields);
  }
}

}  // namespace haloshift

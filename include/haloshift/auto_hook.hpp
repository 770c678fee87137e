// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file auto_hook.hpp
/// @brief Where the core asks the model layer to choose a strategy. The core
/// names Auto but does not depend on the cost model: <haloshift/auto.hpp>
/// installs the chooser; without it, asking for "Auto" raises a clear error.

#include <atomic>

#include "error.hpp"
#include "exchange/plan_options.hpp"
#include "exchange/protocol.hpp"
#include "grid/cartesian_grid.hpp"
#include "grid/neighborhood.hpp"
#include "memory/spaces.hpp"
#include "strategy_registry.hpp"

namespace haloshift {

/// Tag for make_plan / make_particle_plan / make_field_plan / exchange: the
/// strategy the cost model predicts fastest (include <haloshift/auto.hpp>).
struct Auto {
  /// The name make_plan(grid, "Auto", ...) and the registry know it by.
  static constexpr std::string_view name = "Auto";
};

namespace detail {
/// What a plan carries, which decides the candidates Auto may choose.
enum class payload_kind {
  block,     ///< whole blocks: every registered Auto candidate
  selective  ///< particles and grid fields: only schedules whose blocks move away from their source
};

/// What Auto is asked: the grid, the range, the bytes of the largest block
/// (the slowest rank decides), the protocol and the payload kind.
struct auto_request {
  /// The grid of boxes.
  grid_shape grid;
  /// The neighbourhood to import.
  range r;
  /// Bytes of the largest block of any rank.
  double bytes = 0;
  /// The protocol the plan will run.
  protocol mode = protocol::overlapping;
  /// Blocks, or particles and grid fields (fewer candidates).
  payload_kind payload = payload_kind::block;
  /// Data in device memory (make_field_plan<Auto, Space>): Auto picks how messages reach MPI
  /// too, among the ways `device_mpi` (plan_options::device_mpi) allows.
  bool device = false;
  /// The plan's plan_options::device_mpi.
  memory::mpi_path device_mpi = memory::mpi_path::detect;
  /// The plan can take the shared-memory path (plan_options::shared_memory: host data, exchanges
  /// not batched): Auto may price it, with the overlapping protocol (docs/node-aware.md).
  bool shared_memory_possible = true;
  /// The user asked for it (plan_options::shared_memory = true): the plan takes it whatever Auto
  /// picks, so Auto ranks the candidates on it where the model prices it.
  bool shared_memory_asked = false;
  /// Fields exchanged together (a field_bundle's; 1 otherwise): above 1, Auto prices one message
  /// per neighbour and one per field, among those `messages` (plan_options::messages) allows.
  int fields = 1;
  /// The plan's plan_options::messages.
  field_messages messages = field_messages::automatic;
};

/// What Auto chose: a registry entry and, for TeamShift, the team sizes; how messages travel.
struct strategy_choice {
  /// The chosen strategy's registry entry.
  strategy_entry entry;
  /// TeamShift's team size per dimension; zeros for the other strategies.
  offset team{0, 0, 0};
  /// Device data: the model's pick, direct or staged; detect for host data.
  memory::mpi_path staging = memory::mpi_path::detect;
  /// The model predicts the strategy faster with the shared-memory path inside nodes: the plan
  /// runs with plan_options::shared_memory = true.
  bool shared_memory = false;
  /// Several fields: the model predicts one message per field faster (plan_options::messages).
  bool per_field = false;
};

/// What the calls that take the strategy as a template argument accept: a
/// strategy type (the `strategy` concept) or Auto.
template <class S>
concept strategy_or_auto = strategy<S> || std::same_as<S, Auto>;

using auto_chooser = strategy_choice (*)(const cartesian_grid&, const auto_request&);
/// Set once by <haloshift/auto.hpp>; read by every plan that asks for Auto.
inline std::atomic<auto_chooser>& installed_auto_chooser() {
  static std::atomic<auto_chooser> chooser{nullptr};
  return chooser;
}

/// Collective: the strategy every rank of `grid` runs for `request`. Raises
/// (on every rank alike) when the model layer is not compiled in.
inline strategy_choice choose_automatically(const cartesian_grid& grid, const auto_request& request) {
  const auto_chooser chooser = installed_auto_chooser().load();
  if (!chooser)
    throw error("strategy \"Auto\" needs the model layer: #include <haloshift/auto.hpp> and link haloshift::auto");
  return chooser(grid, request);
}
}  // namespace detail

}  // namespace haloshift

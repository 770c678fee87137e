// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file strategy_registry.hpp
/// @brief Strategies chosen at run time: one registry of named strategies that
/// every plan kind (block, particle, field) builds from and that Auto ranks.

#include <algorithm>
#include <cctype>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"
#include "schedule/neighbor_alltoall.hpp"
#include "schedule/node_aggregate.hpp"
#include "schedule/shift.hpp"
#include "schedule/single_hop.hpp"
#include "schedule/team_shift.hpp"
#include "schedule/ttl_multi_hop.hpp"
#include "strategy.hpp"

namespace haloshift {

namespace detail {
/// A strategy as plans use it at run time: its name, its schedule generator
/// and how it runs. Plans built from an entry are the same type whatever the
/// strategy, so a code that picks the strategy from its input file
/// instantiates the plan code once, not once per strategy.
struct strategy_entry {
  /// The strategy's name (`S::name`); looked up without regard to case.
  std::string_view name;
  /// The schedule every rank follows.
  schedule (*make_schedule)(const grid_shape&, const range&, const strategy_parameters&) = nullptr;
  /// Runs SingleHop's messages as one `MPI_Neighbor_alltoallv` instead of the executor.
  bool neighbor_collective = false;
  /// Auto ranks this strategy among its candidates.
  bool auto_candidate = true;
  /// Auto also tries TeamShift's team sizes for it (the `team` parameter).
  bool team_sizes = false;
  /// Can carry particle and grid-field payloads (selective plans): false for
  /// strategies that declare `blocks_only` (TeamShift), whose schedules move
  /// blocks back towards their source.
  bool selective_payloads = true;
  /// Its schedule needs the grid's node layout (strategy_parameters::node_of): strategies that
  /// declare `node_aware` (NodeAggregate). The plan computes the layout once the strategy is agreed.
  bool needs_nodes = false;
};

/// The entry of a strategy type (a tag type meeting the `strategy` concept).
template <strategy S>
strategy_entry entry_of(bool auto_candidate = true) {
  strategy_entry e;
  e.name = S::name;
  e.make_schedule = [](const grid_shape& g, const range& r, const strategy_parameters& p) {
    return schedule_of<S>(g, r, p);
  };
  if constexpr (requires { requires S::neighbor_collective; }) e.neighbor_collective = true;
  if constexpr (requires { requires S::blocks_only; }) e.selective_payloads = false;
  if constexpr (requires { requires S::node_aware; }) e.needs_nodes = true;
  e.auto_candidate = auto_candidate;
  return e;
}

/// The process-wide list of strategies: the built-in ones (Shift, TeamShift,
/// SingleHop, TtlMultiHop, NeighborAlltoall, NodeAggregate) and those a program adds with
/// register_strategy. Names are unique without regard to case.
class strategy_registry {
 public:
  /// The registry of this process (created on first use, the built-ins already in).
  static strategy_registry& instance() {
    static strategy_registry registry;
    return registry;
  }

  /// Adds a strategy (or replaces the one of the same name). Register on every
  /// rank before building plans from it by name, so that all ranks know it.
  void add(const strategy_entry& e) {
    if (e.name.empty() || !e.make_schedule) throw error("strategy_registry::add: an entry needs a name and a schedule");
    std::lock_guard lock(mutex_);
    for (strategy_entry& known : entries_)
      if (same_name(known.name, e.name)) {
        known = e;
        return;
      }
    entries_.push_back(e);
  }

  /// The entry named `name` (any case), or an error listing the known names: for a `selective`
  /// lookup (a particle, field or selective plan) only those that carry such payloads, so that
  /// the list never offers a strategy the plan would refuse.
  strategy_entry find(std::string_view name, bool selective = false) const {
    std::lock_guard lock(mutex_);
    for (const strategy_entry& e : entries_)
      if (same_name(e.name, name)) return e;
    // Auto is not an entry: make_plan, make_particle_plan and make_field_plan ask the model layer for it
    // before they look a name up, so a lookup of "Auto" comes from a plan kind that cannot take it.
    throw error("strategy \"" + std::string(name) + "\" is not known; " +
                (selective ? "strategies for particle, field and selective plans: " : "known strategies: ") +
                listed(selective, {}) +
                (same_name(name, "Auto") ? " (Auto chooses among these for make_plan, make_particle_plan and "
                                           "make_field_plan; make_selective_plan needs a strategy named)"
                                         : ""));
  }

  /// The names, ", "-separated, of every strategy (`selective`: of those that carry particle
  /// and field payloads) but `except`: what an error offers instead.
  std::string names(bool selective, std::string_view except = {}) const {
    std::lock_guard lock(mutex_);
    return listed(selective, except);
  }

  /// A copy of every entry, built-in ones first, then in the order added.
  std::vector<strategy_entry> entries() const {
    std::lock_guard lock(mutex_);
    return entries_;
  }

  /// Compares names without regard to ASCII case ("singlehop" names SingleHop).
  static bool same_name(std::string_view a, std::string_view b) noexcept {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  }

 private:
  // Built from one list, not push_back by push_back: g++ 13 at -O3 (nvcc's host compiler on the GPU machine)
  // reported a false -Wstringop-overflow inside the vector's growth.
  strategy_registry()
      : entries_{entry_of<Shift>(),
                 entry_of<SingleHop>(),
                 entry_of<TtlMultiHop>(),
                 team_entry(),
                 entry_of<NeighborAlltoall>(false),  // no model of MPI's own algorithm
                 entry_of<NodeAggregate>()} {}       // a candidate where the model knows several nodes

  static strategy_entry team_entry() {
    strategy_entry team = entry_of<TeamShift>();
    team.team_sizes = true;
    return team;
  }

  /// names() under the caller's lock.
  std::string listed(bool selective, std::string_view except) const {
    std::string known;
    for (const strategy_entry& e : entries_)
      if ((e.selective_payloads || !selective) && !same_name(e.name, except))
        known += (known.empty() ? "" : ", ") + std::string(e.name);
    return known;
  }

  mutable std::mutex mutex_;
  std::vector<strategy_entry> entries_;
};
}  // namespace detail

/// Adds strategy `S` to the registry, so plans can be built from its name and
/// (with `auto_candidate`) Auto ranks it too. See examples/custom_strategy.
template <strategy S>
void register_strategy(bool auto_candidate = true) {
  detail::strategy_registry::instance().add(detail::entry_of<S>(auto_candidate));
}

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file auto.hpp
/// @brief Auto: predict every strategy with the cost model, run the cheapest.

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "../exchange/plan.hpp"
#include "../model/calibration.hpp"
#include "../model/closed_form.hpp"
#include "../model/simulator.hpp"
#include "../model/staging.hpp"
#include "../schedule/shift.hpp"
#include "../schedule/single_hop.hpp"
#include "../schedule/team_shift.hpp"
#include "../schedule/ttl_multi_hop.hpp"

namespace haloshift {

/// Tag for make_plan / exchange: choose the strategy by predicted time.
struct Auto {};

/// One candidate and its predicted time.
struct prediction {
  std::string strategy;  ///< "Shift", "TeamShift", "SingleHop", "TtlMultiHop"
  offset team{0, 0, 0};  ///< TeamShift's team sizes
  double seconds = 0;
};

/// Predicted time of every strategy (and TeamShift team size) for blocks of
/// `bytes` per rank on `grid`, cheapest first. Grids up to 4096 ranks are
/// simulated exactly (max-plus, borders included); larger ones use the closed
/// forms of a periodic grid. Pure: the same inputs give the same ranking.
/// `only`, when not empty, restricts the candidates to those strategy names
/// (the advisor's Shift / TeamShift boundary needs just two, many times).
inline std::vector<prediction> explain(const grid_shape& grid, const range& r, double bytes, const hockney& cost,
                                       protocol mode = protocol::overlapping,
                                       const std::vector<std::string>& only = {}) {
  const bool simulate_all = grid.size() <= 4096;
  simulation_setup setup;
  setup.cost = cost;
  setup.mode = mode;
  setup.block_bytes = [bytes](int) { return bytes; };
  int ndims = 0;
  for (int d = 0; d < max_dims; ++d) ndims += r.k[d] > 0;
  std::vector<prediction> out;
  auto wanted = [&](const std::string& name) {
    return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
  };
  auto add = [&](std::string name, const offset& team, const schedule& s, double closed) {
    if (!wanted(name)) return;
    if (!simulate_all) return out.push_back({std::move(name), team, closed});
    simulation_setup own = setup;
    if (cost.copy_beta() > 0) own.staging = staging_of(grid, s, r, name);  // packing costs copies too
    out.push_back({std::move(name), team, simulate(grid, s, own).makespan});
  };
  add("Shift", {0, 0, 0}, Shift::make_schedule(grid, r), closed_form::shift(r, bytes, cost, mode));
  add("SingleHop", {0, 0, 0}, SingleHop::make_schedule(grid, r), closed_form::single_hop(r, bytes, cost, mode));
  add("TtlMultiHop", {0, 0, 0}, TtlMultiHop::make_schedule(grid, r),
      closed_form::ttl_multi_hop(r, ndims, bytes, cost, mode));
  // TeamShift: the same team size c along every dimension that it divides (1 elsewhere), c >= 2.
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
    if (!any) continue;
    add("TeamShift", team, TeamShift::make_schedule(grid, r, {.team = team}),
        closed_form::team_shift(grid, r, team, bytes, cost, mode));
  }
  std::stable_sort(out.begin(), out.end(), [](const prediction& a, const prediction& b) { return a.seconds < b.seconds; });
  return out;
}

namespace detail {
template <transferable T>
plan<T> plan_for(const prediction& p, const cartesian_grid& grid, const offset& k, std::size_t n, plan_options o) {
  if (p.strategy == "Shift") return make_plan<Shift, T>(grid, k, n, o);
  if (p.strategy == "SingleHop") return make_plan<SingleHop, T>(grid, k, n, o);
  if (p.strategy == "TtlMultiHop") return make_plan<TtlMultiHop, T>(grid, k, n, o);
  o.team = p.team;
  return make_plan<TeamShift, T>(grid, k, n, o);
}
}  // namespace detail

namespace detail {
inline const std::vector<std::string>& auto_candidates() {
  static const std::vector<std::string> names{"Shift", "SingleHop", "TtlMultiHop", "TeamShift"};
  return names;
}

/// Rank 0 ranks the candidates and broadcasts its winner, so every rank
/// builds the same plan by construction.
template <transferable T>
plan<T> auto_plan(const cartesian_grid& grid, const offset& k, std::size_t local_count, plan_options options) {
  const hockney model = agreed_model(grid.comm());
  std::uint64_t largest = local_count;
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_UINT64_T, MPI_MAX, grid.comm()), "MPI_Allreduce");
  const range r = make_range(grid.shape(), k, options.kind);
  int choice[4] = {0, 0, 0, 0};  // candidate, team
  double predicted = 0;
  if (grid.rank() == 0) {
    const prediction best = explain(grid.shape(), r, static_cast<double>(largest * sizeof(T)), model, options.mode).front();
    const auto& names = auto_candidates();
    choice[0] = static_cast<int>(std::find(names.begin(), names.end(), best.strategy) - names.begin());
    for (int d = 0; d < max_dims; ++d) choice[1 + d] = best.team[d];
    predicted = best.seconds;
    const char* verbose = std::getenv("HALOSHIFT_VERBOSE");
    if (verbose && std::string(verbose) == "1")
      std::cerr << "haloshift: Auto chose " << best.strategy
                << (best.strategy == "TeamShift" ? " team " + to_string(best.team) : std::string()) << ", predicted "
                << predicted * 1e6 << " us\n";
  }
  mpi::check(MPI_Bcast(choice, 4, MPI_INT, 0, grid.comm()), "MPI_Bcast");
  const prediction chosen{auto_candidates().at(static_cast<std::size_t>(choice[0])), {choice[1], choice[2], choice[3]},
                          predicted};
  return plan_for<T>(chosen, grid, k, local_count, options);
}
}  // namespace detail

/// make_plan<Auto>: collective. Validates the arguments like every plan
/// (before measuring anything), reads the agreed cost model (agreed_model:
/// calibration file, or one quick measurement), sizes blocks by the largest
/// local_count, and runs the strategy rank 0 predicts fastest (explain()).
/// HALOSHIFT_VERBOSE=1 prints the choice on rank 0.
template <class S, transferable T>
  requires std::same_as<S, Auto>
plan<T> make_plan(const cartesian_grid& grid, const offset& k, std::size_t local_count, plan_options options = {}) {
  { auto checked = make_plan<Shift, T>(grid, k, local_count, options); }
  return detail::auto_plan<T>(grid, k, local_count, options);
}

template <class S, transferable T>
  requires std::same_as<S, Auto>
plan<T> make_plan(const cartesian_grid& grid, int k, std::size_t local_count, plan_options options = {}) {
  { auto checked = make_plan<Shift, T>(grid, k, local_count, options); }
  offset ks{0, 0, 0};
  for (int d = 0; d < grid.ndims(); ++d) ks[d] = k;
  return detail::auto_plan<T>(grid, ks, local_count, options);
}

}  // namespace haloshift

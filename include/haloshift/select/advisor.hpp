// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file advisor.hpp
/// @brief The advisor: explain() over a map of neighbourhood widths `k` and
/// block sizes, each cell's winner, and where TeamShift and Shift trade places
/// (the seeds' open question). It communicates nothing: it reasons about a
/// grid_shape, so it runs without mpiexec.

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../exchange/protocol.hpp"
#include "../grid/grid_shape.hpp"
#include "../grid/neighborhood.hpp"
#include "../model/cost/hockney.hpp"
#include "auto.hpp"

namespace haloshift {

/// What to map: every `k` (the same along each dimension of `grid`) times
/// every block size in bytes per rank.
struct advice_request {
  /// The grid of boxes (shape only: no communicator needed).
  grid_shape grid;
  /// Neighbourhood widths to map, one row each.
  std::vector<int> ks;
  /// Block sizes in bytes per rank, one column each.
  std::vector<double> sizes;
  /// The cost model the candidates are ranked by.
  hockney cost;
  /// Protocol the exchanges would use.
  protocol mode = protocol::overlapping;
  /// Full or eighth shell neighbourhoods.
  shell kind = shell::full;
  /// Ranks per node in consecutive blocks; > 1: two levels and the shared-memory rows (explain()).
  int ranks_per_node = 0;
  /// Fields each block holds (a bundle's, or views exchanged together); > 1: every candidate also
  /// with one message per field (prediction::messages, plan_options::messages).
  int fields = 1;
};

namespace detail {
/// One point of the map: explain()'s ranking, cheapest first.
struct advice_cell {
  /// The neighbourhood width of this cell.
  int k = 0;
  /// The block size of this cell, bytes per rank.
  double bytes = 0;
  /// Every candidate's predicted time, cheapest first.
  std::vector<prediction> ranked;

  /// The cheapest candidate.
  const prediction& winner() const { return ranked.front(); }
  /// Predicted time of the fastest flat candidate called `strategy` (the best team
  /// for TeamShift); NaN when it is not a candidate here (TeamShift at k = 1).
  double best_of(const std::string& strategy) const {
    for (const prediction& p : ranked)  // ranked is sorted, so the first match is the best
      if (p.strategy == strategy && p.inside_nodes.empty()) return p.seconds;
    return std::numeric_limits<double>::quiet_NaN();
  }
};

/// Where the best TeamShift team beats Shift for one `k`, between the
/// smallest and the largest block size of a map (the seeds' question).
struct team_shift_trade {
  /// The neighbourhood width.
  int k = 0;
  bool applies = false;             ///< some TeamShift team is a candidate (never at k = 1)
  bool team_wins_first = false;     ///< TeamShift is faster at the smallest size
  std::vector<double> crossovers;   ///< sizes where the faster of the two changes, ascending

  /// Is TeamShift faster at `bytes` (between the smallest and largest size)?
  bool team_wins(double bytes) const {
    bool wins = applies && team_wins_first;
    for (double c : crossovers) wins = bytes >= c ? !wins : wins;
    return wins;
  }
  /// [from, to] intervals of sizes in [low, high] where TeamShift is faster.
  std::vector<std::pair<double, double>> team_intervals(double low, double high) const {
    std::vector<std::pair<double, double>> out;
    if (!applies) return out;
    double from = low;
    bool wins = team_wins_first;
    for (double c : crossovers) {
      if (wins) out.push_back({from, c});
      from = c;
      wins = !wins;
    }
    if (wins) out.push_back({from, high});
    return out;
  }
};

}  // namespace detail

/// The whole map: cells in k-major order (all sizes of ks[0] first), and the
/// Shift / TeamShift crossovers inside the size range.
struct advice_map {
  /// What was mapped.
  advice_request request;
  /// One cell per (k, size), k-major.
  std::vector<detail::advice_cell> cells;
  std::vector<detail::team_shift_trade> team_boundary;  ///< one per k, in the order of request.ks

  /// The cell of `request.ks[k_index]` and `request.sizes[size_index]` (bounds-checked).
  const detail::advice_cell& at(std::size_t k_index, std::size_t size_index) const {
    return cells.at(k_index * request.sizes.size() + size_index);
  }
};

namespace detail {
/// Shift's time minus the best TeamShift's time at `bytes` (positive: TeamShift
/// wins); NaN when no TeamShift team applies (k = 1, or no team size divides
/// a dimension). Uses explain(), so it agrees with Auto's choice.
inline double team_shift_gain(const grid_shape& grid, const range& r, double bytes, const hockney& cost,
                              protocol mode) {
  const auto ranked = explain(grid, r, bytes, cost, mode, {"Shift", "TeamShift"});
  double shift = 0, team = std::numeric_limits<double>::quiet_NaN();
  for (const prediction& p : ranked) {
    if (p.strategy == "Shift") shift = p.seconds;
    else if (std::isnan(team)) team = p.seconds;
  }
  return shift - team;
}

/// Where TeamShift and Shift trade places for this `k` between `low` and
/// `high` bytes: a scan at `per_octave` sizes per doubling finds each sign
/// change of team_shift_gain(), a bisection in log size refines it to 0.1 %.
/// Changes closer together than the scan step can be missed (the model is
/// piecewise linear in the size, so there are few).
inline team_shift_trade team_shift_tradeoff(const grid_shape& grid, int k, double low, double high,
                                            const hockney& cost, protocol mode, shell kind = shell::full,
                                            int per_octave = 4) {
  if (!(low > 0) || !(high > low) || !std::isfinite(high))
    throw error("team_shift_tradeoff: need 0 < low < high < inf, got low " + detail::value_text(low) + ", high " +
                detail::value_text(high));
  if (per_octave < 1) throw error("team_shift_tradeoff: per_octave must be >= 1, got " + std::to_string(per_octave));
  const range r = make_range(grid, k, kind);
  auto team_wins = [&](double bytes) { return detail::team_shift_gain(grid, r, bytes, cost, mode) > 0; };
  team_shift_trade out;
  out.k = k;
  out.applies = !std::isnan(detail::team_shift_gain(grid, r, low, cost, mode));
  if (!out.applies) return out;
  out.team_wins_first = team_wins(low);
  const int steps = std::max(1, static_cast<int>(std::ceil(std::log2(high / low) * per_octave)));
  double a = low;
  bool wins_a = out.team_wins_first;
  for (int i = 1; i <= steps; ++i) {
    const double b = low * std::pow(high / low, static_cast<double>(i) / steps);
    const bool wins_b = team_wins(b);
    if (wins_a != wins_b) {
      double lo = a, hi = b;
      while (hi / lo > 1.001) {
        const double mid = std::sqrt(lo * hi);
        (team_wins(mid) == wins_a ? lo : hi) = mid;
      }
      out.crossovers.push_back(std::sqrt(lo * hi));
    }
    a = b;
    wins_a = wins_b;
  }
  return out;
}
}  // namespace detail

/// Runs explain() for every (k, size) of `request` and finds the Shift /
/// TeamShift crossovers between the smallest and the largest size. Throws
/// haloshift::error naming the bad argument (no k, k < 1, no size, size < 0).
inline advice_map advise(const advice_request& request) {
  if (request.ks.empty()) throw error("advise: the list of k is empty");
  if (request.sizes.empty()) throw error("advise: the list of block sizes is empty");
  for (int k : request.ks)
    if (k < 1) throw error("advise: k must be >= 1, got " + std::to_string(k));
  for (double m : request.sizes) detail::check_bytes("advise", "request.sizes[]", m);
  detail::check_protocol("advise", request.mode);
  advice_map map{request, {}, {}};
  for (int k : request.ks) {
    const range r = make_range(request.grid, k, request.kind);
    for (double m : request.sizes)
      map.cells.push_back(
          {k, m,
           explain(request.grid, r, m, request.cost, request.mode, {}, std::nullopt, request.ranks_per_node,
                   request.fields)});
  }
  double low = std::numeric_limits<double>::infinity(), high = 0;
  for (double m : request.sizes)
    if (m > 0) low = std::min(low, m), high = std::max(high, m);
  if (high > low)
    for (int k : request.ks)
      map.team_boundary.push_back(
          detail::team_shift_tradeoff(request.grid, k, low, high, request.cost, request.mode, request.kind));
  return map;
}

}  // namespace haloshift

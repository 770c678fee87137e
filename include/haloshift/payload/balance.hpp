// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file balance.hpp
/// @brief The balancer: new cuts for a domain so that every slab of boxes
/// carries the same work, one dimension at a time (LAMMPS's `balance shift`),
/// from particle positions with weights or from each rank's measured work
/// (docs/balance.md). The boxes stay a brick; migrate() then moves the
/// particles to their new owners.

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../detail/compiled.hpp"
#include "../detail/mpi/agreement.hpp"
#include "../detail/mpi/check.hpp"
#include "../detail/payload/balance_cuts.hpp"
#include "../detail/payload/domain_agreement.hpp"
#include "../error.hpp"
#include "../grid/cartesian_grid.hpp"
#include "domain.hpp"
#include "field_shape.hpp"
#include "position_views.hpp"

namespace haloshift {

namespace detail {
/// How rebalance() moves the cuts.
struct balance_options {
  /// The dimensions whose cuts move (default: every dimension of the grid).
  std::array<bool, 3> along{true, true, true};
  /// How far a cut moves in one call, as a fraction of the width of the box
  /// it moves into (> 0; infinity, the default: straight to its target).
  /// Dynamic balancing every few steps uses a bound such as 0.5, so the
  /// boxes change gradually and particles move at most into the next box.
  double max_move = std::numeric_limits<double>::infinity();
  /// With positions: the bisection stops once every cut leaves below it its
  /// share of the work to within this fraction of a slab's mean work (> 0).
  double tolerance = 1e-3;
};
}  // namespace detail

/// What rebalance() did: the imbalance factor (largest work on a rank over
/// the mean) with the old cuts and with the new ones.
struct balance_report {
  /// max / mean of the work per rank before the call.
  double imbalance_before = 1;
  /// The same with the new cuts: counted (positions) or predicted from the
  /// measured work spread evenly inside each old box (work per rank).
  double imbalance_after = 1;
  /// Bisection rounds (one MPI_Allreduce each), all dimensions together.
  int rounds = 0;
};

namespace detail {

/// The options every rank must give alike.
inline void append_agreed_options(const balance_options& options, std::vector<mpi::agreed_value>& agreed) {
  static const char* names[max_dims] = {"balance_options.along[0]", "balance_options.along[1]",
                                        "balance_options.along[2]"};
  for (int d = 0; d < max_dims; ++d) agreed.push_back({names[d], options.along[static_cast<std::size_t>(d)] ? 1 : 0});
  agreed.push_back(mpi::real_value("balance_options.max_move", options.max_move));
  agreed.push_back(mpi::real_value("balance_options.tolerance", options.tolerance));
}

inline void check_work(double work) {
  if (!(work >= 0 && std::isfinite(work)))
    throw error("rebalance: work must be finite and >= 0, got " + number_text(work));
}

inline void check_balance_options(const balance_options& options) {
  if (!(options.max_move > 0))
    throw error("balance_options.max_move must be > 0, got " + number_text(options.max_move));
  if (!(options.tolerance > 0 && std::isfinite(options.tolerance)))
    throw error("balance_options.tolerance must be finite and > 0, got " + number_text(options.tolerance));
}

/// Checks a rebalance call on every rank together (the domain, the options, and `also`, the
/// call's own arguments), so that a mistake on one rank raises the same error on all of them.
template <class Also>
void agree_on_balance(const cartesian_grid& grid, const domain& dom, const balance_options& options, Also also) {
  std::vector<mpi::agreed_value> agreed;
  append_agreed_domain(grid.shape(), dom, agreed);
  append_agreed_options(options, agreed);
  mpi::agree(
      grid.comm(),
      [&] {
        dom.validate(grid.shape());
        check_balance_options(options);
        also();
      },
      agreed);
}

}  // namespace detail

/// Rebalances `dom` for the particles at `x` (this rank's, each counted on
/// exactly one rank; anywhere in the domain) with `weights` (empty: 1 each,
/// else one finite weight >= 0 per particle). Collective. Along each
/// dimension of `options.along` with more than one box, the cuts move to
/// where the slabs of boxes between them carry equal total weight (bisection
/// over the coordinates, to `options.tolerance`), at most `options.max_move`
/// of a box per call; the other dimensions keep theirs. Returns the
/// imbalance (max / mean weight per rank) before and after, counted. Call
/// migrate() with the new domain next: until then the particles are where
/// the old cuts put them. Work O(n log n + P) per rank, O(P) memory (the
/// counts per rank before and after).
template <detail::position_source V>
balance_report rebalance(const cartesian_grid& grid, domain& dom, const V& x, std::span<const double> weights = {},
                         const detail::balance_options& options = {}) {
  const grid_shape& shape = grid.shape();
  const std::size_t n = x.size();
  detail::agree_on_balance(grid, dom, options, [&] {
    if (!weights.empty() && weights.size() != n)
      throw error("rebalance: weights has " + std::to_string(weights.size()) + " values for " + std::to_string(n) +
                  " particles (give one per particle, or none for 1 each)");
    for (std::size_t i = 0; i < weights.size(); ++i)
      if (!(weights[i] >= 0 && std::isfinite(weights[i])))
        throw error("rebalance: weights[" + std::to_string(i) + "] = " + detail::number_text(weights[i]) +
                    " must be finite and >= 0");
    for (std::size_t i = 0; i < n; ++i)
      for (int d = 0; d < shape.ndims(); ++d)
        if (!std::isfinite(x[i][d]))
          throw error("rebalance: particle " + std::to_string(i) + " has the non-finite coordinate " +
                      detail::number_text(x[i][d]) + " along dimension " + std::to_string(d));
  });
  auto weight = [&](std::size_t i) { return weights.empty() ? 1.0 : weights[i]; };
  // Inside the domain along each dimension (periodic: wrapped; otherwise clamped to its boxes).
  auto inside = [&](std::size_t i, int d) {
    const double v = x[i][d];
    if (shape.periodic(d)) return dom.wrap(d, v);
    return std::clamp(v, dom.lo[d], std::nextafter(dom.hi[d], dom.lo[d]));
  };
  auto owner = [&](const domain& by, std::size_t i) {
    offset c{0, 0, 0};
    for (int d = 0; d < shape.ndims(); ++d) c[d] = by.owner_coordinate(shape, d, inside(i, d));
    return std::pair<int, double>{shape.rank_of(c), weight(i)};
  };

  balance_report report;
  const double before = detail::work_owned(grid, n, [&](std::size_t i) { return owner(dom, i); });
  domain next = dom;
  for (int d = 0; d < shape.ndims(); ++d) {
    if (!options.along[static_cast<std::size_t>(d)] || shape.dim(d) < 2) continue;
    std::vector<std::pair<double, double>> points(n);
    for (std::size_t i = 0; i < n; ++i) points[i] = {inside(i, d), weight(i)};
    std::sort(points.begin(), points.end());
    std::vector<double> coords(n), prefix(n + 1, 0.0);
    for (std::size_t i = 0; i < n; ++i) coords[i] = points[i].first, prefix[i + 1] = prefix[i] + points[i].second;
    const std::vector<double> old = detail::current_cuts(shape, dom, d);
    std::vector<double> cuts = detail::bounded_cuts(
        old, detail::shares_of_points(grid, dom, d, coords, prefix, options.tolerance, report.rounds),
        options.max_move);
    detail::broadcast_cuts(grid, cuts);
    next.cuts[static_cast<std::size_t>(d)] = std::move(cuts);
  }
  const double after = detail::work_owned(grid, n, [&](std::size_t i) { return owner(next, i); });
  const std::vector<double> work_before = detail::gather_work(grid, before),
                            work_after = detail::gather_work(grid, after);
  report.imbalance_before = detail::imbalance_of(work_before);
  report.imbalance_after = detail::imbalance_of(work_after);
  dom = std::move(next);
  return report;
}

namespace detail {
/// Box edges per dimension, as doubles (a domain's cuts, or a field's first cells).
using edges_per_dim = std::array<std::vector<double>, max_dims>;

/// The work-per-rank balancer on box edges: `old` holds the current edges along every dimension of
/// the grid, the result the new ones (`settle` adjusts a dimension's new edges in place, such as
/// rounding to whole cells), `report` gets the measured and predicted imbalance. Every rank computes
/// the same from the gathered work, in the same order: no broadcast needed.
template <class Settle>
edges_per_dim balance_from_work(const cartesian_grid& grid, const edges_per_dim& old, double work,
                                const balance_options& options, balance_report& report, Settle settle) {
  const grid_shape& shape = grid.shape();
  const std::vector<double> all = gather_work(grid, work);
  report.imbalance_before = imbalance_of(all);
  edges_per_dim next = old;
  for (int d = 0; d < shape.ndims(); ++d) {
    if (!options.along[static_cast<std::size_t>(d)] || shape.dim(d) < 2) continue;
    std::vector<double> slab(static_cast<std::size_t>(shape.dim(d)), 0.0);
    for (int r = 0; r < shape.size(); ++r)
      slab[static_cast<std::size_t>(shape.coords_of(r)[d])] += all[static_cast<std::size_t>(r)];
    const std::vector<double>& was = old[static_cast<std::size_t>(d)];
    next[static_cast<std::size_t>(d)] = bounded_cuts(was, shares_of_spread_work(was, slab), options.max_move);
    settle(next[static_cast<std::size_t>(d)]);
  }
  // Predicted: each old box's work spread evenly over it, and counted where this rank's new box
  // overlaps it (an empty old box's work sits at its edge).
  const offset c = grid.coords();
  double mine = 0;
  for (int s = 0; s < shape.size(); ++s) {
    const offset b = shape.coords_of(s);
    double share = all[static_cast<std::size_t>(s)];
    for (int d = 0; d < shape.ndims() && share > 0; ++d) {
      const auto& o = old[static_cast<std::size_t>(d)];
      const auto& n = next[static_cast<std::size_t>(d)];
      const double blo = o[static_cast<std::size_t>(b[d])], bhi = o[static_cast<std::size_t>(b[d]) + 1];
      const double nlo = n[static_cast<std::size_t>(c[d])], nhi = n[static_cast<std::size_t>(c[d]) + 1];
      const double overlap = std::max(0.0, std::min(bhi, nhi) - std::max(blo, nlo));
      share *= bhi > blo ? overlap / (bhi - blo) : (nlo <= blo && blo < nhi ? 1.0 : 0.0);
    }
    mine += share;
  }
  report.imbalance_after = imbalance_of(gather_work(grid, mine));
  return next;
}
}  // namespace detail

/// Rebalances `dom` from each rank's measured `work` (seconds of force
/// computation, interactions, cells: any measure >= 0 that adds up).
/// Collective. The work of a slab of boxes is the sum of its ranks'; spread
/// evenly inside each box, its cumulative sum along each dimension of
/// `options.along` places the new cuts where the slabs carry equal work, at
/// most `options.max_move` of a box per call. Returns the imbalance before
/// (measured) and after (predicted with the work spread evenly inside each
/// old box: measure again after the next steps; repeated calls converge
/// where the work is not even inside the boxes). Work O(P) per rank.
HALOSHIFT_BUILDER balance_report rebalance(const cartesian_grid& grid, domain& dom, double work,
                                           const detail::balance_options& options = {});
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER balance_report rebalance(const cartesian_grid& grid, domain& dom, double work,
                                           const detail::balance_options& options) {
  const grid_shape& shape = grid.shape();
  detail::agree_on_balance(grid, dom, options, [&] { detail::check_work(work); });
  detail::edges_per_dim old;
  for (int d = 0; d < shape.ndims(); ++d) old[static_cast<std::size_t>(d)] = detail::current_cuts(shape, dom, d);
  balance_report report;
  const detail::edges_per_dim next = detail::balance_from_work(grid, old, work, options, report, [](auto&) {});
  for (int d = 0; d < shape.ndims(); ++d)
    if (options.along[static_cast<std::size_t>(d)] && shape.dim(d) > 1)
      dom.cuts[static_cast<std::size_t>(d)] = next[static_cast<std::size_t>(d)];
  return report;
}
#endif

/// Rebalances a grid field's split of `global_cells` from each rank's
/// measured `work`, as the domain version above: `cuts` holds the current
/// cuts (empty along a dimension split evenly) and receives the new ones
/// along every balanced dimension, whole cells (targets rounded to the
/// nearest cell; a box may end up with none). Collective; the cuts and cell
/// counts are agreed on every rank. Build the fields of the new split from
/// `cuts` (field_shape, grid_field) and copy the data over.
HALOSHIFT_BUILDER balance_report rebalance(const cartesian_grid& grid, cell_cuts& cuts, const offset& global_cells,
                                           double work, const detail::balance_options& options = {});
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER balance_report rebalance(const cartesian_grid& grid, cell_cuts& cuts, const offset& global_cells,
                                           double work, const detail::balance_options& options) {
  const grid_shape& shape = grid.shape();
  std::vector<mpi::agreed_value> agreed;
  static const char* names[max_dims][2] = {{"global[0]", "cuts[0] (hash of the values)"},
                                           {"global[1]", "cuts[1] (hash of the values)"},
                                           {"global[2]", "cuts[2] (hash of the values)"}};
  for (int d = 0; d < shape.ndims(); ++d) {
    agreed.push_back({names[d][0], global_cells[d]});
    agreed.push_back({names[d][1], detail::cuts_hash(cuts[static_cast<std::size_t>(d)])});
  }
  detail::append_agreed_options(options, agreed);
  field_shape current;
  mpi::agree(
      grid.comm(),
      [&] {
        detail::check_balance_options(options);
        detail::check_work(work);
        current = field_shape(shape, grid.coords(), global_cells, cuts, offset{0, 0, 0});  // checks the cuts
      },
      agreed);
  detail::edges_per_dim old;
  for (int d = 0; d < shape.ndims(); ++d)
    for (int t = 0; t <= shape.dim(d); ++t)
      old[static_cast<std::size_t>(d)].push_back(static_cast<double>(current.first_cell(shape, d, t)));
  balance_report report;
  const detail::edges_per_dim next =
      detail::balance_from_work(grid, old, work, options, report, [](std::vector<double>& edges) {
        for (std::size_t i = 1; i + 1 < edges.size(); ++i)  // whole cells, still nondecreasing
          edges[i] = std::max(edges[i - 1], std::round(edges[i]));
      });
  for (int d = 0; d < shape.ndims(); ++d) {
    if (!options.along[static_cast<std::size_t>(d)] || shape.dim(d) < 2) continue;
    auto& out = cuts[static_cast<std::size_t>(d)];
    out.clear();
    for (double e : next[static_cast<std::size_t>(d)]) out.push_back(static_cast<int>(e));
  }
  return report;
}
#endif

}  // namespace haloshift

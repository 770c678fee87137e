// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file announce_selector.hpp
/// @brief Choosing how to announce: the smallest MSN whose diameter fits the
/// tolerated delay, TTL multi-hop over the grid, or MPI_Iallgatherv, by
/// Hockney cost per step (docs/networks.md, "Choosing a network").

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "../error.hpp"
#include "../grid/grid_shape.hpp"
#include "../model/cost/paper_formulas.hpp"
#include "../model/cost/hockney.hpp"
#include "../detail/schedule/ttl_forwarding.hpp"
#include "../network/msn_distances.hpp"
#include "../network/msn_topology.hpp"

namespace haloshift {

/// How global announcements travel: over a Manhattan Street Network (msn_announce),
/// TTL multi-hop over the grid (ttl_local_exchange), or one MPI_Iallgatherv per step.
enum class announce_method { msn, ttl_multi_hop, iallgatherv };

/// "MsnAnnounce", "TtlMultiHop" or "MPI_Iallgatherv".
inline const char* to_string(announce_method m) {
  return m == announce_method::msn ? "MsnAnnounce" : m == announce_method::ttl_multi_hop ? "TtlMultiHop" : "MPI_Iallgatherv";
}

namespace detail {
/// What the application announces and how long it may wait.
struct announce_workload {
  /// Ranks taking part.
  int processes = 1;
  /// Bytes announced per step by all ranks together.
  double bytes_per_step = 0;
  /// Largest number of steps between posting and the last delivery.
  int max_delay_steps = 1;
  /// The application's grid, for TTL multi-hop (ignored unless it has `processes` boxes).
  grid_shape grid{};
};
}  // namespace detail

namespace detail {
/// Diameter of the MSN of `processes` vertices and `degree` dimensions.
using msn_diameter_function = std::function<int(int processes, int degree)>;

/// Exact (BFS, msn_diameter) up to `exact_up_to` processes, the paper's
/// formula (1) beyond, where all-pairs BFS is too slow (docs/networks.md
/// compares the two).
inline detail::msn_diameter_function msn_diameter_estimate(int exact_up_to = 1024) {
  return [exact_up_to](int processes, int degree) {
    const msn_topology net(processes, degree);
    if (degree == 1) return processes - 1;  // a directed ring
    return processes <= exact_up_to ? detail::msn_diameter(net) : net.formula_diameter();
  };
}
}  // namespace detail

/// Smallest degree (1 to 30) whose MSN diameter is at most `max_delay_steps`, or 0 if none.
inline int msn_smallest_degree(int processes, int max_delay_steps,
                               const detail::msn_diameter_function& diameter = detail::msn_diameter_estimate()) {
  for (int degree = 1; degree <= 30; ++degree)
    if (diameter(processes, degree) <= max_delay_steps) return degree;
  return 0;
}

namespace detail {
/// One candidate of choose_announcement(): its predicted cost and delay.
struct announce_option {
  /// How the announcements travel.
  announce_method method;
  int degree = 0;  ///< MSN dimensions, 0 for the others
  /// Steps until every rank has an announcement (MSN: its diameter).
  int delay_steps = 0;
  /// Predicted cost per step and rank (Hockney model).
  double seconds_per_step = 0;
  bool fits = false;  ///< delay within the tolerated one
};

/// The result of choose_announcement().
struct announce_choice {
  /// The cheapest candidate within the tolerated delay (MPI_Iallgatherv always is).
  announce_option best;
  std::vector<announce_option> options;  ///< every candidate, cheapest first
};

/// Hops for a TTL multi-hop message to reach every box of `grid`.
inline int grid_hops(const grid_shape& grid) {
  int hops = 0;
  for (int d = 0; d < grid.ndims(); ++d)
    hops = std::max(hops, grid.periodic(d) ? grid.dim(d) / 2 : grid.dim(d) - 1);
  return hops;
}
}  // namespace detail

/// Cost per step and delay of every method, cheapest fitting one first.
/// Per-step cost per rank in steady state, B = bytes_per_step:
/// * MSN of degree n: every rank learns every message once and forwards it
///   on all n links: n messages of B bytes; delay = diameter;
/// * TTL multi-hop: the forwarding tree sends each message once per
///   receipt, B bytes per rank spread over its 26/8/2 links; delay = the
///   grid's Chebyshev radius;
/// * MPI_Iallgatherv: the cheaper of ring ((P-1) steps of B/P) and recursive
///   doubling (ceil(log2 P) latencies, B (P-1)/P bytes); delay 1 step.
inline detail::announce_choice choose_announcement(
    const hockney& h, const detail::announce_workload& w,
    const detail::msn_diameter_function& diameter = detail::msn_diameter_estimate()) {
  if (w.processes < 1) throw error("announce selector: processes must be >= 1, got " + std::to_string(w.processes));
  if (w.max_delay_steps < 1)
    throw error("announce selector: max_delay_steps must be >= 1, got " + std::to_string(w.max_delay_steps));
  if (!(w.bytes_per_step >= 0))
    throw error("announce selector: bytes_per_step must be >= 0, got " + std::to_string(w.bytes_per_step));
  const double b = w.bytes_per_step;
  const int p = w.processes;
  std::vector<detail::announce_option> options;

  if (const int degree = msn_smallest_degree(p, w.max_delay_steps, diameter); degree > 0)
    options.push_back(
        {announce_method::msn, degree, diameter(p, degree), detail::closed_form::detail::burst(h, degree, b), true});

  if (w.grid.size() == p) {
    const int links = static_cast<int>(detail::ttl::neighbor_directions(w.grid.ndims()).size());
    const int hops = detail::grid_hops(w.grid);
    options.push_back({announce_method::ttl_multi_hop, 0, hops, detail::closed_form::detail::burst(h, links, b / links),
                       hops <= w.max_delay_steps});
  }

  const double ring = (p - 1) * h.time(b / p);
  const double doubling = std::ceil(std::log2(static_cast<double>(p))) * h.alpha(b) + h.beta(b) * b * (p - 1) / p;
  options.push_back({announce_method::iallgatherv, 0, 1, std::min(ring, doubling), true});

  using option = detail::announce_option;
  std::stable_sort(options.begin(), options.end(), [](const option& x, const option& y) {
    if (x.fits != y.fits) return x.fits;
    return x.seconds_per_step < y.seconds_per_step;
  });
  return {options.front(), options};
}

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Random particle configurations for the property tests: a domain with
// non-round bounds over a random grid, box edges computed as
// docs/particles.md states them (lo + L*c/P, the first exactly lo, the last
// exactly hi) with the oracle's own arithmetic, ownership by brute force,
// and particles placed uniformly or on the coordinates where decisions
// flip: box edges and cutoff thresholds, give or take a few ulps.

#include <algorithm>
#include <cmath>
#include <limits>

#include "../particles/particle_world.hpp"
#include "property_config.hpp"

namespace property {

/// A particle as the tests move it (trivially copyable): position, identity, a payload.
struct particle {
  hs::position x;
  std::int64_t id;
  double charge;
};
inline double charge_of(std::int64_t id) { return static_cast<double>(id % 8191) * 0.375 - 11.0; }

/// A domain over a grid; everything the oracles know about space.
struct space {
  grid_config grid;
  hs::position lo{0, 0, 0}, hi{1, 1, 1};

  hs::domain domain() const { return {lo, hi}; }
  double length(int d) const { return hi[d] - lo[d]; }
  /// Edge `c` in [0, P] along `d`: exactly lo at 0, exactly hi at P, lo + L*c/P (not above hi) between.
  double edge(int d, int c) const {
    const int n = grid.dims[d];
    if (c <= 0) return lo[d];
    if (c >= n) return hi[d];
    return std::min(hi[d], lo[d] + length(d) * c / n);
  }
  /// Box coordinate owning `x` along `d` (x in [lo, hi)): brute force over the half-open boxes.
  int owner_coordinate(int d, double x) const {
    for (int c = 0; c < grid.dims[d]; ++c)
      if (x >= edge(d, c) && x < edge(d, c + 1)) return c;
    return -1;
  }
  /// Whether `x` lies in the box at `coords` along each of the grid's dimensions.
  bool in_box(const oracle::coords& coords, const hs::position& x) const {
    for (int d = 0; d < grid.ndims; ++d)
      if (!(x[d] >= edge(d, coords[d]) && x[d] < edge(d, coords[d] + 1))) return false;
    return true;
  }
  std::string describe() const {
    std::string s = "grid " + grid.describe() + " domain";
    for (int d = 0; d < grid.ndims; ++d) s += " [" + exact(lo[d]) + ", " + exact(hi[d]) + ")";
    return s;
  }
};

/// A domain with non-round bounds (sometimes lo = 0 exactly, where -0.0 occurs), lengths from
/// 0.05 to 500, different per dimension; now and then far from the origin for its size, where box
/// edges, widths and periodic shifts round the most.
inline space random_space(rng& r, int ranks) {
  space s;
  s.grid = random_grid(r, ranks);
  for (int d = 0; d < s.grid.ndims; ++d) {
    const bool far = r.chance(0.1);
    s.lo[d] = r.chance(0.15) ? 0.0 : far ? (r.chance(0.5) ? -1 : 1) * std::pow(10.0, r.real(3, 7)) : r.real(-20, 20);
    s.hi[d] = s.lo[d] + std::pow(10.0, far ? r.real(-2, 1) : r.real(-1.3, 2.7));
  }
  return s;
}

/// A coordinate `steps` ulps from `x` (towards +infinity for steps > 0).
inline double ulps(double x, int steps) {
  for (; steps > 0; --steps) x = std::nextafter(x, std::numeric_limits<double>::infinity());
  for (; steps < 0; ++steps) x = std::nextafter(x, -std::numeric_limits<double>::infinity());
  return x;
}

/// A coordinate along `d` in the box at `c` where the decisions flip: its edges (the upper one
/// minus a few ulps), -0.0 on a lower edge of 0, and the points a cutoff `rc` from another box's
/// edge (periodic images included), a few ulps either way. Falls back to a uniform draw.
inline double special_coordinate(rng& r, const space& s, int d, int c, double rc) {
  const double blo = s.edge(d, c), bhi = s.edge(d, c + 1), len = s.length(d);
  for (int attempt = 0; attempt < 8; ++attempt) {
    double x = 0;
    switch (r.uniform(0, 3)) {
      case 0: x = ulps(blo, r.uniform(0, 3)); break;
      case 1: x = ulps(bhi, -r.uniform(1, 3)); break;
      case 2: x = blo == 0 && r.chance(0.5) ? -0.0 : blo; break;
      default: {
        const int n = s.grid.dims[d];
        const int wraps = s.grid.periodic[d] ? r.uniform(-2, 2) : 0;
        const double e = s.edge(d, r.uniform(0, n)) + wraps * len;
        const double t = r.chance(0.5) ? e + rc : e - rc;
        // Steps of t's ulps, or of the larger magnitudes the shifted comparison rounds at.
        x = r.chance(0.5) ? ulps(t, r.uniform(-3, 3))
                          : t + r.uniform(-3, 3) * (std::nextafter(std::abs(e), INFINITY) - std::abs(e));
      }
    }
    if (x >= blo && x < bhi) return x;
  }
  double x = r.real(blo, bhi);
  return x < bhi ? x : blo;
}

/// Particles of rank `rank` (its box at `coords`): a random count, 0 on about a quarter of the
/// ranks, now and then many; coordinates uniform or special; the dimensions the grid lacks hold
/// arbitrary values, which the library must carry untouched.
inline std::vector<particle> random_particles(rng& r, const space& s, const oracle::coords& coords, int rank,
                                              const hs::position& cutoff, std::int64_t first_id = 0) {
  const int n = r.chance(0.25) ? 0 : r.chance(0.05) ? r.uniform(60, 150) : r.uniform(1, 24);
  const double special = r.real(0.1, 0.7);  // this rank's share of special coordinates
  std::vector<particle> out;
  for (int i = 0; i < n; ++i) {
    particle p{{0, 0, 0}, first_id + rank * 1000000LL + i, 0};
    p.charge = charge_of(p.id);
    for (int d = 0; d < 3; ++d) {
      if (d >= s.grid.ndims) {
        p.x[d] = r.real(-1e3, 1e3);
        continue;
      }
      const double blo = s.edge(d, coords[d]), bhi = s.edge(d, coords[d] + 1);
      if (r.chance(special)) {
        p.x[d] = special_coordinate(r, s, d, coords[d], cutoff[d]);
      } else {
        p.x[d] = r.real(blo, bhi);
        if (p.x[d] >= bhi) p.x[d] = blo;
      }
    }
    out.push_back(p);
  }
  return out;
}

inline std::vector<hs::position> positions_of(const std::vector<particle>& ps) {
  std::vector<hs::position> x;
  for (const particle& p : ps) x.push_back(p.x);
  return x;
}

/// Equal values coordinate by coordinate (so +0.0 and -0.0 match; every other double only itself).
inline bool same_position(const hs::position& a, const hs::position& b) {
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

inline std::string show(const hs::position& x) {
  return "(" + exact(x[0]) + ", " + exact(x[1]) + ", " + exact(x[2]) + ")";
}

}  // namespace property

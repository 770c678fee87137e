// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The particle oracle: from the gathered positions alone, which ghosts every
// rank must hold (in which order, with which periodic image) and the sums a
// reverse must give. Shared by the host sweeps (test_particles.cpp) and the
// memory-space sweeps (../device/test_particles_emulate.cpp).

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "../support/oracle.hpp"
#include "../support/sweep.hpp"
#include "particle_world.hpp"

namespace particle_oracle {

using particle_world::particle;

struct config {
  oracle::grid g;
  int ndims;
  std::array<double, 3> lo, length, cutoff;
  oracle::coords reach;
  std::array<double, 3> box_lo(const oracle::coords& c) const {
    std::array<double, 3> out = lo;
    for (int d = 0; d < ndims; ++d) out[d] = lo[d] + length[d] * c[d] / g.dims[d];
    return out;
  }
  std::array<double, 3> box_hi(const oracle::coords& c) const {
    std::array<double, 3> out = lo;
    for (int d = 0; d < ndims; ++d) out[d] = lo[d] + length[d] * (c[d] + 1) / g.dims[d];
    return out;
  }
};

/// The ghosts rank `me` must hold: for every offset within reach (canonical
/// order), the source's particles, shifted by the image, that lie within the
/// cutoff of my box along every dimension, in the source's order.
inline std::vector<particle> expected_ghosts(const config& c, int me, const std::vector<std::vector<particle>>& all) {
  std::vector<particle> out;
  const oracle::coords mine = c.g.coords_of(me);
  const auto blo = c.box_lo(mine), bhi = c.box_hi(mine);
  for (const auto& b : oracle::halo_of(c.g, me, c.reach, false))
    for (particle p : all[b.source]) {
      bool near = true;
      for (int d = 0; d < c.ndims; ++d) {
        p.x[d] += b.image[d] * c.length[d];
        near = near && blo[d] - p.x[d] <= c.cutoff[d] && p.x[d] - bhi[d] <= c.cutoff[d];
      }
      if (near) out.push_back(p);
    }
  return out;
}

inline std::string compare(const std::vector<particle>& got, std::size_t owned, const std::vector<particle>& want, int me) {
  std::ostringstream why;
  if (got.size() - owned != want.size()) {
    why << "rank " << me << ": " << got.size() - owned << " ghosts, expected " << want.size();
    return why.str();
  }
  for (std::size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&got[owned + i], &want[i], sizeof(particle)) != 0) {
      const particle& g = got[owned + i];
      why << "rank " << me << " ghost " << i << ": id " << g.id << " at (" << g.x[0] << "," << g.x[1] << "," << g.x[2]
          << "), expected id " << want[i].id << " at (" << want[i].x[0] << "," << want[i].x[1] << "," << want[i].x[2]
          << ")";
      return why.str();
    }
  return {};
}

inline double contribution(int holder, std::int64_t id) { return holder * 1000.0 + static_cast<double>(id % 997); }

/// Cutoffs as multiples of the box width: within one box, exactly reaching a
/// second, several boxes, and beyond a small periodic grid (periodic images).
inline std::vector<double> cutoff_factors(const sweep::shape& s) {
  // Three reaches in 1D and 2D; in 3D (the most shapes, (2k+1)^3 blocks) one and two boxes.
  std::vector<double> f = sweep::reduced() || s.dims.size() == 3 ? std::vector<double>{0.45, 1.6}
                                                                 : std::vector<double>{0.45, 1.6, 2.3};
  double blocks = 1;
  const double beyond = s.largest() + 0.5;
  for (std::size_t d = 0; d < s.dims.size(); ++d) blocks *= 2 * std::ceil(beyond) + 1;
  if (!sweep::reduced() && blocks <= 400) f.push_back(beyond);
  return f;
}


/// Which periodic image of its owner's particle `orig` the oracle's ghost `ghost` is, per dimension.
inline std::array<long, 3> image_of(const config& c, const particle& ghost, const particle& orig) {
  std::array<long, 3> image{0, 0, 0};
  for (int d = 0; d < 3; ++d) image[d] = std::lround((ghost.x[d] - orig.x[d]) / c.length[d]);
  return image;
}

}  // namespace particle_oracle

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file domain_agreement.hpp
/// @brief What every rank must agree on about a domain before particles are
/// selected or moved by it: its corners and its cuts.

#include <cstdint>
#include <vector>

#include "../../grid/grid_shape.hpp"
#include "../mpi/agreement.hpp"
#include "../../payload/domain.hpp"

namespace haloshift::detail {

/// Appends the domain's agreed values: along each of the grid's dimensions its lower and upper
/// corner, the number of its cuts and their fingerprint (domain::cuts_hash). Ranks that split the
/// domain differently would select and send particles for boxes their peers do not think they own.
inline void append_agreed_domain(const grid_shape& shape, const domain& dom, std::vector<mpi::agreed_value>& agreed) {
  static const char* names[max_dims][4] = {
      {"domain.lo[0]", "domain.hi[0]", "domain.cuts[0] (number of values)", "domain.cuts[0] (hash of the values)"},
      {"domain.lo[1]", "domain.hi[1]", "domain.cuts[1] (number of values)", "domain.cuts[1] (hash of the values)"},
      {"domain.lo[2]", "domain.hi[2]", "domain.cuts[2] (number of values)", "domain.cuts[2] (hash of the values)"}};
  for (int d = 0; d < shape.ndims(); ++d) {
    agreed.push_back(mpi::real_value(names[d][0], dom.lo[d]));
    agreed.push_back(mpi::real_value(names[d][1], dom.hi[d]));
    agreed.push_back({names[d][2], static_cast<std::int64_t>(dom.cuts[static_cast<std::size_t>(d)].size())});
    agreed.push_back({names[d][3], dom.cuts_hash(d)});
  }
}

}  // namespace haloshift::detail

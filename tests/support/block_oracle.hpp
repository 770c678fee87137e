// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The block-halo oracle's values and comparisons, shared by the host sweep
// (tests/mpi/test_halo_oracle.cpp) and the device-space sweep
// (tests/device/test_device_blocks.cpp): what each rank contributes, what a
// forward halo must hold and what a reverse must leave, from coordinates alone
// (support/oracle.hpp).

#include <cstring>
#include <functional>
#include <haloshift/haloshift.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "oracle.hpp"
#include "sweep.hpp"

namespace block_oracle {

inline double value_of(int rank, std::size_t i) { return rank * 1000.0 + static_cast<double>(i) + 0.25; }
// Integer-valued, so sums are exact whatever the order of combination.
inline double contribution(int holder, const oracle::coords& o, std::size_t i) {
  return holder * 100003.0 + oracle::offset_code(o) * 11.0 + static_cast<double>(i);
}

inline haloshift::offset as_offset(const oracle::coords& c) { return {c[0], c[1], c[2]}; }

inline oracle::grid oracle_grid(const sweep::shape& s) {
  oracle::grid g;
  for (std::size_t d = 0; d < s.dims.size(); ++d) {
    g.dims[d] = s.dims[d];
    g.periodic[d] = s.periodic[d];
  }
  return g;
}

inline oracle::coords range_of(const sweep::shape& s, int k) {
  oracle::coords r{0, 0, 0};
  for (std::size_t d = 0; d < s.dims.size(); ++d) r[d] = k;
  return r;
}

/// A plan's shell and halo pattern, as the oracle takes them.
struct neighbourhood {
  haloshift::shell kind = haloshift::shell::full;
  haloshift::halo_pattern pattern = haloshift::halo_pattern::full;
  /// Ranks numbered x fastest (grid_options::order): a lighter sweep (two k, one payload, one protocol and team).
  bool x_fastest = false;
  bool eighth() const { return kind == haloshift::shell::eighth; }
  /// The most dimensions an imported offset may differ from 0 in (counted here, not by the library).
  int separated() const {
    return pattern == haloshift::halo_pattern::faces ? 1 : pattern == haloshift::halo_pattern::faces_and_edges ? 2 : 3;
  }
  std::string name() const {
    return std::string(x_fastest ? " x-fastest" : "") + (eighth() ? " eighth" : " full") +
           (pattern == haloshift::halo_pattern::faces             ? " faces"
            : pattern == haloshift::halo_pattern::faces_and_edges ? " faces_and_edges"
                                                                  : "");
  }
};

/// Empty when `got` equals the oracle, else a description of the first difference.
inline std::string compare_forward(const haloshift::halo<double>& got, const oracle::grid& g, int me,
                                   const oracle::coords& k, const neighbourhood& n, sweep::payload pl) {
  const auto want = oracle::halo_of(g, me, k, n.eighth(), n.separated());
  std::ostringstream why;
  if (got.size() != want.size()) {
    why << "rank " << me << ": " << got.size() << " blocks, expected " << want.size();
    return why.str();
  }
  std::size_t i = 0;
  for (const auto& b : got) {
    const auto& w = want[i++];
    if (b.offset != w.offset || b.source != w.source || b.image != w.image) {
      why << "rank " << me << " block " << i - 1 << ": offset " << haloshift::to_string(b.offset) << " source "
          << b.source << " image " << haloshift::to_string(b.image) << ", expected offset "
          << haloshift::to_string(as_offset(w.offset)) << " source " << w.source << " image "
          << haloshift::to_string(as_offset(w.image));
      return why.str();
    }
    std::vector<double> data(sweep::count_of(pl, w.source));
    for (std::size_t e = 0; e < data.size(); ++e) data[e] = value_of(w.source, e);
    if (b.data.size() != data.size() ||
        (!data.empty() && std::memcmp(b.data.data(), data.data(), data.size() * sizeof(double)) != 0)) {
      why << "rank " << me << " block " << haloshift::to_string(b.offset) << ": data differs (" << b.data.size()
          << " elements, expected " << data.size() << ")";
      return why.str();
    }
  }
  return {};
}

/// The contributions of the reverse sweeps: every visible block of `h` (made by `me`'s plan).
inline void fill_contributions(haloshift::halo<double>& h, int me) {
  for (auto b : h)
    for (std::size_t e = 0; e < b.data.size(); ++e) b.data[e] = contribution(me, b.offset, e);
}

/// Empty when `own` (rank `me`'s block after a reverse with `op` of every holder's
/// fill_contributions onto its value_of) holds the serial fold over all holders, else the first
/// difference. (The contributions are integers: sums are exact in any order.)
template <class Op = std::plus<>>
std::string compare_reverse(const std::vector<double>& own, const oracle::grid& g, int me, const oracle::coords& k,
                            const neighbourhood& n, Op op = {}) {
  std::vector<double> want(own.size());
  for (std::size_t e = 0; e < want.size(); ++e) want[e] = value_of(me, e);
  for (int holder = 0; holder < g.size(); ++holder)
    for (const auto& b : oracle::halo_of(g, holder, k, n.eighth(), n.separated()))
      if (b.source == me)
        for (std::size_t e = 0; e < want.size(); ++e) want[e] = op(want[e], contribution(holder, b.offset, e));
  for (std::size_t e = 0; e < want.size(); ++e)
    if (own[e] != want[e]) {
      std::ostringstream why;
      why << "rank " << me << " reverse element " << e << ": " << own[e] << ", expected " << want[e];
      return why.str();
    }
  return {};
}

}  // namespace block_oracle

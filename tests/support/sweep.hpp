// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The configurations every MPI halo test runs through: all grid shapes of the
// world size in 1, 2 and 3 dimensions, periodic / non-periodic / mixed,
// several k (including k larger than a dimension), uniform, uneven and empty
// payloads. HALOSHIFT_TEST_SWEEP=reduced trims it for slow (busy-polling) MPIs.

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace sweep {

struct shape {
  std::vector<int> dims;
  std::vector<bool> periodic;
  std::string name() const {
    std::string s;
    for (std::size_t d = 0; d < dims.size(); ++d)
      s += (d ? "x" : "") + std::to_string(dims[d]) + (periodic[d] ? "p" : "");
    return s;
  }
  int largest() const { return *std::max_element(dims.begin(), dims.end()); }
  /// The dimension with the most boxes (the first of those).
  int widest() const { return static_cast<int>(std::max_element(dims.begin(), dims.end()) - dims.begin()); }
};

/// Whether configuration `i` of a sweep runs its plan with plan_options::background: every third,
/// on 1 and 2 ranks. On more ranks than the machine (CI's) has cores, a rank and its plan's thread
/// take turns on a core at every hand-over: the 4-rank block-halo sweep took 130 s with a third of
/// its configurations in the background, 9 s without. Split-phase tests ([background],
/// test_split_phase.cpp) run background plans of every strategy on every rank count.
inline bool background(std::size_t i) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size <= 2 && i % 3 == 1;
}

enum class payload { uniform, uneven, empty };

inline const char* to_string(payload p) {
  return p == payload::uniform ? "uniform" : p == payload::uneven ? "uneven" : "empty";
}

/// Elements rank `r` contributes.
inline std::size_t count_of(payload p, int r) {
  switch (p) {
    case payload::uniform: return 3;
    case payload::uneven: return static_cast<std::size_t>((r * 5 + 2) % 7);  // 2,0,5,3,1,6,4,...: zeros included
    case payload::empty: return 0;
  }
  return 0;
}

inline bool reduced() {
  const char* v = std::getenv("HALOSHIFT_TEST_SWEEP");
  return v && std::string(v) == "reduced";
}

/// Every ordered factorisation of `p` into `nd` factors.
inline void factorisations(int p, int nd, std::vector<int>& prefix, std::vector<std::vector<int>>& out) {
  if (nd == 1) {
    prefix.push_back(p);
    out.push_back(prefix);
    prefix.pop_back();
    return;
  }
  for (int f = 1; f <= p; ++f)
    if (p % f == 0) {
      prefix.push_back(f);
      factorisations(p / f, nd - 1, prefix, out);
      prefix.pop_back();
    }
}

inline std::vector<shape> shapes(int p) {
  std::vector<shape> out;
  for (int nd = 1; nd <= 3; ++nd) {
    std::vector<std::vector<int>> dims;
    std::vector<int> prefix;
    factorisations(p, nd, prefix, dims);
    if (reduced() && dims.size() > 2) dims = {dims.front(), dims[dims.size() / 2], dims.back()};
    // Above 8 ranks (oversubscribed 6 to 1 on CI machines) every third shape: still 1, 2 and more ranks per dimension.
    if (!reduced() && p > 8 && dims.size() > 3) {
      std::vector<std::vector<int>> some;
      for (std::size_t i = 0; i < dims.size(); i += 3) some.push_back(dims[i]);
      some.push_back(dims.back());
      dims = some;
    }
    for (const auto& d : dims) {
      std::vector<bool> all(d.size(), true), none(d.size(), false), mixed(d.size());
      for (std::size_t i = 0; i < d.size(); ++i) mixed[i] = i % 2 == 0;
      out.push_back({d, all});
      if (!reduced()) out.push_back({d, none});
      if (d.size() > 1) out.push_back({d, mixed});
    }
  }
  return out;
}

/// 1, 2, 3 (3 exceeds every dimension of 1 or 2 boxes) and one more than the largest dimension,
/// unless that neighbourhood would exceed 4096 blocks (a 3D k of 8 or more: slow, and no new case).
/// Reduced: 1, 2 (2 exceeds every dimension of 1 box) and the largest + 1 in small neighbourhoods.
inline std::vector<int> ks(const shape& s) {
  std::vector<int> k = reduced() ? std::vector<int>{1, 2} : std::vector<int>{1, 2, 3};
  const int beyond = s.largest() + 1;
  double blocks = 1;
  for (std::size_t d = 0; d < s.dims.size(); ++d) blocks *= 2 * beyond + 1;
  // MPICH busy-polls when oversubscribed (about 1 ms a message): there, only small neighbourhoods.
  const double budget = reduced() ? 130 : 4096;
  if (blocks <= budget && std::find(k.begin(), k.end(), beyond) == k.end()) k.push_back(beyond);
  return k;
}

inline std::vector<payload> payloads() {
  if (reduced()) return {payload::uneven};
  return {payload::uniform, payload::uneven, payload::empty};
}

}  // namespace sweep

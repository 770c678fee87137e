// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file cutoff_selection.hpp
/// @brief Which boxes need a particle: within a cutoff of the box, per
/// dimension (the particle selector), and the same decision as one comparison
/// against a precomputed threshold, exact for every double (what the plan
/// build runs on every atom, as LAMMPS's borders compares with slab bounds).

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "../arithmetic.hpp"
#include "../exchange/key_interval.hpp"
#include "../../grid/grid_shape.hpp"
#include "../../grid/offset_box.hpp"
#include "../../payload/domain.hpp"

namespace haloshift::detail {

/// Doubles as integers in the same order (-0.0 and +0.0 meet at 0), for bisection over all doubles.
inline std::int64_t ordered_key(double x) noexcept {
  const auto b = std::bit_cast<std::int64_t>(x);
  return b >= 0 ? b : std::numeric_limits<std::int64_t>::min() - b;
}
inline double from_ordered_key(std::int64_t k) noexcept {
  return std::bit_cast<double>(k >= 0 ? k : std::numeric_limits<std::int64_t>::min() - k);
}

/// The smallest finite double at which a predicate that is false below some point and true from
/// there on (monotone) becomes true; -infinity when it holds everywhere, +infinity when nowhere.
template <class Pred>
double first_true(Pred pred) {
  constexpr double most = std::numeric_limits<double>::max();
  std::int64_t lo = ordered_key(-most), hi = ordered_key(most);
  if (pred(-most)) return -std::numeric_limits<double>::infinity();
  if (!pred(most)) return std::numeric_limits<double>::infinity();
  // pred(lo) false, pred(hi) true; the keys span more than an int64 difference holds
  while (static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) > 1) {
    const std::int64_t mid = std::midpoint(lo, hi);
    (pred(from_ordered_key(mid)) ? hi : lo) = mid;
  }
  return from_ordered_key(hi);
}

/// Whether the box `rel` boxes away (unwrapped) from the source box at `source` along `d` needs a
/// particle at coordinate `x` of the source: the particle as that box receives it (shifted by the
/// periodic image) lies at most `cutoff` from the box's near face (closed: a distance equal to the
/// cutoff is in), as LAMMPS's ghost region. The source box itself (`rel == 0`) needs all of its
/// particles. Only the near face counts: a particle of the source box lies on the near side of every
/// other box, and one comparison per side keeps the test monotone in `x`. The one definition: the
/// thresholds below reproduce it exactly.
inline bool within_cutoff_along(const grid_shape& grid, const domain& dom, int d, double cutoff, int source, int rel,
                                double x) noexcept {
  if (rel == 0) return true;
  const int n = grid.dim(d), c = source + rel;
  const int wraps = floor_div(c, n), inside = c - wraps * n;
  // The ghost's coordinate as the receiver gets it: x + image * length with image = -wraps.
  const double g = x - static_cast<double>(wraps) * dom.length(d);
  return rel > 0 ? !(dom.edge(grid, d, inside) - g > cutoff) : !(g - dom.edge(grid, d, inside + 1) > cutoff);
}

/// within_cutoff_along for the source boxes and distances one rank's build meets, as comparisons
/// (and nested: a box needs a particle only when the boxes between it and the source do):
/// for `rel > 0` the test holds exactly from some coordinate up, for `rel < 0` up to some
/// coordinate (both sides of the test are monotone in `x` in floating point too), and bisection
/// over the doubles finds that coordinate once per plan. `rel == 0` (the source box itself)
/// always holds for a particle of the box.
class cutoff_thresholds {
 public:
  cutoff_thresholds() = default;
  /// Sources `coords + box` (wrapped), distances in `box`: what a rank at `coords` tests when the
  /// blocks it holds come from sources at `-box` and travel to `box` from them.
  cutoff_thresholds(const grid_shape& grid, const domain& dom, const position& cutoff, const offset& coords,
                    const detail::offset_box& box) {
    for (int d = 0; d < grid.ndims(); ++d) {
      dims_[d].lo = box.lo[d];
      dims_[d].width = box.hi[d] - box.lo[d] + 1;
      dims_[d].row.assign(static_cast<std::size_t>(grid.dim(d)), -1);
      for (int s = coords[d] + box.lo[d]; s <= coords[d] + box.hi[d]; ++s) {
        const int source = positive_mod(s, grid.dim(d));
        int& row = dims_[d].row[static_cast<std::size_t>(source)];
        if (row >= 0) continue;
        row = static_cast<int>(dims_[d].at.size() / static_cast<std::size_t>(dims_[d].width));
        const std::size_t first = dims_[d].at.size();
        for (int rel = box.lo[d]; rel <= box.hi[d]; ++rel) {
          auto near = [&](double x) { return within_cutoff_along(grid, dom, d, cutoff[d], source, rel, x); };
          // rel > 0: near from the threshold up; rel < 0: near below it (not near from it up).
          const auto far = [&](double x) { return !near(x); };
          dims_[d].at.push_back(rel == 0 ? 0.0 : rel > 0 ? first_true(near) : first_true(far));
        }
        // A box needs a particle only if every box between it and the source does (the walk to the
        // first refusal): thresholds nested outwards, which rounding at a periodic wrap could
        // otherwise break by an ulp.
        double* row_at = dims_[d].at.data() + first;
        const int zero = -box.lo[d];
        for (int j = zero + 2; j < dims_[d].width; ++j) row_at[j] = std::max(row_at[j], row_at[j - 1]);
        for (int j = zero - 2; j >= 0; --j) row_at[j] = std::min(row_at[j], row_at[j + 1]);
      }
    }
  }
  /// The coordinates `x` along `d` for which within_cutoff_along(d, source, rel, x) holds, as
  /// `[lo, hi)`, for a source and distance inside the constructor's ranges.
  key_interval<double> interval(int d, int source, int rel) const noexcept {
    constexpr double infinity = std::numeric_limits<double>::infinity();
    if (rel == 0) return {-infinity, infinity};
    const per_dim& t = dims_[d];
    const double threshold =
        t.at[static_cast<std::size_t>(t.row[static_cast<std::size_t>(source)]) * static_cast<std::size_t>(t.width) +
             static_cast<std::size_t>(rel - t.lo)];
    return rel > 0 ? key_interval<double>{threshold, infinity} : key_interval<double>{-infinity, threshold};
  }

 private:
  struct per_dim {
    int lo = 0, width = 1;
    std::vector<int> row;   ///< per source coordinate: its row of thresholds, -1 when not needed
    std::vector<double> at;  ///< rows of `width` thresholds, distances from `lo`
  };
  per_dim dims_[max_dims];
};

/// The particle selector (see selection.hpp): a box needs a particle when
/// within_cutoff_along holds along every grid dimension. Geometric: the build
/// evaluates it per dimension, through cutoff_thresholds (`prepare`).
struct within_cutoff {
  static constexpr bool geometric = true;
  const grid_shape* grid;
  domain dom;
  position cutoff;
  bool operator()(const offset& source, const offset& rel, const position& x) const noexcept {
    for (int d = 0; d < grid->ndims(); ++d)
      if (!within_cutoff_along(*grid, dom, d, cutoff[d], source[d], rel[d], x[d])) return false;
    return true;
  }
  /// The per-dimension test for the rank at `coords`, distances within `box`.
  cutoff_thresholds prepare(const offset& coords, const detail::offset_box& box) const {
    return {*grid, dom, cutoff, coords, box};
  }
};

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file owner_rule.hpp
/// @brief migrate's ownership rule: a particle's coordinates wrapped into the
/// domain and checked, and the rank whose box holds them, fast for the
/// particles that stay.

#include <cmath>
#include <concepts>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

#include "../../error.hpp"
#include "../../grid/cartesian_grid.hpp"
#include "../../payload/domain.hpp"
#include "../../payload/position_views.hpp"

namespace haloshift::detail {

/// Coordinate `v` along `d` wrapped into the primary domain if `d` is
/// periodic (`domain::wrap`, exact: always inside [lo, hi), a value that
/// rounds to hi becomes lo); throws haloshift::error when it is not finite or
/// leaves a non-periodic dimension.
inline double wrap_checked(const grid_shape& grid, const domain& dom, int d, double v) {
  if (!std::isfinite(v))
    throw error("migrate: a particle has the non-finite coordinate " + detail::number_text(v) + " along dimension " +
                std::to_string(d));
  if (grid.periodic(d)) return dom.wrap(d, v);
  if (v < dom.lo[d] || v >= dom.hi[d])
    throw error("migrate: a particle at coordinate " + detail::number_text(v) + " along dimension " +
                std::to_string(d) + " left the non-periodic domain [" + detail::number_text(dom.lo[d]) + ", " +
                detail::number_text(dom.hi[d]) + ")");
  return v;
}

/// `x` wrapped along every dimension of the grid (wrap_checked).
inline void wrap_checked(const grid_shape& grid, const domain& dom, position& x) {
  for (int d = 0; d < grid.ndims(); ++d) x[d] = wrap_checked(grid, dom, d, x[d]);
}

/// The rank whose box holds `x`, a position inside the domain.
inline int owner_inside(const grid_shape& grid, const domain& dom, const position& x) {
  offset c{0, 0, 0};
  for (int d = 0; d < grid.ndims(); ++d) c[d] = dom.owner_coordinate(grid, d, x[d]);
  return grid.rank_of(c);
}

/// The ownership rule, fast for the particles that stay: inside this rank's
/// box along every dimension (edge(c) <= x < edge(c + 1), exactly the rule of
/// domain::owner_coordinate for this box) the particle stays, and only the
/// coordinate equal to the domain's lower bound is normalised as domain::wrap
/// does (-0.0 becomes lo); any other particle is wrapped by owner_of, stored
/// back in its own type inside the domain (a float that would round onto the
/// upper bound wraps to the lower one), and owned by the value stored. What
/// the fast path reads is copied in, so the loop over particles reloads nothing.
class owner_rule {
 public:
  owner_rule(const cartesian_grid& grid, const domain& dom)
      : grid_(grid), dom_(dom), ndims_(grid.ndims()), rank_(grid.rank()) {
    std::tie(lo_, hi_) = dom.box(grid.shape(), grid.coords());
    for (std::size_t d = static_cast<std::size_t>(ndims_); d < 3; ++d)  // any value is inside along these
      lo_[d] = -std::numeric_limits<double>::infinity(), hi_[d] = std::numeric_limits<double>::infinity();
    for (int d = 0; d < ndims_; ++d)
      if (grid.periodic(d)) lower_[static_cast<std::size_t>(d)] = dom.lo[d];  // else never equal: NaN
  }
  /// The owner of a particle at `x` (its coordinates, stored as `F`); `store(d, value)` writes
  /// coordinate `d` back where wrapping changed it.
  template <std::floating_point F, class Store>
  int place(const position& x, Store store) const {
    if (!in_box(x)) return place_outside<F>(x, store);
    for (std::size_t d = 0; d < 3; ++d)
      if (x[d] == lower_[d]) store(static_cast<int>(d), static_cast<F>(lower_[d]));
    return rank_;
  }
  /// The owner of the particle whose coordinates are `p`, wrapped in place.
  template <coordinate_array P>
  int operator()(P& p) const {
    using F = typename coordinate_traits<std::remove_cv_t<P>>::type;
    return place<F>(detail::to_position(p), [&](int d, F value) { p[static_cast<std::size_t>(d)] = value; });
  }

 private:
  /// A particle outside this rank's box: wrapped in double, stored in its own type inside the
  /// domain (for doubles, exactly as wrapped), and owned by the value stored: this rank when that
  /// lies in its box (a particle that only crossed a periodic border of the domain), else the
  /// owner by the ownership rule.
  template <std::floating_point F, class Store>
  [[gnu::noinline]] int place_outside(const position& x, Store store) const {  // out of the hot loop
    position y = x;
    for (int d = 0; d < ndims_; ++d)  // only where needed: strictly inside, wrap changes nothing (lo: -0.0)
      if (!(y[d] > dom_.lo[d] && y[d] < dom_.hi[d])) y[d] = wrap_checked(grid_.shape(), dom_, d, y[d]);
    for (int d = 0; d < ndims_; ++d)
      if (grid_.periodic(d)) {
        const F f = store_inside<F>(y[d], dom_.lo[d], dom_.hi[d]);
        store(d, f);
        y[d] = static_cast<double>(f);
      }
    return in_box(y) ? rank_ : owner_inside(grid_.shape(), dom_, y);
  }

  /// Whether `x` lies in this rank's box: all three dimensions without branches (negated
  /// comparisons: a NaN is outside; any value is inside along dimensions the grid does not have).
  bool in_box(const position& x) const noexcept {
    int outside = 0;
    for (std::size_t d = 0; d < 3; ++d)
      outside += static_cast<int>(!(x[d] >= lo_[d])) + static_cast<int>(!(x[d] < hi_[d]));
    return outside == 0;
  }

  const cartesian_grid& grid_;
  const domain& dom_;
  int ndims_, rank_;
  position lo_{}, hi_{};
  position lower_{std::nan(""), std::nan(""), std::nan("")};
};

}  // namespace haloshift::detail

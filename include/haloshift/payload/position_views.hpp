// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file position_views.hpp
/// @brief Particle positions as MD codes store them, read without a copy:
/// double or float, an array per particle (`std::array<float, 3>`, padded to
/// 4), a flat array with a stride (`x[i*PAD + d]`), one array per coordinate
/// (structure of arrays), or a member of a struct. make_particle_plan,
/// rebuild and migrate take any of them; ownership is decided on the value
/// as stored (a float that rounds onto a box's upper bound belongs to the
/// next box).

#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <type_traits>

#include "../error.hpp"
#include "../grid/offset.hpp"
#include "domain.hpp"

namespace haloshift {

namespace detail {
template <class P>
struct coordinate_traits {};
template <std::floating_point F, std::size_t N>
struct coordinate_traits<std::array<F, N>> {
  using type = F;
  static constexpr std::size_t size = N;
};
template <std::floating_point F, std::size_t N>
struct coordinate_traits<F[N]> {
  using type = F;
  static constexpr std::size_t size = N;
};

/// One particle's coordinates as a code stores them: `std::array<F, N>` or
/// `F[N]` with `F` float or double; the first `min(N, 3)` entries are x, y, z
/// (a fourth is padding, or a type or charge the library leaves alone).
template <class P>
concept coordinate_array = requires { typename detail::coordinate_traits<std::remove_cv_t<P>>::type; };

/// The coordinates of `p` as a position (entries beyond N are 0).
template <coordinate_array P>
position to_position(const P& p) noexcept {
  constexpr std::size_t n = coordinate_traits<std::remove_cv_t<P>>::size;
  position x{0, 0, 0};
  for (std::size_t d = 0; d < 3 && d < n; ++d) x[d] = static_cast<double>(p[d]);
  return x;
}
}  // namespace detail

namespace detail {
/// Where positions come from when a plan is built: anything with `size()`
/// and `operator[](i)` giving particle `i`'s position as doubles. A vector or
/// span of positions is one; the views below read other layouts in place.
template <class V>
concept position_source = requires(const V& v, std::size_t i) {
  { v.size() } -> std::convertible_to<std::size_t>;
  { v[i] } -> std::convertible_to<position>;
};
}  // namespace detail

/// Positions stored one array per particle (`std::array<float, 3>`, a padded
/// `std::array<double, 4>`, `float[3]`).
template <detail::coordinate_array P>
class array_positions {
 public:
  /// Reads `x`, one entry per particle.
  explicit array_positions(std::span<const P> x) noexcept : x_(x) {}
  /// Particles.
  std::size_t size() const noexcept { return x_.size(); }
  /// Particle `i`'s position.
  position operator[](std::size_t i) const noexcept { return detail::to_position(x_[i]); }
  /// Coordinates stored per particle (at most 3 are read).
  int components() const noexcept { return static_cast<int>(detail::coordinate_traits<std::remove_cv_t<P>>::size); }

 private:
  std::span<const P> x_;
};

/// Positions in a flat array with a stride: particle `i`'s coordinate `d` at
/// `first[i * stride + d]` (LAMMPS's `x[i][d]` as one block, PAD 3 or 4), `d`
/// below `components` (the grid's dimensions, at most 3).
template <std::floating_point F>
class strided_positions {
 public:
  /// `count` particles from `first`, `stride` entries apart, `components` coordinates each.
  strided_positions(const F* first, std::size_t count, std::size_t stride = 3, int components = 3) noexcept
      : first_(first), count_(count), stride_(stride), components_(components) {}
  /// Particles.
  std::size_t size() const noexcept { return count_; }
  /// Particle `i`'s position.
  position operator[](std::size_t i) const noexcept {
    position x{0, 0, 0};
    for (int d = 0; d < components_; ++d)
      x[static_cast<std::size_t>(d)] = static_cast<double>(first_[i * stride_ + static_cast<std::size_t>(d)]);
    return x;
  }
  /// Coordinates read per particle.
  int components() const noexcept { return components_; }

 private:
  const F* first_;
  std::size_t count_, stride_;
  int components_;
};

/// Positions as one array per coordinate (a structure of arrays): `x[i]`,
/// `y[i]`, `z[i]`; give fewer arrays for a 1D or 2D grid.
template <std::floating_point F>
class split_positions {
 public:
  /// x only (1D).
  explicit split_positions(std::span<const F> x) noexcept : c_{x, {}, {}}, components_(1) {}
  /// x and y (2D).
  split_positions(std::span<const F> x, std::span<const F> y) noexcept : c_{x, y, {}}, components_(2) {}
  /// x, y and z.
  split_positions(std::span<const F> x, std::span<const F> y, std::span<const F> z) noexcept
      : c_{x, y, z}, components_(3) {}
  /// Particles: the length of the x array (the others given must be as long).
  std::size_t size() const noexcept { return c_[0].size(); }
  /// Particle `i`'s position.
  position operator[](std::size_t i) const noexcept {
    position x{0, 0, 0};
    for (std::size_t d = 0; d < static_cast<std::size_t>(components_); ++d) x[d] = static_cast<double>(c_[d][i]);
    return x;
  }
  /// Coordinate arrays given (x, then y, then z).
  int components() const noexcept { return components_; }
  /// Throws unless every coordinate array given is as long as x.
  void check() const {
    for (int d = 1; d < components_; ++d)
      if (c_[static_cast<std::size_t>(d)].size() != c_[0].size())
        throw error("positions: coordinate array " + std::to_string(d) + " has " +
                    std::to_string(c_[static_cast<std::size_t>(d)].size()) + " entries, the x array " +
                    std::to_string(c_[0].size()));
  }
  /// The coordinate arrays, x first (empty where not given).
  const std::array<std::span<const F>, 3>& coordinates() const noexcept { return c_; }

 private:
  std::array<std::span<const F>, 3> c_;
  int components_;
};

/// Positions as a member of each particle's struct (`&atom::x`, a coordinate array).
template <class S, detail::coordinate_array P>
class member_positions {
 public:
  /// Reads `particles[i].*member`.
  member_positions(std::span<const S> particles, P S::*member) noexcept : p_(particles), member_(member) {}
  /// Particles.
  std::size_t size() const noexcept { return p_.size(); }
  /// Particle `i`'s position.
  position operator[](std::size_t i) const noexcept { return detail::to_position(p_[i].*member_); }
  /// Coordinates stored per particle.
  int components() const noexcept { return static_cast<int>(detail::coordinate_traits<std::remove_cv_t<P>>::size); }

 private:
  std::span<const S> p_;
  P S::*member_;
};

namespace detail {
/// Throws unless positions from `x` are consistent and have a coordinate for each of the grid's
/// `ndims` dimensions.
template <class V>
void check_components(const V& x, int ndims) {
  if constexpr (requires { x.check(); }) x.check();
  if constexpr (requires { x.components(); })
    if (x.components() < ndims)
      throw error("positions: " + std::to_string(x.components()) + " coordinates per particle, the grid has " +
                  std::to_string(ndims) + " dimensions");
}

/// Moves a ghost's coordinates by its periodic image: `p[d] + image[d] * length[d]`, computed in
/// double and stored as the array's type (exact for doubles: one rounding either way).
template <coordinate_array P>
void shift_by_image(P& p, const offset& image, const position& length) noexcept {
  using F = typename coordinate_traits<std::remove_cv_t<P>>::type;
  constexpr std::size_t n = coordinate_traits<std::remove_cv_t<P>>::size;
  for (std::size_t d = 0; d < 3 && d < n; ++d)
    p[d] = static_cast<F>(static_cast<double>(p[d]) + image[d] * length[d]);
}

/// A coordinate wrapped into `[lo, hi)` in double, stored as `F` so that the
/// stored value still lies in `[lo, hi)`: rounding to the nearest float may
/// land on `hi` (it then wraps to the first float at or above `lo`, as
/// domain::wrap sends `hi` to `lo`) or below `lo` (the first float at or above `lo`).
template <std::floating_point F>
F store_inside(double y, double lo, double hi) noexcept {
  F f = static_cast<F>(y);
  if (static_cast<double>(f) >= hi) f = static_cast<F>(lo);
  if (static_cast<double>(f) < lo) f = std::nextafter(f, std::numeric_limits<F>::infinity());
  return f;
}
}  // namespace detail

}  // namespace haloshift

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

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../error.hpp"
#include "../detail/exchange/arrays.hpp"
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

namespace detail {
struct position_access;
}  // namespace detail

/// Positions stored one array per particle (`std::array<float, 3>`, a padded
/// `std::array<double, 4>`, `float[3]`). Made from writable storage (a vector
/// or span that is not const), forward_positions fills its ghosts and reverse
/// sums into it, in place.
template <detail::coordinate_array P>
class array_positions {
 public:
  /// Reads `x`, one entry per particle.
  explicit array_positions(std::span<const P> x) noexcept : x_(x) {}
  /// Reads `x` and lets forward_positions and reverse write into it.
  template <class R>
    requires std::convertible_to<R, std::span<P>>
  explicit array_positions(R&& x) noexcept : x_(std::span<P>(x)), out_(std::span<P>(x).data()), writable_(true) {}
  /// Particles (for forward and reverse: the room, owned particles then ghosts).
  std::size_t size() const noexcept { return x_.size(); }
  /// Particle `i`'s position.
  position operator[](std::size_t i) const noexcept { return detail::to_position(x_[i]); }
  /// Coordinates stored per particle (at most 3 are read).
  int components() const noexcept { return static_cast<int>(detail::coordinate_traits<std::remove_cv_t<P>>::size); }

 private:
  friend struct detail::position_access;
  std::span<const P> x_;
  P* out_ = nullptr;       ///< where forward and reverse write
  bool writable_ = false;  ///< made from storage that is not const (an empty one may have no address)
};

/// Positions in a flat array with a stride: particle `i`'s coordinate `d` at
/// `first[i * stride + d]` (LAMMPS's `x[i][d]` as one block, PAD 3 or 4), `d`
/// below `components` (the grid's dimensions, at most 3). Made from a pointer
/// that is not const, forward_positions fills its ghosts (the `components`
/// coordinates, shifted; the padding is left alone) and reverse sums into it.
/// Of another trivially copyable type (`strided_positions<int>` over a type
/// stored in every fourth entry), it is a companion column of forward_positions.
template <class F>
  requires std::is_trivially_copyable_v<F>
class strided_positions {
 public:
  /// `count` particles from `first`, `stride` entries apart, `components` coordinates each.
  strided_positions(const F* first, std::size_t count, std::size_t stride = 3, int components = 3) noexcept
      : first_(first), count_(count), stride_(stride), components_(components) {}
  /// The same, writable (forward_positions, reverse).
  strided_positions(F* first, std::size_t count, std::size_t stride = 3, int components = 3) noexcept
      : first_(first), out_(first), count_(count), stride_(stride), components_(components), writable_(true) {}
  /// Particles.
  std::size_t size() const noexcept { return count_; }
  /// Particle `i`'s position.
  position operator[](std::size_t i) const noexcept
    requires std::floating_point<F>
  {
    position x{0, 0, 0};
    for (int d = 0; d < components_; ++d)
      x[static_cast<std::size_t>(d)] = static_cast<double>(first_[i * stride_ + static_cast<std::size_t>(d)]);
    return x;
  }
  /// Coordinates read per particle.
  int components() const noexcept { return components_; }

 private:
  friend struct detail::position_access;
  const F* first_;
  F* out_ = nullptr;
  std::size_t count_, stride_;
  int components_;
  bool writable_ = false;
};

/// Positions as one array per coordinate (a structure of arrays): `x[i]`,
/// `y[i]`, `z[i]`; give fewer arrays for a 1D or 2D grid. Made from writable
/// arrays (vectors or spans that are not const), forward_positions fills
/// their ghosts and reverse sums into them.
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
  /// x (and y, and z), writable.
  template <class... R>
    requires(sizeof...(R) >= 1 && sizeof...(R) <= 3 && (std::convertible_to<R, std::span<F>> && ...))
  explicit split_positions(R&&... c) noexcept : components_(static_cast<int>(sizeof...(R))), writable_(true) {
    std::size_t d = 0;
    ((out_[d] = std::span<F>(c).data(), c_[d] = std::span<F>(c), ++d), ...);
  }
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
  friend struct detail::position_access;
  std::array<std::span<const F>, 3> c_;
  std::array<F*, 3> out_{};
  int components_;
  bool writable_ = false;
};

/// Positions as a member of each particle's struct (`&atom::x`, a coordinate
/// array). Made from writable storage, forward_positions fills that member of
/// the ghosts (the struct's other members are left alone) and reverse sums
/// into it. With a member of another trivially copyable type (`&atom::type`)
/// it is a companion column of forward_positions.
template <class S, class P>
  requires std::is_trivially_copyable_v<P>
class member_positions {
 public:
  /// Reads `particles[i].*member`.
  member_positions(std::span<const S> particles, P S::*member) noexcept : p_(particles), member_(member) {}
  /// The same, writable.
  template <class R>
    requires std::convertible_to<R, std::span<S>>
  member_positions(R&& particles, P S::*member) noexcept
      : p_(std::span<S>(particles)), out_(std::span<S>(particles).data()), member_(member), writable_(true) {}
  /// Particles.
  std::size_t size() const noexcept { return p_.size(); }
  /// Particle `i`'s position.
  position operator[](std::size_t i) const noexcept
    requires detail::coordinate_array<P>
  {
    return detail::to_position(p_[i].*member_);
  }
  /// Coordinates stored per particle.
  int components() const noexcept
    requires detail::coordinate_array<P>
  {
    return static_cast<int>(detail::coordinate_traits<std::remove_cv_t<P>>::size);
  }

 private:
  friend struct detail::position_access;
  std::span<const S> p_;
  S* out_ = nullptr;
  P S::*member_;
  bool writable_ = false;
};

namespace detail {
/// A position view's coordinates as the exchange moves them: up to three
/// strided columns of the view's scalar type, column `k`'s value `j` being
/// coordinate `first[k] + j` (values at 3 and beyond: padding, moved unshifted).
template <class F>
struct position_columns {
  using scalar = F;
  std::array<strided_column<F>, 3> c{};
  std::array<std::size_t, 3> first{0, 0, 0};
  std::size_t size = 0;   ///< elements the storage holds
  bool writable = false;  ///< made from storage that is not const
};

/// What forward_positions and reverse read of a view (its columns), and a
/// companion array as a column of the exchange: a plain pointer for an array
/// of its own type, a strided column otherwise.
struct position_access {
  template <class P>
  static auto columns(const array_positions<P>& v) noexcept {
    using traits = coordinate_traits<std::remove_cv_t<P>>;
    position_columns<typename traits::type> out{.size = v.size(), .writable = v.writable_};
    out.c[0] = {bytes(v.out_), sizeof(P), traits::size};
    return out;
  }
  template <class F>
  static position_columns<F> columns(const strided_positions<F>& v) noexcept {
    position_columns<F> out{.size = v.size(), .writable = v.writable_};
    out.c[0] = {bytes(v.out_), v.stride_ * sizeof(F), static_cast<std::size_t>(v.components_)};
    return out;
  }
  template <class F>
  static position_columns<F> columns(const split_positions<F>& v) noexcept {
    position_columns<F> out{.first = {0, 1, 2}, .size = v.size(), .writable = v.writable_};
    for (std::size_t d = 0; d < static_cast<std::size_t>(v.components_); ++d) {
      out.c[d] = {bytes(v.out_[d]), sizeof(F), 1};
      out.size = std::min(out.size, v.c_[d].size());
    }
    return out;
  }
  /// Columns made by the caller: positions whose layout is known at run time only (the C interface).
  template <class F>
  static position_columns<F> columns(const position_columns<F>& v) noexcept {
    return v;
  }
  template <class S, class P>
  static auto columns(const member_positions<S, P>& v) noexcept {
    using traits = coordinate_traits<std::remove_cv_t<P>>;
    position_columns<typename traits::type> out{.size = v.size(), .writable = v.writable_};
    out.c[0] = {member_bytes(v), sizeof(S), traits::size};
    return out;
  }

  /// A companion: its column, its length, whether it may be written.
  template <class T>
  struct companion {
    using column_type = T;
    typename column_of<T>::type column;
    std::size_t size;
    bool writable;
    std::size_t bytes() const noexcept {
      if constexpr (is_strided_column<T>)
        return column.bytes();
      else
        return sizeof(T);
    }
  };
  template <class T>
  static companion<T> column(std::span<T> a) noexcept {
    return {a.data(), a.size(), true};
  }
  template <class T>
  static companion<T> column(std::vector<T>& a) noexcept {
    return {a.data(), a.size(), true};
  }
  template <class T>
  static companion<strided_column<T>> column(const strided_positions<T>& v) noexcept {
    return {{bytes(v.out_), v.stride_ * sizeof(T), static_cast<std::size_t>(v.components_)}, v.size(),
            v.writable_};
  }
  template <class S, class P>
  static auto column(const member_positions<S, P>& v) noexcept {
    if constexpr (coordinate_array<P>) {
      using traits = coordinate_traits<std::remove_cv_t<P>>;
      return companion<strided_column<typename traits::type>>{
          {member_bytes(v), sizeof(S), traits::size}, v.size(), v.writable_};
    } else {
      return companion<strided_column<P>>{{member_bytes(v), sizeof(S), 1}, v.size(), v.writable_};
    }
  }

 private:
  template <class T>
  static std::byte* bytes(T* p) noexcept {
    return reinterpret_cast<std::byte*>(p);
  }
  /// The member of the first particle (none: no address, and nothing is read).
  template <class S, class P>
  static std::byte* member_bytes(const member_positions<S, P>& v) noexcept {
    return v.out_ && v.size() ? bytes(&(v.out_->*v.member_)) : nullptr;
  }
};

/// Throws unless the positions (`companion` 0) or companion array `companion` (from 1) were made
/// from writable storage of at least `needed` elements (the plan's owned particles, then room for
/// its ghosts).
inline void check_room(const char* call, std::size_t companion, std::size_t size, bool writable, std::size_t needed) {
  if (writable && size >= needed) return;
  const std::string what = companion ? "companion " + std::to_string(companion) : std::string("the positions");
  if (!writable)
    throw error(std::string(call) + ": " + what + " was made from const storage; make it from writable storage");
  throw error(std::string(call) + ": " + what + " holds " + std::to_string(size) + " particles, the plan needs " +
              std::to_string(needed) + " (owned(), then room for ghosts())");
}
}  // namespace detail

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
/// double and stored as the array's type (exact for doubles: one rounding either way). Coordinates
/// along dimensions the image did not wrap keep their bits (a -0.0 stays), as in every layout's
/// shift and the device executor's (detail/payload/particle_spaces.hpp).
template <coordinate_array P>
void shift_by_image(P& p, const offset& image, const position& length) noexcept {
  using F = typename coordinate_traits<std::remove_cv_t<P>>::type;
  constexpr std::size_t n = coordinate_traits<std::remove_cv_t<P>>::size;
  for (std::size_t d = 0; d < 3 && d < n; ++d)
    if (image[d] != 0) p[d] = static_cast<F>(static_cast<double>(p[d]) + image[d] * length[d]);
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

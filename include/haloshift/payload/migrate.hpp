// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file migrate.hpp
/// @brief Migration: particles that left their box move to their new owner,
/// over any distance, none lost and none duplicated.

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <tuple>
#include <span>
#include <type_traits>
#include <utility>
#include <array>
#include <concepts>
#include <string>
#include <vector>

#include "../error.hpp"
#include "../exchange/halo.hpp"
#include "../grid/cartesian_grid.hpp"
#include "../detail/mpi/agreement.hpp"
#include "../detail/mpi/check.hpp"
#include "domain.hpp"
#include "../detail/payload/domain_agreement.hpp"
#include "../detail/payload/migrate_columns.hpp"
#include "../detail/payload/migrate_in_space.hpp"
#include "../detail/payload/migrate_set.hpp"
#include "../detail/payload/owner_rule.hpp"
#include "../detail/payload/sparse_exchange.hpp"
#include "position_views.hpp"

namespace haloshift {

/// Wraps `x` into the primary domain along periodic dimensions
/// (`domain::wrap`) and returns the rank whose box owns it by the one
/// ownership rule (`domain::owner_coordinate`, half-open boxes), the rule
/// make_particle_plan checks. Throws haloshift::error when `x` is not finite
/// or leaves a non-periodic dimension.
inline int owner_of(const grid_shape& grid, const domain& dom, position& x) {
  detail::wrap_checked(grid, dom, x);
  return detail::owner_inside(grid, dom, x);
}

namespace detail {
/// Each particle's owner (`decide(i, rule)`: owner_rule on particle `i`'s coordinates), checked
/// on every rank together; the same collective learns whether any rank sends
/// beyond its neighbours, and agrees `element_sizes`, the bytes of an entry of
/// each array that moves (a record packs them one after another: a rank whose
/// `long` is another's `int` would unpack the wrong bytes).
template <class Decide>
departures owners(const cartesian_grid& grid, const domain& dom, std::size_t n, std::size_t components,
                  std::span<const std::size_t> element_sizes, Decide decide, const std::function<void()>& also_check) {
  departures where;
  where.count = n;
  where.near = neighbour_ranks(grid);
  mpi::spread far[1];
  // The domain decides every owner: ranks that disagree on it would send particles to ranks that
  // do not think they own them. Agreed here, in the same collective as the checks.
  std::vector<mpi::agreed_value> agreed;
  append_agreed_domain(grid.shape(), dom, agreed);
  mpi::append_element_sizes(
      element_sizes, agreed,
      {"migrate: the number of arrays", "migrate: sizeof(T)", "migrate: the element size (bytes) of array"});
  mpi::agree(
      grid.comm(),
      [&] {
        dom.validate(grid.shape());
        if (components < static_cast<std::size_t>(grid.ndims()))
          throw error("migrate: positions have " + std::to_string(components) + " coordinates, the grid " +
                      std::to_string(grid.ndims()) + " dimensions");
        also_check();
        const owner_rule rule(grid, dom);
        const int me = grid.rank();
        // Copies no store can alias (the departures' push_back writes size_t): kept in registers.
        const std::size_t count = n;
        const Decide decide_one = decide;
        for (std::size_t i = 0; i < count; ++i) {
          int owner = me;
          try {
            owner = decide_one(i, rule);
          } catch (const error& e) {
            throw error(std::string(e.what()).substr(std::string("haloshift: ").size()) + " (particle " +
                        std::to_string(i) + ")");
          }
          if (owner == me) continue;
          where.leave.push_back(i);
          where.owner.push_back(owner);
          if (!std::binary_search(where.near.begin(), where.near.end(), owner)) far[0].mine = 1;
        }
      },
      agreed, far);
  where.far = far[0].high != 0;
  return where;
}

/// Throws unless every array of `arrays` has `n` entries (as many as `what`).
template <class... Arrays>
void check_lengths([[maybe_unused]] const char* what, [[maybe_unused]] std::size_t n, const Arrays&... arrays) {
  [[maybe_unused]] int which = 1;  // no arrays (migrate of coordinates alone): nothing to check
  (
      [&](const auto& array) {
        if (array.size() != n)
          throw error("migrate: array " + std::to_string(which) + " after " + what + " has " +
                      std::to_string(array.size()) + " entries, " + what + " " + std::to_string(n));
        ++which;
      }(arrays),
      ...);
}

/// migrate in place (below): positions `x` and the columns `more`, with `also_check` run in the
/// agreement (the vector forms check their lengths there).
template <class Positions, class... Ts>
std::size_t migrate_columns(const cartesian_grid& grid, const domain& dom, const migrate_options& how,
                            const Positions& x, const std::function<void()>& also_check, const column<Ts>&... more) {
  const migrate_set<Positions, Ts...> set(x, more...);
  std::array<byte_column, set.K> columns = set.now();
  const auto sizes = set.sizes();
  const departures where = owners(grid, dom, how.count, coordinate_count(x), sizes, owner_decider(x), [&] {
    also_check();
    set.check(how);
  });
  arrivals got = send_departures(grid, where, how, columns);
  if (how.resize) {
    how.resize(got.kept + got.count);
    columns = set.now();  // the resize may have moved the memory
  }
  std::size_t record = 0;
  for (const byte_column& c : columns) record += c.bytes;
  unpack_arrivals(got.in, got.from, columns, record, got.kept);
  return got.kept + got.count;
}

/// migrate of vectors: in place, the callback resizing every vector.
template <class Positions, class... Ts>
void migrate_vectors(const cartesian_grid& grid, const domain& dom, std::size_t count, const Positions& x,
                     const std::function<void()>& also_check, const std::function<void(std::size_t)>& resize_positions,
                     std::vector<Ts>&... more) {
  migrate_columns(grid, dom,
                  {.count = count,
                   .resize =
                       [&](std::size_t n) {
                         resize_positions(n);
                         (more.resize(n), ...);
                       }},
                  x, also_check, column<Ts>{nullptr, nullptr, &more, 1, 1}...);
}
}  // namespace detail

/// Moves every particle of `particles` to the rank whose box holds its
/// position (`position_of(p)` returns a reference to a coordinate_array:
/// hs::position, `std::array<float, 3>`, a padded `std::array<double, 4>`;
/// wrapped into the domain along periodic dimensions on the way and stored
/// back in its own type, a float never on the upper bound), over any
/// distance, usually to a neighbour (then one message each way per
/// neighbouring rank, no collective beyond the one check). Collective. On
/// return a rank holds the particles that stayed, in their old order, then
/// the arrivals ordered by source rank and, within a source, in its order:
/// the result does not depend on message timing. A particle outside a
/// non-periodic dimension raises the same haloshift::error on every rank
/// before anything moves.
template <transferable T, class PositionOf>
requires std::is_lvalue_reference_v<std::invoke_result_t<PositionOf, T&>> &&
    detail::coordinate_array<std::remove_reference_t<std::invoke_result_t<PositionOf, T&>>>
void migrate(const cartesian_grid& grid, const domain& dom, std::vector<T>& particles, PositionOf position_of) {
  const detail::projected<T, PositionOf> x{{nullptr, nullptr, &particles, 1, 1}, position_of};
  detail::migrate_vectors(
      grid, dom, particles.size(), x, [] {}, [&](std::size_t n) { particles.resize(n); });
}

/// Migration of bare positions (hs::position, `std::array<float, 3>`, ...).
template <detail::coordinate_array P>
void migrate(const cartesian_grid& grid, const domain& dom, std::vector<P>& x) {
  const detail::column<P> c{nullptr, nullptr, &x, 1, 1};
  detail::migrate_vectors(
      grid, dom, x.size(), c, [] {}, [&](std::size_t n) { x.resize(n); });
}

/// Migration of a structure of arrays: `x` holds the positions (a
/// coordinate_array per particle), and every array of `more` (velocities,
/// ids, types, ...) as many entries, entry `i` of each belonging to particle
/// `i`. All move together, in the order migrate gives one array of structs.
/// Arrays of differing lengths raise the same haloshift::error on every rank
/// before anything moves.
template <detail::coordinate_array P, transferable... Ts>
requires(sizeof...(Ts) >= 1) void migrate(const cartesian_grid& grid, const domain& dom, std::vector<P>& x,
                                          std::vector<Ts>&... more) {
  const detail::column<P> c{nullptr, nullptr, &x, 1, 1};
  detail::migrate_vectors(
      grid, dom, x.size(), c, [&] { detail::check_lengths("the positions", x.size(), more...); },
      [&](std::size_t n) { x.resize(n); }, more...);
}

/// A column of the caller's memory, for migrate in place: particle `i`'s
/// entry is the `width` values (0: the whole stride) from `first[i * stride]`.
/// Give the pointer variable itself (or the vector) when a resize callback may
/// move the memory: migrate reads it again after the callback. A pointer given
/// by value (`v.data()`) works with a reserved capacity only.
template <transferable T>
detail::column<T> column(T*& first, std::size_t stride = 1, std::size_t width = 0) noexcept {
  return {nullptr, &first, nullptr, stride, width ? width : stride};
}
/// A pointer given by value (with a reserved capacity).
template <transferable T>
detail::column<T> column(T*&& first, std::size_t stride = 1, std::size_t width = 0) noexcept {
  return {first, nullptr, nullptr, stride, width ? width : stride};
}
/// A vector (`stride` values per particle): its data() is read again after a resize.
template <transferable T>
detail::column<T> column(std::vector<T>& first, std::size_t stride = 1, std::size_t width = 0) noexcept {
  return {nullptr, nullptr, &first, stride, width ? width : stride};
}
/// Positions as a part of each entry (`hs::column(atoms, &atom::x)`): the whole entry moves.
template <class A, class PositionOf>
requires std::is_lvalue_reference_v < std::invoke_result_t < PositionOf&, detail::element_t<A>
& >> &&detail::coordinate_array<std::remove_reference_t<std::invoke_result_t<PositionOf&, detail::element_t<A>&>>>
         detail::projected<detail::element_t<A>, PositionOf> column(A&& entries, PositionOf position_of) noexcept {
  return {column(std::forward<A>(entries)), position_of};
}

/// One array per coordinate: `hs::coordinates(x, y, z)` (or x, y for 2D, x
/// for 1D), each a `std::vector<F>` or, for migrate in place, what
/// hs::column takes (a pointer variable, a pointer by value).
template <class... A>
requires(sizeof...(A) >= 1 && sizeof...(A) <= 3) auto coordinates(A&&... c) noexcept {
  using F = std::common_type_t<detail::element_t<A>...>;
  static_assert((std::is_same_v<detail::element_t<A>, F> && ...) && std::floating_point<F>,
                "coordinates: every array holds the same floating-point type");
  return detail::coordinate_arrays<F, sizeof...(A)>{{column(std::forward<A>(c))...}};
}

/// Migration of a structure of arrays whose positions are one array per
/// coordinate (`hs::coordinates(x, y, z)` of vectors), with the arrays of `more`.
template <std::floating_point F, std::size_t N, transferable... Ts>
void migrate(const cartesian_grid& grid, const domain& dom, detail::coordinate_arrays<F, N> c,
             std::vector<Ts>&... more) {
  std::vector<F>* x = c.c[0].vector;
  const std::size_t n = x ? x->size() : 0;
  detail::migrate_vectors(
      grid, dom, n, c,
      [&] {
        for (std::size_t d = 0; d < N; ++d)
          if (!c.c[d].vector)
            throw error(
                "migrate: coordinates of pointers need migrate in place, with the count: "
                "migrate(grid, dom, {.count = n, ...}, hs::coordinates(...), ...)");
        for (std::size_t d = 1; d < N; ++d) detail::check_lengths("the x coordinates", n, *c.c[d].vector);
        detail::check_lengths("the coordinates", n, more...);
      },
      [&](std::size_t m) {
        for (std::size_t d = 0; d < N; ++d) c.c[d].vector->resize(m);
      },
      more...);
}

/// Migration in place, on the caller's own arrays (docs/particles.md, "Migrate
/// in place"): `x` the positions (`hs::column(x, PAD, 3)` for `x[i*PAD + d]`,
/// float or double; `hs::column(p)` of coordinate arrays; `hs::column(atoms,
/// &atom::x)`; `hs::coordinates(x, y, z)`), `more` the companion arrays
/// (`hs::column(v, PAD, 3)`, `hs::column(type)`). Departures are packed
/// straight from the arrays, holes closed in place (survivors in order, or
/// from the end with `.keep_order = false`), and arrivals written after the
/// survivors, ordered by source rank, after `how.resize` (or into the
/// reserved `how.capacity`). Collective; returns the new count.
template <class Positions, class... Ts>
requires requires(const Positions& x) { detail::owner_decider(x); }
std::size_t migrate(const cartesian_grid& grid, const domain& dom, const detail::migrate_options& how,
                    const Positions& x, const detail::column<Ts>&... more) {
  return detail::migrate_columns(
      grid, dom, how, x, [] {}, more...);
}

/// Migration in place of columns in a device space (docs/gpu.md, "Migrate"): the call above with
/// the space first, every column a pointer (variable, or by value with a capacity) to the space's
/// memory. The host never touches the columns: the positions come to the host through the
/// space's executor, where the owners are decided (and the positions wrapped, then sent back), and
/// the executor packs the departures, closes the holes and writes the arrivals. The same result,
/// bit for bit, as in host memory; ranks in host memory and in device spaces migrate together.
template <detail::device_space Space, class Positions, class... Ts>
requires requires(const Positions& x) { detail::owner_decider(x); }
std::size_t migrate(const Space& space, const cartesian_grid& grid, const domain& dom,
                    const detail::migrate_options& how, const Positions& x, const detail::column<Ts>&... more) {
  return detail::migrate_in_space(space, grid, dom, how, x, more...);
}

}  // namespace haloshift

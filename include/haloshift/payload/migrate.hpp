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
#include "../detail/payload/sparse_exchange.hpp"
#include "position_views.hpp"

namespace haloshift {

/// Wraps `x` into the primary domain along periodic dimensions
/// (`domain::wrap`) and returns the rank whose box owns it by the one
/// ownership rule (`domain::owner_coordinate`, half-open boxes), the rule
/// make_particle_plan checks. Throws haloshift::error when `x` is not finite
/// or leaves a non-periodic dimension.
inline int owner_of(const grid_shape& grid, const domain& dom, position& x) {
  offset c{0, 0, 0};
  for (int d = 0; d < grid.ndims(); ++d) {
    if (!std::isfinite(x[d]))
      throw error("migrate: a particle has the non-finite coordinate " + detail::number_text(x[d]) +
                  " along dimension " + std::to_string(d));
    if (grid.periodic(d)) {
      x[d] = dom.wrap(d, x[d]);  // exact: always inside [lo, hi), a value that rounds to hi becomes lo
    } else if (x[d] < dom.lo[d] || x[d] >= dom.hi[d]) {
      throw error("migrate: a particle at coordinate " + detail::number_text(x[d]) + " along dimension " +
                  std::to_string(d) + " left the non-periodic domain [" + detail::number_text(dom.lo[d]) + ", " +
                  detail::number_text(dom.hi[d]) + ")");
    }
    c[d] = dom.owner_coordinate(grid, d, x[d]);
  }
  return grid.rank_of(c);
}

namespace detail {
/// Where migrate's particles go, found in one pass (owners()).
struct departures {
  std::vector<int> owner;          ///< per particle
  std::vector<std::size_t> leave;  ///< the particles that leave, in order
  bool far = false;                ///< some rank sends beyond the boxes around it (agreed)
  std::vector<int> near;           ///< neighbour_ranks()
};

/// The ownership rule, fast for the particles that stay: inside this rank's
/// box along every dimension (edge(c) <= x < edge(c + 1), exactly the rule of
/// domain::owner_coordinate for this box) the particle stays, and only the
/// coordinate equal to the domain's lower bound is normalised as domain::wrap
/// does (-0.0 becomes lo); any other particle is wrapped by owner_of, stored
/// back in its own type inside the domain (a float that would round onto the
/// upper bound wraps to the lower one), and owned by the value stored.
class owner_rule {
 public:
  owner_rule(const cartesian_grid& grid, const domain& dom) : grid_(grid), dom_(dom) {
    std::tie(lo_, hi_) = dom.box(grid.shape(), grid.coords());
  }
  /// The owner of a particle at `x` (its coordinates, stored as `F`); `store(d, value)` writes
  /// coordinate `d` back where wrapping changed it.
  template <std::floating_point F, class Store>
  int place(const position& x, Store store) const {
    bool inside = true;
    for (int d = 0; d < grid_.ndims(); ++d) inside = inside && x[d] >= lo_[d] && x[d] < hi_[d];
    if (inside) {
      for (int d = 0; d < grid_.ndims(); ++d)
        if (grid_.periodic(d) && x[d] == dom_.lo[d]) store(d, static_cast<F>(dom_.lo[d]));
      return grid_.rank();
    }
    position y = x;
    const int owner = owner_of(grid_.shape(), dom_, y);  // checks, and wraps in double
    if constexpr (std::is_same_v<F, double>) {  // stored exactly as wrapped: that owner stands
      for (int d = 0; d < grid_.ndims(); ++d)
        if (grid_.periodic(d)) store(d, y[d]);
      return owner;
    }
    position stored = x;
    for (int d = 0; d < grid_.ndims(); ++d)
      if (grid_.periodic(d)) {
        const F f = store_inside<F>(y[d], dom_.lo[d], dom_.hi[d]);
        store(d, f);
        stored[d] = static_cast<double>(f);
      }
    return owner_of(grid_.shape(), dom_, stored);
  }
  /// The owner of the particle whose coordinates are `p`, wrapped in place.
  template <coordinate_array P>
  int operator()(P& p) const {
    using F = typename coordinate_traits<std::remove_cv_t<P>>::type;
    return place<F>(detail::to_position(p), [&](int d, F value) { p[static_cast<std::size_t>(d)] = value; });
  }

 private:
  const cartesian_grid& grid_;
  const domain& dom_;
  position lo_{}, hi_{};
};

/// What every form of migrate shares, once each particle's owner is known
/// (agreed: a bad particle anywhere raised on every rank before this): the
/// particles that stay are compacted in order (`keep(from, to)`, then
/// `shrink(count)`), those that leave are packed per destination in order
/// (`pack(i, bytes)` writes `record` bytes), and arrivals are appended ordered
/// by source rank (`append(bytes, count)`).
template <class Keep, class Shrink, class Pack, class Append>
void move_to_owners(const cartesian_grid& grid, const departures& where, std::size_t record, Keep keep, Shrink shrink,
                    Pack pack, Append append) {
  const std::size_t n = where.owner.size();
  // Departures grouped by destination rank, each group in the particles' order (a stable counting sort).
  std::vector<rank_bytes> to;
  std::vector<int> ranks;
  for (std::size_t i : where.leave) ranks.push_back(where.owner[i]);
  std::sort(ranks.begin(), ranks.end());
  for (std::size_t i = 0; i < ranks.size(); ++i)
    if (to.empty() || to.back().rank != ranks[i]) to.push_back({ranks[i], i * record, 0});
  std::vector<std::byte> out(where.leave.size() * record);
  std::vector<std::size_t> filled(to.size(), 0);
  for (std::size_t i : where.leave) {
    const auto g = static_cast<std::size_t>(
        std::lower_bound(to.begin(), to.end(), where.owner[i], [](const rank_bytes& m, int r) { return m.rank < r; }) -
        to.begin());
    pack(i, out.data() + to[g].first + filled[g]);
    filled[g] += record;
  }
  for (std::size_t g = 0; g < to.size(); ++g) to[g].size = filled[g];
  // The particles that stay, in order; nothing moves before the first departure.
  std::size_t kept = where.leave.empty() ? n : where.leave.front();
  for (std::size_t i = kept; i < n; ++i)
    if (where.owner[i] == grid.rank()) keep(i, kept++);
  shrink(kept);

  grid_context& context = *grid.context();
  const int tag = sparse_exchange_tag + static_cast<int>(context.sparse_exchanges++ % 2);
  std::vector<std::byte> in;
  std::vector<rank_bytes> from;
  if (where.far)
    sparse_exchange(context.comm.get(), tag, out.data(), to, in, from);
  else
    neighbour_exchange(context.comm.get(), tag, where.near, out.data(), to, in, from);
  for (const rank_bytes& m : from) append(in.data() + m.first, m.size / record);
}

/// Each particle's owner (`decide(i, rule)`: owner_rule on particle `i`'s coordinates), checked
/// on every rank together; the same collective learns whether any rank sends
/// beyond its neighbours, and agrees `element_sizes`, the bytes of an entry of
/// each array that moves (a record packs them one after another: a rank whose
/// `long` is another's `int` would unpack the wrong bytes).
template <std::size_t Components, class Decide>
departures owners(const cartesian_grid& grid, const domain& dom, std::size_t n,
                  std::span<const std::size_t> element_sizes, Decide decide,
                  const std::function<void()>& also_check = {}) {
  departures where;
  where.owner.resize(n);
  where.near = neighbour_ranks(grid);
  mpi::spread far[1];
  // The domain decides every owner: ranks that disagree on it would send particles to ranks that
  // do not think they own them. Agreed here, in the same collective as the checks.
  std::vector<mpi::agreed_value> agreed;
  append_agreed_domain(grid.shape(), dom, agreed);
  mpi::append_element_sizes(element_sizes, agreed,
                            {"migrate: the number of arrays", "migrate: sizeof(T)",
                             "migrate: the element size (bytes) of array"});
  mpi::agree(
      grid.comm(),
      [&] {
        dom.validate(grid.shape());
        if (Components < static_cast<std::size_t>(grid.ndims()))
          throw error("migrate: positions have " + std::to_string(Components) + " coordinates, the grid " +
                      std::to_string(grid.ndims()) + " dimensions");
        if (also_check) also_check();
        const owner_rule rule(grid, dom);
        for (std::size_t i = 0; i < n; ++i) {
          try {
            where.owner[i] = decide(i, rule);
          } catch (const error& e) {
            throw error(std::string(e.what()).substr(std::string("haloshift: ").size()) + " (particle " +
                        std::to_string(i) + ")");
          }
          if (where.owner[i] == grid.rank()) continue;
          where.leave.push_back(i);
          if (!std::binary_search(where.near.begin(), where.near.end(), where.owner[i])) far[0].mine = 1;
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

/// Moves entry `i` of every array to `where.owner[i]`: one record per particle, each array's
/// entry after the previous one's, packed with no alignment assumed.
template <transferable... Ts>
void move_arrays(const cartesian_grid& grid, const departures& where, std::vector<Ts>&... arrays) {
  constexpr std::size_t record = (sizeof(Ts) + ...);
  move_to_owners(
      grid, where, record, [&](std::size_t from, std::size_t to) { ((arrays[to] = arrays[from]), ...); },
      [&](std::size_t n) { (arrays.resize(n), ...); },
      [&](std::size_t i, std::byte* out) {
        auto put = [&](const auto& value) {
          std::memcpy(out, static_cast<const void*>(&value), sizeof(value));
          out += sizeof(value);
        };
        (put(arrays[i]), ...);
      },
      [&](const std::byte* bytes, std::size_t n) {
        auto take = [&](auto& array) {
          const std::size_t at = array.size();
          array.resize(at + n);
          using V = typename std::remove_reference_t<decltype(array)>::value_type;
          for (std::size_t k = 0; k < n; ++k) std::memcpy(static_cast<void*>(&array[at + k]), bytes + k * record, sizeof(V));
          bytes += sizeof(V);  // the next array's entry sits after this one in each record
        };
        (take(arrays), ...);
      });
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
  using P = std::remove_reference_t<std::invoke_result_t<PositionOf, T&>>;
  const std::size_t sizes[] = {sizeof(T)};
  const detail::departures where = detail::owners<detail::coordinate_traits<P>::size>(
      grid, dom, particles.size(), sizes,
      [&](std::size_t i, const detail::owner_rule& rule) { return rule(std::invoke(position_of, particles[i])); });
  detail::move_arrays(grid, where, particles);
}

/// Migration of bare positions (hs::position, `std::array<float, 3>`, ...).
template <detail::coordinate_array P>
void migrate(const cartesian_grid& grid, const domain& dom, std::vector<P>& x) {
  migrate(grid, dom, x, [](P& p) -> P& { return p; });
}

/// Migration of a structure of arrays: `x` holds the positions (a
/// coordinate_array per particle), and every array of `more` (velocities,
/// ids, types, ...) as many entries, entry `i` of each belonging to particle
/// `i`. All move together, in the order migrate gives one array of structs.
/// Arrays of differing lengths raise the same haloshift::error on every rank
/// before anything moves.
template <detail::coordinate_array P, transferable... Ts>
  requires(sizeof...(Ts) >= 1)
void migrate(const cartesian_grid& grid, const domain& dom, std::vector<P>& x, std::vector<Ts>&... more) {
  const std::size_t sizes[] = {sizeof(P), sizeof(Ts)...};
  const detail::departures where = detail::owners<detail::coordinate_traits<P>::size>(
      grid, dom, x.size(), sizes, [&](std::size_t i, const detail::owner_rule& rule) { return rule(x[i]); },
      [&] { detail::check_lengths("the positions", x.size(), more...); });
  detail::move_arrays(grid, where, x, more...);
}

/// One array per coordinate, for migrate: `hs::coordinates(x, y, z)` (or x, y for 2D, x for 1D).
template <std::floating_point F, std::size_t N>
struct coordinate_arrays {
  std::array<std::vector<F>*, N> c;  ///< x, then y, then z
};
/// x alone (1D).
template <std::floating_point F>
coordinate_arrays<F, 1> coordinates(std::vector<F>& x) {
  return {{&x}};
}
/// x and y (2D).
template <std::floating_point F>
coordinate_arrays<F, 2> coordinates(std::vector<F>& x, std::vector<F>& y) {
  return {{&x, &y}};
}
/// x, y and z.
template <std::floating_point F>
coordinate_arrays<F, 3> coordinates(std::vector<F>& x, std::vector<F>& y, std::vector<F>& z) {
  return {{&x, &y, &z}};
}

/// Migration of a structure of arrays whose positions are one array per
/// coordinate (`hs::coordinates(x, y, z)`), with the arrays of `more`.
template <std::floating_point F, std::size_t N, transferable... Ts>
void migrate(const cartesian_grid& grid, const domain& dom, coordinate_arrays<F, N> c, std::vector<Ts>&... more) {
  std::vector<F>& x = *c.c[0];
  std::array<std::size_t, N + sizeof...(Ts)> sizes{};  // the coordinates, then `more`
  std::fill_n(sizes.begin(), N, sizeof(F));
  [[maybe_unused]] std::size_t next = N;
  ((sizes[next++] = sizeof(Ts)), ...);
  const detail::departures where = detail::owners<N>(
      grid, dom, x.size(), sizes,
      [&](std::size_t i, const detail::owner_rule& rule) {
        position p{0, 0, 0};
        for (std::size_t d = 0; d < N; ++d) p[d] = static_cast<double>((*c.c[d])[i]);
        return rule.place<F>(p, [&](int d, F value) { (*c.c[static_cast<std::size_t>(d)])[i] = value; });
      },
      [&] {
        for (std::size_t d = 1; d < N; ++d) detail::check_lengths("the x coordinates", x.size(), *c.c[d]);
        detail::check_lengths("the coordinates", x.size(), more...);
      });
  [&]<std::size_t... I>(std::index_sequence<I...>) { detail::move_arrays(grid, where, *c.c[I]..., more...); }(
      std::make_index_sequence<N>{});
}

}  // namespace haloshift

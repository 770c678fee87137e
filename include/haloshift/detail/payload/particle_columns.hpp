// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file particle_columns.hpp
/// @brief A particle plan's exchanges on a code's own arrays: positions in
/// any view's layout (payload/position_views.hpp) written in place and
/// shifted across periodic borders, with any companion arrays in the same
/// messages; reverse sums into the same layouts; and the plan's send and
/// receive lists. The plan's members (particle_plan.hpp) call these.

#include <array>
#include <cstddef>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../../exchange/exchange_handle.hpp"
#include "../../exchange/halo.hpp"
#include "../../payload/position_views.hpp"
#include "../exchange/arrays.hpp"
#include "../exchange/executor.hpp"
#include "../exchange/program.hpp"

namespace haloshift::detail {

/// A position view forward_positions and reverse write into (array_positions, strided_positions,
/// split_positions, member_positions of a coordinate array).
template <class V>
concept position_view = requires(const V& v) { position_access::columns(v); };

/// The scalar type of a position view's coordinates.
template <class V>
using view_scalar = typename decltype(position_access::columns(std::declval<const V&>()))::scalar;

/// A forward's last step: every coordinate of every ghost of a block that wrapped moves by its
/// image, `x + image * length` computed in double and stored in the view's type (one rounding; as
/// shift_by_image does for an array per particle). Values beyond the third coordinate (padding)
/// stay.
template <class F, class Block>
struct shift_columns {
  std::span<const Block> blocks;  ///< the plan's (their storage stays put when the plan moves)
  position_columns<F> x;
  position length;
  void operator()() const noexcept {
    for (const Block& b : blocks)
      if (b.image != zero_offset)
        for (std::size_t k = 0; k < 3; ++k)
          for (std::size_t j = 0; j < x.c[k].width; ++j) {
            const std::size_t d = x.first[k] + j;
            if (d < 3 && b.image[static_cast<int>(d)] != 0) shift(x.c[k], j, b, b.image[static_cast<int>(d)] * length[d]);
          }
  }
  static void shift(const strided_column<F>& c, std::size_t j, const Block& b, double by) noexcept {
    std::byte* at = c.at(b.first) + j * sizeof(F);
    for (std::size_t i = 0; i < b.count; ++i, at += c.stride) {
      F v;
      std::memcpy(&v, at, sizeof(F));
      v = static_cast<F>(static_cast<double>(v) + by);
      std::memcpy(at, &v, sizeof(F));
    }
  }
};

/// An array of a call that names a memory space: a span of a transferable type (a vector would
/// be host memory).
template <class A>
struct span_array : std::false_type {};
template <transferable T>
struct span_array<std::span<T>> : std::true_type {
  using element = T;
};
/// A per-particle array a host call of several takes: a span, or a vector, of a transferable type.
template <class A>
struct particle_array : span_array<A> {};
template <transferable T>
struct particle_array<std::vector<T>> : std::true_type {
  using element = T;
};

/// A particle forward's last step: `shift(ghost, image)` on every ghost of a block that wrapped.
template <class Block, class T, class Shift>
struct shift_images {
  std::span<const Block> blocks;  ///< the plan's (their storage stays put when the plan moves)
  T* data;
  Shift shift;
  void operator()() {
    for (const Block& b : blocks)
      if (b.image != zero_offset)
        for (std::size_t i = b.first; i < b.first + b.count; ++i) shift(data[i], b.image);
  }
};

/// A ghost's coordinates moved by its periodic image.
struct shift_array {
  position length;
  template <coordinate_array P>
  void operator()(P& p, const offset& image) const noexcept {
    shift_by_image(p, image, length);
  }
};
/// The same for the coordinates inside a struct.
template <class T, class P>
struct shift_member {
  position length;
  P T::*member;
  void operator()(T& p, const offset& image) const noexcept { shift_by_image(p.*member, image, length); }
};

/// A for_each_run callback that lists every element of the runs in `v`.
inline auto append_to(std::vector<std::size_t>& v) {
  return [&v](std::size_t first, std::size_t count) {
    for (std::size_t e = first; e < first + count; ++e) v.push_back(e);
  };
}

/// The calls of particle_plan on a code's own arrays (a friend of it: `Plan` is particle_plan).
struct particle_columns {
  /// Starts forward_positions(x, more...): x's coordinates and every companion's values in one
  /// message per neighbour, ghosts shifted once the exchange completes.
  template <class Plan, position_view View, class... More>
  static auto start_forward(Plan& plan, const View& x, More&&... more) {
    using F = view_scalar<View>;
    const position_columns<F> pc = position_access::columns(x);
    const auto companions = std::make_tuple(position_access::column(std::forward<More>(more))...);
    check(plan, "forward_positions", x, pc, companions);
    return std::apply(
        [&](const auto&... c) {
          using data = arrays<strided_column<F>, strided_column<F>, strided_column<F>, column_type<decltype(c)>...>;
          return plan.plan_.start_forward_columns(shift_columns<F, typename decltype(plan.blocks_)::value_type>{plan.blocks_, pc, plan.length_},
                                                  data{{pc.c[0], pc.c[1], pc.c[2], c.column...}});
        },
        companions);
  }

  /// Starts a forward of companion columns alone (spans, vectors, strided_positions of any type),
  /// unshifted, in one message per neighbour: for arrays whose shape is known at run time only (the
  /// C interface's hs_particle_forward: a strided column per array, width 0 for one left out).
  template <class Plan, class... More>
  static auto start_forward_columns(Plan& plan, More&&... more) {
    const auto companions = std::make_tuple(position_access::column(std::forward<More>(more))...);
    check(plan, "forward", companions, 0, [] {});
    return std::apply(
        [&](const auto&... c) {
          return plan.plan_.start_forward_columns(no_epilogue{}, arrays<column_type<decltype(c)>...>{{c.column...}});
        },
        companions);
  }
  /// Starts a reverse of one strided column (`width` values of `T` per particle, `stride` entries
  /// apart): each ghost's values combined with `op` onto its owner's, value by value.
  template <class Plan, class T, class Op>
  static auto start_reverse_column(Plan& plan, const strided_positions<T>& column, Op op) {
    const auto c = position_access::column(column);
    check(plan, "reverse", std::make_tuple(c), 0, [] {});
    return plan.plan_.start_reverse_columns(std::move(op), arrays<strided_column<T>>{{c.column}});
  }

  /// Starts reverse(f, op): every ghost's values combined with `op` onto its owner's, value by value.
  template <class Plan, position_view View, class Op>
  static auto start_reverse(Plan& plan, const View& f, Op op) {
    using F = view_scalar<View>;
    const position_columns<F> pc = position_access::columns(f);
    check(plan, "reverse", f, pc, std::tuple<>{});
    using data = arrays<strided_column<F>, strided_column<F>, strided_column<F>>;
    return plan.plan_.start_reverse_columns(std::move(op), data{{pc.c[0], pc.c[1], pc.c[2]}});
  }

  /// One entry per transfer of the plan's program, in the order of a forward (see send_list).
  template <class List, class Plan>
  static std::vector<List> send_lists(const Plan& plan) {
    std::vector<List> out;
    const program& p = plan.plan_.details();
    for (std::size_t r = 0; r < p.rounds.size(); ++r)
      for (const transfer_program& t : p.rounds[r].transfers) {
        if (!t.send.exists() && !t.recv.exists()) continue;
        List l{};
        l.rank = t.send.peer;
        l.round = r;
        l.direction = t.direction;
        l.source = t.recv.peer;
        if (t.send.exists()) for_each_run(p.layout, t.send, append_to(l.indices));
        if (t.recv.exists()) for_each_run(p.layout, t.recv, append_to(l.received));
        l.count = l.received.size();
        l.first = l.received.empty() ? 0 : l.received.front();
        out.push_back(std::move(l));
      }
    return out;
  }

 private:
  template <class C>
  using column_type = typename std::remove_cvref_t<C>::column_type;

  /// The call's one argument check (agreed when the plan checks collectively): the view and every
  /// companion writable and long enough, coordinates for every dimension, no exchange in flight.
  template <class Plan, class View, class F, class Companions>
  static void check(Plan& plan, const char* call, const View& x, const position_columns<F>& pc,
                    const Companions& companions) {
    check(plan, call, companions, pc.c[0].bytes() + pc.c[1].bytes() + pc.c[2].bytes(), [&] {
      check_components(x, plan.recipe_->shape.ndims());
      check_room(call, 0, pc.size, pc.writable, plan.size());
    });
  }
  /// The same for companions alone (`view_bytes` 0) or after a view whose own check is `view`.
  template <class Plan, class Companions, class ViewCheck>
  static void check(Plan& plan, const char* call, const Companions& companions, std::size_t view_bytes,
                    ViewCheck&& view) {
    std::apply(
        [&](const auto&... c) {
          const auto local = [&] {
            detail::check_idle(plan.busy(), call);
            view();
            std::size_t i = 0;
            (check_room(call, ++i, c.size, c.writable, plan.size()), ...);
          };
          if (view_bytes)
            plan.plan_.check_call(call, local, {view_bytes, c.bytes()...});
          else
            plan.plan_.check_call(call, local, {c.bytes()...});
        },
        companions);
  }
};

}  // namespace haloshift::detail

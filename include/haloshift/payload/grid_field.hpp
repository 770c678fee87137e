// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file grid_field.hpp
/// @brief Grid mode (stencil codes): a rank's part of a global structured
/// array with ghost layers of any width, filled from the neighbours'
/// interiors (faces, edges, corners; periodic or not), several fields in one
/// exchange, and ghost contributions combined back onto their owners.
///
/// Built on the selective exchange: the keys are global cell coordinates and
/// a box needs a cell when the cell lies within the ghost width of the box.
/// The plan is then relocated onto the padded array, so each message gathers
/// straight from, and scatters straight into, the field's storage.

#include <concepts>
#include <cstddef>
#include <string_view>

#include "../auto_hook.hpp"
#include "../detail/mpi/agreement.hpp"
#include "../detail/payload/field_plan_builder.hpp"
#include "../grid/cartesian_grid.hpp"
#include "../strategy_registry.hpp"
#include "field_plan.hpp"
#include "field_shape.hpp"
#include "field_storage.hpp"
#include "field_view.hpp"

namespace haloshift {

/// Builds the ghost exchange of strategy `S` (Shift, SingleHop, TtlMultiHop,
/// NeighborAlltoall, a custom strategy; Auto with <haloshift/auto.hpp>) for
/// fields of `shape` (take it from a field: `f.shape()`). Collective: the
/// shape, the strategy and the options must agree on all ranks. (The plan
/// moves cells whatever their type; only make_field_plan<Auto> takes the
/// bytes per cell, for its cost model.)
template <strategy S>
field_plan make_field_plan(const cartesian_grid& grid, const field_shape& shape, const plan_options& options = {}) {
  // Re-agree: a shape may come from anywhere, not only from a collectively built field.
  const field_shape checked = detail::agreed_shape(grid, shape, {}, detail::strategy_value(S::name));
  return detail::field_plan_builder::build(grid, checked, options, {S::name, detail::entry_of<S>()});
}

/// The strategy named at run time (a registered name without regard to case,
/// or "Auto" with <haloshift/auto.hpp>). `element_size` (bytes per cell, of
/// all fields exchanged together) and `fields` (how many fields one exchange
/// moves: a bundle's, or views passed together) only inform Auto's cost model,
/// which for several fields also picks plan_options::messages (where automatic).
inline field_plan make_field_plan(const cartesian_grid& grid, std::string_view strategy, const field_shape& shape,
                                  const plan_options& options = {}, std::size_t element_size = sizeof(double),
                                  int fields = 1) {
  const field_shape checked = detail::agreed_shape(grid, shape, {}, detail::strategy_value(strategy));
  if (detail::strategy_registry::same_name(strategy, Auto::name))
    return detail::field_plan_builder::automatic(grid, checked, options, element_size, false, fields);
  return detail::field_plan_builder::build(grid, checked, options, {strategy, std::nullopt});
}
/// The plan of strategy `S` (or Auto) for fields shaped like `f`.
template <detail::strategy_or_auto S, transferable T>
field_plan make_field_plan(const grid_field<T>& f, const plan_options& options = {}) {
  if constexpr (std::same_as<S, Auto>)
    return make_field_plan<S>(f.grid(), f.shape(), options, sizeof(T));
  else
    return make_field_plan<S>(f.grid(), f.shape(), options);
}
/// The plan of strategy `S` (or Auto) for bundles (and fields) shaped like `b`.
template <detail::strategy_or_auto S, transferable... Ts>
field_plan make_field_plan(const field_bundle<Ts...>& b, const plan_options& options = {}) {
  if constexpr (std::same_as<S, Auto>)
    return make_field_plan<S>(b.grid(), b.shape(), options, (sizeof(Ts) + ...), static_cast<int>(sizeof...(Ts)));
  else
    return make_field_plan<S>(b.grid(), b.shape(), options);
}

/// One-shot ghost fill: builds a plan of strategy `S` and runs it once. For
/// repeated exchanges keep a plan (make_field_plan): building one is collective
/// and costs a few exchanges.
template <detail::strategy_or_auto S, class Field>
  requires requires(Field& f) { make_field_plan<S>(f).forward(f); }  // a grid_field or a field_bundle
void fill_ghosts(Field& f, const plan_options& options = {}) {
  make_field_plan<S>(f, options).forward(f);
}

}  // namespace haloshift

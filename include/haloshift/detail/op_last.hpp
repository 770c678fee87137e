// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file op_last.hpp
/// @brief The reduction op after the arrays: every reverse takes its arrays
/// first and its op last (optional: std::plus<>), for one array and for
/// several. A parameter pack must come last to be deduced, so the calls of
/// several arrays take everything as one pack and split it here.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../exchange/halo.hpp"

namespace haloshift::detail {

/// The last type of a pack.
template <class... Args>
using last_of = std::tuple_element_t<sizeof...(Args) - 1, std::tuple<std::remove_cvref_t<Args>...>>;

/// Calls `f(op, arrays...)` for `args` = arrays..., then the op when `IsArray` says the last
/// argument is not an array, or `f(std::plus<>{}, args...)` when it is.
template <template <class> class IsArray, class F, class... Args>
decltype(auto) call_op_first(F&& f, Args&&... args) {
  if constexpr (IsArray<last_of<Args...>>::value) {
    return std::forward<F>(f)(std::plus<>{}, std::forward<Args>(args)...);
  } else {
    auto all = std::forward_as_tuple(std::forward<Args>(args)...);
    return [&]<std::size_t... I>(std::index_sequence<I...>) -> decltype(auto) {
      return std::forward<F>(f)(std::get<sizeof...(Args) - 1>(std::move(all)), std::get<I>(std::move(all))...);
    }(std::make_index_sequence<sizeof...(Args) - 1>{});
  }
}

/// How many of `Args`, counted from the first, are arrays.
template <template <class> class IsArray, class... Args>
constexpr std::size_t leading_arrays() {
  std::size_t n = 0;
  bool still = true;
  ((still = still && IsArray<std::remove_cvref_t<Args>>::value, n += still ? 1 : 0), ...);
  return n;
}

/// Whether the last of `Args` is an array, or an op that combines the elements of every array
/// before it (`IsArray<A>::element` is the element type of array `A`).
template <template <class> class IsArray, class... Args>
constexpr bool op_fits_arrays() {
  using last = last_of<Args...>;
  if constexpr (IsArray<last>::value) {
    return true;
  } else {
    using all = std::tuple<std::remove_cvref_t<Args>...>;
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (reduction_for<last, typename IsArray<std::tuple_element_t<I, all>>::element> && ...);
    }(std::make_index_sequence<sizeof...(Args) - 1>{});
  }
}

/// Arrays then an optional op: at least `Least` arrays, every argument but the last is one,
/// and the last is an array or an op for every array's elements.
template <template <class> class IsArray, std::size_t Least, class... Args>
concept arrays_then_op = sizeof...(Args) >= Least &&
                         leading_arrays<IsArray, Args...>() >= std::max(Least, sizeof...(Args) - 1) &&
                         op_fits_arrays<IsArray, Args...>();

}  // namespace haloshift::detail

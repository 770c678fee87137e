// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file ops.hpp
/// @brief Which reductions and element types an executor combines: a batched
/// reverse names its operation and element type (a GPU kernel cannot call the
/// user's functor), so it takes sums, minima and maxima of arithmetic types.

#include <cstdint>
#include <functional>
#include <type_traits>

#include "segment.hpp"

namespace haloshift::detail::batch {

/// The batch_op of a reduction functor; `known` is false for one an executor cannot run.
template <class Op>
struct op_kind {
  static constexpr bool known = false;
};
template <>
struct op_kind<std::plus<>> {
  static constexpr bool known = true;
  static constexpr batch_op value = batch_op::plus;
};
template <class T>
struct op_kind<std::plus<T>> {
  static constexpr bool known = true;
  static constexpr batch_op value = batch_op::plus;
};

/// The scalar_kind of an element type (none: not arithmetic, cannot be combined by an executor).
template <class T>
constexpr scalar_kind scalar_kind_of() {
  if constexpr (std::is_same_v<T, float>) return scalar_kind::f32;
  else if constexpr (std::is_same_v<T, double>) return scalar_kind::f64;
  else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    constexpr bool s = std::is_signed_v<T>;
    if constexpr (sizeof(T) == 1) return s ? scalar_kind::i8 : scalar_kind::u8;
    else if constexpr (sizeof(T) == 2) return s ? scalar_kind::i16 : scalar_kind::u16;
    else if constexpr (sizeof(T) == 4) return s ? scalar_kind::i32 : scalar_kind::u32;
    else if constexpr (sizeof(T) == 8) return s ? scalar_kind::i64 : scalar_kind::u64;
    else return scalar_kind::none;
  } else {
    return scalar_kind::none;
  }
}

/// Whether an executor can combine arrays of `Ts` with `Op` (a forward, Op = the store of
/// exchange_run, needs no combining: always).
template <class Op, class... Ts>
constexpr bool executor_combines() {
  return op_kind<Op>::known && ((scalar_kind_of<Ts>() != scalar_kind::none) && ...);
}

}  // namespace haloshift::detail::batch

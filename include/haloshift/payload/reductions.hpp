// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file reductions.hpp
/// @brief The operations a field plan's reverse takes besides any binary
/// functor (std::plus<> is the default), and which of them an executor runs.

#include "../detail/batch/ops.hpp"

namespace haloshift {

/// Reverse operations besides any binary functor (std::plus<> is the default).
struct take_min {
  /// `b` if `b < a`, else `a`.
  template <class T>
  T operator()(const T& a, const T& b) const {
    return b < a ? b : a;
  }
};
/// The larger of the owner's value and each ghost copy (`operator<`).
struct take_max {
  /// `b` if `a < b`, else `a`.
  template <class T>
  T operator()(const T& a, const T& b) const {
    return a < b ? b : a;
  }
};
namespace detail::batch {  // executors combine these too (take_min and take_max as their batch_op)
template <>
struct op_kind<take_min> {
  static constexpr bool known = true;
  static constexpr batch_op value = batch_op::min;
};
template <>
struct op_kind<take_max> {
  static constexpr bool known = true;
  static constexpr batch_op value = batch_op::max;
};
}  // namespace detail::batch
/// The owner takes the value of one of its ghost copies: the copy held by the
/// highest rank and, among that rank's copies (periodic images), the one at
/// the highest storage index. A cell nobody holds keeps its value. The same
/// cell wins whatever the strategy.
struct take_ghost_value {};

}  // namespace haloshift

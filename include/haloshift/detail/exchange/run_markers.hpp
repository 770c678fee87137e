// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file run_markers.hpp
/// @brief The marker types of exchange_run's template arguments (what a
/// forward pass does with arrivals, a run without a collective engine), and
/// the wrapper through which a run calls a reduction.

#include <cstddef>
#include <exception>
#include <type_traits>

#include "program.hpp"

namespace haloshift::detail {

/// The operation of a forward pass: arrivals are stored, not combined.
struct store_arrivals {};

/// A reverse exchange's reduction as the run calls it. An exception from `op` is kept (the first:
/// `*failure`) and the owner's value left as it is, and the run goes on: it still posts every
/// message and receives every arrival, so that its peers are not left waiting for messages it
/// would never send and no message is left behind for a later exchange to receive. The run raises
/// the exception once its messages are complete (exchange_run::advance). Where `op` cannot throw
/// (a sum of numbers) the try block costs nothing.
template <class Op>
struct completing_op {
  Op op;
  std::exception_ptr* failure;
  template <class A, class B>
  std::remove_cvref_t<A> operator()(A&& a, B&& b) {
    try {
      return op(a, b);
    } catch (...) {
      if (!*failure) *failure = std::current_exception();
      return a;
    }
  }
};

/// Marks a run without a neighbourhood-collective engine.
struct point_to_point {
  std::size_t staging_bytes(const program&, std::size_t) const noexcept { return 0; }
  void forget_requests() noexcept {}
};
}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file agreement.hpp
/// @brief Collective argument checks: every rank raises the same error, so a
/// mistake on one rank never leaves the others waiting in a later call.

#include <bit>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../../error.hpp"
#include "check.hpp"

namespace haloshift::mpi {

/// What an agreed value holds: an integer, or a double kept as its bit pattern.
enum class value_kind { integer, real };

/// A value that must be equal on all ranks, with the name used in messages.
/// Doubles are compared by bit pattern (equal values, equal bits; -0.0 taken
/// as 0.0) but reported as numbers: build them with real_value().
struct agreed_value {
  const char* name;
  std::int64_t value;
  value_kind kind = value_kind::integer;
};

/// An agreed double: compared through its bits, printed as a number.
/// -0.0 counts as 0.0 (equal values, so they agree); NaNs agree only with the same bits.
inline agreed_value real_value(const char* name, double v) noexcept {
  return {name, std::bit_cast<std::int64_t>(v == 0 ? 0.0 : v), value_kind::real};
}

namespace detail {
/// Order-preserving map to unsigned keys (doubles ordered by value, NaNs at the ends).
inline std::uint64_t order_key(std::int64_t value, value_kind kind) noexcept {
  std::int64_t v = value;
  if (kind == value_kind::real && v < 0) v ^= std::numeric_limits<std::int64_t>::max();
  return static_cast<std::uint64_t>(v) ^ (std::uint64_t{1} << 63);
}
inline std::int64_t from_order_key(std::uint64_t key, value_kind kind) noexcept {
  std::int64_t v = static_cast<std::int64_t>(key ^ (std::uint64_t{1} << 63));
  if (kind == value_kind::real && v < 0) v ^= std::numeric_limits<std::int64_t>::max();
  return v;
}
}  // namespace detail

/// A value as text: integers in decimal, doubles as the shortest number that reads back the same.
inline std::string value_text(std::int64_t value, value_kind kind) {
  if (kind == value_kind::integer) return std::to_string(value);
  return haloshift::detail::number_text(std::bit_cast<double>(value));
}

/// A value that may differ across ranks, reduced in the same collective as
/// the agreed values: the caller sets `mine` (inside `local` or before), and
/// agree() sets `low` and `high` to its smallest and largest over all ranks.
/// Lets a build learn, say, whether all ranks hold the same element count
/// without a collective of its own.
struct spread {
  std::int64_t mine = 0;
  std::int64_t low = 0;
  std::int64_t high = 0;
};

/// Runs `local` on every rank, then (one MPI_Allreduce) checks that no rank
/// failed and that all `values` agree. If some rank's `local` threw
/// haloshift::error, every rank throws the message of the lowest such rank;
/// otherwise, if a value differs, every rank throws an error naming it with its
/// smallest and largest value (doubles printed as numbers). On success, each
/// of `spreads` holds its extent over all ranks. The values' names
/// and kinds must be the same on all ranks (they are the call's, not the user's).
template <class Local>
void agree(MPI_Comm comm, Local&& local, const std::vector<agreed_value>& values = {},
           std::span<spread> spreads = {}) {
  int rank = 0, size = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  std::optional<std::string> failure;
  try {
    std::invoke(std::forward<Local>(local));
  } catch (const error& e) {
    failure = std::string(e.what()).substr(std::string("haloshift: ").size());
  }
  // One reduction finds the first failing rank and each value's min and max (as the min of the
  // complement of an order-preserving key: exact for every value, no negation overflow). The keys
  // travel as signed MPI_INT64_T (the key with its top bit flipped orders the same way signed):
  // MPICH 4.0.2 (Debian 12) returned wrong minima for MPI_UINT64_T with MPI_MIN.
  const auto as_signed = [](std::uint64_t key) { return static_cast<std::int64_t>(key ^ (std::uint64_t{1} << 63)); };
  const auto as_key = [](std::int64_t v) { return static_cast<std::uint64_t>(v) ^ (std::uint64_t{1} << 63); };
  // On the stack when it fits: a plan with collective argument checks agrees on every call.
  const std::size_t count = 1 + 2 * values.size() + 2 * spreads.size();
  std::int64_t small[16];
  std::vector<std::int64_t> large(count > std::size(small) ? count : 0);
  std::int64_t* packed = large.empty() ? small : large.data();
  std::size_t at = 0;
  packed[at++] = failure ? rank : size;
  for (const agreed_value& v : values) packed[at++] = as_signed(detail::order_key(v.value, v.kind));
  for (const agreed_value& v : values) packed[at++] = ~as_signed(detail::order_key(v.value, v.kind));
  for (const spread& v : spreads) packed[at++] = v.mine;
  for (const spread& v : spreads) packed[at++] = ~v.mine;  // min of the complement: the max, without overflow
  check(MPI_Allreduce(MPI_IN_PLACE, packed, static_cast<int>(count), MPI_INT64_T, MPI_MIN, comm), "MPI_Allreduce");
  const int failed = static_cast<int>(packed[0]);
  if (failed < size) {
    std::string text = failure.value_or(std::string());
    int length = static_cast<int>(text.size());
    check(MPI_Bcast(&length, 1, MPI_INT, failed, comm), "MPI_Bcast");
    text.resize(static_cast<std::size_t>(length));
    check(MPI_Bcast(text.data(), length, MPI_CHAR, failed, comm), "MPI_Bcast");
    throw error(size > 1 ? text + " (on rank " + std::to_string(failed) + ")" : text);
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint64_t low = as_key(packed[1 + i]), high = as_key(~packed[1 + values.size() + i]);
    if (low != high)
      throw error(std::string(values[i].name) + " must be the same on all ranks, got values from " +
                  value_text(detail::from_order_key(low, values[i].kind), values[i].kind) + " to " +
                  value_text(detail::from_order_key(high, values[i].kind), values[i].kind));
  }
  const std::size_t first_spread = 1 + 2 * values.size();
  for (std::size_t i = 0; i < spreads.size(); ++i) {
    spreads[i].low = packed[first_spread + i];
    spreads[i].high = ~packed[first_spread + spreads.size() + i];
  }
}

}  // namespace haloshift::mpi

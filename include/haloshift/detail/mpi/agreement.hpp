// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file agreement.hpp
/// @brief Collective argument checks: every rank raises the same error, so a
/// mistake on one rank never leaves the others waiting in a later call.

#include <mpi.h>

#include <bit>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../error.hpp"
#include "../compiled.hpp"
#include "../hash.hpp"
#include "check.hpp"

namespace haloshift::mpi {

/// What an agreed value holds: an integer, a double kept as its bit pattern,
/// or a hash of a text (a strategy's name) that a mismatch reports as the text.
enum class value_kind { integer, real, text };

/// A value that must be equal on all ranks, with the name used in messages.
/// Doubles are compared by bit pattern (equal values, equal bits; -0.0 taken
/// as 0.0) but reported as numbers: build them with real_value(). Texts are
/// compared by a hash but reported as themselves: build them with text_value().
struct agreed_value {
  const char* name;
  std::int64_t value;
  value_kind kind = value_kind::integer;
  int index = -1;          ///< >= 0: one of a numbered series, named `name` then the index ("array 2")
  std::string_view text{}; ///< value_kind::text: what `value` hashes; must outlive the agreement
};

/// An agreed double: compared through its bits, printed as a number.
/// -0.0 counts as 0.0 (equal values, so they agree); NaNs agree only with the same bits.
inline agreed_value real_value(const char* name, double v) noexcept {
  return {name, std::bit_cast<std::int64_t>(v == 0 ? 0.0 : v), value_kind::real};
}

/// An agreed text, compared through `hash` (the caller's: a strategy name's
/// ignores case) and named by its own text when ranks differ. `text` must
/// outlive the agreement.
inline agreed_value text_value(const char* name, std::string_view text, std::int64_t hash) noexcept {
  return {name, hash, value_kind::text, -1, text};
}

/// Slots append_element_sizes() gives each array before folding the rest into one hash.
inline constexpr std::size_t agreed_array_slots = 8;

/// How append_element_sizes() names its values in messages.
struct array_names {
  const char* count;  ///< the number of arrays ("the number of arrays")
  const char* one;    ///< the size of a call's only array ("the element size (bytes)")
  const char* each;   ///< the size of one of several, followed by its index ("the element size (bytes) of array")
};

/// The element sizes of the arrays one call moves (a structure of arrays
/// packs each array's entries after the previous one's), as agreed values:
/// their number, then each size, so that ranks whose types are permuted, or
/// that pass a different number of arrays, raise instead of unpacking one
/// array's bytes into another. Always the same number of values, whatever
/// the number of arrays (ranks passing different numbers meet in the same
/// reduction); arrays past the first agreed_array_slots are agreed through a
/// hash of their sizes.
inline void append_element_sizes(std::span<const std::size_t> sizes, std::vector<agreed_value>& out,
                                 const array_names& names) {
  out.reserve(out.size() + agreed_array_slots + 2);  // one allocation for a call's checks
  out.push_back({names.count, static_cast<std::int64_t>(sizes.size())});
  const bool one = sizes.size() == 1;  // the number of arrays agrees before any size is compared
  for (std::size_t i = 0; i < agreed_array_slots; ++i)
    out.push_back({one ? names.one : names.each, i < sizes.size() ? static_cast<std::int64_t>(sizes[i]) : 0,
                   value_kind::integer, one ? -1 : static_cast<int>(i)});
  static_assert(agreed_array_slots == 8, "the name below counts the slots");
  haloshift::detail::fnv1a rest;
  for (std::size_t i = agreed_array_slots; i < sizes.size(); ++i) rest.word(sizes[i]);
  out.push_back({"the element sizes of the arrays after the first 8 (a hash)",
                 static_cast<std::int64_t>(rest.get() >> 1)});
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

/// The name of `v` as messages print it.
inline std::string label(const agreed_value& v) {
  return v.index < 0 ? std::string(v.name) : std::string(v.name) + " " + std::to_string(v.index);
}

/// The texts of agreed text value `v` on the lowest ranks holding its smallest
/// and its largest hash (`low`, `high`), as "A on rank 0 and B on rank 3"
/// (the lower rank first).
/// Collective: every rank calls it for the same mismatch (the first one, the
/// same everywhere), so the extra messages are paid on the error path only.
inline std::string texts_of(MPI_Comm comm, int rank, int size, const agreed_value& v, std::int64_t low,
                            std::int64_t high) {
  int holder[2] = {v.value == low ? rank : size, v.value == high ? rank : size};
  check(MPI_Allreduce(MPI_IN_PLACE, holder, 2, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  std::string said[2];
  for (int end = 0; end < 2; ++end) {
    std::string text(rank == holder[end] ? v.text : std::string_view{});
    int length = static_cast<int>(text.size());
    check(MPI_Bcast(&length, 1, MPI_INT, holder[end], comm), "MPI_Bcast");
    text.resize(static_cast<std::size_t>(length));
    check(MPI_Bcast(text.data(), length, MPI_CHAR, holder[end], comm), "MPI_Bcast");
    said[end] = text + " on rank " + std::to_string(holder[end]);
  }
  return holder[0] < holder[1] ? said[0] + " and " + said[1] : said[1] + " and " + said[0];
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

namespace detail {
/// agree() after `local` ran: `failure` is this rank's error text, if it raised.
/// Not a template, so that the many agree() instantiations (one per check) stay small.
HALOSHIFT_BUILDER void settle_agreement(MPI_Comm comm, const std::optional<std::string>& failure,
                                        const std::vector<agreed_value>& values, std::span<spread> spreads);
}  // namespace detail

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
  std::optional<std::string> failure;
  try {
    std::invoke(std::forward<Local>(local));
  } catch (const error& e) {
    failure = std::string(e.what()).substr(std::string("haloshift: ").size());
  }
  detail::settle_agreement(comm, failure, values, spreads);
}

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER void detail::settle_agreement(MPI_Comm comm, const std::optional<std::string>& failure,
                                                const std::vector<agreed_value>& values, std::span<spread> spreads) {
  int rank = 0, size = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  // One reduction finds the first failing rank and each value's min and max (as the min of the
  // complement of an order-preserving key: exact for every value, no negation overflow). The keys
  // travel as signed MPI_INT64_T (the key with its top bit flipped orders the same way signed):
  // MPICH 4.0.2 (Debian 12) returned wrong minima for MPI_UINT64_T with MPI_MIN.
  const auto as_signed = [](std::uint64_t key) { return static_cast<std::int64_t>(key ^ (std::uint64_t{1} << 63)); };
  const auto as_key = [](std::int64_t v) { return static_cast<std::uint64_t>(v) ^ (std::uint64_t{1} << 63); };
  // On the stack when it fits: a plan with collective argument checks agrees on every call (the
  // element sizes of its arrays: 10 values, 21 entries).
  const std::size_t count = 1 + 2 * values.size() + 2 * spreads.size();
  std::int64_t small[24];
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
    if (low == high) continue;
    const std::int64_t lowest = detail::from_order_key(low, values[i].kind);
    const std::int64_t highest = detail::from_order_key(high, values[i].kind);
    if (values[i].kind == value_kind::text)
      throw error(detail::label(values[i]) + " must be the same on all ranks, got " +
                  detail::texts_of(comm, rank, size, values[i], lowest, highest));
    throw error(detail::label(values[i]) + " must be the same on all ranks, got values from " +
                value_text(lowest, values[i].kind) + " to " + value_text(highest, values[i].kind));
  }
  const std::size_t first_spread = 1 + 2 * values.size();
  for (std::size_t i = 0; i < spreads.size(); ++i) {
    spreads[i].low = packed[first_spread + i];
    spreads[i].high = ~packed[first_spread + spreads.size() + i];
  }
}
#endif

}  // namespace haloshift::mpi

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file arrays.hpp
/// @brief The arrays one exchange moves: one, or several laid out alike (a
/// structure of arrays: positions, velocities, types), every message carrying
/// each array's elements after the previous array's. What the executor asks
/// of them: pack, unpack, combine, and copy to the rank itself.

#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <tuple>
#include <type_traits>

#include "executor.hpp"
#include "program.hpp"

namespace haloshift::detail {

/// Element `e` of the arrays `Ts` is the `e`-th entry of each. One array may
/// send and receive in place where a message is a single run; several are
/// always packed (into bytes with no alignment: a later array's entries are
/// read back with memcpy).
template <class... Ts>
struct arrays {
  static_assert(sizeof...(Ts) >= 1, "an exchange moves at least one array");
  std::tuple<Ts*...> data;

  /// One array: messages may go straight from and into it.
  static constexpr bool single = sizeof...(Ts) == 1;
  /// Bytes an element takes in a message: one entry of every array.
  static constexpr std::size_t element_bytes = (sizeof(Ts) + ...);

  /// The array, when there is one.
  auto* only() const noexcept
    requires single
  {
    return std::get<0>(data);
  }

  /// Packs the elements message `m` carries, array after array, into `out`.
  void gather(const block_layout& layout, const message& m, std::byte* out) const {
    each([&](auto* a) {
      detail::gather(layout, m, a, out);
      out += m.count * sizeof(*a);
    });
  }
  /// Unpacks message `m` from `in` into every array.
  void scatter(const block_layout& layout, const message& m, const std::byte* in) const {
    each([&](auto* a) {
      detail::scatter(layout, m, in, a);
      in += m.count * sizeof(*a);
    });
  }
  /// Combines the arrived values of message `m` at `in` into every array with `op`.
  template <class Op>
  void combine(const block_layout& layout, const message& m, const std::byte* in, Op& op) const {
    each([&](auto* a) {
      using T = std::remove_pointer_t<decltype(a)>;
      for_each_run(layout, m, [&](std::size_t first, std::size_t count) {
        T* acc = a + first;
        for (std::size_t e = 0; e < count; ++e, in += sizeof(T)) {
          std::array<std::byte, sizeof(T)> raw;
          std::memcpy(raw.data(), in, sizeof(T));
          acc[e] = op(acc[e], std::bit_cast<T>(raw));
        }
      });
    });
  }
  /// A transfer to the rank itself of one element, `from` to `to`, in every array.
  void copy_one(std::size_t from, std::size_t to) const {
    each([&](auto* a) { a[to] = a[from]; });
  }
  /// Asks the cache for element `from` (read) and `to` (written) of every array.
  void prefetch(std::size_t from, std::size_t to) const {
    each([&](auto* a) {
      __builtin_prefetch(a + from, 0);
      __builtin_prefetch(a + to, 1);
    });
  }
  /// The same, combined into `to` with `op`.
  template <class Op>
  void combine_one(std::size_t from, std::size_t to, Op& op) const {
    each([&](auto* a) { a[to] = op(a[to], a[from]); });
  }
  /// A transfer to the rank itself: `count` elements from `from` to `to` in every array.
  void copy(std::size_t from, std::size_t to, std::size_t count) const {
    if (count) each([&](auto* a) { std::memcpy(a + to, a + from, count * sizeof(*a)); });
  }
  /// The same, combined into `to` with `op`.
  template <class Op>
  void combine(std::size_t from, std::size_t to, std::size_t count, Op& op) const {
    each([&](auto* a) {
      for (std::size_t e = 0; e < count; ++e) a[to + e] = op(a[to + e], a[from + e]);
    });
  }

 private:
  template <class F>
  void each(F&& f) const {
    std::apply([&](auto*... a) { (f(a), ...); }, data);
  }
};

}  // namespace haloshift::detail

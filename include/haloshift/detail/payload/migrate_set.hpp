// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file migrate_set.hpp
/// @brief The arrays one migrate in place moves, the positions' columns first
/// and then the companions, as migrate in host memory and in a device space
/// both take them: their bytes (addresses read again after a resize), and the
/// checks of the options against them.

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>

#include "../../error.hpp"
#include "migrate_columns.hpp"

namespace haloshift::detail {

/// Throws unless the options and the columns (the positions' first) are consistent.
template <std::size_t K>
void check_columns(const migrate_options& how, const std::array<bool, K>& follows,
                   const std::function<void(std::size_t, std::size_t)>& check_one) {
  if (how.resize && how.capacity)
    throw error("migrate: give a resize callback or a capacity (" + std::to_string(how.capacity) + "), not both");
  if (!how.resize && how.capacity < how.count)
    throw error("migrate: the capacity " + std::to_string(how.capacity) + " is below the count " +
                std::to_string(how.count) + " (give .capacity, the particles the arrays hold, or .resize)");
  for (std::size_t k = 0; k < K; ++k) {
    if (how.resize && !follows[k])
      throw error("migrate: column " + std::to_string(k) +
                  " holds a copy of its pointer, which a resize that moves the memory would leave behind: give "
                  "the pointer variable or the vector, or a capacity");
    check_one(k, how.resize ? how.count : how.capacity);
  }
}

/// The columns of one migrate: the positions' (`x`: a column, a projection of one, or one per
/// coordinate) and then `more`.
template <class Positions, class... Ts>
class migrate_set {
 public:
  using position_columns = std::remove_cvref_t<decltype(columns_of(std::declval<const Positions&>()))>;
  static constexpr std::size_t P = std::tuple_size_v<position_columns>, K = P + sizeof...(Ts);

  migrate_set(const Positions& x, const column<Ts>&... more) : positions_(columns_of(x)), more_(more...) {}

  /// Calls `f(k, column)` for every column, the positions' first.
  template <class F>
  void each(F&& f) const {
    std::size_t k = 0;
    for (const auto& c : positions_) f(k++, c);
    std::apply([&](const auto&... m) { (f(k++, m), ...); }, more_);
  }
  const position_columns& positions() const noexcept { return positions_; }
  /// Every column as bytes, its address read now (after a resize: again).
  std::array<byte_column, K> now() const {
    std::array<byte_column, K> out{};
    each([&](std::size_t k, const auto& c) { out[k] = c.bytes(); });
    return out;
  }
  /// The bytes of each column's entry.
  std::array<std::size_t, K> sizes() const {
    std::array<std::size_t, K> out{};
    each([&](std::size_t k, const auto& c) { out[k] = c.entry_bytes(); });
    return out;
  }
  /// Throws unless `how` and the columns are consistent (check_columns).
  void check(const migrate_options& how) const {
    std::array<bool, K> follows{};
    each([&](std::size_t k, const auto& c) { follows[k] = c.follows(); });
    check_columns(how, follows, [&](std::size_t which, std::size_t entries) {
      each([&](std::size_t k, const auto& c) {
        if (k == which) c.check(which, entries);
      });
    });
  }

 private:
  position_columns positions_;
  std::tuple<const column<Ts>&...> more_;
};

}  // namespace haloshift::detail

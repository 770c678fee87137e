// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file migrate_columns.hpp
/// @brief migrate in place: the user's arrays as columns of bytes, and the
/// move of particles between ranks straight from them and into them
/// (departures packed from the arrays, holes closed in place, arrivals
/// unpacked into the arrays), with no copy out and back.

#include <mpi.h>

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../../error.hpp"
#include "../../grid/cartesian_grid.hpp"
#include "../../payload/position_views.hpp"
#include "../compiled.hpp"
#include "../mpi/agreement.hpp"
#include "sparse_exchange.hpp"

namespace haloshift::detail {

/// How migrate works on the caller's arrays (hs::migrate(grid, dom, {...}, columns...)).
struct migrate_options {
  /// Particles held now: entries [0, count) of every column.
  std::size_t count = 0;
  /// Called once with the new count after the particles that stay are compacted and before the
  /// arrivals are written, so the code can grow (or shrink) its arrays; the columns are read again
  /// after it (their pointer variables or vectors), so it may move the memory.
  std::function<void(std::size_t)> resize{};
  /// Without resize: the particles every column has room for. Arrivals that do not fit raise the
  /// same haloshift::error on every rank before any particle moves (positions are wrapped already).
  std::size_t capacity = 0;
  /// Survivors keep their relative order (the default); false: each hole is filled by the last
  /// particle that stays, as LAMMPS's exchange does (fewer copies, where order does not matter).
  bool keep_order = true;
};

/// One of the user's arrays as migrate moves it: particle `i`'s entry is `bytes` bytes at `data + i * stride`.
struct byte_column {
  std::byte* data = nullptr;
  std::size_t stride = 0, bytes = 0;
  std::byte* at(std::size_t i) const noexcept { return data + i * stride; }
};

/// Copies one entry: sizes among `Sizes` with a constant length, which the compiler inlines.
template <std::size_t... Sizes>
void copy_entry_of(std::byte* to, const std::byte* from, std::size_t bytes) noexcept {
  if (!((bytes == Sizes && (std::memcpy(to, from, Sizes), true)) || ...)) std::memcpy(to, from, bytes);
}
/// Copies one entry; the common sizes (an id, a position in float or double, padded or not) inlined.
inline void copy_entry(std::byte* to, const std::byte* from, std::size_t bytes) noexcept {
  copy_entry_of<4, 8, 12, 16, 24, 32>(to, from, bytes);
}

/// A column of the user's memory (made by hs::column): particle `i`'s entry is the `width` values
/// of `T` from `first + i * stride`. Where `first` lies is read at each use from the user's pointer
/// variable or vector, so a resize callback may move it; a pointer given by value cannot follow.
template <class T>
struct column {
  using value_type = T;
  T* copied = nullptr;               ///< a pointer given by value
  T* const* pointer = nullptr;       ///< or the user's pointer variable
  std::vector<T>* vector = nullptr;  ///< or the user's vector
  std::size_t stride = 1, width = 1;

  T* data() const noexcept { return vector ? vector->data() : pointer ? *pointer : copied; }
  bool follows() const noexcept { return vector != nullptr || pointer != nullptr; }
  std::size_t entry_bytes() const noexcept { return width * sizeof(T); }
  byte_column bytes() const noexcept {
    return {reinterpret_cast<std::byte*>(data()), stride * sizeof(T), entry_bytes()};
  }
  /// Throws unless the shape is sound and a vector holds `entries` particles.
  void check(std::size_t which, std::size_t entries) const {
    const std::string name = "migrate: column " + std::to_string(which);
    if (width == 0 || width > stride)
      throw error(name + " has width " + std::to_string(width) + " and stride " + std::to_string(stride) +
                  ": the width must be 1 to the stride");
    const std::size_t need = entries ? (entries - 1) * stride + width : 0;
    if (vector && vector->size() < need)
      throw error(name + " is a vector of " + std::to_string(vector->size()) + " values, " + std::to_string(entries) +
                  " particles need " + std::to_string(need));
  }
};

/// Positions as a part of each entry of a column (`&atom::x`, or a function returning a reference
/// to a coordinate array): the whole entry moves.
template <class T, class Proj>
struct projected {
  column<T> c;
  Proj proj;
};

/// Positions one array per coordinate (hs::coordinates(x, y, z)): x, then y, then z.
template <std::floating_point F, std::size_t N>
struct coordinate_arrays {
  std::array<column<F>, N> c;
};

/// The value type of what hs::column takes: `T*` or `std::vector<T>`.
template <class A>
struct element_of {};
template <class T>
struct element_of<T*> {
  using type = T;
};
template <class T>
struct element_of<std::vector<T>> {
  using type = T;
};
template <class A>
using element_t = typename element_of<std::remove_cvref_t<A>>::type;

/// What migrate reads positions from, and the columns they occupy: coordinates in a column of
/// floats (`x[i*stride + d]`, the first min(width, 3) values of an entry), a column of coordinate
/// arrays, a projection of a column's entries, or one column per coordinate.
template <std::floating_point F>
std::size_t coordinate_count(const column<F>& x) noexcept {
  return x.width;
}
template <coordinate_array P>
std::size_t coordinate_count(const column<P>&) noexcept {
  return coordinate_traits<P>::size;
}
template <class T, class Proj>
std::size_t coordinate_count(const projected<T, Proj>&) noexcept {
  return coordinate_traits<std::remove_cvref_t<std::invoke_result_t<const Proj&, T&>>>::size;
}
template <std::floating_point F, std::size_t N>
std::size_t coordinate_count(const coordinate_arrays<F, N>&) noexcept {
  return N;
}

template <class T>
std::array<column<T>, 1> columns_of(const column<T>& x) noexcept {
  return {x};
}
template <class T, class Proj>
std::array<column<T>, 1> columns_of(const projected<T, Proj>& x) noexcept {
  return {x.c};
}
template <std::floating_point F, std::size_t N>
const std::array<column<F>, N>& columns_of(const coordinate_arrays<F, N>& x) noexcept {
  return x.c;
}

/// `decide(i, rule)`: particle `i`'s owner by `rule` (migrate's owner_rule), its coordinates wrapped
/// in place; the arrays' addresses read once per pass.
template <std::floating_point F>
auto owner_decider(const column<F>& x) noexcept {
  return [p = x.data(), s = x.stride, n = std::min<std::size_t>(x.width, 3)](std::size_t i, const auto& rule) {
    F* q = p + i * s;
    position at{0, 0, 0};
    for (std::size_t d = 0; d < n; ++d) at[d] = static_cast<double>(q[d]);
    return rule.template place<F>(at, [q](int d, F v) { q[d] = v; });
  };
}
template <coordinate_array P>
auto owner_decider(const column<P>& x) noexcept {
  return [p = x.data(), s = x.stride](std::size_t i, const auto& rule) { return rule(p[i * s]); };
}
template <class T, class Proj>
auto owner_decider(const projected<T, Proj>& x) noexcept {
  return [p = x.c.data(), s = x.c.stride, &proj = x.proj](std::size_t i, const auto& rule) {
    return rule(std::invoke(proj, p[i * s]));
  };
}
template <std::floating_point F, std::size_t N>
auto owner_decider(const coordinate_arrays<F, N>& x) noexcept {
  std::array<F*, N> p{};
  for (std::size_t d = 0; d < N; ++d) p[d] = x.c[d].data();
  return [p](std::size_t i, const auto& rule) {
    position at{0, 0, 0};
    for (std::size_t d = 0; d < N; ++d) at[d] = static_cast<double>(p[d][i]);
    return rule.template place<F>(at, [&](int d, F v) { p[static_cast<std::size_t>(d)][i] = v; });
  };
}

/// Where migrate's particles go, found in one pass (owners()): only those that leave are listed.
struct departures {
  std::size_t count = 0;           ///< particles before
  std::vector<std::size_t> leave;  ///< the particles that leave, ascending
  std::vector<int> owner;          ///< their new owners
  bool far = false;                ///< some rank sends beyond the boxes around it (agreed)
  std::vector<int> near;           ///< neighbour_ranks()
};

/// Where each departure's record goes in the packed departures (its index, in records): grouped
/// by destination rank, each group in the particles' order (a stable counting sort); `to` gets
/// the groups.
inline std::vector<std::size_t> departure_slots(const departures& where, std::size_t record,
                                                std::vector<rank_bytes>& to) {
  std::vector<int> ranks = where.owner;
  std::sort(ranks.begin(), ranks.end());
  to.clear();
  for (std::size_t i = 0; i < ranks.size(); ++i)
    if (to.empty() || to.back().rank != ranks[i]) to.push_back({ranks[i], i * record, 0});
  std::vector<std::size_t> slot(where.leave.size());
  for (std::size_t k = 0; k < where.leave.size(); ++k) {
    const auto g =
        std::lower_bound(to.begin(), to.end(), where.owner[k], [](const rank_bytes& m, int r) { return m.rank < r; });
    slot[k] = (g->first + g->size) / record;
    g->size += record;
  }
  return slot;
}

/// Departures packed for the exchange: one record per particle (each column's entry after the
/// previous one's, no alignment assumed), in departure_slots' order.
inline std::vector<std::byte> pack_departures(const departures& where, std::span<const byte_column> columns,
                                              std::size_t record, std::vector<rank_bytes>& to) {
  const std::vector<std::size_t> slot = departure_slots(where, record, to);
  std::vector<std::byte> out(where.leave.size() * record);
  for (std::size_t k = 0; k < where.leave.size(); ++k) {
    std::byte* at = out.data() + slot[k] * record;
    for (const byte_column& c : columns) {
      copy_entry(at, c.at(where.leave[k]), c.bytes);
      at += c.bytes;
    }
  }
  return out;
}

/// How the holes the departures left close: calls `move(from, to, n)` for each run of `n`
/// survivors that moves down from `from` to `to`, in order (a run may overlap its target, as for
/// memmove). Survivors keep their order (runs between holes move down together) or, with
/// `keep_order` false, each hole below the new count takes the last survivor. Returns the
/// survivors' count.
template <class Move>
std::size_t refill_holes(const departures& where, bool keep_order, Move&& move) {
  const std::vector<std::size_t>& leave = where.leave;
  const std::size_t kept = where.count - leave.size();
  if (keep_order) {
    std::size_t to = leave.empty() ? kept : leave.front();
    for (std::size_t k = 0; k < leave.size(); ++k) {
      const std::size_t first = leave[k] + 1, last = k + 1 < leave.size() ? leave[k + 1] : where.count;
      if (last > first) move(first, to, last - first);
      to += last - first;
    }
    return kept;
  }
  // As many survivors lie at or above `kept` as holes below it: the highest fills the lowest hole.
  std::size_t from = where.count;
  auto leaver = leave.rbegin();
  for (std::size_t hole : leave) {
    if (hole >= kept) break;
    for (--from; leaver != leave.rend() && *leaver >= from; ++leaver)
      if (*leaver == from) --from;
    move(from, hole, std::size_t{1});
  }
  return kept;
}

/// Closes the holes in the columns (refill_holes; one memmove per run where a column's entries
/// are contiguous). Returns the survivors' count.
inline std::size_t close_holes(const departures& where, std::span<const byte_column> columns, bool keep_order) {
  return refill_holes(where, keep_order, [&](std::size_t from, std::size_t to, std::size_t n) {
    for (const byte_column& c : columns) {
      if (c.stride == c.bytes) {
        std::memmove(c.at(to), c.at(from), n * c.bytes);
        continue;
      }
      for (std::size_t k = 0; k < n; ++k) copy_entry(c.at(to + k), c.at(from + k), c.bytes);
    }
  });
}

/// Arrivals, in the order of `from` (source ranks ascending), unpacked into the columns from entry `first` on.
inline void unpack_arrivals(const std::vector<std::byte>& in, const std::vector<rank_bytes>& from,
                            std::span<const byte_column> columns, std::size_t record, std::size_t first) {
  std::size_t at = first;
  for (const rank_bytes& m : from) {
    const std::size_t n = m.size / record;
    std::size_t offset = m.first;
    for (const byte_column& c : columns) {
      for (std::size_t k = 0; k < n; ++k) copy_entry(c.at(at + k), in.data() + offset + k * record, c.bytes);
      offset += c.bytes;
    }
    at += n;
  }
}

/// The particles that stay, and the arrivals waiting to be written after them.
struct arrivals {
  std::size_t kept = 0, count = 0;
  std::vector<std::byte> in;
  std::vector<rank_bytes> from;
};

/// Sends the departures packed in `out` (records of `record` bytes, grouped as `to` says; every
/// particle's owner is known and agreed: a bad particle anywhere raised on every rank before
/// this) and receives the arrivals. With a capacity and no resize, arrivals that do not fit raise
/// on every rank (one more reduction) before any array changes.
inline arrivals exchange_records(const cartesian_grid& grid, const departures& where, const migrate_options& how,
                                 const std::byte* out, const std::vector<rank_bytes>& to, std::size_t record) {
  grid_context& context = *grid.context();
  const int tag = sparse_exchange_tag + static_cast<int>(context.sparse_exchanges++ % 2);
  arrivals got;
  if (where.far)
    sparse_exchange(context.comm.get(), tag, out, to, got.in, got.from);
  else
    neighbour_exchange(context.comm.get(), tag, where.near, out, to, got.in, got.from);
  for (const rank_bytes& m : got.from) got.count += m.size / record;
  const std::size_t total = where.count - where.leave.size() + got.count;
  if (!how.resize)
    mpi::agree(grid.comm(), [&] {
      if (total > how.capacity)
        throw error("migrate: " + std::to_string(total) + " particles after migration exceed the capacity " +
                    std::to_string(how.capacity) + " (reserve more, or give a resize callback); nothing moved");
    });
  got.kept = where.count - where.leave.size();
  return got;
}

/// Sends the departures from host memory, receives the arrivals (exchange_records), and closes the holes.
HALOSHIFT_BUILDER arrivals send_departures(const cartesian_grid& grid, const departures& where,
                                           const migrate_options& how, std::span<const byte_column> columns);
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER arrivals send_departures(const cartesian_grid& grid, const departures& where,
                                           const migrate_options& how, std::span<const byte_column> columns) {
  std::size_t record = 0;
  for (const byte_column& c : columns) record += c.bytes;
  std::vector<rank_bytes> to;
  const std::vector<std::byte> out = pack_departures(where, columns, record, to);
  arrivals got = exchange_records(grid, where, how, out.data(), to, record);
  close_holes(where, columns, how.keep_order);
  return got;
}
#endif

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file field_segments.hpp
/// @brief Several field views, each of its own element type, addressed as one
/// run of bytes: what an exchange with one message per field moves
/// (plan_options::messages, field_messages::per_field).

#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <tuple>
#include <utility>

#include "arrays.hpp"
#include "executor.hpp"
#include "program.hpp"
#include "strided_rows.hpp"

namespace haloshift::detail {

/// View `f` holds the bytes from `f << shift` on (as many as it spans, below `(f + 1) << shift`),
/// from `base[f]`: finding a byte's view is a shift, not a search, on the hot path. The program
/// moving them is in bytes and each of its messages lies within one view (split_per_part), so a
/// message that is one run goes in place (single()) and packing copies bytes; reverse combines
/// each view's values as its own type.
template <class... Ts>
struct field_segments {
  static constexpr std::size_t views = sizeof...(Ts);
  static_assert(views >= 1, "field_segments holds at least one view");
  /// Not one array of its element type: no neighbourhood collective of blocks, no zero copy.
  static constexpr bool plain_single = false;

  std::array<std::byte*, views> base{};
  unsigned shift = 0;
  /// Where view `f`'s bytes start in the run.
  std::size_t at(std::size_t f) const noexcept { return f << shift; }

  std::size_t element_bytes() const noexcept { return 1; }
  bool single() const noexcept { return true; }
  void* place(std::size_t e) const noexcept { return byte(e); }

  void gather(const block_layout& layout, const message& m, std::byte* out) const {
    if (m.selected && !m.contiguous && m.list.empty()) {  // grid faces: strided groups, rows of fixed size
      for (const strided_run& g : m.strided) {
        copy_strided_rows(out, byte(g.first), g.count, g.repeat, static_cast<std::ptrdiff_t>(g.count),
                          static_cast<std::ptrdiff_t>(g.stride));
        out += g.count * g.repeat;
      }
      return;
    }
    for_each_run(layout, m, [&](std::size_t first, std::size_t count) {
      std::memcpy(out, byte(first), count);
      out += count;
    });
  }
  void scatter(const block_layout& layout, const message& m, const std::byte* in) const {
    if (m.selected && !m.contiguous && m.list.empty()) {
      for (const strided_run& g : m.strided) {
        copy_strided_rows(byte(g.first), in, g.count, g.repeat, static_cast<std::ptrdiff_t>(g.stride),
                          static_cast<std::ptrdiff_t>(g.count));
        in += g.count * g.repeat;
      }
      return;
    }
    for_each_run(layout, m, [&](std::size_t first, std::size_t count) {
      std::memcpy(byte(first), in, count);
      in += count;
    });
  }
  /// Combines the values of message `m` at `in` into their views with `op`, each as its own type.
  template <class Op>
  void combine(const block_layout& layout, const message& m, const std::byte* in, Op& op) const {
    for_each_run(layout, m, [&](std::size_t first, std::size_t count) {
      combine_values(first, in, count, op);
      in += count;
    });
  }

  /// Copies to the rank itself come as runs, short ones too (whole_runs): a cell of an x face is
  /// one run of a few bytes, moved with a fixed size where it has one of the common sizes.
  bool whole_runs() const noexcept { return true; }
  void copy_one(std::size_t from, std::size_t to) const { *byte(to) = *byte(from); }
  void copy(std::size_t from, std::size_t to, std::size_t count) const {
    std::byte* t = byte(to);
    const std::byte* f = byte(from);
    switch (count) {
      case 0: return;
      case 4: std::memcpy(t, f, 4); return;
      case 8: std::memcpy(t, f, 8); return;
      case 16: std::memcpy(t, f, 16); return;
      case 24: std::memcpy(t, f, 24); return;
      case 32: std::memcpy(t, f, 32); return;
      default: std::memcpy(t, f, count);
    }
  }
  /// A strided group copied to the rank itself whole: its rows of fixed size, far rows prefetched
  /// (copy_strided_rows), one call per group and not per cell.
  bool copy_group(const strided_run& from, const strided_run& to) const {
    copy_strided_rows(byte(to.first), byte(from.first), from.count, from.repeat,
                      static_cast<std::ptrdiff_t>(to.stride), static_cast<std::ptrdiff_t>(from.stride));
    return true;
  }
  /// Byte by byte, as copy_to_self walks a short run (see combine_values).
  template <class Op>
  void combine_one(std::size_t from, std::size_t to, Op& op) const {
    combine_values(to, byte(from), 1, op);
  }
  template <class Op>
  void combine(std::size_t from, std::size_t to, std::size_t count, Op& op) const {
    if (count) combine_values(to, byte(from), count, op);
  }
  void prefetch(std::size_t from, std::size_t to) const {
    __builtin_prefetch(byte(from), 0);
    __builtin_prefetch(byte(to), 1);
  }

 private:
  std::size_t segment(std::size_t e) const noexcept { return e >> shift; }
  std::byte* byte(std::size_t e) const noexcept { return base[e >> shift] + (e & ((std::size_t{1} << shift) - 1)); }
  /// `fn(std::type_identity<T>, f)` with `T` the element type of view `f`.
  template <class F>
  static void with_view(std::size_t f, F&& fn) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((f == I ? fn(std::type_identity<std::tuple_element_t<I, std::tuple<Ts...>>>{}, I) : void()), ...);
    }(std::index_sequence_for<Ts...>{});
  }
  /// Combines with `op` each value of one view that starts within the `bytes` at `to` with the
  /// value as many bytes into `in`. A value starting there is combined whole, even where the run
  /// ends inside it: runs shorter than a value (a send list walks its bytes one by one) continue
  /// with the value's next bytes, both in the view and in `in`; a run that starts inside a value
  /// leaves it to the run holding its first byte.
  template <class Op>
  void combine_values(std::size_t to, const std::byte* in, std::size_t bytes, Op& op) const {
    with_view(segment(to), [&](auto type, std::size_t f) {
      using T = typename decltype(type)::type;
      const std::size_t inside = (to - at(f)) % sizeof(T);
      std::byte* acc = base[f] + (to - at(f));
      for (std::size_t b = inside ? sizeof(T) - inside : 0; b < bytes; b += sizeof(T)) {
        T a, v;
        std::memcpy(&a, acc + b, sizeof(T));
        std::memcpy(&v, in + b, sizeof(T));
        a = op(a, v);
        std::memcpy(acc + b, &a, sizeof(T));
      }
    });
  }
};

/// Several field views as one exchange moves them: every message carrying each view's cells in
/// turn (`together`, a program in the views' elements), or one message per view (`apart`, a
/// program split per view, in bytes), as the plan says (plan_options::messages). One type for
/// both, so that a call returns one handle type whichever the plan runs.
template <class... Ts>
struct field_views {
  static constexpr bool plain_single = false;
  arrays<Ts...> together;
  field_segments<Ts...> apart;
  bool per_field = false;

  std::size_t element_bytes() const noexcept { return per_field ? apart.element_bytes() : together.element_bytes(); }
  bool single() const noexcept { return per_field ? apart.single() : together.single(); }
  void* place(std::size_t e) const noexcept { return per_field ? apart.place(e) : together.place(e); }
  void gather(const block_layout& layout, const message& m, std::byte* out) const {
    per_field ? apart.gather(layout, m, out) : together.gather(layout, m, out);
  }
  void scatter(const block_layout& layout, const message& m, const std::byte* in) const {
    per_field ? apart.scatter(layout, m, in) : together.scatter(layout, m, in);
  }
  template <class Op>
  void combine(const block_layout& layout, const message& m, const std::byte* in, Op& op) const {
    per_field ? apart.combine(layout, m, in, op) : together.combine(layout, m, in, op);
  }
  void copy_one(std::size_t from, std::size_t to) const {
    per_field ? apart.copy_one(from, to) : together.copy_one(from, to);
  }
  void copy(std::size_t from, std::size_t to, std::size_t count) const {
    per_field ? apart.copy(from, to, count) : together.copy(from, to, count);
  }
  template <class Op>
  void combine_one(std::size_t from, std::size_t to, Op& op) const {
    per_field ? apart.combine_one(from, to, op) : together.combine_one(from, to, op);
  }
  template <class Op>
  void combine(std::size_t from, std::size_t to, std::size_t count, Op& op) const {
    per_field ? apart.combine(from, to, count, op) : together.combine(from, to, count, op);
  }
  void prefetch(std::size_t from, std::size_t to) const {
    per_field ? apart.prefetch(from, to) : together.prefetch(from, to);
  }
  bool whole_runs() const noexcept { return per_field; }
  bool copy_group(const strided_run& from, const strided_run& to) const {
    return per_field && apart.copy_group(from, to);
  }
};

}  // namespace haloshift::detail

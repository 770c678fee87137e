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
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "executor.hpp"
#include "program.hpp"

namespace haloshift::detail {

/// A column of a code's per-element data that is not an array of its own
/// element type: `width` values of `S` per element, elements `stride` bytes
/// apart from `base` (a padded `x[i*PAD + d]`, a member of a struct, one of
/// several coordinates). Read and written with memcpy, so the bytes may belong
/// to any object of the code's; a width of 0 is a column left out.
template <class S>
struct strided_column {
  std::byte* base = nullptr;
  std::size_t stride = 0;  ///< bytes from one element to the next
  std::size_t width = 0;   ///< values of S per element
  using scalar = S;
  std::size_t bytes() const noexcept { return width * sizeof(S); }
  std::byte* at(std::size_t e) const noexcept { return base + e * stride; }
};

/// What `arrays` holds for a column: a pointer to an array of `C`, or a strided column as is.
template <class C>
struct column_of {
  using type = C*;
};
template <class S>
struct column_of<strided_column<S>> {
  using type = strided_column<S>;
};
template <class C>
inline constexpr bool is_strided_column = false;
template <class S>
inline constexpr bool is_strided_column<strided_column<S>> = true;

/// Calls `f` with the width of a strided column as a compile-time constant
/// (0 for a width above 4): the per-element copies are then fixed-size moves,
/// as a hand-written `buf[m++] = x[j*PAD + d]` loop, not a memcpy call each.
template <class F>
[[gnu::always_inline]] inline void with_width(std::size_t width, F&& f) {
  switch (width) {
    case 1: return f(std::integral_constant<std::size_t, 1>{});
    case 2: return f(std::integral_constant<std::size_t, 2>{});
    case 3: return f(std::integral_constant<std::size_t, 3>{});
    case 4: return f(std::integral_constant<std::size_t, 4>{});
    default: return f(std::integral_constant<std::size_t, 0>{});
  }
}

/// The elements message `m` carries, one at a time: `f(element address, packed address)`,
/// `packed` advancing by the element's bytes (`n`, a constant in with_width's body).
template <class S, class F>
void each_packed(const block_layout& layout, const message& m, const strided_column<S>& c, std::size_t n,
                 std::byte* packed, F&& f) {
  if (!m.list.empty()) {  // a send list (particles): one loop, its pointers in registers
    std::byte* const base = c.base;
    const std::size_t stride = c.stride, count = m.list.size();
    const std::uint32_t* const list = m.list.data();
    for (std::size_t k = 0; k < count; ++k) f(base + list[k] * stride, packed + k * n);
    return;
  }
  const std::size_t stride = c.stride;
  for_each_run(layout, m, [&](std::size_t first, std::size_t count) {
    std::byte* e = c.at(first);
    std::byte* p = packed;  // a local: the copies could alias what the lambda refers to
    for (std::size_t k = 0; k < count; ++k, e += stride, p += n) f(e, p);
    packed = p;
  });
}

/// Packs (`Pack`) the elements of a strided column that message `m` carries into `packed`, or unpacks.
template <bool Pack, class S>
void copy_column(const block_layout& layout, const message& m, const strided_column<S>& c, std::byte* packed) {
  if (c.width == 0) return;
  with_width(c.width, [&](auto w) {
    const std::size_t n = w() ? w() * sizeof(S) : c.bytes();
    each_packed(layout, m, c, n, packed, [&](std::byte* e, std::byte* p) {
      if constexpr (Pack)
        std::memcpy(p, e, n);
      else
        std::memcpy(e, p, n);
    });
  });
}
template <class T>
void gather(const block_layout& layout, const message& m, const strided_column<T>& c, std::byte* out) {
  copy_column<true>(layout, m, c, out);
}
template <class T>
void scatter(const block_layout& layout, const message& m, const std::byte* in, const strided_column<T>& c) {
  copy_column<false>(layout, m, c, const_cast<std::byte*>(in));  // read only: Pack is false
}

/// Value `j` of element `e` of a column combined with `v` by `op`, through memcpy.
template <class S, class Op>
void combine_value(std::byte* at, const std::byte* v, Op& op) {
  S a, b;
  std::memcpy(&a, at, sizeof(S));
  std::memcpy(&b, v, sizeof(S));
  a = op(a, b);
  std::memcpy(at, &a, sizeof(S));
}

/// Element `e` of the arrays `Ts` is the `e`-th entry of each (an array of
/// `T`, or a strided column: detail::strided_column). One array may send and
/// receive in place where a message is a single run; several, or a strided
/// column, are always packed (into bytes with no alignment: a later array's
/// entries are read back with memcpy).
template <class... Ts>
struct arrays {
  static_assert(sizeof...(Ts) >= 1, "an exchange moves at least one array");
  std::tuple<typename column_of<Ts>::type...> data;

  /// One array of its element type (what a block plan's neighbourhood collective needs: only()).
  static constexpr bool plain_single = sizeof...(Ts) == 1 && !(is_strided_column<Ts> || ...);
  /// One array whose elements lie one after another (of its element type, or the one strided column
  /// of nonzero width that is dense, as `x[i*3 + d]` moved 3 at a time): messages may go straight
  /// from and into it (see place).
  bool single() const noexcept {
    std::size_t moving = 0;
    bool dense = true;
    each([&](const auto& a) {
      if (bytes_of(a) == 0) return;
      ++moving;
      if constexpr (!std::is_pointer_v<std::remove_cvref_t<decltype(a)>>) dense = a.stride == a.bytes();
    });
    return moving == 1 && dense;
  }
  /// Where element `e` of the one array that moves starts (single()).
  void* place(std::size_t e) const noexcept {
    void* at = nullptr;
    each([&](const auto& a) {
      if constexpr (std::is_pointer_v<std::remove_cvref_t<decltype(a)>>)
        at = a + e;
      else if (a.width)
        at = a.at(e);
    });
    return at;
  }
  /// Bytes an element takes in a message: one entry of every array.
  std::size_t element_bytes() const noexcept {
    std::size_t n = 0;
    each([&](const auto& a) { n += bytes_of(a); });
    return n;
  }

  /// The array, when there is one.
  auto* only() const noexcept
    requires plain_single
  {
    return std::get<0>(data);
  }

  /// Packs the elements message `m` carries, array after array, into `out`.
  void gather(const block_layout& layout, const message& m, std::byte* out) const {
    each([&](const auto& a) {
      detail::gather(layout, m, a, out);
      out += m.count * bytes_of(a);
    });
  }
  /// Unpacks message `m` from `in` into every array.
  void scatter(const block_layout& layout, const message& m, const std::byte* in) const {
    each([&](const auto& a) {
      detail::scatter(layout, m, in, a);
      in += m.count * bytes_of(a);
    });
  }
  /// Combines the arrived values of message `m` at `in` into every array with `op` (a strided
  /// column value by value: `op` takes its scalars).
  template <class Op>
  void combine(const block_layout& layout, const message& m, const std::byte* in, Op& op) const {
    each([&](const auto& a) {
      if constexpr (std::is_pointer_v<std::remove_cvref_t<decltype(a)>>) {
        using T = std::remove_pointer_t<std::remove_cvref_t<decltype(a)>>;
        T* const p = a;
        const auto combine_at = [p, &op](std::size_t e, const std::byte* v) {
          std::array<std::byte, sizeof(T)> raw;
          std::memcpy(raw.data(), v, sizeof(T));
          p[e] = op(p[e], std::bit_cast<T>(raw));
        };
        if (!m.list.empty()) {  // a send list (particles): one loop, its pointers in registers
          const std::uint32_t* const list = m.list.data();
          for (std::size_t k = 0, count = m.list.size(); k < count; ++k) combine_at(list[k], in + k * sizeof(T));
        } else {
          const std::byte* v = in;
          for_each_run(layout, m, [&](std::size_t first, std::size_t count) {
            for (std::size_t e = 0; e < count; ++e, v += sizeof(T)) combine_at(first + e, v);
          });
        }
        in += m.count * sizeof(T);
      } else {
        using S = typename std::remove_cvref_t<decltype(a)>::scalar;
        with_width(a.width, [&](auto w) {
          const std::size_t width = w() ? w() : a.width;  // a constant in the loop below, where it can be
          each_packed(layout, m, a, width * sizeof(S), const_cast<std::byte*>(in), [&](std::byte* e, std::byte* v) {
            for (std::size_t j = 0; j < width; ++j) combine_value<S>(e + j * sizeof(S), v + j * sizeof(S), op);
          });
        });
        in += m.count * a.bytes();
      }
    });
  }
  /// A transfer to the rank itself of one element, `from` to `to`, in every array. Called per
  /// element of a send list: always inlined, a call each cost as much as the copy.
  [[gnu::always_inline]] void copy_one(std::size_t from, std::size_t to) const {
    each([&](const auto& a) __attribute__((always_inline)) {
      if constexpr (std::is_pointer_v<std::remove_cvref_t<decltype(a)>>)
        a[to] = a[from];
      else if (a.width)
        with_width(a.width, [&](auto w) { std::memcpy(a.at(to), a.at(from), w() ? w() * sizeof(typename std::remove_cvref_t<decltype(a)>::scalar) : a.bytes()); });
    });
  }
  /// Asks the cache for element `from` (read) and `to` (written) of every array.
  void prefetch(std::size_t from, std::size_t to) const {
    each([&](const auto& a) {
      if constexpr (std::is_pointer_v<std::remove_cvref_t<decltype(a)>>) {
        __builtin_prefetch(a + from, 0);
        __builtin_prefetch(a + to, 1);
      } else {
        __builtin_prefetch(a.at(from), 0);
        __builtin_prefetch(a.at(to), 1);
      }
    });
  }
  /// The same, combined into `to` with `op`.
  template <class Op>
  void combine_one(std::size_t from, std::size_t to, Op& op) const {
    each([&](const auto& a) {
      if constexpr (std::is_pointer_v<std::remove_cvref_t<decltype(a)>>)
        a[to] = op(a[to], a[from]);
      else
        combine_element(a, a.at(to), a.at(from), op);
    });
  }
  /// A run of a transfer to the rank itself against a send list (each_listed), array by array:
  /// each array's loop holds its pointer and stride in locals, as a hand-written one does (the
  /// byte copies could alias anything a callback reached through a reference).
  void copy_listed(const std::uint32_t* list, bool listed_from, std::size_t first, std::size_t count) const {
    each([&](const auto& a) {
      if constexpr (std::is_pointer_v<std::remove_cvref_t<decltype(a)>>) {
        auto* const p = a;
        each_listed(list, listed_from, first, count, [p](std::size_t f, std::size_t t) { p[t] = p[f]; });
      } else {
        using S = typename std::remove_cvref_t<decltype(a)>::scalar;
        with_width(a.width, [&](auto w) {
          std::byte* const base = a.base;
          const std::size_t stride = a.stride, bytes = a.bytes();
          each_listed(list, listed_from, first, count, [base, stride, bytes](std::size_t f, std::size_t t) {
            constexpr std::size_t fixed = decltype(w)::value * sizeof(S);
            std::memcpy(base + t * stride, base + f * stride, fixed ? fixed : bytes);
          });
        });
      }
    });
  }
  /// The same, combined into the receiving elements with `op`.
  template <class Op>
  void combine_listed(const std::uint32_t* list, bool listed_from, std::size_t first, std::size_t count, Op& op) const {
    each([&](const auto& a) {
      if constexpr (std::is_pointer_v<std::remove_cvref_t<decltype(a)>>) {
        auto* const p = a;
        each_listed(list, listed_from, first, count, [p, &op](std::size_t f, std::size_t t) { p[t] = op(p[t], p[f]); });
      } else {
        using S = typename std::remove_cvref_t<decltype(a)>::scalar;
        with_width(a.width, [&](auto w) {
          std::byte* const base = a.base;
          const std::size_t stride = a.stride, width = a.width;
          each_listed(list, listed_from, first, count, [base, stride, width, &op](std::size_t f, std::size_t t) {
            constexpr std::size_t fixed = decltype(w)::value;
            for (std::size_t j = 0; j < (fixed ? fixed : width); ++j)
              combine_value<S>(base + t * stride + j * sizeof(S), base + f * stride + j * sizeof(S), op);
          });
        });
      }
    });
  }
  /// A transfer to the rank itself: `count` elements from `from` to `to` in every array.
  void copy(std::size_t from, std::size_t to, std::size_t count) const {
    if (count) each([&](const auto& a) {
        if constexpr (std::is_pointer_v<std::remove_cvref_t<decltype(a)>>)
          std::memcpy(a + to, a + from, count * sizeof(*a));
        else if (a.stride == a.bytes())
          std::memcpy(a.at(to), a.at(from), count * a.bytes());
        else
          with_width(a.width, [&](auto w) {  // fixed-size moves, pointers in locals (see copy_listed)
            const std::size_t stride = a.stride,
                              bytes = w() ? w() * sizeof(typename std::remove_cvref_t<decltype(a)>::scalar) : a.bytes(),
                              n = count;
            std::byte* at = a.at(to);
            const std::byte* in = a.at(from);
            for (std::size_t e = 0; e < n; ++e, at += stride, in += stride) std::memcpy(at, in, bytes);
          });
      });
  }
  /// The same, combined into `to` with `op`.
  template <class Op>
  void combine(std::size_t from, std::size_t to, std::size_t count, Op& op) const {
    each([&](const auto& a) {
      if constexpr (std::is_pointer_v<std::remove_cvref_t<decltype(a)>>) {
        auto* const p = a;
        for (std::size_t e = 0; e < count; ++e) p[to + e] = op(p[to + e], p[from + e]);
      } else {  // value by value, the column's pointer, stride and width in locals (see copy_listed)
        using S = typename std::remove_cvref_t<decltype(a)>::scalar;
        with_width(a.width, [&](auto w) {
          std::byte* const base = a.base;
          const std::size_t stride = a.stride, values = w() ? w() : a.width, n = count;
          std::byte* at = base + to * stride;
          const std::byte* in = base + from * stride;
          for (std::size_t e = 0; e < n; ++e, at += stride, in += stride)
            for (std::size_t j = 0; j < values; ++j) combine_value<S>(at + j * sizeof(S), in + j * sizeof(S), op);
        });
      }
    });
  }

 private:
  /// `f(column)` for every column, leaving out strided columns of width 0 (a coordinate array not given).
  template <class F>
  [[gnu::always_inline]] void each(F&& f) const {
    std::apply([&](const auto&... a) { ((moves(a) ? f(a) : void()), ...); }, data);
  }
  template <class T>
  static bool moves(T* const&) noexcept {
    return true;
  }
  template <class S>
  static bool moves(const strided_column<S>& c) noexcept {
    return c.width != 0;
  }
  template <class T>
  static std::size_t bytes_of(T* const&) noexcept {
    return sizeof(T);
  }
  template <class S>
  static std::size_t bytes_of(const strided_column<S>& c) noexcept {
    return c.bytes();
  }
  /// Combines the values of a strided column's element at `acc` with those at `in`, one by one.
  template <class S, class Op>
  static void combine_element(const strided_column<S>& c, std::byte* acc, const std::byte* in, Op& op) {
    for (std::size_t j = 0; j < c.width; ++j) combine_value<S>(acc + j * sizeof(S), in + j * sizeof(S), op);
  }
};

/// Whether `data` copies a short run to the rank itself as one run (field_segments: data in bytes).
template <class Data>
bool whole_runs_of(const Data& data) noexcept {
  if constexpr (requires { data.whole_runs(); })
    return data.whole_runs();
  else
    return false;
}
/// Copies (or, `combines`, combines with `op`) a run of a transfer to the rank itself against a
/// send list through `data`'s own loop where it has one, else element by element.
template <bool combines, class Data, class Op>
void listed_of(const Data& data, const std::uint32_t* list, bool listed_from, std::size_t first, std::size_t count,
               Op& op) {
  if constexpr (combines && requires { data.combine_listed(list, listed_from, first, count, op); })
    data.combine_listed(list, listed_from, first, count, op);
  else if constexpr (combines)
    each_listed(list, listed_from, first, count, [&](std::size_t f, std::size_t t) { data.combine_one(f, t, op); });
  else if constexpr (requires { data.copy_listed(list, listed_from, first, count); })
    data.copy_listed(list, listed_from, first, count);
  else
    each_listed(list, listed_from, first, count, [&](std::size_t f, std::size_t t) { data.copy_one(f, t); });
}
/// Copies strided group `from` onto `to` of a transfer to the rank itself in one call, where `data`
/// can (field_segments); false: copy_to_self walks the group itself.
template <class Data>
bool copy_group_of(const Data& data, const strided_run& from, const strided_run& to) {
  if constexpr (requires { data.copy_group(from, to); })
    return data.copy_group(from, to);
  else
    return false;
}

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file field_storage.hpp
/// @brief Grid fields and field bundles: a rank's padded array (interior and
/// ghost layers) of one or several element types, in one aligned allocation.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "../exchange/halo.hpp"
#include "../grid/cartesian_grid.hpp"
#include "../detail/compiled.hpp"
#include "../detail/mpi/agreement.hpp"
#include "field_shape.hpp"

namespace haloshift {

template <transferable... Ts>
class field_bundle;

namespace detail {
/// Field storage: 64-byte aligned (cache lines, vector loads), shared by the
/// fields of a bundle, which live one after another in one allocation.
using arena = std::shared_ptr<std::byte[]>;
inline constexpr std::size_t arena_alignment = 64;
inline arena make_arena(std::size_t bytes) {
  auto* p = static_cast<std::byte*>(::operator new(std::max<std::size_t>(bytes, 1), std::align_val_t{arena_alignment}));
  return arena(p, [](std::byte* q) { ::operator delete(q, std::align_val_t{arena_alignment}); });
}
inline std::size_t round_up(std::size_t n) { return (n + arena_alignment - 1) / arena_alignment * arena_alignment; }

/// What agreed_field_shape agrees, in one argument: with them one by one its call
/// passed two on the stack, which gives the (user's) function it is inlined
/// into a frame pointer under GCC (docs/performance.md, "Including the headers").
struct shape_agreement {
  const offset& global;
  const cell_cuts& cuts;
  const offset& ghost;
  const offset& ghost_high;
  std::initializer_list<std::size_t> element_sizes;
  const mpi::agreed_value& strategy;
  bool by_cuts = false;               ///< the local shape from `cuts`, else from `global`
  const field_shape* from = nullptr;  ///< or from this shape (checked against the grid's remainder)
};

/// The local shape `a` asks for (from its global size, its cuts, or a whole shape), agreed on
/// every rank: the builder behind agreed_shape.
HALOSHIFT_BUILDER field_shape agreed_field_shape(const cartesian_grid& grid, const shape_agreement& a);

/// What a field (no plan) agrees as its strategy: nothing, the same on every rank.
inline constexpr mpi::agreed_value no_strategy{"strategy", 0};

/// The even split of `global`, `ghost` layers below the interior and `ghost_high` above, agreed
/// (agreed_field_shape). The agreed_shape are always inlined: called, they would take their 7 or 8
/// arguments partly on the stack (docs/performance.md, "Including the headers").
[[gnu::always_inline]] inline field_shape agreed_shape(const cartesian_grid& grid, const offset& global,
                                                       const offset& ghost, const offset& ghost_high,
                                                       std::initializer_list<std::size_t> element_sizes,
                                                       const mpi::agreed_value& strategy = no_strategy) {
  return agreed_field_shape(grid, {global, cell_cuts{}, ghost, ghost_high, element_sizes, strategy});
}
/// The split of `cuts` (global size: the last cuts), agreed.
[[gnu::always_inline]] inline field_shape agreed_shape(const cartesian_grid& grid, const cell_cuts& cuts,
                                                       const offset& ghost, const offset& ghost_high,
                                                       std::initializer_list<std::size_t> element_sizes,
                                                       const mpi::agreed_value& strategy = no_strategy) {
  offset global{1, 1, 1};
  for (int d = 0; d < grid.ndims(); ++d) global[d] = cuts[d].empty() ? 0 : cuts[d].back();
  return agreed_field_shape(grid, {global, cuts, ghost, ghost_high, element_sizes, strategy, true});
}

#if HALOSHIFT_DEFINE_BUILDERS
/// Raises when `shape` splits a dimension evenly with other remainder boxes than `grid`: it was
/// built from another grid shape, and rebuilt from this one its boxes would move.
inline void check_remainder(const grid_shape& grid, const field_shape& shape) {
  for (int d = 0; d < grid.ndims(); ++d)
    if (shape.cuts[d].empty() && shape.remainder != grid.remainder())
      throw error(std::string("field_shape: remainder ") + name_of(shape.remainder) + " but the grid's is " +
                  name_of(grid.remainder()) + " (grid_options::remainder): build the shape from the grid's shape");
}

/// Validates a field's shape on every rank (built locally, checking the arguments) and that its
/// global size, cuts and ghost widths (both sides) agree: a mistake on one rank raises the same
/// error on all. Cuts that differ between ranks are found by their count and a hash of their
/// values per dimension. The element sizes (one per field of a bundle; none for a plan) agree
/// field by field: a bundle whose types are permuted across ranks has equal sums. The strategy
/// is a plan's (mpi::text_value), else none.
HALOSHIFT_BUILDER field_shape agreed_field_shape(const cartesian_grid& grid, const shape_agreement& a) {
  static constexpr const char* counts[max_dims] = {"cuts[0] (number of values)", "cuts[1] (number of values)",
                                                   "cuts[2] (number of values)"};
  static constexpr const char* hashes[max_dims] = {"cuts[0] (hash of the values)", "cuts[1] (hash of the values)",
                                                   "cuts[2] (hash of the values)"};
  std::vector<mpi::agreed_value> values{a.strategy};
  for (int d = 0; d < max_dims; ++d) values.push_back({counts[d], static_cast<std::int64_t>(a.cuts[d].size())});
  for (int d = 0; d < max_dims; ++d) values.push_back({hashes[d], cuts_hash(a.cuts[d])});
  values.insert(values.end(), {{"global[0]", a.global[0]},
                               {"global[1]", a.global[1]},
                               {"global[2]", a.global[2]},
                               {"ghost[0]", a.ghost[0]},
                               {"ghost[1]", a.ghost[1]},
                               {"ghost[2]", a.ghost[2]},
                               {"ghost_high[0]", a.ghost_high[0]},
                               {"ghost_high[1]", a.ghost_high[1]},
                               {"ghost_high[2]", a.ghost_high[2]}});
  mpi::append_element_sizes(std::span<const std::size_t>(a.element_sizes.begin(), a.element_sizes.size()), values,
                            {"the number of fields", "sizeof(T)", "the element size (bytes) of field"});
  std::size_t element_size = 0;
  for (std::size_t size : a.element_sizes) element_size += size;
  field_shape s;
  mpi::agree(
      grid.comm(),
      [&] {
        if (a.from) check_remainder(grid.shape(), *a.from);
        s = a.from      ? field_shape(grid.shape(), grid.coords(), a.global, a.cuts, a.ghost, a.ghost_high)
            : a.by_cuts ? field_shape(grid.shape(), grid.coords(), a.cuts, a.ghost, a.ghost_high)
                        : field_shape(grid.shape(), grid.coords(), a.global, a.ghost, a.ghost_high);
        checked_add(checked_mul(s.size(), element_size, "field " + to_string(s) + ": bytes"), arena_alignment,
                    "field " + to_string(s) + ": bytes");
      },
      values);
  return s;
}
#endif

/// A shape's split (cuts where given, the even split of its global size elsewhere) and widths,
/// agreed: a shape may come from anywhere, not only from a collectively built field.
[[gnu::always_inline]] inline field_shape agreed_shape(const cartesian_grid& grid, const field_shape& shape,
                                                       std::initializer_list<std::size_t> element_sizes,
                                                       const mpi::agreed_value& strategy = no_strategy) {
  return agreed_field_shape(
      grid, {shape.global, shape.cuts, shape.ghost, shape.ghost_high, element_sizes, strategy, false, &shape});
}

/// The same width along every dimension of the grid.
inline offset along_grid(const cartesian_grid& grid, int width) {
  offset w{0, 0, 0};
  for (int d = 0; d < grid.ndims(); ++d) w[d] = width;
  return w;
}
}  // namespace detail

/// A rank's part of a global structured array of `T`: its interior cells and
/// ghost layers below and above, the same width on each side or given per
/// side (see field_shape for the split and the
/// storage order, x fastest). Construction is collective (all ranks check the
/// arguments together); cells start as `value`. Movable, not copyable.
template <transferable T>
class grid_field {
  static_assert(alignof(T) <= detail::arena_alignment, "grid_field: over-aligned element type");

 public:
  /// The element type.
  using value_type = T;

  /// The local part of a `global` array split over `grid`'s boxes, with `ghost[d]`
  /// layers per side along dimension d; every cell (ghosts too) starts as `value`.
  /// Collective: throws the same haloshift::error on every rank when the sizes or
  /// widths are invalid or differ between ranks. The field keeps a copy of `grid` (which shares
  /// the grid's communicator), so the grid may go first.
  grid_field(const cartesian_grid& grid, const offset& global, const offset& ghost, const T& value = T{})
      : grid_field(grid, global, ghost, ghost, value) {}
  /// Widths per side: `ghost_low[d]` layers below the interior, `ghost_high[d]` above (either may be
  /// 0: one-sided stencils, upwind schemes). Collective, checked like the constructor above.
  grid_field(const cartesian_grid& grid, const offset& global, const offset& ghost_low, const offset& ghost_high,
             const T& value = T{})
      : grid_field(grid, detail::agreed_shape(grid, global, ghost_low, ghost_high, {sizeof(T)}), value, adopt) {}
  /// Ghost width `ghost` along every dimension of the grid.
  grid_field(const cartesian_grid& grid, const offset& global, int ghost, const T& value = T{})
      : grid_field(grid, global, detail::along_grid(grid, ghost), value) {}
  /// The local part of an array split at the user's `cuts` (see cell_cuts: `P_d + 1` cuts along
  /// every dimension of the grid, the last one the global cell count; boxes may own no cells).
  /// Collective, checked like the constructor from a global size; cuts that are invalid or differ
  /// between ranks raise the same haloshift::error on every rank.
  grid_field(const cartesian_grid& grid, const cell_cuts& cuts, const offset& ghost, const T& value = T{})
      : grid_field(grid, cuts, ghost, ghost, value) {}
  /// The split of `cuts`, `ghost_low[d]` layers below the interior and `ghost_high[d]` above.
  grid_field(const cartesian_grid& grid, const cell_cuts& cuts, const offset& ghost_low, const offset& ghost_high,
             const T& value = T{})
      : grid_field(grid, detail::agreed_shape(grid, cuts, ghost_low, ghost_high, {sizeof(T)}), value, adopt) {}
  /// Ghost width `ghost` along every dimension of the grid.
  grid_field(const cartesian_grid& grid, const cell_cuts& cuts, int ghost, const T& value = T{})
      : grid_field(grid, cuts, detail::along_grid(grid, ghost), value) {}
  /// A field of `shape` (any split: even, cuts, or cuts along some dimensions only). Collective:
  /// the shape is checked again on every rank together.
  grid_field(const cartesian_grid& grid, const field_shape& shape, const T& value = T{})
      : grid_field(grid, detail::agreed_shape(grid, shape, {sizeof(T)}), value, adopt) {}

  /// Takes over the storage; the moved-from field may only be assigned to or destroyed (it keeps no
  /// storage: a plan's forward or reverse of it raises instead of writing into the field it moved to).
  grid_field(grid_field&& other) noexcept
      : grid_(other.grid_), shape_(other.shape_), arena_(std::move(other.arena_)),
        data_(std::exchange(other.data_, nullptr)) {}
  /// Takes over the storage; the moved-from field may only be assigned to or destroyed.
  grid_field& operator=(grid_field&& other) noexcept {
    grid_ = other.grid_;
    shape_ = other.shape_;
    arena_ = std::move(other.arena_);
    data_ = std::exchange(other.data_, nullptr);
    return *this;
  }
  grid_field(const grid_field&) = delete;
  grid_field& operator=(const grid_field&) = delete;

  /// The grid the field is split over (the field's own copy).
  const cartesian_grid& grid() const noexcept { return grid_; }
  /// This rank's split: global offset, interior, ghost widths, strides.
  const field_shape& shape() const noexcept { return shape_; }
  /// Local cell `(i, j, k)`: interior from 0, ghosts at negative and at `>= interior`.
  T& operator()(int i, int j = 0, int k = 0) noexcept { return data_[shape_.index(i, j, k)]; }
  /// Local cell `(i, j, k)`, read-only.
  const T& operator()(int i, int j = 0, int k = 0) const noexcept { return data_[shape_.index(i, j, k)]; }
  /// The whole padded array, ghosts included, in storage order.
  std::span<T> storage() noexcept { return {data_, shape_.size()}; }
  /// The whole padded array, read-only.
  std::span<const T> storage() const noexcept { return {data_, shape_.size()}; }
  /// The first element of the padded array (cell `(-ghost[0], -ghost[1], -ghost[2])`).
  T* data() noexcept { return data_; }

 private:
  template <transferable... Ts>
  friend class field_bundle;
  /// An agreed shape, taken as it is.
  struct adopt_shape {};
  static constexpr adopt_shape adopt{};
  grid_field(const cartesian_grid& grid, field_shape shape, const T& value, adopt_shape)
      : grid_(grid), shape_(std::move(shape)) {
    arena_ = detail::make_arena(shape_.size() * sizeof(T));
    data_ = place(arena_.get(), value);
  }
  grid_field(const cartesian_grid& grid, const field_shape& shape, detail::arena a, std::byte* at)
      : grid_(grid), shape_(shape), arena_(std::move(a)), data_(place(at, T{})) {}

  T* place(std::byte* at, const T& value) const {
    T* p = reinterpret_cast<T*>(at);
    std::uninitialized_fill_n(p, shape_.size(), value);  // starts the elements' lifetimes
    return p;
  }

  cartesian_grid grid_;  ///< a copy, not a pointer: plans likewise share the grid's context
  field_shape shape_;
  detail::arena arena_;
  T* data_ = nullptr;
};

/// Several fields of different element types over one shape, stored one
/// after another (each 64-byte aligned) in one allocation, so that one
/// exchange carries them all: every message holds the selected cells of the
/// first field, then those of the second, and so on. Collective to construct.
template <transferable... Ts>
class field_bundle {
  static_assert(sizeof...(Ts) > 0, "field_bundle needs at least one field");

 public:
  /// One field per element type, each the local part of a `global` array with `ghost[d]`
  /// layers per side, value-initialized. Collective, checked like grid_field's constructor.
  field_bundle(const cartesian_grid& grid, const offset& global, const offset& ghost)
      : field_bundle(grid, global, ghost, ghost) {}
  /// Widths per side: `ghost_low[d]` layers below the interior, `ghost_high[d]` above.
  field_bundle(const cartesian_grid& grid, const offset& global, const offset& ghost_low, const offset& ghost_high)
      : field_bundle(grid, detail::agreed_shape(grid, global, ghost_low, ghost_high, {sizeof(Ts)...}),
                     std::index_sequence_for<Ts...>{}) {}
  /// Ghost width `ghost` along every dimension of the grid.
  field_bundle(const cartesian_grid& grid, const offset& global, int ghost)
      : field_bundle(grid, global, detail::along_grid(grid, ghost)) {}
  /// One field per element type over the split of `cuts` (see grid_field's constructor from cuts).
  field_bundle(const cartesian_grid& grid, const cell_cuts& cuts, const offset& ghost)
      : field_bundle(grid, cuts, ghost, ghost) {}
  /// The split of `cuts`, `ghost_low[d]` layers below the interior and `ghost_high[d]` above.
  field_bundle(const cartesian_grid& grid, const cell_cuts& cuts, const offset& ghost_low, const offset& ghost_high)
      : field_bundle(grid, detail::agreed_shape(grid, cuts, ghost_low, ghost_high, {sizeof(Ts)...}),
                     std::index_sequence_for<Ts...>{}) {}
  /// Ghost width `ghost` along every dimension of the grid.
  field_bundle(const cartesian_grid& grid, const cell_cuts& cuts, int ghost)
      : field_bundle(grid, cuts, detail::along_grid(grid, ghost)) {}
  /// One field per element type of `shape` (any split), checked again on every rank together.
  field_bundle(const cartesian_grid& grid, const field_shape& shape)
      : field_bundle(grid, detail::agreed_shape(grid, shape, {sizeof(Ts)...}),
                     std::index_sequence_for<Ts...>{}) {}

  /// The `I`-th field, a grid_field of the `I`-th element type.
  template <std::size_t I>
  auto& get() noexcept {
    return std::get<I>(fields_);
  }
  /// The `I`-th field, read-only.
  template <std::size_t I>
  const auto& get() const noexcept {
    return std::get<I>(fields_);
  }
  /// The shape all fields share.
  const field_shape& shape() const noexcept { return std::get<0>(fields_).shape(); }
  /// The grid the fields are split over.
  const cartesian_grid& grid() const noexcept { return std::get<0>(fields_).grid(); }
  /// Each field's start in the allocation and its element size, in bytes.
  const std::vector<std::array<std::size_t, 2>>& parts() const noexcept { return parts_; }
  /// Start of the one allocation holding all fields (see parts()).
  std::byte* base() noexcept { return arena_.get(); }

 private:
  template <std::size_t... I>
  field_bundle(const cartesian_grid& grid, const field_shape& shape, std::index_sequence<I...>)
      : arena_(detail::make_arena((detail::round_up(shape.size() * sizeof(Ts)) + ...))),
        fields_(grid_field<Ts>(grid, shape, arena_, arena_.get() + start<I>(shape))...) {
    (parts_.push_back({start<I>(shape), sizeof(Ts)}), ...);
  }
  template <std::size_t I>
  static std::size_t start(const field_shape& shape) {
    constexpr std::size_t sizes[] = {sizeof(Ts)...};
    std::size_t at = 0;
    for (std::size_t f = 0; f < I; ++f) at += detail::round_up(shape.size() * sizes[f]);
    return at;
  }

  detail::arena arena_;
  std::tuple<grid_field<Ts>...> fields_;
  std::vector<std::array<std::size_t, 2>> parts_;
};

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file field_view.hpp
/// @brief A non-owning view of a rank's part of a global grid held in the
/// caller's own array: any ghost widths at least the plan's, any padding of
/// rows and planes, x fastest (Fortran `a(x,y,z)`, C `a[z][y][x]`) or z
/// fastest (C `a[x][y][z]`), or explicit element strides. Field plans fill
/// and combine its ghosts in place, with no copy into library storage.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../error.hpp"
#include "../exchange/halo.hpp"
#include "../grid/offset.hpp"
#include "../memory/spaces.hpp"
#include "field_shape.hpp"

namespace haloshift {

/// Which index of the caller's array runs fastest in memory.
enum class storage_order {
  x_fastest,  ///< Fortran `a(x, y, z)`, C `a[z][y][x]`: haloshift's own layout
  z_fastest,  ///< C `a[x][y][z]`
};

/// The caller's array holding this rank's interior cells and ghost layers.
/// Cell `(i, j, k)` of the interior (from 0; ghosts from `-ghost[d]` up to
/// `interior[d] + high()[d]`) lives at
/// `data[(i + ghost[0]) * stride[0] + (j + ghost[1]) * stride[1] + (k + ghost[2]) * stride[2]]`.
/// `Space` says where that memory lives: host memory, or a device's (detail::device_space; made
/// by `make_field_view(space, ...)`), which the library then never touches from the host.
template <transferable T, class Space = memory::host>
struct field_view {
  T* data = nullptr;          ///< the array (its first element, at the lowest ghost cell when the strides are positive)
  offset interior{1, 1, 1};  ///< this rank's interior cells (as the plan's shape gives them)
  /// Ghost layers the array holds below the interior (at least the plan's `ghost`), and above
  /// too unless `ghost_high` says otherwise.
  offset ghost{0, 0, 0};
  std::array<std::size_t, 3> stride{1, 1, 1};  ///< elements between neighbouring cells along x, y, z
  /// Ghost layers above the interior (at least the plan's `ghost_high`); -1: as `ghost` (last, so
  /// that a view written as `{data, interior, ghost, stride}` keeps its meaning).
  offset ghost_high{-1, -1, -1};
  /// The memory space, and for a device the stream the exchange is ordered on (docs/gpu.md).
  [[no_unique_address]] Space space{};

  /// The ghost layers above the interior: `ghost_high`, or `ghost` where that is -1.
  offset high() const noexcept {
    offset h = ghost_high;
    for (int d = 0; d < 3; ++d)
      if (h[d] == -1) h[d] = ghost[d];
    return h;
  }
};

namespace detail {
/// make_field_view's errors, out of line: the strings they build would otherwise keep the
/// function from inlining, and a call with seven arguments (counting the returned view) made
/// from the user's own function costs GCC a frame pointer there, lost to the user's loops
/// (docs/performance.md, "Including the headers").
[[noreturn, gnu::noinline, gnu::cold]] inline void throw_bad_view_dimension(int d, const offset& interior,
                                                                            const offset& ghost_low,
                                                                            const offset& ghost_high,
                                                                            const offset& padding) {
  throw error("make_field_view: dimension " + std::to_string(d) + " has interior " + std::to_string(interior[d]) +
              ", ghost " + std::to_string(ghost_low[d]) + ", ghost_high " + std::to_string(ghost_high[d]) +
              ", padding " + std::to_string(padding[d]) +
              " (need interior >= 0, ghost >= 0, ghost_high >= 0, padding >= 0)");
}
[[noreturn, gnu::noinline, gnu::cold]] inline void throw_bad_view_order(storage_order order) {
  throw error("make_field_view: invalid storage_order value " + std::to_string(static_cast<int>(order)));
}
}  // namespace detail

/// A view of a padded array in `order`, `ghost_low[d]` layers below the
/// interior and `ghost_high[d]` above: `padding[d]` unused elements after each
/// line of `ghost_low[d] + interior[d] + ghost_high[d]` cells along `d` (row
/// pitch, plane pitch), 0 for a dense array. `interior` may be 0 along a
/// dimension (a box of an uneven split that owns no cells; its ghosts are
/// still filled).
template <transferable T>
inline field_view<T> make_field_view(T* data, const offset& interior, const offset& ghost_low,
                                     const offset& ghost_high, storage_order order = storage_order::x_fastest,
                                     const offset& padding = {0, 0, 0}) {
  field_view<T> v{data, interior, ghost_low, {1, 1, 1}, ghost_high};
  std::size_t extent[3];
  for (int d = 0; d < 3; ++d) {
    if (interior[d] < 0 || ghost_low[d] < 0 || ghost_high[d] < 0 || padding[d] < 0)
      detail::throw_bad_view_dimension(d, interior, ghost_low, ghost_high, padding);
    extent[d] = static_cast<std::size_t>(ghost_low[d]) + static_cast<std::size_t>(interior[d]) +
                static_cast<std::size_t>(ghost_high[d]) + static_cast<std::size_t>(padding[d]);
  }
  if (order == storage_order::x_fastest) {
    v.stride = {1, extent[0], extent[0] * extent[1]};
  } else if (order == storage_order::z_fastest) {
    v.stride = {extent[2] * extent[1], extent[2], 1};
  } else {
    detail::throw_bad_view_order(order);
  }
  return v;
}

/// A view of a padded array in `order` with `ghost[d]` layers on each side of the interior (see
/// above).
template <transferable T>
field_view<T> make_field_view(T* data, const offset& interior, const offset& ghost,
                              storage_order order = storage_order::x_fastest, const offset& padding = {0, 0, 0}) {
  return make_field_view(data, interior, ghost, ghost, order, padding);
}

/// A view of the caller's array holding this rank's cells of `shape` (take it from the plan:
/// `plan.shape()`) with the plan's ghost widths on each side, in `order` with `padding` as above:
/// by default laid out exactly as haloshift's own fields (a dense x-fastest array).
template <transferable T>
field_view<T> make_field_view(T* data, const field_shape& shape, storage_order order = storage_order::x_fastest,
                              const offset& padding = {0, 0, 0}) {
  return make_field_view(data, shape.interior, shape.ghost, shape.ghost_high, order, padding);
}

/// A view of device memory: `make_field_view(space, ptr, ...)` with any of the arguments above
/// after the space (`hs::memory::device{}`, `hs::memory::emulated_device{}`). Checked as any
/// view, on the host, without reading the memory.
template <detail::device_space Space, class T, class... Rest>
field_view<T, Space> make_field_view(const Space& space, T* data, const Rest&... rest) {
  const field_view<T> v = make_field_view(data, rest...);
  return {v.data, v.interior, v.ghost, v.stride, v.ghost_high, space};
}

namespace detail {
/// Whether `V` is a field_view (the arrays of field_plan's calls of several views).
template <class V>
struct is_field_view : std::false_type {};
template <class T, class Space>
struct is_field_view<field_view<T, Space>> : std::true_type {
  using element = T;
};

/// Checks a view against the plan's shape (this rank only: the call is local)
/// and returns the number of elements it spans. A view without cells (a box
/// that owns none and has no ghosts along some dimension) may have no data.
template <class T, class Space>
std::size_t checked_view(const field_view<T, Space>& v, const field_shape& shape, const char* call) {
  // Messages are built only on failure: a view is checked on every exchange, which allocates nothing.
  const auto where = [call] { return std::string(call) + ": field_view "; };
  const auto index = [](int d) { return "[" + std::to_string(d) + "]"; };
  const offset high = v.high();
  std::size_t extent[3];
  bool cells = true;
  for (int d = 0; d < 3; ++d) {
    if (v.interior[d] != shape.interior[d])
      throw error(where() + "interior" + index(d) + " = " + std::to_string(v.interior[d]) + " but this rank's interior is " +
                  to_string(shape.interior));
    if (v.ghost[d] < shape.ghost[d])
      throw error(where() + "ghost" + index(d) + " = " + std::to_string(v.ghost[d]) + " is narrower than the plan's ghost " +
                  to_string(shape.ghost));
    if (v.ghost_high[d] < -1)
      throw error(where() + "ghost_high" + index(d) + " = " + std::to_string(v.ghost_high[d]) +
                  " is negative (-1 stands for ghost" + index(d) + ")");
    if (high[d] < shape.ghost_high[d])
      throw error(where() + "ghost_high" + index(d) + " = " + std::to_string(high[d]) +
                  " is narrower than the plan's ghost_high " + to_string(shape.ghost_high));
    extent[d] = static_cast<std::size_t>(v.ghost[d]) + static_cast<std::size_t>(v.interior[d]) +
                static_cast<std::size_t>(high[d]);
    cells = cells && extent[d] > 0;
  }
  if (!v.data && cells) throw error(where() + "has no data (null pointer)");
  if (!cells) return 0;
  for (int d = 0; d < 3; ++d)
    if (v.stride[d] == 0) throw error(where() + "stride[" + std::to_string(d) + "] is 0");
  // No two cells may share an element: along the dimensions taken by increasing stride, each stride
  // clears the whole extent of the one before it.
  int by_stride[3] = {0, 1, 2};
  std::sort(by_stride, by_stride + 3, [&](int a, int b) { return v.stride[a] < v.stride[b]; });
  std::size_t span = 1;
  for (int n = 0; n < 3; ++n) {
    const int d = by_stride[n];
    if (extent[d] > 1 && v.stride[d] < span)
      throw error(where() + "stride " + std::to_string(v.stride[0]) + "," + std::to_string(v.stride[1]) + "," +
                  std::to_string(v.stride[2]) + " makes cells overlap (interior " + to_string(v.interior) +
                  ", ghost " + to_string(v.ghost) + ", ghost_high " + to_string(high) + ")");
    span = std::max(span, v.stride[d] * (extent[d] - 1) + span);
  }
  return span;
}
}  // namespace detail

}  // namespace haloshift

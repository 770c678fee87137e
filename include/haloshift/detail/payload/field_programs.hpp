// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file field_programs.hpp
/// @brief The programs a field plan runs besides its own: its cell program on
/// a view's layout, in bytes of a bundle's allocation, or split into one
/// message per field; each built on first use of its layout and kept.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <deque>
#include <span>
#include <utility>
#include <vector>

#include "../../grid/offset.hpp"
#include "../../payload/field_shape.hpp"
#include "../exchange/program.hpp"
#include "../exchange/remap.hpp"

namespace haloshift::detail {

/// A field plan's derived programs, by layout (the plan's own program `own` and shape come with
/// each call). A deque: adding a layout leaves the programs of exchanges in flight where they are.
class field_programs {
 public:
  /// `own` turned into bytes of a bundle's allocation (`parts`: each field's start and element
  /// size): each message carries its cells of every field in turn, or (`per_field`) each transfer
  /// is one message per field (split_per_part).
  const program& bundle(const program& own, const std::vector<std::array<std::size_t, 2>>& parts, bool per_field) {
    // 0 or 2: a bundle, then (start, size) of each field; in a buffer kept here, so that an
    // exchange of a layout seen before allocates nothing.
    key_.assign(1, per_field ? 2 : 0);
    for (const auto& [start, size] : parts) key_.insert(key_.end(), {start, size});
    const auto place = [&](std::size_t f, const std::vector<element_run>& cells, std::vector<element_run>& runs) {
      const auto [start, size] = parts[f];
      for (const element_run& c : cells) runs.push_back({start + c.first * size, c.count * size});
    };
    if (per_field && parts.size() > 1)
      return derived(key_, [&] { return split_per_part(own, parts.size(), place); });
    return derived(key_, [&] {
      return remapped(own, [&](const std::vector<element_run>& cells, std::vector<element_run>& runs) {
        for (std::size_t f = 0; f < parts.size(); ++f) place(f, cells, runs);
      });
    });
  }

  /// `own` (cells of a padded array of `shape`) moved into the cells of a view with `ghost` layers
  /// below the interior and `stride` (the layers above change no view cell's place: only the checks
  /// read them).
  const program& view(const program& own, const field_shape& shape, const offset& ghost,
                      const std::array<std::size_t, 3>& stride) {
    // Laid out as the plan's own fields: the plan's program itself, whose layout zero copy lends
    // (a view of a shared_array). Any other layout derives one, which the shared-memory path's
    // window carries too (packed into the slots: shared_window::serves).
    const std::array<std::size_t, 3> padded{shape.stride[0], shape.stride[1], shape.stride[2]};
    if (ghost == shape.ghost && stride == padded) return own;
    const std::array<std::size_t, 7> key{1,         static_cast<std::size_t>(ghost[0]),
                                         static_cast<std::size_t>(ghost[1]), static_cast<std::size_t>(ghost[2]),
                                         stride[0], stride[1],
                                         stride[2]};
    return derived(key, [&] {
      return remapped(own, [&](const std::vector<element_run>& cells, std::vector<element_run>& runs) {
        for (const element_run& c : cells)
          for (std::size_t cell = c.first; cell < c.first + c.count; ++cell) {
            // Storage index in the plan's padded layout -> padded cell -> element of the view.
            const std::size_t at[3] = {cell % shape.stride[1], cell % shape.stride[2] / shape.stride[1],
                                       cell / shape.stride[2]};
            std::size_t element = 0;
            for (int d = 0; d < 3; ++d)
              element += (at[d] + static_cast<std::size_t>(ghost[d]) - static_cast<std::size_t>(shape.ghost[d])) *
                         stride[d];
            runs.push_back({element, 1});  // select_pieces merges neighbours into runs
          }
      });
    });
  }

  /// How far apart several views of one layout lie in the run of bytes one message per field
  /// addresses them as (field_segments::shift): view f's bytes start at `f << shift`, the least
  /// power of two that holds the bytes of any view's box (its elements of `sizes[f]` bytes).
  static unsigned segment_shift(const field_shape& shape, const offset& ghost, const std::array<std::size_t, 3>& stride,
                                std::span<const std::size_t> sizes) {
    std::size_t span = 1;
    for (int d = 0; d < max_dims; ++d)
      span += static_cast<std::size_t>(shape.interior[d] + ghost[d] + shape.ghost_high[d] - 1) * stride[d];
    const std::size_t widest = span * *std::max_element(sizes.begin(), sizes.end());
    return static_cast<unsigned>(std::bit_width(widest - 1));
  }

  /// Several views of one layout (`ghost`, `stride`) as one message per view and neighbour: the
  /// view's program split per view, in bytes, view f's from `f << shift` (segment_shift), of
  /// `sizes` bytes per element.
  const program& views_apart(const program& own, const field_shape& shape, const offset& ghost,
                             const std::array<std::size_t, 3>& stride, std::span<const std::size_t> sizes,
                             unsigned shift) {
    const program& cells = view(own, shape, ghost, stride);
    key_.assign({3, static_cast<std::size_t>(ghost[0]), static_cast<std::size_t>(ghost[1]),
                 static_cast<std::size_t>(ghost[2]), stride[0], stride[1], stride[2]});
    key_.insert(key_.end(), sizes.begin(), sizes.end());
    return derived(key_, [&] {
      return split_per_part(cells, sizes.size(), [&](std::size_t f, const auto& runs, auto& out) {
        for (const element_run& c : runs) out.push_back({(f << shift) + c.first * sizes[f], c.count * sizes[f]});
      });
    });
  }

 private:
  /// The program `make()` returns, kept under `key`: built once per layout.
  template <class Make>
  const program& derived(std::span<const std::size_t> key, Make&& make) {
    for (const auto& [k, p] : programs_)
      if (std::ranges::equal(k, key)) return p;
    programs_.emplace_back(std::vector<std::size_t>(key.begin(), key.end()), make());
    return programs_.back().second;
  }

  std::deque<std::pair<std::vector<std::size_t>, program>> programs_;
  std::vector<std::size_t> key_;  ///< a bundle's or split views' key, built here to keep its capacity
};

}  // namespace haloshift::detail

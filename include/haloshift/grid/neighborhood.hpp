// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file neighborhood.hpp
/// @brief The k-neighborhood: which offsets a box imports.

#include <cstdint>
#include <string>
#include <vector>

#include "../error.hpp"
#include "grid_shape.hpp"
#include "offset.hpp"

namespace haloshift {

/// `full`: every offset in [-k,k]^d without 0. `eighth`: only [0,k]^d without
/// 0 (the eighth-shell scheme; half of Shift's messages).
enum class shell { full, eighth };

/// Which neighbours a box imports from, by how many dimensions separate them:
/// `faces` only the boxes along one dimension (a star stencil: 2 d partners at
/// k = 1), `faces_and_edges` those along one or two (no 3D corners), `full`
/// all of them (a box stencil, the default). A box `o` away holds exactly the
/// ghost cells that lie outside this box's interior along the dimensions
/// where `o` is not 0, so the pattern is also which ghost cells of a field
/// are filled: faces leave the edge and corner regions of the padding as
/// they are.
enum class halo_pattern { full, faces, faces_and_edges };

/// How far a box reaches, in boxes, per dimension.
struct range {
  /// Boxes reached along each dimension (0 along dimensions the grid lacks).
  offset k{0, 0, 0};
  /// Full neighbourhood or eighth shell.
  shell kind = shell::full;
  /// Which of the box's offsets are imported (faces, faces and edges, all).
  halo_pattern pattern = halo_pattern::full;

  /// Lowest offset imported along `d` (-k, or 0 for the eighth shell).
  int low(int d) const noexcept { return kind == shell::full ? -k[d] : 0; }
  /// Highest offset imported along `d` (k).
  int high(int d) const noexcept { return k[d]; }
  friend bool operator==(const range&, const range&) = default;
};

namespace detail {
/// Most offsets a range may hold (each is a block slot of every halo and a
/// candidate message): far more than any useful neighbourhood, small enough
/// that a mistaken huge `k` raises at once instead of exhausting memory.
inline constexpr std::uint64_t max_range_offsets = std::uint64_t{1} << 24;

/// Raises haloshift::error when `kind` is not a valid shell.
inline void check_shell(shell kind) {
  if (kind != shell::full && kind != shell::eighth)
    throw error("shell: invalid value " + std::to_string(static_cast<long long>(kind)) +
                " (use shell::full or shell::eighth)");
}

/// Raises haloshift::error, naming the argument `what`, when `p` is not a valid halo_pattern.
inline void check_pattern(halo_pattern p, const std::string& what = "halo_pattern") {
  if (p != halo_pattern::full && p != halo_pattern::faces && p != halo_pattern::faces_and_edges)
    throw error(what + ": invalid halo_pattern value " + std::to_string(static_cast<long long>(p)) +
                " (use halo_pattern::full, halo_pattern::faces or halo_pattern::faces_and_edges)");
}

/// Dimensions along which `o` is not 0 (1 for a face neighbour, 2 for an edge, 3 for a corner).
constexpr int separating_dims(const offset& o) noexcept { return (o[0] != 0) + (o[1] != 0) + (o[2] != 0); }

/// The most dimensions a pattern lets an imported offset differ in.
constexpr int pattern_dims(halo_pattern p) noexcept {
  return p == halo_pattern::faces ? 1 : p == halo_pattern::faces_and_edges ? 2 : max_dims;
}

/// "faces", "faces_and_edges" or "full", for messages and explain().
inline const char* pattern_name(halo_pattern p) noexcept {
  return p == halo_pattern::faces ? "faces" : p == halo_pattern::faces_and_edges ? "faces_and_edges" : "full";
}

/// Raises haloshift::error naming `k` and the offsets it would need when the
/// range holds more than max_range_offsets (counted without overflow).
inline void check_range_size(const range& r) {
  check_shell(r.kind);
  check_pattern(r.pattern);
  std::uint64_t count = 1;
  bool overflow = false;
  for (int d = 0; d < max_dims; ++d) {
    const std::uint64_t extent = static_cast<std::uint64_t>(static_cast<std::int64_t>(r.high(d)) - r.low(d) + 1);
    overflow = overflow || __builtin_mul_overflow(count, extent, &count);
  }
  if (overflow || count - 1 > max_range_offsets)
    throw error("k = " + to_string(r.k) + " is too large: the range would hold " +
                (overflow ? std::string("more than 2^64") : std::to_string(count - 1)) +
                " offsets (one halo block slot each), more than the supported " + std::to_string(max_range_offsets));
}
}  // namespace detail

/// `k` boxes along every dimension of `grid`, 0 along dimensions it lacks.
inline range make_range(const grid_shape& grid, int k, shell kind = shell::full,
                        halo_pattern pattern = halo_pattern::full) {
  if (k < 1) throw error("k must be >= 1, got " + std::to_string(k));
  range r{{0, 0, 0}, kind, pattern};
  for (int d = 0; d < grid.ndims(); ++d) r.k[d] = k;
  detail::check_range_size(r);
  return r;
}

/// Per-dimension range; entries past the grid's dimensions must be 0, and at
/// least one entry must be positive.
inline range make_range(const grid_shape& grid, const offset& k, shell kind = shell::full,
                        halo_pattern pattern = halo_pattern::full) {
  bool any = false;
  for (int d = 0; d < max_dims; ++d) {
    if (k[d] < 0) throw error("k[" + std::to_string(d) + "] must be >= 0, got " + std::to_string(k[d]));
    if (d >= grid.ndims() && k[d] != 0)
      throw error("k[" + std::to_string(d) + "] = " + std::to_string(k[d]) + " but the grid has only " +
                  std::to_string(grid.ndims()) + " dimension(s)");
    any = any || k[d] > 0;
  }
  if (!any) throw error("k must be positive in at least one dimension, got " + to_string(k));
  const range r{k, kind, pattern};
  detail::check_range_size(r);
  return r;
}

namespace detail {
/// Whether offset `o` lies in the range's box (0 included) and its pattern.
inline bool contains(const range& r, const offset& o) noexcept {
  for (int d = 0; d < max_dims; ++d)
    if (o[d] < r.low(d) || o[d] > r.high(d)) return false;
  return separating_dims(o) <= pattern_dims(r.pattern);
}
}  // namespace detail

/// Every offset the range imports (its box, within its pattern), in canonical order (without 0).
inline std::vector<offset> offsets(const range& r) {
  std::vector<offset> out;
  for (int z = r.low(2); z <= r.high(2); ++z)
    for (int y = r.low(1); y <= r.high(1); ++y)
      for (int x = r.low(0); x <= r.high(0); ++x)
        if ((x || y || z) && detail::separating_dims({x, y, z}) <= detail::pattern_dims(r.pattern))
          out.push_back({x, y, z});
  return out;
}

}  // namespace haloshift

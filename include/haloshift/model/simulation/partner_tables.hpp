// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file partner_tables.hpp
/// @brief Where a transfer leads from every class of ranks, as tables per
/// dimension (the simulator's partners, senders, colours and held blocks).

#include "../../detail/arithmetic.hpp"
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../../exchange/protocol.hpp"
#include "../../grid/grid_shape.hpp"
#include "../../detail/schedule/colouring.hpp"
#include "../../schedule/schedule.hpp"
#include "rank_classes.hpp"

namespace haloshift::detail {

/// Whether every block of every message of `s` exists on `grid`: no block lies across a non-periodic dimension.
inline bool every_box_exists(const grid_shape& grid, const schedule& s) {
  for (const schedule_round& r : s.rounds)
    for (const transfer& t : r.transfers)
      for (const offset& o : t.blocks)
        for (int d = 0; d < max_dims; ++d)
          if (o[d] != 0 && !grid.periodic(d)) return false;
  return true;
}

/// Where a transfer leads from every class, as tables per dimension: a class
/// is a product of one class per dimension, and so are its partners, so the
/// tables cost the sum of the dimensions' classes rather than their product
/// (a million classes of an odd 101^3 ring in rendezvous mode).
struct partner_tables {
  std::array<std::vector<int>, max_dims> ahead, behind;   ///< class along d of the box at +/-direction; -1: none
  std::array<std::vector<std::uint64_t>, max_dims> held;  ///< per class along d, bit i: block i exists there
  std::vector<char> sender;  ///< per class along senders.dim: whether it sends (empty: every class does)
  std::vector<char> first;   ///< per class along the colour dimension: whether it sends first
  int colour_dim = -1;
  std::size_t words = 0;  ///< of `held`, per class (0: every block exists everywhere, not tabled)
  bool self = false;      ///< the box along the direction is the rank itself: a local copy

  /// Fills the tables for transfer `t` on `classes` of `grid`; `count_blocks`: table which
  /// blocks exist (blocks that may lie beyond a non-periodic border).
  void fill(const grid_shape& grid, const rank_classes& classes, const transfer& t, protocol mode, bool count_blocks) {
    // The class along `d` of coordinate `x`, after wrapping on a periodic dimension; -1 beyond a border.
    const auto class_at = [&](int d, long long x) {
      const int n = grid.dim(d);
      if (x < 0 || x >= n) {
        if (!grid.periodic(d)) return -1;
        x = detail::positive_mod(x, static_cast<long long>(n));
      }
      return classes.class_along(d, static_cast<int>(x));
    };
    self = true;
    words = count_blocks ? (t.blocks.size() + 63) / 64 : 0;
    for (int d = 0; d < max_dims; ++d) {
      const int n = grid.dim(d), w = t.direction[d];
      self = self && (w == 0 || (grid.periodic(d) && w % n == 0));
      const auto along = static_cast<std::size_t>(classes.classes_along(d));
      ahead[d].resize(along);
      behind[d].resize(along);
      held[d].assign(along * words, 0);
      for (std::size_t j = 0; j < along; ++j) {
        const long long x = classes.first_along(d, static_cast<int>(j));
        ahead[d][j] = class_at(d, x + w);
        behind[d][j] = class_at(d, x - w);
        for (std::size_t i = 0; i < words * 64 && i < t.blocks.size(); ++i)
          if (class_at(d, x + t.blocks[i][d]) >= 0) held[d][j * words + i / 64] |= std::uint64_t{1} << (i % 64);
      }
    }
    // Senders and colours depend on one coordinate each: tabled from a representative along it.
    const auto along_one = [&](int d, auto property, std::vector<char>& out) {
      out.clear();
      if (d < 0) return;
      for (int j = 0; j < classes.classes_along(d); ++j) {
        offset x{0, 0, 0};
        x[d] = classes.first_along(d, j);
        out.push_back(property(x));
      }
    };
    along_one(
        t.senders.dim, [&](const offset& x) { return t.senders.contains(x); }, sender);
    colour_dim = mode == protocol::rendezvous ? colour_dimension(grid, t.direction) : -1;
    along_one(
        colour_dim, [&](const offset& x) { return sends_first(grid, x, t.direction); }, first);
  }

  /// Of the classes a, b, z along the dimensions, the one along `d`.
  static int along_dim(int d, int a, int b, int z) { return d == 0 ? a : d == 1 ? b : z; }
  /// Whether the class with classes a, b, z along the dimensions and representative `coords` sends in
  /// `t` (filled for it). Named senders (NodeAggregate's) are asked of the representative: exact, as
  /// simulate() gives such schedules a class per rank (rank_classes::of).
  bool sends(const transfer& t, const offset& coords, int a, int b, int z) const {
    if (!t.senders.only.empty()) return t.senders.contains(coords);
    return sender.empty() || sender[static_cast<std::size_t>(along_dim(t.senders.dim, a, b, z))];
  }

  /// The blocks that exist around the class with classes a, b, z along the dimensions (words > 0).
  int blocks_held(int a, int b, int z) const {
    int n = 0;
    for (std::size_t i = 0; i < words; ++i)
      n += std::popcount(held[0][static_cast<std::size_t>(a) * words + i] &
                         held[1][static_cast<std::size_t>(b) * words + i] &
                         held[2][static_cast<std::size_t>(z) * words + i]);
    return n;
  }
};

}  // namespace haloshift::detail

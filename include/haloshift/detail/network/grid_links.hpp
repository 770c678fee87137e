// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file grid_links.hpp
/// @brief The links of the local exchange networks: one per direct
/// neighbour offset of a Cartesian grid, in both directions.

#include <optional>
#include <vector>

#include "../../grid/cartesian_grid.hpp"
#include "../../grid/offset.hpp"
#include "../schedule/ttl_forwarding.hpp"
#include "links.hpp"

namespace haloshift::detail {

/// For every direction `w` of ttl::neighbor_directions (26 in 3D, 8 in 2D,
/// 2 in 1D): the link to the box at `w` and the link from the box at `-w`,
/// tagged with the direction's index, so periodic images of one rank (even of
/// this rank itself) are separate links, each used once per offset. A link
/// that would leave a non-periodic dimension does not exist.
struct grid_links {
  std::vector<offset> directions;
  std::vector<std::optional<link>> to, from;

  explicit grid_links(const cartesian_grid& grid) : directions(ttl::neighbor_directions(grid.ndims())) {
    for (std::size_t i = 0; i < directions.size(); ++i) {
      const int tag = static_cast<int>(i);
      const auto there = grid.neighbor_at(directions[i]), back = grid.neighbor_at(-directions[i]);
      to.push_back(there ? std::optional<link>(link{there->rank, tag}) : std::nullopt);
      from.push_back(back ? std::optional<link>(link{back->rank, tag}) : std::nullopt);
    }
  }

  /// The links that exist, in direction order.
  static std::vector<link> existing(const std::vector<std::optional<link>>& links) {
    std::vector<link> out;
    for (const auto& l : links)
      if (l) out.push_back(*l);
    return out;
  }
};

}  // namespace haloshift::detail

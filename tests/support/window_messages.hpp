// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// How many messages of a plan's program go through the shared-memory path's window: what a rank
// whose array lives in node-shared memory lends (zero copy), counted from the program and the node
// layout alone, so that a test sees that zero copy was taken and where.
#include <cstddef>
#include <cstdint>
#include <haloshift/haloshift.hpp>

/// Messages of `p` to ranks of this rank's node (of `grid`) that go through the window with elements
/// of `bytes` (a message of at most 64 KiB), forwards or `backward`, and are worth lending: one run
/// of the array, or runs of 64 bytes (a cache line) on average.
inline std::uint64_t window_messages(const haloshift::cartesian_grid& grid, const haloshift::detail::program& p,
                                     std::size_t bytes, bool backward) {
  const haloshift::detail::node_layout& nodes = haloshift::detail::nodes_of(grid);
  std::uint64_t n = 0;
  for (const auto& r : p.rounds)
    for (const auto& t : r.transfers) {
      const haloshift::detail::message& m = backward ? t.recv : t.send;
      if (t.self || !m.exists() || !nodes.same_node(m.peer) || m.count * bytes > 64 * 1024) continue;
      std::size_t runs = 0;
      haloshift::detail::for_each_run(p.layout, m, [&](std::size_t, std::size_t count) { runs += count != 0; });
      n += runs <= 1 || m.count * bytes >= 64 * runs;
    }
  return n;
}

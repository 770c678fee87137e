// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file remap.hpp
/// @brief A compiled program moved onto other storage: the same messages, in
/// the same order, gathering from and scattering into other places (a grid
/// field's padded array, a bundle's bytes, a view's strided cells). The one
/// place outside the compiler that rewrites a program's messages.

#include <cstddef>
#include <utility>
#include <vector>

#include "executor.hpp"
#include "program.hpp"

namespace haloshift::detail {

/// Moves every message of `p` in place: `place(cells, runs)` gets the message's
/// runs of elements of the data array its layout describes, in message order,
/// and appends to `runs` where they go instead, in any unit (elements, bytes).
/// The layout is kept (it still names the data array's blocks); the staging is
/// laid out anew for the new messages.
template <class Place>
void remap(program& p, Place&& place) {
  for (round_program& r : p.rounds)
    for (transfer_program& t : r.transfers)
      for (message* m : {&t.send, &t.recv}) {
        if (!m->exists()) continue;
        std::vector<element_run> cells, runs;
        for_each_run(p.layout, *m, [&](std::size_t first, std::size_t count) { cells.push_back({first, count}); });
        place(cells, runs);
        select_pieces(*m, runs);
      }
  assign_staging(p);
}

/// A copy of `p` moved by `place` (see remap).
template <class Place>
program remapped(const program& p, Place&& place) {
  program out = p;
  remap(out, std::forward<Place>(place));
  return out;
}

}  // namespace haloshift::detail

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

/// `p` with each transfer split into `parts` transfers in a row, the `i`-th carrying what
/// `place(i, cells, runs)` appends to `runs` for the message's `cells` (see remap): several fields
/// with one message per field (plan_options::messages). The parts keep the transfer's tag and
/// peers; both ends post them in the same order, so MPI's non-overtaking order matches them as it
/// keeps a plan's rounds apart (detail/mpi/tags.hpp). Its transfers are no longer the plan's own,
/// one for one: the shared-memory window does not carry it (lineage 0), its messages go by MPI.
template <class Place>
program split_per_part(const program& p, std::size_t parts, Place&& place) {
  program out;
  out.layout = p.layout;
  out.rounds.resize(p.rounds.size());
  std::vector<element_run> cells, runs;
  for (std::size_t r = 0; r < p.rounds.size(); ++r)
    for (const transfer_program& t : p.rounds[r].transfers)
      for (std::size_t i = 0; i < parts; ++i) {
        transfer_program& part = out.rounds[r].transfers.emplace_back(t);
        for (message* m : {&part.send, &part.recv}) {
          if (!m->exists()) continue;
          cells.clear();
          runs.clear();
          for_each_run(p.layout, *m, [&](std::size_t first, std::size_t count) { cells.push_back({first, count}); });
          place(i, cells, runs);
          select_pieces(*m, runs);
        }
      }
  assign_staging(out);
  out.lineage = 0;
  return out;
}

/// A copy of `p` moved by `place` (see remap).
template <class Place>
program remapped(const program& p, Place&& place) {
  program out = p;
  remap(out, std::forward<Place>(place));
  return out;
}

}  // namespace haloshift::detail

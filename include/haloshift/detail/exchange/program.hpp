// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file program.hpp
/// @brief A schedule compiled for one rank: peers, slots and sizes of every
/// message, checked for correctness. Pure computation, no MPI, so tests can
/// compile the program of every rank of a grid in one process.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../error.hpp"
#include "../../grid/grid_shape.hpp"
#include "../../grid/neighborhood.hpp"
#include "../../grid/offset_box.hpp"
#include "../mpi/tags.hpp"
#include "../schedule/colouring.hpp"
#include "../../schedule/schedule.hpp"
#include "layout.hpp"

namespace haloshift::detail {

/// A run of consecutive elements of a buffer.
struct element_run {
  std::size_t first = 0;
  std::size_t count = 0;
  friend bool operator==(const element_run&, const element_run&) = default;
};

/// `repeat` runs of `count` elements, each `stride` after the previous, from `first`.
struct strided_run {
  std::size_t first = 0, count = 0, stride = 0, repeat = 0;
  friend bool operator==(const strided_run&, const strided_run&) = default;
};

/// One message as one rank sees it.
struct message {
  int peer = -1;            ///< rank on the other end; -1 when there is no message
  std::vector<int> slots;   ///< layout slots it carries, in order
  std::size_t count = 0;    ///< elements in all its blocks
  bool contiguous = false;  ///< its elements form one range of the buffer: no packing
  std::size_t first = 0;    ///< first element when contiguous
  /// Selective payloads (particles, grid cells): the message carries exactly
  /// `pieces` (or, when contiguous, the one run at `first`), in order, instead
  /// of its slots' whole ranges. Block mode never selects.
  bool selected = false;
  std::vector<element_run> pieces;
  /// The same pieces as groups of equal length at a constant stride, for
  /// packing (a face across x is one group of single cells at the row pitch).
  std::vector<strided_run> strided;
  /// The same pieces as a send list (LAMMPS's `sendlist`: one element index
  /// each), when they are short runs at irregular places (particles near a
  /// face): packing is then one indexed copy per element, no call per run.
  /// Empty otherwise.
  std::vector<std::uint32_t> list;
  bool exists() const noexcept { return peer >= 0; }
};

/// Groups ordered, disjoint runs into strided runs: a run joins the previous
/// group when it has the group's length and lies the group's stride after it.
/// `add` returns whether the run started a new group (then `group` is it).
struct run_grouper {
  strided_run group{};
  bool any = false;
  bool add(const element_run& r) noexcept {
    if (any) {
      const std::size_t last = group.first + (group.repeat - 1) * group.stride;
      if (r.count == group.count && r.first > last && (group.repeat == 1 || r.first - last == group.stride)) {
        group.stride = r.first - last;
        ++group.repeat;
        return false;
      }
    }
    any = true;
    group = {r.first, r.count, 0, 1};
    return true;
  }
};
inline std::vector<strided_run> group_runs(const std::vector<element_run>& runs) {
  std::vector<strided_run> out;
  run_grouper g;
  for (const element_run& r : runs) {
    if (g.add(r))
      out.push_back(g.group);
    else
      out.back() = g.group;
  }
  return out;
}
/// How many strided runs group_runs makes of `runs`, without making them.
inline std::size_t count_groups(const std::vector<element_run>& runs) noexcept {
  run_grouper g;
  std::size_t n = 0;
  for (const element_run& r : runs) n += g.add(r) ? 1 : 0;
  return n;
}

/// Makes `m` carry exactly `runs` (merged where adjacent); a single run needs no packing.
inline void select_pieces(message& m, const std::vector<element_run>& runs) {
  m.selected = true;
  m.pieces.clear();
  m.pieces.reserve(runs.size());
  m.count = 0;
  for (const element_run& r : runs) {
    if (r.count == 0) continue;
    if (!m.pieces.empty() && m.pieces.back().first + m.pieces.back().count == r.first)
      m.pieces.back().count += r.count;
    else
      m.pieces.push_back(r);
    m.count += r.count;
  }
  m.contiguous = m.pieces.size() <= 1;
  m.first = m.pieces.empty() ? 0 : m.pieces.front().first;
  if (m.contiguous) m.pieces.clear();
  m.strided.clear();
  m.list.clear();
  // Short runs at irregular places (particles; a grid face's cells group into a few strided runs):
  // a send list, and no groups (every user of a message reads its list first).
  const bool scattered = !m.pieces.empty() && m.count < 16 * m.pieces.size() &&
                         4 * count_groups(m.pieces) > m.pieces.size() &&
                         m.pieces.back().first + m.pieces.back().count <= std::numeric_limits<std::uint32_t>::max();
  if (!scattered) {
    m.strided = group_runs(m.pieces);
    return;
  }
  m.list.resize(m.count);
  std::uint32_t* at = m.list.data();
  for (const element_run& r : m.pieces)
    for (std::size_t e = r.first; e < r.first + r.count; ++e) *at++ = static_cast<std::uint32_t>(e);
}

/// One transfer of a round: what this rank sends and what it receives.
struct transfer_program {
  message send, recv;
  offset direction{0, 0, 0};  ///< where the send goes (the receive comes from -direction)
  int tag = 0;
  bool self = false;        ///< peer is this rank itself (periodic dimension of size 1): a local copy
  bool send_first = false;  ///< rendezvous order: colour of this rank along the transfer's direction
  /// Staging in the round's scratch, per direction (0 forward, 1 reverse): where this transfer's
  /// space starts and how much of it holds the arrival (the rest packs the departure). Only
  /// messages that cannot go in place are staged.
  std::size_t staged[2] = {0, 0};
  std::size_t staged_in[2] = {0, 0};
};

/// A copy inside the buffer: `count` elements from `from` to `to`.
struct local_copy {
  std::size_t from = 0, to = 0, count = 0;
};

/// One nonblocking call of a direct round: `count` elements at `first`, to or from `peer`.
struct direct_post {
  std::size_t first = 0, count = 0;
  int peer = 0, tag = 0;
};

/// A forward round whose every message is one contiguous range both ways (every
/// Shift round): it runs as these precomputed receives, sends and copies to the
/// rank itself, with no packing, no staging and no per-transfer decisions.
struct direct_round {
  std::vector<direct_post> receives, sends;
  std::vector<local_copy> copies;
};

struct round_program {
  std::vector<transfer_program> transfers;
  /// Set (`direct.has_value()`) when the forward round needs no packing: see direct_round.
  std::optional<direct_round> direct;
};

/// Everything the executor needs to run a schedule on one rank.
struct program {
  block_layout layout;
  std::vector<round_program> rounds;
  std::size_t messages_sent = 0;  ///< non-empty messages to other ranks
  std::size_t elements_sent = 0;  ///< elements in those messages
  std::size_t elements_received = 0;
  std::size_t scratch[2] = {0, 0};  ///< elements of staging space any one round needs, forward / reverse
  /// Which compilation the program comes from (compile() numbers each; 0: none): copies and
  /// remapped copies (remap.hpp: the same rounds, transfers and peers, in other cells or units)
  /// keep it, so the shared-memory path's window carries every program derived from its own.
  std::uint64_t lineage = 0;
};

/// Programs compiled so far in this process (what numbers their lineage).
inline std::atomic<std::uint64_t> compiled_programs{0};

/// Whether this rank sends in transfer `t`, and whether it receives.
inline bool sends(const grid_shape& grid, const offset& coords, const transfer& t) {
  return grid.exists(coords, t.direction) && t.senders.contains(coords);
}
inline bool receives(const grid_shape& grid, const offset& coords, const transfer& t) {
  const auto from = grid.neighbor_at(coords, -t.direction);
  return from && t.senders.contains(grid.coords_of(from->rank));
}

inline std::string schedule_error(std::string_view strategy, const std::string& what) {
  return "strategy " + std::string(strategy) + " has an invalid schedule: " + what;
}

/// Offsets this rank holds at any time, following the schedule, in canonical
/// order; checks that a round sends only what is held and that nothing
/// arrives twice. A flag per offset of the schedule's box (offsets_reached),
/// not a tree: the simulator compiles one program per class of ranks, which on
/// non-periodic grids is thousands of programs.
inline std::vector<offset> held_offsets(const schedule& s, const grid_shape& grid, const offset& coords,
                                        std::string_view strategy) {
  const detail::offset_box box = offsets_reached(s);
  enum : char { absent, held, arriving };
  std::vector<char> state(box.volume(), absent);
  state[box.index(zero_offset)] = held;
  std::vector<std::size_t> arrived;
  for (std::size_t r = 0; r < s.rounds.size(); ++r) {
    arrived.clear();
    for (const transfer& t : s.rounds[r].transfers) {
      if (detail::sends(grid, coords, t))
        for (const offset& o : t.blocks)
          if (grid.exists(coords, o) && state[box.index(o)] != held)
            throw error(schedule_error(
                strategy, "round " + std::to_string(r) + " sends offset " + to_string(o) + " before holding it"));
      if (!detail::receives(grid, coords, t)) continue;
      for (const offset& o : t.blocks) {
        const offset mine = o - t.direction;
        if (!grid.exists(coords, mine)) continue;
        char& at = state[box.index(mine)];
        if (at != absent)
          throw error(schedule_error(
              strategy, "round " + std::to_string(r) + " delivers offset " + to_string(mine) + " a second time"));
        at = arriving;
        arrived.push_back(box.index(mine));
      }
    }
    for (const std::size_t i : arrived) state[i] = held;
  }
  std::vector<offset> out;
  offset o;
  for (o[2] = box.lo[2]; o[2] <= box.hi[2]; ++o[2])  // canonical order: z slowest
    for (o[1] = box.lo[1]; o[1] <= box.hi[1]; ++o[1])
      for (o[0] = box.lo[0]; o[0] <= box.hi[0]; ++o[0])
        if (state[box.index(o)] == held) out.push_back(o);
  return out;
}

inline message make_message(const block_layout& layout, int peer, const std::vector<offset>& offsets) {
  message m;
  for (const offset& o : offsets) {
    const int slot = layout.find(o);
    m.slots.push_back(slot);
    m.count += layout.slots()[slot].count;
  }
  if (m.count == 0) return {};  // both ends know the sizes: nothing to say, no message
  m.peer = peer;
  m.contiguous = true;
  m.first = layout.slots()[m.slots.front()].first;
  for (std::size_t i = 1; i < m.slots.size(); ++i) {
    const block_slot &a = layout.slots()[m.slots[i - 1]], &b = layout.slots()[m.slots[i]];
    m.contiguous = m.contiguous && b.first == a.first + a.count;
  }
  return m;
}

/// The round as precomputed calls when all its messages are single contiguous
/// ranges (absent ones count as contiguous), else nothing.
inline std::optional<direct_round> direct_form(const round_program& rp) {
  auto plain = [](const message& m) { return !m.selected && (!m.exists() || m.contiguous); };
  if (!std::all_of(rp.transfers.begin(), rp.transfers.end(),
                   [&](const transfer_program& t) { return plain(t.send) && plain(t.recv); }))
    return std::nullopt;
  direct_round d;
  for (const transfer_program& t : rp.transfers) {
    if (t.self) {
      if (t.send.exists() && t.send.count) d.copies.push_back({t.send.first, t.recv.first, t.send.count});
      continue;
    }
    if (t.recv.exists()) d.receives.push_back({t.recv.first, t.recv.count, t.recv.peer, t.tag});
    if (t.send.exists()) d.sends.push_back({t.send.first, t.send.count, t.send.peer, t.tag});
  }
  return d;
}

/// Lays out each round's staging space: forwards, non-contiguous arrivals and
/// departures are staged; backwards, every arrival (it is combined, not stored)
/// and the non-contiguous departures. Also counts the messages and elements.
inline void assign_staging(program& p) {
  p.messages_sent = p.elements_sent = p.elements_received = 0;
  p.scratch[0] = p.scratch[1] = 0;
  for (round_program& rp : p.rounds) {
    rp.direct = direct_form(rp);
    std::size_t scratch[2] = {0, 0};
    for (transfer_program& tp : rp.transfers) {
      if (tp.self) continue;
      if (tp.send.exists()) {
        ++p.messages_sent;
        p.elements_sent += tp.send.count;
      }
      if (tp.recv.exists()) p.elements_received += tp.recv.count;
      auto packed = [](const message& m) { return m.exists() && !m.contiguous ? m.count : 0; };
      const std::size_t in[2] = {packed(tp.recv), tp.send.exists() ? tp.send.count : 0};
      const std::size_t out[2] = {packed(tp.send), packed(tp.recv)};
      for (int dir = 0; dir < 2; ++dir) {
        tp.staged[dir] = scratch[dir];
        tp.staged_in[dir] = in[dir];
        scratch[dir] += in[dir] + out[dir];
      }
    }
    for (int dir = 0; dir < 2; ++dir) p.scratch[dir] = std::max(p.scratch[dir], scratch[dir]);
  }
}

/// Compiles `s` for the rank at `coords`. `count_of(o)` is the element count
/// of the block at offset `o` (0 for the own block). Throws haloshift::error
/// when the schedule is not a valid exchange for `wanted`.
/// Moves a compiled program's tags to the plan's range starting at `base` (see detail/mpi/tags.hpp).
inline void shift_tags(program& p, int base) {
  auto moved = [base](int tag) { return (tag + base) % plan_tag_count; };
  for (round_program& r : p.rounds) {
    for (transfer_program& t : r.transfers) t.tag = moved(t.tag);
    if (r.direct)
      for (auto* posts : {&r.direct->receives, &r.direct->sends})
        for (direct_post& c : *posts) c.tag = moved(c.tag);
  }
}

/// Transfers in the widest round of `s`: how many tags a plan running it claims.
inline std::size_t widest_round(const schedule& s) {
  std::size_t widest = 1;
  for (const schedule_round& r : s.rounds) widest = std::max(widest, r.transfers.size());
  return widest;
}

template <class CountOf>
program compile(const schedule& s, const grid_shape& grid, const offset& coords, const range& wanted, CountOf count_of,
                std::string_view strategy = "custom", own_place place = own_place::canonical) {
  std::vector<offset> held = detail::held_offsets(s, grid, coords, strategy);
  for (const offset& o : offsets(wanted))
    if (grid.exists(coords, o) && !std::binary_search(held.begin(), held.end(), o, detail::canonical_order{}))
      throw error(
          detail::schedule_error(strategy, "rank at " + to_string(coords) + " never receives offset " + to_string(o)));
  program p;
  p.lineage = ++compiled_programs;
  p.layout = block_layout(grid, coords, std::move(held), wanted, count_of, place);
  const int me = grid.rank_of(coords);
  for (const schedule_round& r : s.rounds) {
    round_program rp;
    for (std::size_t i = 0; i < r.transfers.size(); ++i) {
      const transfer& t = r.transfers[i];
      transfer_program tp;
      tp.tag = static_cast<int>(i % plan_tag_count);  // below the sparse exchange's tags
      tp.direction = t.direction;
      tp.send_first = detail::sends_first(grid, coords, t.direction);
      std::vector<offset> out, in;
      if (detail::sends(grid, coords, t)) {
        for (const offset& o : t.blocks)
          if (grid.exists(coords, o)) out.push_back(o);
        tp.send = detail::make_message(p.layout, grid.neighbor_at(coords, t.direction)->rank, out);
      }
      if (detail::receives(grid, coords, t)) {
        for (const offset& o : t.blocks)
          if (grid.exists(coords, o - t.direction)) in.push_back(o - t.direction);
        tp.recv = detail::make_message(p.layout, grid.neighbor_at(coords, -t.direction)->rank, in);
      }
      tp.self = tp.send.peer == me;
      if (tp.send.exists() || tp.recv.exists()) rp.transfers.push_back(std::move(tp));
    }
    p.rounds.push_back(std::move(rp));
  }
  detail::assign_staging(p);
  return p;
}

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
// Whole-grid simulation without MPI: compile every rank's program, match each
// send with the receive of the same transfer on the peer, move block labels
// along the matches and check every rank ends with exactly the oracle's blocks.

#include "../support/catch.hpp"
#include <haloshift/auto.hpp>

#include <map>

#include "../support/oracle.hpp"

namespace hs = haloshift;

namespace {

// Uneven but never empty: an empty block travels in no message, so it could not be traced here
// (the MPI tests cover empty blocks).
std::size_t count_of_rank(int r) { return static_cast<std::size_t>((r * 3 + 1) % 4 + 1); }

template <class Strategy>
void simulate(const hs::grid_shape& g, const hs::range& r, const hs::strategy_parameters& params = {}) {
  const hs::schedule s = hs::detail::schedule_of<Strategy>(g, r, params);
  std::vector<hs::detail::program> programs;
  for (int rank = 0; rank < g.size(); ++rank) {
    const hs::offset c = g.coords_of(rank);
    programs.push_back(hs::detail::compile(s, g, c, r, [&](const hs::offset& o) {
      return count_of_rank(g.neighbor_at(c, o)->rank);
    }, Strategy::name));
  }
  // label[rank][slot] = rank whose data the slot holds (-1: not yet)
  std::vector<std::vector<int>> label(g.size());
  for (int rank = 0; rank < g.size(); ++rank) {
    label[rank].assign(programs[rank].layout.slots().size(), -1);
    label[rank][programs[rank].layout.own()] = rank;
  }
  for (std::size_t round = 0; round < s.rounds.size(); ++round) {
    auto next = label;
    for (int rank = 0; rank < g.size(); ++rank) {
      const auto& sends = programs[rank].rounds[round].transfers;
      for (const auto& t : sends) {
        if (!t.send.exists()) continue;
        const int peer = t.send.peer;
        // The peer's transfer with the same tag receives it from us.
        const hs::detail::transfer_program* match = nullptr;
        for (const auto& u : programs[peer].rounds[round].transfers)
          if (u.tag == t.tag && u.recv.peer == rank) match = &u;
        REQUIRE(match);
        REQUIRE(match->recv.count == t.send.count);
        REQUIRE(match->recv.slots.size() == t.send.slots.size());
        for (std::size_t i = 0; i < t.send.slots.size(); ++i) {
          const int from = label[rank][t.send.slots[i]];
          INFO("round " << round << " rank " << rank << " sends offset "
                        << hs::to_string(programs[rank].layout.slots()[t.send.slots[i]].off) << " to " << peer);
          REQUIRE(from >= 0);  // sent only after it was held
          REQUIRE(next[peer][match->recv.slots[i]] == -1);  // arrives once
          next[peer][match->recv.slots[i]] = from;
          REQUIRE(programs[peer].layout.slots()[match->recv.slots[i]].count == count_of_rank(from));
        }
      }
    }
    label = std::move(next);
  }
  oracle::grid og;
  for (int d = 0; d < 3; ++d) {
    og.dims[d] = g.dim(d);
    og.periodic[d] = g.periodic(d);
  }
  for (int rank = 0; rank < g.size(); ++rank) {
    const int separated = r.pattern == hs::halo_pattern::faces             ? 1
                          : r.pattern == hs::halo_pattern::faces_and_edges ? 2
                                                                           : 3;
    const auto want = oracle::halo_of(og, rank, r.k, r.kind == hs::shell::eighth, separated);
    std::vector<std::pair<hs::offset, int>> got;
    const auto& slots = programs[rank].layout.slots();
    for (std::size_t s2 = 0; s2 < slots.size(); ++s2)
      if (slots[s2].visible) got.emplace_back(slots[s2].off, label[rank][s2]);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].first == want[i].offset);
      CHECK(got[i].second == want[i].source);
    }
  }
}

}  // namespace

using strategies = std::tuple<hs::Shift, hs::TeamShift, hs::SingleHop, hs::TtlMultiHop>;

TEMPLATE_LIST_TEST_CASE("every block reaches every holder exactly once on grids larger than the MPI sweep",
                        "[schedule][simulation]", strategies) {
  for (bool periodic : {true, false})
    for (int k = 1; k <= 4; ++k)
      for (auto kind : {hs::shell::full, hs::shell::eighth})
        for (auto pattern : {hs::halo_pattern::full, hs::halo_pattern::faces, hs::halo_pattern::faces_and_edges}) {
          if (pattern != hs::halo_pattern::full && k > 2) continue;  // k = 2 already forwards along every axis
          INFO("periodic " << periodic << " k " << k << " eighth " << (kind == hs::shell::eighth) << " pattern "
                           << static_cast<int>(pattern));
          const hs::grid_shape g3({6, 4, 3}, {periodic, !periodic, periodic});
          simulate<TestType>(g3, hs::make_range(g3, k, kind, pattern), {.team = {3, 2, 1}});
          const hs::grid_shape g2({9, 2}, {periodic, periodic});
          simulate<TestType>(g2, hs::make_range(g2, k, kind, pattern), {.team = {3, 2, 1}});
          const hs::grid_shape g1({11}, {periodic});
          simulate<TestType>(g1, hs::make_range(g1, k, kind, pattern));
        }
}

namespace {
/// Messages and elements rank 0 sends, every block holding `m` elements.
std::pair<std::size_t, std::size_t> sent(const hs::schedule& s, const hs::grid_shape& g, const hs::range& r,
                                         std::size_t m) {
  const hs::detail::program p = hs::detail::compile(s, g, hs::zero_offset, r, [&](const hs::offset&) { return m; });
  return {p.messages_sent, p.elements_sent};
}
}  // namespace

TEST_CASE("a halo pattern sends only what it needs: 2 d k face messages, 2 d k + 2 d (d-1) k^2 with edges",
          "[schedule][pattern]") {
  const std::size_t m = 5;
  for (int k = 1; k <= 2; ++k) {
    INFO("k " << k);
    const hs::grid_shape g3({7, 7, 7}, {true, true, true}), g2({7, 7}, {true, true});
    const hs::range faces3 = hs::make_range(g3, k, hs::shell::full, hs::halo_pattern::faces);
    const hs::range edges3 = hs::make_range(g3, k, hs::shell::full, hs::halo_pattern::faces_and_edges);
    const hs::range faces2 = hs::make_range(g2, k, hs::shell::full, hs::halo_pattern::faces);
    const std::size_t face_messages3 = 6 * static_cast<std::size_t>(k), edge_offsets3 = 12 * k * k;
    // Every strategy sends each face partner the own block once; Shift in k steps per side and dimension.
    for (const auto& [name, schedule] :
         {std::pair{"Shift", hs::Shift::make_schedule(g3, faces3)},
          std::pair{"SingleHop", hs::SingleHop::make_schedule(g3, faces3)},
          std::pair{"TtlMultiHop", hs::TtlMultiHop::make_schedule(g3, faces3)}}) {
      INFO(name);
      CHECK(sent(schedule, g3, faces3, m) == std::pair{face_messages3, face_messages3 * m});
    }
    CHECK(sent(hs::SingleHop::make_schedule(g2, faces2), g2, faces2, m) ==
          std::pair{4 * static_cast<std::size_t>(k), 4 * k * m});
    // With edges, SingleHop adds one message per edge offset; Shift keeps 6k messages, its later phases
    // carrying the earlier phases' faces but never an edge block into a third dimension.
    CHECK(sent(hs::SingleHop::make_schedule(g3, edges3), g3, edges3, m) ==
          std::pair{face_messages3 + edge_offsets3, (face_messages3 + edge_offsets3) * m});
    const std::size_t shift_blocks = 2 * k * (1 + (1 + 2 * k) + (1 + 4 * k));  // phases x, y, z carry 1, 1+2k, 1+4k
    CHECK(sent(hs::Shift::make_schedule(g3, edges3), g3, edges3, m) == std::pair{face_messages3, shift_blocks * m});
  }
}

// SPDX-License-Identifier: BSD-3-Clause
// Whole-grid simulation without MPI: compile every rank's program, match each
// send with the receive of the same transfer on the peer, move block labels
// along the matches and check every rank ends with exactly the oracle's blocks.

#include "../support/catch.hpp"
#include <haloshift/auto.hpp>

#include <map>
#include <memory>
#include <string_view>

#include "../support/oracle.hpp"

namespace hs = haloshift;

namespace {

// Uneven but never empty: an empty block travels in no message, so it could not be traced here
// (the MPI tests cover empty blocks).
std::size_t count_of_rank(int r) { return static_cast<std::size_t>((r * 3 + 1) % 4 + 1); }

/// Every rank's program of `s`.
std::vector<hs::detail::program> programs_of(const hs::schedule& s, const hs::grid_shape& g, const hs::range& r,
                                             std::string_view name) {
  std::vector<hs::detail::program> programs;
  for (int rank = 0; rank < g.size(); ++rank) {
    const hs::offset c = g.coords_of(rank);
    programs.push_back(hs::detail::compile(s, g, c, r, [&](const hs::offset& o) {
      return count_of_rank(g.neighbor_at(c, o)->rank);
    }, name));
  }
  return programs;
}

template <class Strategy>
void simulate(const hs::grid_shape& g, const hs::range& r, const hs::strategy_parameters& params = {}) {
  const hs::schedule s = hs::detail::schedule_of<Strategy>(g, r, params);
  const std::vector<hs::detail::program> programs = programs_of(s, g, r, Strategy::name);
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
  og.x_fastest = g.order() == hs::grid_shape::rank_order::first_fastest;
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

namespace {
/// Per grid rank its node: consecutive groups of sizes[0], sizes[1], ... ranks, the list repeated.
std::shared_ptr<const std::vector<int>> node_groups(int ranks, const std::vector<int>& sizes) {
  auto node_of = std::make_shared<std::vector<int>>();
  for (std::size_t i = 0; static_cast<int>(node_of->size()) < ranks; ++i)
    for (int j = 0; j < sizes[i % sizes.size()] && static_cast<int>(node_of->size()) < ranks; ++j)
      node_of->push_back(static_cast<int>(i));
  return node_of;
}

/// Messages of every rank's program, per ordered pair of nodes (the nodes of sender and receiver).
std::map<std::pair<int, int>, int> messages_between(const std::vector<hs::detail::program>& programs,
                                                    const std::vector<int>& node_of) {
  std::map<std::pair<int, int>, int> out;
  for (std::size_t rank = 0; rank < programs.size(); ++rank)
    for (const auto& round : programs[rank].rounds)
      for (const auto& t : round.transfers)
        if (t.send.exists() && !t.self) ++out[{node_of[rank], node_of[static_cast<std::size_t>(t.send.peer)]}];
  return out;
}
}  // namespace

TEST_CASE("NodeAggregate delivers every block exactly once, one message per node pair", "[schedule][simulation][nodes]") {
  // One node, nodes of uneven sizes (consecutive ranks; one of a single rank), a node per rank and
  // nodes that are no block of ranks at all (every third rank); ranks numbered z or x fastest.
  const std::vector<std::vector<int>> layouts{{1000}, {5, 3}, {2, 9, 4}, {1}};
  auto check = [](const hs::grid_shape& g, const hs::range& r, std::shared_ptr<const std::vector<int>> node_of) {
    simulate<hs::NodeAggregate>(g, r, {.node_of = node_of});
    const hs::schedule s = hs::NodeAggregate::make_schedule(g, r, {.node_of = node_of});
    for (const auto& [pair, messages] : messages_between(programs_of(s, g, r, "NodeAggregate"), *node_of))
      if (pair.first != pair.second) CHECK(messages == 1);
  };
  for (bool periodic : {true, false})
    for (int k = 1; k <= 4; ++k)
      for (auto kind : {hs::shell::full, hs::shell::eighth})
        for (auto pattern : {hs::halo_pattern::full, hs::halo_pattern::faces}) {
          if (k > 2 && (kind == hs::shell::eighth || pattern == hs::halo_pattern::faces)) continue;  // seen at k <= 2
          INFO("periodic " << periodic << " k " << k << " eighth " << (kind == hs::shell::eighth) << " pattern "
                           << static_cast<int>(pattern));
          for (const hs::grid_shape& g : {hs::grid_shape({6, 4, 3}, {periodic, !periodic, periodic}),
                                          hs::grid_shape({9, 2}, {periodic, periodic}), hs::grid_shape({11}, {periodic}),
                                          hs::grid_shape({1, 2, 1}, {true, periodic, true}),
                                          hs::grid_shape({4, 3, 2}, {periodic, true, !periodic},
                                                         hs::grid_shape::rank_order::first_fastest)}) {
            const hs::range r = hs::make_range(g, k, kind, pattern);
            for (const auto& sizes : layouts) check(g, r, node_groups(g.size(), sizes));
            auto every_third = std::make_shared<std::vector<int>>();
            for (int rank = 0; rank < g.size(); ++rank) every_third->push_back(rank % 3);
            check(g, r, every_third);
          }
        }
}

TEST_CASE("NodeAggregate on 2 nodes of 4 ranks of a periodic 2x2x2 grid at k = 1: one message per node pair",
          "[schedule][nodes]") {
  const hs::grid_shape g({2, 2, 2}, {true, true, true});
  const hs::range r = hs::make_range(g, 1);
  const auto node_of = node_groups(8, {4});  // the planes x = 0 and x = 1
  const auto programs = programs_of(hs::NodeAggregate::make_schedule(g, r, {.node_of = node_of}), g, r, "NodeAggregate");
  // Rank 0 and rank 4 lead their node for both directions: each sends its 3 node mates their blocks
  // (round 1), the other node its node's blocks (round 2) and scatters what came back (round 3); the
  // others send each node mate one message.
  std::vector<std::size_t> sent;
  for (const auto& p : programs) sent.push_back(p.messages_sent);
  CHECK(sent == std::vector<std::size_t>{7, 3, 3, 3, 7, 3, 3, 3});
  const std::map<std::pair<int, int>, int> pairs{{{0, 0}, 15}, {{0, 1}, 1}, {{1, 0}, 1}, {{1, 1}, 15}};
  CHECK(messages_between(programs, *node_of) == pairs);
  // Flat: SingleHop 26 a rank, 18 of them to the other node; Shift 6 a rank, its 2 x-phase messages across.
  const auto flat = [&](const hs::schedule& s) {
    const auto p = programs_of(s, g, r, "flat");
    return std::pair{p[0].messages_sent, messages_between(p, *node_of).at({0, 1})};
  };
  CHECK(flat(hs::SingleHop::make_schedule(g, r)) == std::pair<std::size_t, int>{26, 72});
  CHECK(flat(hs::Shift::make_schedule(g, r)) == std::pair<std::size_t, int>{6, 8});
  // 4 nodes of 2 (lines along z): every node pair still one message, 12 in all.
  const auto four = node_groups(8, {2});
  const auto spread = messages_between(
      programs_of(hs::NodeAggregate::make_schedule(g, r, {.node_of = four}), g, r, "NodeAggregate"), *four);
  int between = 0;
  for (const auto& [pair, messages] : spread)
    if (pair.first != pair.second) {
      CHECK(messages == 1);
      between += messages;
    }
  CHECK(between == 12);
}

TEST_CASE("NodeAggregate needs a node layout with one node per rank", "[schedule][nodes]") {
  const hs::grid_shape g({2, 3}, {true, false});
  const hs::range r = hs::make_range(g, 1);
  CHECK_THROWS_WITH(hs::NodeAggregate::make_schedule(g, r, {}),
                    Catch::Contains("NodeAggregate needs the grid's node layout"));
  CHECK_THROWS_WITH(hs::NodeAggregate::make_schedule(g, r, {.node_of = node_groups(5, {2})}),
                    Catch::Contains("node_of has 5 entries, the grid 6 ranks"));
  auto negative = std::make_shared<std::vector<int>>(6, 0);
  (*negative)[4] = -1;
  CHECK_THROWS_WITH(hs::NodeAggregate::make_schedule(g, r, {.node_of = negative}),
                    Catch::Contains("node_of[4] = -1 must be >= 0"));
}

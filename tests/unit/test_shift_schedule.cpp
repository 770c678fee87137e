// SPDX-License-Identifier: BSD-3-Clause
// Shift's schedule against the closed forms of docs/strategies.md and the
// Shift paper: 6k messages per rank (fewer at non-periodic borders), phase
// sizes m, (2k+1)m, (2k+1)^2 m, received volume ((2k+1)^3 - 1) m.

#include "../support/catch.hpp"
#include <haloshift/haloshift.hpp>

namespace hs = haloshift;

namespace {
hs::detail::program compile_uniform(const hs::schedule& s, const hs::grid_shape& g, const hs::offset& c, const hs::range& r,
                            std::size_t m) {
  return hs::detail::compile(s, g, c, r, [m](const hs::offset&) { return m; }, "Shift");
}
}  // namespace

TEST_CASE("Shift on a periodic 3D grid: 6k messages, paper sizes and volume", "[schedule][shift]") {
  const std::size_t m = 5;
  for (int k = 1; k <= 4; ++k) {
    const hs::grid_shape g({3, 2, 4}, {true, true, true});  // small dims: k >= P_d included
    const hs::range r = hs::make_range(g, k);
    const hs::schedule s = hs::Shift::make_schedule(g, r);
    REQUIRE(s.rounds.size() == static_cast<std::size_t>(3 * k));
    for (int rank = 0; rank < g.size(); ++rank) {
      const hs::detail::program p = compile_uniform(s, g, g.coords_of(rank), r, m);
      CHECK(p.messages_sent == static_cast<std::size_t>(6 * k));
      const std::size_t w = 2 * k + 1;
      CHECK(p.elements_received == (w * w * w - 1) * m);
      CHECK(p.elements_sent == 2 * k * m * (1 + w + w * w));
      for (std::size_t i = 0; i < p.rounds.size(); ++i) {
        const std::size_t phase = i / k, expected = m * (phase == 0 ? 1 : phase == 1 ? w : w * w);
        for (const auto& t : p.rounds[i].transfers) CHECK(t.send.count == expected);
      }
      // Every message of Shift is one contiguous range of the buffer: no packing.
      for (const auto& round : p.rounds)
        for (const auto& t : round.transfers) CHECK((t.send.contiguous && t.recv.contiguous));
    }
  }
}

TEST_CASE("Shift counts fewer messages at non-periodic borders, as a closed form predicts", "[schedule][shift]") {
  for (int k = 1; k <= 3; ++k) {
    const hs::grid_shape g({5, 3}, {false, false});
    const hs::range r = hs::make_range(g, k);
    const hs::schedule s = hs::Shift::make_schedule(g, r);
    for (int rank = 0; rank < g.size(); ++rank) {
      const hs::offset c = g.coords_of(rank);
      // Along d, step s sends right iff a right neighbour exists and the box s-1 to the left exists.
      std::size_t expected = 0;
      for (int d = 0; d < 2; ++d)
        for (int step = 1; step <= k; ++step) {
          expected += (c[d] + 1 < g.dim(d) && c[d] - (step - 1) >= 0) ? 1 : 0;
          expected += (c[d] - 1 >= 0 && c[d] + (step - 1) < g.dim(d)) ? 1 : 0;
        }
      CHECK(compile_uniform(s, g, c, r, 2).messages_sent == expected);
    }
  }
}

TEST_CASE("Shift with the eighth shell sends 3k messages one way and receives (k+1)^3 - 1 blocks",
          "[schedule][shift]") {
  for (int k = 1; k <= 3; ++k) {
    const hs::grid_shape g({2, 2, 3}, {true, true, true});
    const hs::range r = hs::make_range(g, k, hs::shell::eighth);
    const hs::detail::program p = compile_uniform(hs::Shift::make_schedule(g, r), g, {0, 0, 0}, r, 1);
    CHECK(p.messages_sent == static_cast<std::size_t>(3 * k));
    CHECK(p.elements_received == static_cast<std::size_t>((k + 1) * (k + 1) * (k + 1) - 1));
  }
}

TEST_CASE("compile rejects a schedule that is not a valid exchange", "[schedule][errors]") {
  const hs::grid_shape g({4}, {true});
  const hs::range r = hs::make_range(g, 1);
  const auto one = [](const hs::offset&) { return std::size_t{1}; };
  hs::schedule forwards_unknown{{hs::schedule_round{{hs::transfer{{1, 0, 0}, {{-1, 0, 0}}}}}}};
  CHECK_THROWS_WITH(hs::detail::compile(forwards_unknown, g, {0, 0, 0}, r, one, "Broken"),
                    Catch::Contains("strategy Broken") && Catch::Contains("before holding it"));
  hs::schedule incomplete{{hs::schedule_round{{hs::transfer{{1, 0, 0}, {{0, 0, 0}}}}}}};
  CHECK_THROWS_WITH(hs::detail::compile(incomplete, g, {0, 0, 0}, r, one, "Broken"), Catch::Contains("never receives offset (1,0,0)"));
  hs::schedule twice{{hs::schedule_round{{hs::transfer{{1, 0, 0}, {{0, 0, 0}}}, hs::transfer{{1, 0, 0}, {{0, 0, 0}}}}}}};
  CHECK_THROWS_WITH(hs::detail::compile(twice, g, {0, 0, 0}, r, one, "Broken"), Catch::Contains("a second time"));
}

TEST_CASE("plans run each transfer in the earliest round: a faces-only Shift in k rounds, a full one as written",
          "[schedule][shift][pattern]") {
  for (int k = 1; k <= 3; ++k) {
    INFO("k " << k);
    for (const hs::grid_shape& g :
         {hs::grid_shape({5, 4, 3}, {true, false, true}), hs::grid_shape({7, 2}, {false, true})}) {
      const int dims = g.ndims();
      // Faces only: phase d carries the own block alone, so its step s needs only phase d's step s - 1.
      const hs::range faces = hs::make_range(g, k, hs::shell::full, hs::halo_pattern::faces);
      const hs::schedule written = hs::Shift::make_schedule(g, faces),
                         run = hs::detail::schedule_of<hs::Shift>(g, faces);
      REQUIRE(written.rounds.size() == static_cast<std::size_t>(dims * k));
      REQUIRE(run.rounds.size() == static_cast<std::size_t>(k));
      for (int s = 0; s < k; ++s) {
        std::vector<hs::transfer> want;  // step s + 1 of every phase, in phase order
        for (int d = 0; d < dims; ++d)
          for (const hs::transfer& t : written.rounds[static_cast<std::size_t>(d * k + s)].transfers) want.push_back(t);
        CHECK(run.rounds[static_cast<std::size_t>(s)].transfers == want);
      }
      // Full and faces-and-edges: phase d carries what phase d - 1 brought, and the eighth shell
      // likewise, so nothing can move.
      for (const hs::range& r : {hs::make_range(g, k), hs::make_range(g, k, hs::shell::eighth),
                                 hs::make_range(g, k, hs::shell::full, hs::halo_pattern::faces_and_edges)})
        CHECK(hs::detail::schedule_of<hs::Shift>(g, r) == hs::Shift::make_schedule(g, r));
      // Teams restrict their senders: what a rank holds depends on its class, so nothing moves either.
      if (dims == 3) {
        const hs::strategy_parameters teams{.team = {5, 2, 3}};
        CHECK(hs::detail::schedule_of<hs::TeamShift>(g, faces, teams) == hs::TeamShift::make_schedule(g, faces, teams));
      }
    }
  }
  // A schedule that sends a block nobody delivers is left for the plan's check to name its round.
  const hs::schedule broken{{hs::schedule_round{{hs::transfer{{1, 0, 0}, {{0, 0, 0}}}}},
                             hs::schedule_round{{hs::transfer{{1, 0, 0}, {{-2, 0, 0}}}}}}};
  CHECK(hs::detail::earliest_rounds(broken) == broken);
}

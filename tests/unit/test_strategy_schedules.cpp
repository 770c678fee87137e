// SPDX-License-Identifier: BSD-3-Clause
// Every strategy's schedule against the closed forms of docs/strategies.md:
// messages, rounds and bytes per rank come from the compiled schedule itself.

#include "../support/catch.hpp"
#include <haloshift/haloshift.hpp>

#include <set>

namespace hs = haloshift;

namespace {
template <class S>
hs::detail::program compile_uniform(const hs::grid_shape& g, const hs::offset& c, const hs::range& r, std::size_t m,
                            const hs::strategy_parameters& p = {}) {
  return hs::detail::compile(hs::detail::schedule_of<S>(g, r, p), g, c, r, [m](const hs::offset&) { return m; }, S::name);
}
std::size_t power(std::size_t b, int e) {
  std::size_t v = 1;
  while (e-- > 0) v *= b;
  return v;
}
}  // namespace

TEST_CASE("SingleHop: one round, a message per partner", "[schedule][singlehop]") {
  for (int nd = 1; nd <= 3; ++nd)
    for (int k = 1; k <= 3; ++k) {
      // Wider than 2k boxes: no offset wraps onto the rank itself (that would be a local copy, no message).
      const hs::grid_shape g(std::vector<int>(nd, 2 * k + 2), std::vector<bool>(nd, true));
      const hs::range r = hs::make_range(g, k);
      const auto s = hs::SingleHop::make_schedule(g, r);
      CHECK(s.rounds.size() == 1);
      const std::size_t partners = power(2 * k + 1, nd) - 1;
      for (int rank : {0, g.size() / 2, g.size() - 1}) {
        const auto p = compile_uniform<hs::SingleHop>(g, g.coords_of(rank), r, 4);
        CHECK(p.messages_sent == partners);
        CHECK(p.elements_sent == partners * 4);
        CHECK(p.elements_received == partners * 4);
      }
    }
}

TEST_CASE("TtlMultiHop: k rounds to the direct neighbours, NAStJA's forwarding counts", "[schedule][ttl]") {
  for (int nd = 1; nd <= 3; ++nd)
    for (int k = 1; k <= 4; ++k) {
      const hs::grid_shape g(std::vector<int>(nd, 3), std::vector<bool>(nd, true));
      const hs::range r = hs::make_range(g, k);
      const auto s = hs::TtlMultiHop::make_schedule(g, r);
      REQUIRE(s.rounds.size() == static_cast<std::size_t>(k));
      const std::size_t neighbours = power(3, nd) - 1;
      for (std::size_t h = 1; h <= s.rounds.size(); ++h) {
        const auto& round = s.rounds[h - 1];
        CHECK(round.transfers.size() == neighbours);
        std::size_t forwardings = 0, blocks = 0;
        for (const auto& t : round.transfers) {
          for (int i = 0; i < 3; ++i) CHECK(std::abs(t.direction[i]) <= 1);  // direct neighbours only
          // A message along w of round h carries (2h-1)^(nd - |support w|) blocks.
          int support = 0;
          for (int i = 0; i < 3; ++i) support += t.direction[i] != 0;
          CHECK(t.blocks.size() == power(2 * h - 1, nd - support));
          blocks += t.blocks.size();
          std::set<hs::offset> from;
          for (const auto& o : t.blocks) from.insert(hs::detail::ttl::last_hop(o, static_cast<int>(h) - 1));
          if (h > 1) forwardings += from.size();
        }
        // Blocks received in round h: those at Chebyshev distance exactly h.
        CHECK(blocks == power(2 * h + 1, nd) - power(2 * h - 1, nd));
        // msn-global-network Fig. 8: faces forward to 1, edges to 3, corners to 7 directions.
        // The paper prints "6*1 + 12*3 + 8*7 = 97" for 3D; the sum is 98.
        if (h > 1) CHECK(forwardings == (nd == 3 ? 98u : nd == 2 ? 16u : 2u));
      }
      const auto p = compile_uniform<hs::TtlMultiHop>(g, {0, 0, 0}, r, 1);
      CHECK(p.messages_sent == neighbours * k);
      CHECK(p.elements_received == power(2 * k + 1, nd) - 1);
    }
}

TEST_CASE("the TTL rule: faces forward to 1, edges to 3, corners to 7 directions", "[schedule][ttl]") {
  const auto directions = hs::detail::ttl::neighbor_directions(3);
  REQUIRE(directions.size() == 26);
  for (const auto& v : directions) {
    int support = 0, targets = 0;
    for (int i = 0; i < 3; ++i) support += v[i] != 0;
    for (const auto& w : directions) targets += hs::detail::ttl::forwards(v, w);
    CHECK(targets == (support == 1 ? 1 : support == 2 ? 3 : 7));
  }
}

TEST_CASE("TeamShift with teams of one is exactly Shift", "[schedule][teamshift]") {
  for (int k = 1; k <= 4; ++k)
    for (auto kind : {hs::shell::full, hs::shell::eighth}) {
      const hs::grid_shape g({4, 3, 2}, {true, false, true});
      const hs::range r = hs::make_range(g, k, kind);
      CHECK(hs::TeamShift::make_schedule(g, r, {.team = {1, 1, 1}}) == hs::Shift::make_schedule(g, r));
    }
}

TEST_CASE("TeamShift per member: rounds, messages and volume of the closed form", "[schedule][teamshift]") {
  const std::size_t m = 3;
  for (int c : {2, 3, 4})
    for (int k = 1; k <= 9; ++k) {
      const hs::grid_shape g({60}, {true});  // wide enough that no super-block wraps onto its own team
      const hs::range r = hs::make_range(g, k);
      const int teams = (k + c - 1) / c;  // K
      const auto s = hs::TeamShift::make_schedule(g, r, {.team = {c, 1, 1}});
      CHECK(s.rounds.size() == static_cast<std::size_t>(3 + (teams - 1) / c));
      for (int x = 0; x < 2 * c; ++x) {
        INFO("c " << c << " k " << k << " x " << x);
        const int i = x % c;
        const std::size_t fetches = i + 1 <= teams ? static_cast<std::size_t>((teams - i - 1) / c + 1) : 0;
        const auto p = compile_uniform<hs::TeamShift>(g, {x, 0, 0}, r, m, {.team = {c, 1, 1}});
        // (A) c-1 sends, (B) 2 per fetch, (C) c-1 sends if anything was fetched.
        CHECK(p.messages_sent == (c - 1) + 2 * fetches + (fetches ? c - 1 : 0));
        // (A) own block, (B) a super-block of c blocks, (C) everything fetched: 2 * fetches * c blocks.
        CHECK(p.elements_sent == m * ((c - 1) + 2 * fetches * c + (c - 1) * 2 * fetches * c));
        // Received: the team (c-1 blocks), then all 2K super-blocks.
        CHECK(p.elements_received == m * ((c - 1) + 2 * teams * c));
      }
    }
}

TEST_CASE("TeamShift rejects team sizes that cannot tile a dimension", "[schedule][teamshift][errors]") {
  const hs::grid_shape g({6, 5}, {true, false});
  const hs::range r = hs::make_range(g, 2);
  CHECK_THROWS_WITH(hs::TeamShift::make_schedule(g, r, {.team = {4, 1, 1}}),
                    Catch::Contains("team[0] = 4 must divide the 6 boxes along dimension 0"));
  CHECK_THROWS_WITH(hs::TeamShift::make_schedule(g, r, {.team = {2, 7, 1}}),
                    Catch::Contains("team[1] = 7 must lie in 1..5"));
  CHECK_THROWS_WITH(hs::TeamShift::make_schedule(g, r, {.team = {-1, 1, 1}}),
                    Catch::Contains("team[0] = -1 must lie in 1..6"));
  CHECK(hs::TeamShift::team_sizes(g, hs::make_range(g, 4), {0, 0, 0}) == hs::offset{2, 1, 1});
}

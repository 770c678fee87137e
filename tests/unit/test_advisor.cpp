// SPDX-License-Identifier: BSD-3-Clause
// The advisor (select/advisor.hpp): the map is explain() cell by cell, and
// the Shift / TeamShift crossovers are where the two predictions meet.

#include "../support/catch.hpp"
#include <haloshift/model/calibration/calibration.hpp>
#include <haloshift/model/cost/paper_formulas.hpp>
#include <haloshift/select/advisor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace hs = haloshift;

namespace {
/// Best TeamShift over the team sizes explain() tries, by closed form (independent of the simulation).
double best_team_closed(const hs::grid_shape& g, const hs::range& r, double m, const hs::hockney& h) {
  double best = INFINITY;
  for (int c = 2; c <= r.k[0]; ++c)
    if (g.dim(0) % c == 0)
      best =
          std::min(best, hs::detail::closed_form::team_shift_rounds(g, r, {c, 1, 1}, m, h, hs::protocol::overlapping));
  return best;
}
}  // namespace

TEST_CASE("advise() ranks every cell as explain() does, k-major", "[advisor]") {
  hs::advice_request q{hs::grid_shape({4, 4, 4}, {true, true, true}), {1, 2, 3}, {8, 1024, 65536},
                       hs::hockney(5e-6, 1e-9, 1e-6)};
  const auto map = hs::advise(q);
  REQUIRE(map.cells.size() == 9);
  REQUIRE(map.team_boundary.size() == 3);
  for (std::size_t ki = 0; ki < q.ks.size(); ++ki)
    for (std::size_t si = 0; si < q.sizes.size(); ++si) {
      const auto& cell = map.at(ki, si);
      CHECK(cell.k == q.ks[ki]);
      CHECK(cell.bytes == q.sizes[si]);
      const auto expected = hs::explain(q.grid, hs::make_range(q.grid, q.ks[ki]), q.sizes[si], q.cost);
      REQUIRE(cell.ranked.size() == expected.size());
      CHECK(cell.winner().strategy == expected.front().strategy);
      CHECK(cell.winner().seconds == expected.front().seconds);
      CHECK(cell.best_of("Shift") >= cell.winner().seconds);
    }
  CHECK(std::isnan(map.at(0, 0).best_of("TeamShift")));  // k = 1: TeamShift is Shift, not a candidate
  CHECK_FALSE(map.team_boundary[0].applies);
}

TEST_CASE("advise() names the bad argument", "[advisor]") {
  hs::advice_request q{hs::grid_shape({4, 4}, {true, true}), {}, {8}, hs::hockney(1e-6, 1e-9)};
  CHECK_THROWS_WITH(hs::advise(q), Catch::Contains("list of k is empty"));
  q.ks = {0};
  CHECK_THROWS_WITH(hs::advise(q), Catch::Contains("k must be >= 1, got 0"));
  q.ks = {1};
  q.sizes = {};
  CHECK_THROWS_WITH(hs::advise(q), Catch::Contains("list of block sizes is empty"));
  q.sizes = {-1};
  CHECK_THROWS_WITH(hs::advise(q), Catch::Contains("must be >= 0 bytes"));
  CHECK_THROWS_WITH(hs::detail::team_shift_tradeoff(q.grid, 2, 100, 10, q.cost, hs::protocol::overlapping),
                    Catch::Contains("low 100"));
}

TEST_CASE("the Shift / TeamShift crossover is where the closed forms meet", "[advisor]") {
  // 1D ring of 64 (simulated), latency-heavy: TeamShift's fewer rounds win small blocks, its extra volume
  // loses large ones, so there is exactly one crossover per k >= 3. (At k = 2 the only team, c = 2,
  // costs 3 alpha + gamma + 9 beta m against Shift's 2 alpha + 2 gamma + 4 beta m: it never wins.)
  const hs::grid_shape g({64}, {true});
  const hs::hockney h(2e-6, 1e-9, 0.5e-6);
  const auto two = hs::detail::team_shift_tradeoff(g, 2, 1, 1e8, h, hs::protocol::overlapping);
  CHECK((two.applies && !two.team_wins_first && two.crossovers.empty()));
  for (int k = 3; k <= 8; ++k) {
    INFO("k " << k);
    const auto t = hs::detail::team_shift_tradeoff(g, k, 1, 1e8, h, hs::protocol::overlapping);
    REQUIRE(t.applies);
    REQUIRE(t.crossovers.size() == 1);
    CHECK(t.team_wins_first);
    const double c = t.crossovers[0];
    const auto r = hs::make_range(g, k);
    const double shift = hs::detail::closed_form::shift(r, c, h, hs::protocol::overlapping);
    CHECK(std::abs(best_team_closed(g, r, c, h) - shift) <= 0.01 * shift);
    CHECK(best_team_closed(g, r, c / 1.1, h) <
          hs::detail::closed_form::shift(r, c / 1.1, h, hs::protocol::overlapping));
    CHECK(best_team_closed(g, r, c * 1.1, h) >
          hs::detail::closed_form::shift(r, c * 1.1, h, hs::protocol::overlapping));
    // The intervals say the same as team_wins().
    const auto in = t.team_intervals(1, 1e8);
    REQUIRE(in.size() == 1);
    CHECK(in[0].first == 1);
    CHECK(in[0].second == c);
    CHECK(t.team_wins(c / 1.1));
    CHECK_FALSE(t.team_wins(c * 1.1));
  }
}

TEST_CASE("pure bandwidth favours Shift, pure latency TeamShift", "[advisor]") {
  const hs::grid_shape g({8, 8, 8}, {true, true, true});
  const auto bandwidth =
      hs::detail::team_shift_tradeoff(g, 4, 8, 1 << 20, hs::hockney(0, 1e-9, 0), hs::protocol::overlapping);
  CHECK(bandwidth.applies);
  CHECK_FALSE(bandwidth.team_wins_first);
  CHECK(bandwidth.crossovers.empty());
  const auto latency =
      hs::detail::team_shift_tradeoff(g, 4, 8, 1 << 20, hs::hockney(1e-6, 0), hs::protocol::overlapping);
  CHECK(latency.team_wins_first);
  CHECK(latency.crossovers.empty());
  CHECK(latency.team_intervals(8, 1 << 20).size() == 1);
}

// The model refinements the validation (docs/performance.md) asked for: a gap
// per piece (rendezvous bursts overlap little) and the cost of copies to the
// rank itself.

TEST_CASE("a piece's own gamma applies to bursts of its messages", "[model][advisor]") {
  const auto h = hs::hockney::piecewise({{0, 1e-6, 1e-9}, {4096, 3e-6, 0.1e-9, 2.5e-6}}, 0.1e-6);
  CHECK(h.gamma(8) == 0.1e-6);      // eager: the model's gamma
  CHECK(h.gamma(8192) == 2.5e-6);   // rendezvous: the piece's
  const hs::grid_shape g({8, 8, 8}, {true, true, true});
  const auto r = hs::make_range(g, 1);
  for (double m : {64.0, 65536.0}) {
    hs::detail::simulation_setup s;
    s.cost = h;
    s.block_bytes = [m](int) { return m; };
    const double expected = h.alpha(m) + 25 * h.gamma(m) + 26 * h.beta(m) * m;  // SingleHop: 26 messages at once
    CHECK(hs::detail::simulate(g, hs::SingleHop::make_schedule(g, r), s).makespan == Approx(expected));
    CHECK(hs::detail::closed_form::single_hop(r, m, h, hs::protocol::overlapping) == Approx(expected));
  }
  // NaN is "not set" (the default): the model's gamma. Infinity is no gap at all.
  CHECK(hs::hockney::piecewise({{0, 1e-6, 1e-9, NAN}}, 0.3e-6).gamma(8) == 0.3e-6);
  CHECK_THROWS_WITH(hs::hockney::piecewise({{0, 1e-6, 1e-9, INFINITY}}, 0), Catch::Contains("invalid"));
  CHECK_THROWS_WITH(hs::hockney::piecewise({{0, NAN, 1e-9}}, 0), Catch::Contains("invalid"));
}

TEST_CASE("copies to the rank itself cost copy_beta per byte, in transfer order", "[model][advisor]") {
  // 2x1x1 periodic, Shift k = 1: phase x goes to the other rank, phases y and z are the rank's own
  // images: 2 copies of 3 blocks, then 2 copies of 9 blocks.
  const hs::grid_shape g({2, 1, 1}, {true, true, true});
  const auto shift = hs::Shift::make_schedule(g, hs::make_range(g, 1));
  const double m = 1000;
  hs::detail::simulation_setup s;
  s.block_bytes = [m](int) { return m; };
  s.cost = hs::hockney(1e-6, 1e-9, 0.5e-6);
  const double free_copies = hs::detail::simulate(g, shift, s).makespan;
  s.cost = s.cost.with_copy_beta(0.1e-9);
  CHECK(hs::detail::simulate(g, shift, s).makespan == Approx(free_copies + 0.1e-9 * m * (2 * 3 + 2 * 9)));
  s.mode = hs::protocol::rendezvous;
  const double rendezvous = hs::detail::simulate(g, shift, s).makespan;
  s.cost = s.cost.with_copy_beta(0);
  CHECK(rendezvous == Approx(hs::detail::simulate(g, shift, s).makespan + 0.1e-9 * m * (2 * 3 + 2 * 9)));
  // On a grid without periodic images nothing changes.
  const hs::grid_shape wide({8, 8, 8}, {true, true, true});
  s.mode = hs::protocol::overlapping;
  const auto wide_shift = hs::Shift::make_schedule(wide, hs::make_range(wide, 1));
  const double before = hs::detail::simulate(wide, wide_shift, s).makespan;
  s.cost = s.cost.with_copy_beta(1e-9);
  CHECK(hs::detail::simulate(wide, wide_shift, s).makespan == before);
  CHECK_THROWS_WITH(s.cost.with_copy_beta(-1), Catch::Contains("copy_beta must be >= 0, got -1"));
}

TEST_CASE("packing and unpacking staged messages cost copy_beta per byte", "[model][advisor]") {
  // A periodic 4x4x4 grid: every rank runs the same program. With pure latency
  // (beta = gamma = 0) a round then takes alpha plus the rank's packing before
  // its last send leaves plus its unpacking after the round's messages: the
  // charge is copy_beta times the staged bytes of the compiled program.
  const hs::grid_shape g({4, 4, 4}, {true, true, true});
  const auto r = hs::make_range(g, 2);
  const double m = 1000, copy = 0.25e-9;
  hs::detail::simulation_setup s;
  s.block_bytes = [m](int) { return m; };
  s.cost = hs::hockney(2e-6, 0, 0).with_copy_beta(copy);
  for (const bool ttl : {true, false}) {
    CAPTURE(ttl);
    const hs::schedule sched = ttl ? hs::TtlMultiHop::make_schedule(g, r) : hs::Shift::make_schedule(g, r);
    const std::string_view name = ttl ? "TtlMultiHop" : "Shift";
    const hs::detail::program p = hs::detail::compile(sched, g, g.coords_of(0), r, [](const hs::offset&) { return std::size_t{1}; });
    double staged = 0;
    for (const auto& round : p.rounds)
      for (const auto& t : round.transfers)
        for (const hs::detail::message* x : {&t.send, &t.recv})
          if (!t.self && x->exists() && !x->contiguous) staged += static_cast<double>(x->count) * m;
    CHECK((staged > 0) == ttl);  // TtlMultiHop forwards gathered blocks; Shift's messages are ranges
    const double plain = hs::detail::simulate(g, sched, s).makespan;
    s.staging = hs::detail::staging_of(g, sched, r, name);
    CHECK(hs::detail::simulate(g, sched, s).makespan == Approx(plain + copy * staged));
    s.staging = {};
  }
  // explain() charges it: TtlMultiHop gets dearer by the same amount, Shift not at all.
  auto seconds = [&](const hs::hockney& h, const std::string& name) {
    return hs::explain(g, r, m, h, hs::protocol::overlapping, {name}).front().seconds;
  };
  const hs::hockney free_copies(2e-6, 0, 0);
  CHECK(seconds(s.cost, "Shift") == Approx(seconds(free_copies, "Shift")));
  CHECK(seconds(s.cost, "TtlMultiHop") > seconds(free_copies, "TtlMultiHop"));
}

TEST_CASE("calibration files keep per-piece gammas and the copy cost; old files copy for free", "[model][advisor]") {
  const std::string path = "haloshift-test-advisor-calibration.json";
  hs::calibration c;
  c.cost = hs::hockney::piecewise({{0, 1e-6, 1e-9}, {4096, 3e-6, 0.1e-9, 2.5e-6}}, 0.1e-6).with_copy_beta(0.03e-9);
  hs::save_calibration(c, path);
  const auto back = hs::load_calibration(path);
  CHECK(back.cost.gamma(8) == Approx(0.1e-6));
  CHECK(back.cost.gamma(8192) == Approx(2.5e-6));
  CHECK(back.cost.copy_beta() == Approx(0.03e-9));
  std::ofstream(path) << R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s_per_byte": 1e-9, "gamma_s": 0})";
  CHECK(hs::load_calibration(path).cost.copy_beta() == 0);
  std::ofstream(path) << R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s_per_byte": 1e-9, "gamma_s": 0,
                             "copy_s_per_byte": -2})";
  CHECK_THROWS_WITH(hs::load_calibration(path), Catch::Contains("field 'copy_s_per_byte' = -2"));
  std::remove(path.c_str());
}

TEST_CASE("calibration files keep the cost per round and the gap's growth; old files have neither",
          "[model][advisor]") {
  const std::string path = "haloshift-test-advisor-exchange-terms.json";
  hs::calibration c;
  c.cost = hs::hockney(1e-6, 1e-9, 0.1e-6).with_round_delta(0.8e-6).with_gamma_growth(0.3e-9);
  hs::save_calibration(c, path);
  const auto back = hs::load_calibration(path).cost;
  CHECK(back.round_delta() == Approx(0.8e-6));
  CHECK(back.gamma_growth() == Approx(0.3e-9));
  std::ofstream(path) << R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s_per_byte": 1e-9, "gamma_s": 0})";
  CHECK(hs::load_calibration(path).cost.round_delta() == 0);
  CHECK(hs::load_calibration(path).cost.gamma_growth() == 0);
  std::ofstream(path) << R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s_per_byte": 1e-9, "gamma_s": 0,
                             "round_s": -1e-6})";
  CHECK_THROWS_WITH(hs::load_calibration(path), Catch::Contains("field 'round_s' = -1e-06"));
  std::remove(path.c_str());
  // Every rank decides with rank 0's model, new terms included (one rank: the encoding round trip).
  const auto sent = c.cost.with_copy_beta(0.02e-9);
  const auto got = hs::detail::broadcast_model(MPI_COMM_SELF, sent);
  CHECK(got.round_delta() == sent.round_delta());
  CHECK(got.gamma_growth() == sent.gamma_growth());
  CHECK(got.copy_beta() == sent.copy_beta());
  CHECK(got.gamma() == sent.gamma());
  CHECK(got.time(100) == sent.time(100));
}

TEST_CASE("the exchange terms are fitted back from the gaps and the round time they imply", "[model][advisor]") {
  const hs::hockney single(1e-6, 1e-9);
  const double gamma = 0.1e-6, growth = 0.2e-9, delta = 0.7e-6, m = 8;
  hs::detail::exchange_terms x;
  for (int n = 4; n <= 1024; n *= 4) x.gaps.push_back({n - 1.0, gamma + growth * (n - 1)});
  x.round_seconds = hs::hockney(1e-6, 1e-9, gamma).with_gamma_growth(growth).burst(2, m) + delta;
  const auto fitted = hs::detail::fit_exchange_terms(x, single, m);
  CHECK(fitted.gamma == Approx(gamma));
  CHECK(fitted.gamma_growth == Approx(growth));
  CHECK(fitted.round_delta == Approx(delta));
  // A short burst's gap is a small time difference over n - 1: when ranks wait for the scheduler, 36 us
  // of noise on a burst of 4 (a gap 12 us too large) must not decide the line.
  x.gaps.front().seconds += 12e-6;
  const auto noisy = hs::detail::fit_exchange_terms(x, single, m);
  CHECK(noisy.gamma == Approx(gamma).epsilon(0.1));
  CHECK(noisy.gamma_growth == Approx(growth).epsilon(0.05));
  // Out of range: a gap above alpha is alpha, a shrinking gap does not grow, a fast chain costs nothing extra.
  x.gaps = {{3, 2e-6}, {15, 1.5e-6}};
  x.round_seconds = 0;
  const auto clamped = hs::detail::fit_exchange_terms(x, single, m);
  CHECK(clamped.gamma == single.alpha());
  CHECK(clamped.gamma_growth == 0);
  CHECK(clamped.round_delta == 0);
}

TEST_CASE("calibration files keep both levels and the shared-memory path; old files have one level",
          "[model][advisor]") {
  const std::string path = "haloshift-test-advisor-two-levels.json";
  hs::calibration c;
  const hs::hockney between = hs::hockney(6e-6, 2e-9, 1.5e-6).with_gamma_growth(0.4e-9);
  c.cost = hs::hockney(1e-6, 0.2e-9, 0.1e-6).with_copy_beta(0.03e-9).with_between_nodes(between).with_shm_alpha(0.4e-6);
  c.ranks_per_node = 4;
  hs::save_calibration(c, path);
  const auto back = hs::load_calibration(path);
  REQUIRE(back.cost.between_nodes() != nullptr);
  CHECK(back.cost.between_nodes()->time(1000) == between.time(1000));
  CHECK(back.cost.between_nodes()->gap(8, 16) == between.gap(8, 16));
  CHECK(back.cost.time(1000) == c.cost.time(1000));
  CHECK(back.cost.shm_alpha() == 0.4e-6);
  CHECK(back.ranks_per_node == 4);
  const auto got = hs::detail::broadcast_model(MPI_COMM_SELF, back.cost);  // every rank decides with both levels
  REQUIRE(got.between_nodes() != nullptr);
  CHECK(got.between_nodes()->gap(8, 16) == between.gap(8, 16));
  CHECK(got.shm_alpha() == back.cost.shm_alpha());
  std::ofstream(path) << R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s_per_byte": 1e-9, "gamma_s": 0})";
  CHECK(hs::load_calibration(path).cost.between_nodes() == nullptr);
  CHECK(hs::load_calibration(path).cost.shm_alpha() == 0);
  std::ofstream(path) << R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s_per_byte": 1e-9, "gamma_s": 0,
                             "between_nodes": {"alpha_s": 1e-6, "beta_s_per_byte": -1, "gamma_s": 0}})";
  CHECK_THROWS_WITH(hs::load_calibration(path), Catch::Contains("field 'between_nodes.beta_s_per_byte' = -1"));
  std::remove(path.c_str());
}

TEST_CASE("explain adds the shared-memory rows where ranks share nodes, and prices by level", "[model][advisor]") {
  const hs::grid_shape g({4, 4, 4}, {true, true, true});
  const auto r = hs::make_range(g, 1);
  const hs::hockney two = hs::hockney(1e-6, 0.1e-9, 0.2e-6)
                              .with_between_nodes(hs::hockney(5e-6, 1e-9, 1e-6))
                              .with_shm_alpha(0.2e-6)
                              .with_copy_beta(0.05e-9);
  const auto flat = hs::explain(g, r, 4096, two);
  for (const auto& p : flat) CHECK(p.inside_nodes.empty());
  const auto nodes = hs::explain(g, r, 4096, two, hs::protocol::overlapping, {}, std::nullopt, 16);
  REQUIRE(nodes.size() == 2 * (flat.size() + 1));  // every row flat and shm, NodeAggregate's too (4 nodes)
  auto node_of = std::make_shared<std::vector<int>>();
  for (int rank = 0; rank < g.size(); ++rank) node_of->push_back(rank / 16);
  for (const auto& p : nodes) {
    INFO(p.strategy << " " << p.inside_nodes);
    hs::detail::simulation_setup setup;
    setup.cost = two;
    setup.block_bytes = [](int) { return 4096.0; };
    setup.nodes.ranks_per_node = 16;
    setup.shm = p.inside_nodes == "shm";
    const auto& e = hs::detail::strategy_registry::instance().find(p.strategy);
    const hs::schedule s = e.make_schedule(g, r, hs::strategy_parameters{p.team, node_of});
    setup.staging = hs::detail::staging_of(g, s, r, p.strategy);
    CHECK(p.seconds == hs::detail::simulate(g, s, setup).makespan);
  }
  CHECK(std::count_if(flat.begin(), flat.end(), [](const auto& p) { return p.strategy == "NodeAggregate"; }) == 0);
  CHECK(std::is_sorted(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) { return a.seconds < b.seconds; }));
  // Dearer messages between nodes than inside: the two-level time of a flat row lies above the in-node model's.
  CHECK(nodes.front().seconds < hs::explain(g, r, 4096, *two.between_nodes()).front().seconds);
  CHECK_THROWS_WITH(hs::explain(g, r, 8, two, hs::protocol::overlapping, {}, std::nullopt, -2),
                    Catch::Contains("ranks_per_node must be >= 0, got -2"));
}

TEST_CASE("explain prices NodeAggregate where nodes hold several ranks, first where messages between nodes are dear",
          "[model][advisor][nodes]") {
  // 4x4x4 periodic, nodes of 8 consecutive ranks (1x2x4 boxes, 8 nodes): each node's ranks want blocks
  // of 5 other nodes, one message per node pair under NodeAggregate against many flat messages between
  // nodes per rank. Small blocks and a dear message between nodes (latency and gap 20 times those
  // inside): aggregation pays. Both levels alike, among MPI messages (flat rows) it only adds rounds and
  // hops. (With the shared-memory path its in-node rounds cost almost nothing, so NodeAggregate+shm may
  // lead even then: it moves messages into the nodes.)
  const hs::grid_shape g({4, 4, 4}, {true, true, true});
  const auto r = hs::make_range(g, 1);
  const hs::hockney inside = hs::hockney(1e-6, 0.1e-9, 0.2e-6).with_copy_beta(0.05e-9).with_shm_alpha(0.2e-6);
  const auto count = [](const std::vector<hs::prediction>& rows, const std::string& name) {
    return std::count_if(rows.begin(), rows.end(), [&](const auto& p) { return p.strategy == name; });
  };
  const auto dear = hs::explain(g, r, 64, inside.with_between_nodes(hs::hockney(20e-6, 1e-9, 4e-6)),
                                hs::protocol::overlapping, {}, std::nullopt, 8);
  const auto first_flat = [](const std::vector<hs::prediction>& rows) {
    return std::find_if(rows.begin(), rows.end(), [](const auto& p) { return p.inside_nodes.empty(); })->strategy;
  };
  CHECK(count(dear, "NodeAggregate") == 2);  // flat and with the shared-memory path
  CHECK(dear.front().strategy == "NodeAggregate");
  CHECK(first_flat(dear) == "NodeAggregate");
  const auto alike = hs::explain(g, r, 64, inside.with_between_nodes(inside), hs::protocol::overlapping, {},
                                 std::nullopt, 8);
  CHECK(count(alike, "NodeAggregate") == 2);
  CHECK(first_flat(alike) != "NodeAggregate");
  // No rows where nothing aggregates: one level, one node of every rank, a rank per node.
  for (const int per_node : {0, 1, 64, 100})
    CHECK(count(hs::explain(g, r, 64, inside.with_between_nodes(inside), hs::protocol::overlapping, {},
                            std::nullopt, per_node),
                "NodeAggregate") == 0);
  // Above the blocks it is priced for (ranks times offsets, node_aware_priced_blocks) it is left out.
  const hs::grid_shape large({44, 44, 44}, {true, true, true});
  REQUIRE(large.size() * 26.0 > hs::detail::node_aware_priced_blocks);
  CHECK(count(hs::explain(large, hs::make_range(large, 1), 64, inside.with_between_nodes(inside),
                          hs::protocol::overlapping, {}, std::nullopt, 88),  // boxes of 2 lines: fast classes
              "NodeAggregate") == 0);
  // Particles and fields never take it (blocks only), with nodes or without.
  const hs::detail::node_placement nodes{8};
  for (const auto& p : hs::detail::rank_candidates(g, r, 64, inside.with_between_nodes(inside),
                                                   hs::protocol::overlapping, hs::detail::payload_kind::selective, {},
                                                   "explain", nullptr, nodes, true))
    CHECK(p.strategy != "NodeAggregate");
}

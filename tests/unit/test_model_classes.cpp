// SPDX-License-Identifier: BSD-3-Clause
// The simulator's symmetry classes (model/simulation/rank_classes.hpp): simulating one
// representative per class of ranks gives the times of simulating every rank,
// on periodic and non-periodic grids, odd and even rings, both protocols,
// every strategy and calibration term; the packing table compiled per class
// equals the one compiled per rank.

#include "../support/catch.hpp"
#include "../support/model_oracles/closed_forms.hpp"
#include "../support/model_oracles/every_rank.hpp"
#include "../support/model_oracles/round_by_round.hpp"
#include <haloshift/auto.hpp>
#include <haloshift/model/simulation/staging.hpp>

#include <cmath>
#include <memory>
#include <random>
#include <sstream>

namespace hs = haloshift;

namespace {
bool near(double a, double b) { return std::abs(a - b) <= 1e-13 * std::max(std::abs(a), std::abs(b)); }

/// One drawn configuration: a grid, a strategy's schedule, a model and a protocol.
struct simulated_case {
  hs::grid_shape grid;
  hs::range r;
  hs::schedule s;
  std::string strategy;
  hs::detail::simulation_setup setup;
  std::string text;
};

const std::vector<hs::hockney>& class_test_models() {
  static const std::vector<hs::hockney> models = {
      hs::hockney(2e-6, 1e-9),
      hs::hockney(1e-6, 5e-10, 0.1e-6).with_round_delta(0.7e-6).with_gamma_growth(0.2e-9),
      hs::hockney(1e-6, 5e-10, 0.1e-6).with_copy_beta(0.3e-9).with_round_delta(0.2e-6),
      // eager and rendezvous pieces, each with its own gap
      hs::hockney::piecewise({{0, 1e-6, 1e-9, 0.2e-6}, {2000, 5e-6, 0.5e-9, 3e-6}}, 0.2e-6).with_copy_beta(0.1e-9)};
  return models;
}

/// Draws a configuration: up to `largest` boxes per dimension (1D), fewer in 2D and 3D.
simulated_case draw(std::mt19937& rng, int largest) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (;;) {
    simulated_case c;
    const int nd = pick(1, 3);
    std::vector<int> dims;
    std::vector<bool> periodic;
    const int widest = nd == 1 ? largest : nd == 2 ? largest / 4 : largest / 10;
    for (int d = 0; d < nd; ++d) {
      dims.push_back(pick(1, std::max(2, widest)));
      periodic.push_back(pick(0, 1) == 1);
    }
    c.grid = hs::grid_shape(dims, periodic);
    const int k = pick(1, 4);
    const auto kind = pick(0, 1) ? hs::shell::full : hs::shell::eighth;
    try {
      c.r = hs::make_range(c.grid, k, kind);
      switch (pick(0, 3)) {
        case 0: c.s = hs::Shift::make_schedule(c.grid, c.r), c.strategy = "Shift"; break;
        case 1: c.s = hs::SingleHop::make_schedule(c.grid, c.r), c.strategy = "SingleHop"; break;
        case 2: c.s = hs::TtlMultiHop::make_schedule(c.grid, c.r), c.strategy = "TtlMultiHop"; break;
        default: {
          hs::offset team{1, 1, 1};
          for (int d = 0; d < nd; ++d) {
            std::vector<int> divisors;
            for (int t = 1; t <= dims[d]; ++t)
              if (dims[d] % t == 0) divisors.push_back(t);
            team[d] = divisors[static_cast<std::size_t>(pick(0, static_cast<int>(divisors.size()) - 1))];
          }
          c.s = hs::TeamShift::make_schedule(c.grid, c.r, {.team = team});
          c.strategy = "TeamShift " + hs::to_string(team);
        }
      }
    } catch (const hs::error&) {
      continue;  // a range the grid cannot hold: draw again
    }
    const auto& models = class_test_models();
    const int model = pick(0, static_cast<int>(models.size()) - 1);
    c.setup.cost = models[static_cast<std::size_t>(model)];
    c.setup.mode = pick(0, 1) ? hs::protocol::rendezvous : hs::protocol::overlapping;
    const double m = std::vector<double>{8, 100, 1000, 4096}[static_cast<std::size_t>(pick(0, 3))];
    c.setup.block_bytes = [m](int) { return m; };
    if (c.setup.cost.copy_beta() > 0)
      c.setup.staging = hs::detail::staging_of(c.grid, c.s, c.r, c.strategy.substr(0, c.strategy.find(' ')));
    std::ostringstream text;
    text << c.strategy << " on " << hs::to_string(c.grid) << " periodic " << periodic[0]
         << (nd > 1 ? periodic[1] : 0) << (nd > 2 ? periodic[2] : 0) << ", k " << k
         << (kind == hs::shell::full ? " full" : " eighth") << ", "
         << (c.setup.mode == hs::protocol::rendezvous ? "rendezvous" : "overlapping") << ", model " << model << ", m "
         << m;
    c.text = text.str();
    return c;
  }
}

void check_same_times(const simulated_case& c) {
  INFO(c.text);
  const hs::detail::simulation_result every = hs::detail::simulate_every_rank(c.grid, c.s, c.setup);
  const hs::detail::simulation_result classes = hs::detail::simulate(c.grid, c.s, c.setup);
  // Times bit for bit: a class performs its members' operations in their order (the byte totals are
  // summed in another order).
  CHECK(classes.makespan == every.makespan);
  CHECK(classes.messages == every.messages);
  CHECK(near(classes.bytes, every.bytes));
  REQUIRE(classes.finish.size() == every.finish.size());
  int differ = 0;
  for (std::size_t r = 0; r < every.finish.size(); ++r) differ += classes.finish[r] != every.finish[r];
  CHECK(differ == 0);
}
}  // namespace

TEST_CASE("simulating one rank per class gives every rank's time", "[model][classes]") {
  std::mt19937 rng(20261124);
  for (int i = 0; i < 300; ++i) check_same_times(draw(rng, 40));
}

TEST_CASE("classes on grids wide enough that borders, seams and bulk differ",
          "[model][classes][scale]") {
  // Up to 160 boxes along a line, 40 x 40, 16 x 16 x 16: windows narrower than the grid, so the bulk of
  // a non-periodic dimension and the stretch of an odd ring away from its seam collapse into classes.
  std::mt19937 rng(7);
  for (int i = 0; i < 60; ++i) check_same_times(draw(rng, 160));
}

TEST_CASE("TeamShift with packing that differs between team members", "[model][classes]") {
  // A member's layout, and so which of its messages are packed, depends on its member index along the
  // dimensions of earlier phases: classes that read one member's packing for all would be wrong (57.8 us
  // against 56.6 us on 6 x 6 x 4 below, k 2). Periodic grids, where the classes are fewest.
  std::mt19937 rng(18);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int drawn = 0;
  for (int i = 0; drawn < 120; ++i) {
    simulated_case c;
    const int nd = pick(2, 3);
    std::vector<int> dims;
    for (int d = 0; d < nd; ++d) dims.push_back(i == 0 ? std::vector<int>{6, 6, 4}[static_cast<std::size_t>(d)]
                                                       : pick(1, 4) * pick(1, 3));
    c.grid = hs::grid_shape(dims, std::vector<bool>(static_cast<std::size_t>(nd), true));
    const int k = i == 0 ? 2 : pick(1, 4);
    hs::offset team{1, 1, 1};
    for (int d = 0; d < nd; ++d) {
      const int t = i == 0 ? 2 : pick(1, 3);
      if (dims[static_cast<std::size_t>(d)] % t == 0) team[d] = t;
    }
    try {
      c.r = hs::make_range(c.grid, k);
      c.s = hs::TeamShift::make_schedule(c.grid, c.r, {.team = team});
    } catch (const hs::error&) {
      continue;  // a team the range cannot use: draw again
    }
    c.setup.cost = hs::hockney(1e-6, 5e-10, 0.2e-6).with_copy_beta(0.3e-9);
    c.setup.mode = pick(0, 1) ? hs::protocol::rendezvous : hs::protocol::overlapping;
    c.setup.block_bytes = [](int) { return 1000.0; };
    c.setup.staging = hs::detail::staging_of(c.grid, c.s, c.r, "TeamShift");
    c.text = "TeamShift " + hs::to_string(team) + " on " + hs::to_string(c.grid) + ", k " + std::to_string(k) +
             (c.setup.mode == hs::protocol::rendezvous ? ", rendezvous" : ", overlapping");
    check_same_times(c);
    ++drawn;
  }
}

TEST_CASE("the classes are few where ranks are alike", "[model][classes]") {
  const hs::grid_shape periodic({100, 100, 100}, {true, true, true});
  const auto r = hs::make_range(periodic, 3);
  using hs::detail::rank_classes;
  // A uniform periodic grid: one class; the rendezvous colours alternate (period 2 per dimension);
  // TeamShift's members repeat with the team.
  CHECK(rank_classes::of(periodic, hs::Shift::make_schedule(periodic, r), false).size() == 1);
  CHECK(rank_classes::of(periodic, hs::Shift::make_schedule(periodic, r), true).size() == 8);
  CHECK(rank_classes::of(periodic, hs::TtlMultiHop::make_schedule(periodic, r), false).size() == 1);
  CHECK(rank_classes::of(periodic, hs::TeamShift::make_schedule(periodic, r, {.team = {2, 5, 4}}), false).size() ==
        40);
  // A non-periodic line: a class per coordinate near each border, the bulk one class.
  const hs::grid_shape line({1000}, {false});
  const auto shift = hs::Shift::make_schedule(line, hs::make_range(line, 2));
  const rank_classes classes = rank_classes::of(line, shift, false);
  CHECK(classes.size() < 20);
  std::int64_t members = 0;
  for (int c = 0; c < classes.size(); ++c) members += classes.members(c);
  CHECK(members == 1000);
  CHECK(classes.class_of({500, 0, 0}) == classes.class_of({501, 0, 0}));
  CHECK(classes.class_of({0, 0, 0}) != classes.class_of({1, 0, 0}));
  // An odd ring in rendezvous mode: the coordinates near the seam are classes of their own.
  const hs::grid_shape odd({101}, {true});
  const auto odd_shift = hs::Shift::make_schedule(odd, hs::make_range(odd, 1));
  CHECK(rank_classes::of(odd, odd_shift, false).size() == 1);
  const int seam_classes = rank_classes::of(odd, odd_shift, true).size();
  CHECK(seam_classes > 2);
  CHECK(seam_classes < 101);
}

TEST_CASE("a million-rank periodic grid is simulated, not approximated", "[model][classes]") {
  // explain() has no size switch: the 100^3 prediction is the simulation, and it equals the
  // simulation of a small grid where every rank is simulated (a periodic grid's ranks are alike).
  const hs::hockney h = hs::hockney(1e-6, 1e-9, 0.2e-6).with_round_delta(0.3e-6).with_copy_beta(0.2e-9);
  for (auto mode : {hs::protocol::overlapping, hs::protocol::rendezvous}) {
    INFO((mode == hs::protocol::rendezvous ? "rendezvous" : "overlapping"));
    const hs::grid_shape huge({100, 100, 100}, {true, true, true}), small({8, 8, 8}, {true, true, true});
    const auto big = hs::explain(huge, hs::make_range(huge, 3), 4096, h, mode);
    const auto ref = hs::explain(small, hs::make_range(small, 3), 4096, h, mode);
    REQUIRE(big.size() >= 4);
    for (const auto& p : big) {
      if (p.strategy == "TeamShift") continue;  // team sizes depend on the grid's divisors
      const auto it = std::find_if(ref.begin(), ref.end(), [&](const hs::prediction& q) { return q.strategy == p.strategy; });
      REQUIRE(it != ref.end());
      INFO(p.strategy);
      CHECK(near(p.seconds, it->seconds));
    }
  }
}

TEST_CASE("rendezvous on odd rings runs on classes that grow with the colourings",
          "[model][classes][scale]") {
  // On an odd ring the rendezvous colouring differs at every coordinate, so a whole round's classes are every
  // rank. simulate() follows the transfers run by run, each run of one colouring dimension on its own classes
  // (detail::by_colour_runs), and SingleHop and TtlMultiHop order a round's transfers by that dimension: the
  // result must still be every rank's simulation, with and without packing.
  for (const std::vector<int>& dims : {std::vector<int>{13, 11, 9}, std::vector<int>{9, 2, 7}, std::vector<int>{15, 5}})
    for (const char* strategy : {"SingleHop", "TtlMultiHop", "Shift"})
      for (int k : {1, 2, 3})
        for (const auto& h : {hs::hockney(1e-6, 5e-10, 0.2e-6).with_round_delta(0.1e-6),
                              hs::hockney(1e-6, 5e-10, 0.2e-6).with_copy_beta(0.3e-9)}) {
          simulated_case c;
          c.grid = hs::grid_shape(dims, std::vector<bool>(dims.size(), true));
          c.r = hs::make_range(c.grid, k);
          c.s = hs::detail::strategy_registry::instance().find(strategy).make_schedule(c.grid, c.r, {});
          c.strategy = strategy;
          c.setup.cost = h;
          c.setup.mode = hs::protocol::rendezvous;
          c.setup.block_bytes = [](int) { return 1000.0; };
          if (h.copy_beta() > 0) c.setup.staging = hs::detail::staging_of(c.grid, c.s, c.r, strategy);
          c.text = std::string(strategy) + " on " + hs::to_string(c.grid) + ", k " + std::to_string(k) +
                   (h.copy_beta() > 0 ? ", packing" : "");
          check_same_times(c);
          // Every round in colour order: x first, then y, then z, then copies to the rank itself.
          const auto key = [&](const hs::transfer& t) {
            const int d = hs::detail::colour_dimension(c.grid, t.direction);
            return d < 0 ? hs::max_dims : d;
          };
          for (const auto& round : c.s.rounds)
            for (std::size_t i = 1; i < round.transfers.size(); ++i)
              CHECK(key(round.transfers[i - 1]) <= key(round.transfers[i]));
        }
  // A million ranks on odd rings: the simulation equals the closed form for unit steps on odd rings
  // (three synchronous messages per transfer coloured along an odd ring).
  const hs::grid_shape huge({101, 101, 101}, {true, true, true});
  const hs::hockney h(1e-6, 1e-9, 0.2e-6);
  hs::detail::simulation_setup setup;
  setup.cost = h;
  setup.mode = hs::protocol::rendezvous;
  setup.block_bytes = [](int) { return 4096.0; };
  const auto r = hs::make_range(huge, 1);
  const auto single = hs::detail::closed_form::single_hop(huge, r, 4096, h, hs::protocol::rendezvous);
  const auto ttl = hs::detail::closed_form::ttl_multi_hop(huge, r, 4096, h, hs::protocol::rendezvous);
  REQUIRE(single.has_value());
  REQUIRE(ttl.has_value());
  CHECK(near(*single, hs::detail::simulate(huge, hs::SingleHop::make_schedule(huge, r), setup).makespan));
  CHECK(near(*ttl, hs::detail::simulate(huge, hs::TtlMultiHop::make_schedule(huge, r), setup).makespan));
  // SingleHop at k = 3 with packing: steps of 1 to 3 boxes, each with its own seam, one ring at a time.
  const auto r3 = hs::make_range(huge, 3);
  const hs::hockney packing = h.with_copy_beta(0.3e-9);
  const auto s3 = hs::SingleHop::make_schedule(huge, r3);
  setup.cost = packing;
  setup.staging = hs::detail::staging_of(huge, s3, r3, "SingleHop");
  const auto single3 = hs::detail::closed_form::single_hop(huge, r3, 4096, packing, hs::protocol::rendezvous);
  REQUIRE(single3.has_value());
  CHECK(near(*single3, hs::detail::simulate(huge, s3, setup).makespan));
}

TEST_CASE("rendezvous with packing on grids with borders: each class packs by its own program",
          "[model][classes][scale]") {
  // Non-periodic dimensions: a rank's packing depends on which boxes exist around it, so the staging bits
  // differ between classes. simulate() charges each class the bits of its class of programs; the times must
  // be every rank's simulation.
  struct grid_case {
    std::vector<int> dims;
    std::vector<bool> periodic;
    hs::offset team;
  };
  for (const grid_case& g : {grid_case{{14, 12, 10}, {false, false, false}, {2, 3, 1}},
                             grid_case{{16, 9}, {true, false}, {4, 3, 1}},
                             grid_case{{13, 11, 9}, {false, true, false}, {13, 1, 3}}})
    for (const char* strategy : {"SingleHop", "TtlMultiHop", "Shift", "TeamShift"})
      for (int k : {1, 2, 3}) {
        simulated_case c;
        c.grid = hs::grid_shape(g.dims, g.periodic);
        c.strategy = strategy;
        try {
          c.r = hs::make_range(c.grid, k);
          c.s = c.strategy == "TeamShift" ? hs::TeamShift::make_schedule(c.grid, c.r, {.team = g.team})
                                          : hs::detail::strategy_registry::instance().find(strategy).make_schedule(c.grid, c.r, {});
        } catch (const hs::error&) {
          continue;  // a team the range cannot use
        }
        c.setup.cost = hs::hockney(1e-6, 5e-10, 0.2e-6).with_copy_beta(0.3e-9).with_round_delta(0.1e-6);
        c.setup.mode = hs::protocol::rendezvous;
        c.setup.block_bytes = [](int) { return 1000.0; };
        c.setup.staging = hs::detail::staging_of(c.grid, c.s, c.r, strategy);
        c.text = std::string(strategy) + " on " + hs::to_string(c.grid) + ", k " + std::to_string(k);
        check_same_times(c);
      }
}

TEST_CASE("non-periodic rendezvous at scale: classes merged after each transfer",
          "[model][classes][scale]") {
  // simulate() merges the classes whose times agree after each rendezvous transfer and tells them apart again
  // by the next transfer's window, so a non-periodic grid keeps a few classes per dimension where the whole
  // schedule's windows would make every rank a class. Exact: every rank's time equals its own simulation, on
  // grids wider than a transfer's window, with and without packing.
  for (const std::vector<int>& dims : {std::vector<int>{40, 36}, std::vector<int>{20, 16, 12}})
    for (const char* strategy : {"SingleHop", "TtlMultiHop", "Shift", "TeamShift"})
      for (int k : {1, 3})
        for (const double copy_beta : {0.0, 0.3e-9}) {
          simulated_case c;
          c.grid = hs::grid_shape(dims, std::vector<bool>(dims.size(), false));
          c.r = hs::make_range(c.grid, k);
          c.strategy = strategy;
          c.s = c.strategy == "TeamShift"
                    ? hs::TeamShift::make_schedule(c.grid, c.r, {.team = {2, 2, dims.size() > 2 ? 2 : 1}})
                    : hs::detail::strategy_registry::instance().find(strategy).make_schedule(c.grid, c.r, {});
          c.setup.cost = hs::hockney(1e-6, 5e-10, 0.2e-6).with_round_delta(0.1e-6).with_copy_beta(copy_beta);
          c.setup.mode = hs::protocol::rendezvous;
          c.setup.block_bytes = [](int) { return 1000.0; };
          if (copy_beta > 0) c.setup.staging = hs::detail::staging_of(c.grid, c.s, c.r, strategy);
          c.text = std::string(strategy) + " on " + hs::to_string(c.grid) + ", k " + std::to_string(k) +
                   (copy_beta > 0 ? ", packing" : "");
          check_same_times(c);
        }
  // Classes of different programs are not merged, even with equal times: on 12 x 4 (x non-periodic, y
  // periodic) the first transfer leaves every rank at one time, and only the ranks one box from a border of x
  // pack in the second. The last transfer, along x, reaches two boxes, so the classes of programs (which
  // setup.staging may tell apart) hold x = 1 and x = 10 apart, where the second transfer's own window (one box
  // along x) does not.
  hs::schedule s;
  s.rounds.push_back({{hs::transfer{{0, 1, 0}, {hs::zero_offset}}}});
  s.rounds.push_back({{hs::transfer{{0, -1, 0}, {hs::zero_offset}}}});
  s.rounds.push_back({{hs::transfer{{1, 0, 0}, {hs::zero_offset}}}});
  for (const int border : {1, 10})
    for (const unsigned bits : {1u, 2u}) {
      simulated_case c;
      c.grid = hs::grid_shape({12, 4}, {false, true});
      c.s = s;
      c.setup.cost = hs::hockney(1e-6, 5e-10, 0.2e-6).with_copy_beta(0.3e-9);
      c.setup.mode = hs::protocol::rendezvous;
      c.setup.block_bytes = [](int) { return 1000.0; };
      const hs::grid_shape g = c.grid;
      c.setup.staging = [g, border, bits](int rank, std::size_t round, std::size_t) {
        return round == 1 && g.coords_of(rank)[0] == border ? bits : 0u;
      };
      c.text = "border " + std::to_string(border) + ", bits " + std::to_string(bits);
      const auto programs = hs::detail::rank_classes::programs(c.grid, s);
      REQUIRE(programs.class_along(0, border) != programs.class_along(0, 5));
      check_same_times(c);
    }
}

TEST_CASE("the packing table compiled per class equals the one compiled per rank",
          "[model][classes][scale]") {
  // 7 x 6 x 5: every coordinate near a border; 24 x 18 x 3: wide enough that the classes of programs
  // (rank_classes::programs, one transfer's reach) collapse the bulk of a non-periodic dimension.
  for (const auto& [dims, team] : {std::pair{std::vector<int>{7, 6, 5}, hs::offset{7, 3, 1}},
                                   std::pair{std::vector<int>{24, 18, 3}, hs::offset{4, 3, 1}}})
    for (bool periodic : {false, true})
      for (int k : {1, 2}) {
        const hs::grid_shape g(dims, {periodic, periodic, !periodic});
        const auto r = hs::make_range(g, k);
        const std::vector<std::pair<std::string, hs::schedule>> schedules = {
            {"Shift", hs::Shift::make_schedule(g, r)},
            {"TtlMultiHop", hs::TtlMultiHop::make_schedule(g, r)},
            {"TeamShift", hs::TeamShift::make_schedule(g, r, {.team = team})}};
        for (const auto& [name, s] : schedules) {
          INFO(name << " on " << hs::to_string(g) << " k " << k << " periodic " << periodic);
          const auto programs = hs::detail::rank_classes::programs(g, s);
          CHECK(programs.size() <= hs::detail::rank_classes::of(g, s, false).size());
          if (dims[0] == 24 && !periodic) CHECK(programs.size() < g.size() / 2);  // the bulk collapses
          const auto table = hs::detail::staging_of(g, s, r, name);
          int differ = 0, staged = 0;
          for (int rank = 0; rank < g.size(); ++rank) {
            const hs::detail::program p =
                hs::detail::compile(s, g, g.coords_of(rank), r, [](const hs::offset&) { return std::size_t{1}; }, name);
            for (std::size_t round = 0; round < p.rounds.size(); ++round)
              for (const auto& t : p.rounds[round].transfers) {
                if (t.self) continue;
                unsigned bits = 0;
                if (t.send.exists() && !t.send.contiguous) bits |= 1u;
                if (t.recv.exists() && !t.recv.contiguous) bits |= 2u;
                staged += bits != 0;
                differ += table(rank, round, static_cast<std::size_t>(t.tag)) != bits;
              }
          }
          CHECK(differ == 0);
          if (name != "Shift" && k > 1) CHECK(staged > 0);  // the table is not trivially empty
        }
      }
}

TEST_CASE("two levels: classes give every rank's time where nodes are boxes of the grid", "[model][classes]") {
  // Node sizes that make boxes (whole lines, planes, a part of a line dividing it, one node) and some
  // that do not (simulated per rank): the classes must tell the nodes' borders apart.
  std::mt19937 rng(35);
  const hs::hockney between(4e-6, 2e-9, 0.5e-6);
  for (int i = 0; i < 150; ++i) {
    simulated_case c = draw(rng, 24);
    const int node = std::uniform_int_distribution<int>(1, 2 * c.grid.size())(rng);
    c.setup.cost = c.setup.cost.with_between_nodes(between).with_shm_alpha(0.3e-6);
    c.setup.nodes.ranks_per_node = node;
    c.setup.shm = i % 2 == 1;
    c.text += ", " + std::to_string(node) + " ranks per node" + (c.setup.shm ? ", shm" : "");
    check_same_times(c);
  }
}

TEST_CASE("two levels at a million ranks: a node size keeps the classes few", "[model][classes][scale]") {
  const hs::grid_shape g({100, 100, 100}, {true, true, true});
  hs::detail::simulation_setup setup;
  setup.cost = hs::hockney(1e-6, 1e-10, 0.2e-6).with_between_nodes(hs::hockney(5e-6, 1e-9, 0.5e-6));
  setup.block_bytes = [](int) { return 1000.0; };
  setup.nodes.ranks_per_node = 100;  // a node per line along the fastest dimension
  const hs::schedule s = hs::Shift::make_schedule(g, hs::make_range(g, 1));
  CHECK(hs::detail::rank_classes::of(g, s, false, nullptr, nullptr).size() == 1);
  hs::detail::node_boxes boxes;
  REQUIRE(hs::detail::boxes_of(g, setup.nodes, boxes));
  CHECK(hs::detail::rank_classes::of(g, s, false, nullptr, &boxes).size() == 1);  // every line alike
  // Shift's rounds along x and y cross nodes, along z stay inside: each rank's time is the between-nodes
  // rounds' (2 messages each: alpha + gamma-gap + beta m) plus the inside round's.
  const auto burst = [](const hs::hockney& h, double m) { return h.alpha() + h.gamma() + 2 * h.beta() * m; };
  const double m = 1000;
  const double expected = burst(*setup.cost.between_nodes(), m) + burst(*setup.cost.between_nodes(), 3 * m) +
                          burst(setup.cost, 9 * m);
  CHECK(hs::detail::simulate(g, s, setup).makespan == Approx(expected).epsilon(1e-12));
}

namespace {
/// An independent reading of a schedule in the overlapping protocol, message by message: each rank's
/// messages of a round (round_by_round's message_of: named senders included), in transfer order; the
/// i-th leaves after the injections of the rank's earlier ones (gap + beta m, nothing on the
/// shared-memory path) and completes time(m) after both ends are in the round, on the level it crosses;
/// a rank's round ends with its last message sent or received, plus the round's delta if it
/// communicated. Copies to the rank itself are free (copy_beta 0 here). Every rank's messages of a
/// round must cross one level (NodeAggregate's rounds do: gather, exchange, scatter), where the
/// latency-first rule is the rule of one level.
std::vector<double> overlapping_by_messages(const hs::grid_shape& g, const hs::schedule& s,
                                            const hs::detail::simulation_setup& setup) {
  const auto n = static_cast<std::size_t>(g.size());
  std::vector<double> now(n, 0.0);
  for (const hs::schedule_round& round : s.rounds) {
    std::vector<std::vector<hs::detail::sim_message>> sent(n);
    for (const hs::transfer& t : round.transfers)
      for (int rank = 0; rank < g.size(); ++rank)
        if (hs::detail::sim_message x; hs::detail::message_of(g, g.coords_of(rank), rank, t, setup.block_bytes, x))
          sent[static_cast<std::size_t>(rank)].push_back(x);
    std::vector<double> next = now;
    std::vector<char> active(n, 0);
    for (std::size_t rank = 0; rank < n; ++rank) {
      double port = 0;
      for (const hs::detail::sim_message& x : sent[rank]) {
        const bool inside = setup.nodes.same_node(x.from, x.to);
        REQUIRE(inside == setup.nodes.same_node(sent[rank][0].from, sent[rank][0].to));  // one level per round
        const hs::hockney& h = inside ? setup.cost : *setup.cost.between_nodes();
        const bool shm = inside && setup.shm;
        const auto to = static_cast<std::size_t>(x.to);
        const double done =
            std::max(now[rank] + port, now[to]) + (shm ? h.shm_alpha() + h.copy_beta() * x.bytes : h.time(x.bytes));
        next[rank] = std::max(next[rank], done);
        next[to] = std::max(next[to], done);
        active[rank] = active[to] = 1;
        port += shm ? 0.0 : h.gap(x.bytes, static_cast<double>(sent[rank].size())) + h.beta(x.bytes) * x.bytes;
      }
    }
    for (std::size_t rank = 0; rank < n; ++rank)
      now[rank] = next[rank] + (active[rank] ? setup.cost.round_delta() : 0.0);
  }
  return now;
}
}  // namespace

TEST_CASE("two levels: NodeAggregate simulated rank by rank equals a reading message by message",
          "[model][classes][nodes]") {
  // Named senders (NodeAggregate's leaders) give every rank a class of its own; the engine asks each
  // transfer whether the rank sends. Against an independent accounting of every rank's messages, on
  // periodic and bordered grids, node sizes that make boxes and a node list that does not.
  struct layout {
    hs::grid_shape grid;
    std::vector<int> node_of;
  };
  const auto blocks_of = [](const hs::grid_shape& g, int size) {
    std::vector<int> out;
    for (int rank = 0; rank < g.size(); ++rank) out.push_back(rank / size);
    return out;
  };
  const hs::grid_shape cube({4, 4, 2}, {true, true, true}), slab({6, 5}, {false, true}), line({9}, {false});
  const std::vector<layout> layouts = {{cube, blocks_of(cube, 8)},
                                       {cube, {0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 0, 0, 0, 1, 1, 1, 2, 2,
                                               2, 2, 3, 3, 3, 3, 3, 3}},
                                       {slab, blocks_of(slab, 4)},
                                       {line, blocks_of(line, 3)}};
  const hs::hockney inside = hs::hockney(1e-6, 0.2e-9, 0.3e-6).with_round_delta(0.4e-6).with_gamma_growth(0.1e-9);
  const hs::hockney two = inside.with_between_nodes(hs::hockney(6e-6, 1e-9, 1.5e-6)).with_shm_alpha(0.25e-6);
  for (const layout& l : layouts)
    for (int k = 1; k <= 2; ++k)
      for (const bool shm : {false, true}) {
        const hs::range r = hs::make_range(l.grid, k);
        const auto node_of = std::make_shared<const std::vector<int>>(l.node_of);
        const hs::schedule s = hs::NodeAggregate::make_schedule(l.grid, r, {.node_of = node_of});
        hs::detail::simulation_setup setup;
        setup.cost = two;
        setup.block_bytes = [](int) { return 700.0; };
        setup.nodes.node_of = l.node_of;
        setup.shm = shm;
        INFO(hs::to_string(l.grid) << " k " << k << " shm " << shm << " nodes " << l.node_of.back() + 1);
        const hs::detail::simulation_result simulated = hs::detail::simulate(l.grid, s, setup);
        const std::vector<double> expected = overlapping_by_messages(l.grid, s, setup);
        REQUIRE(simulated.finish.size() == expected.size());
        for (std::size_t rank = 0; rank < expected.size(); ++rank) {
          INFO("rank " << rank);
          CHECK(simulated.finish[rank] == Approx(expected[rank]).epsilon(1e-12));
        }
        // The same times from the engine's general path (every block's bytes summed), bit for bit.
        CHECK(hs::detail::simulate_every_rank(l.grid, s, setup).finish == simulated.finish);
        std::size_t messages = 0;
        for (const hs::schedule_round& round : s.rounds)
          for (const hs::transfer& t : round.transfers)
            for (int rank = 0; rank < l.grid.size(); ++rank)
              if (hs::detail::sim_message x;
                  hs::detail::message_of(l.grid, l.grid.coords_of(rank), rank, t, setup.block_bytes, x))
                ++messages;
        CHECK(simulated.messages == messages);
      }
}

TEST_CASE("NodeAggregate's packing table, compiled per rank from its own transfers, equals the whole schedule's",
          "[model][classes][nodes]") {
  // Named senders: each rank's program is compiled from the transfers it sends or receives in (a few of
  // the schedule's many); the bits must be those of compiling the whole schedule for the rank.
  for (bool periodic : {false, true})
    for (int k : {1, 2}) {
      const hs::grid_shape g({6, 5, 4}, {periodic, periodic, !periodic});
      const auto r = hs::make_range(g, k);
      auto node_of = std::make_shared<std::vector<int>>();
      for (int rank = 0; rank < g.size(); ++rank) node_of->push_back(rank / 7);  // nodes across lines
      const hs::schedule s = hs::NodeAggregate::make_schedule(g, r, {.node_of = node_of});
      INFO("k " << k << " periodic " << periodic);
      const auto table = hs::detail::staging_of(g, s, r, "NodeAggregate");
      int differ = 0, staged = 0;
      for (int rank = 0; rank < g.size(); ++rank) {
        const hs::detail::program p = hs::detail::compile(
            s, g, g.coords_of(rank), r, [](const hs::offset&) { return std::size_t{1}; }, "NodeAggregate");
        for (std::size_t round = 0; round < p.rounds.size(); ++round) {
          std::vector<unsigned> bits(s.rounds[round].transfers.size(), 0u);
          for (const auto& t : p.rounds[round].transfers) {
            if (t.self) continue;
            if (t.send.exists() && !t.send.contiguous) bits[static_cast<std::size_t>(t.tag)] |= 1u;
            if (t.recv.exists() && !t.recv.contiguous) bits[static_cast<std::size_t>(t.tag)] |= 2u;
          }
          for (std::size_t ti = 0; ti < bits.size(); ++ti) {  // every transfer: none charged that is not packed
            staged += bits[ti] != 0;
            differ += table(rank, round, ti) != bits[ti];
          }
        }
      }
      CHECK(differ == 0);
      CHECK(staged > 0);  // the table is not trivially empty
    }
}

TEST_CASE("the shared-memory path prices messages larger than its slots as MPI messages", "[model][nodes]") {
  // The window carries messages up to detail::shared_slot_bytes (64 KiB); larger ones go by MPI on the path
  // too (shared_window::fits), so blocks above it must cost what they cost without the path, to the bit,
  // while small ones cost less. One node of 8 ranks, every message inside it.
  const hs::grid_shape g({2, 2, 2}, {true, true, true});
  const hs::hockney h = hs::hockney(1e-6, 0.2e-9, 0.3e-6).with_copy_beta(0.05e-9).with_shm_alpha(0.2e-6);
  const hs::range r = hs::make_range(g, 1);
  for (const hs::schedule& s : {hs::Shift::make_schedule(g, r), hs::SingleHop::make_schedule(g, r)})
    for (const double bytes : {1000.0, 65536.0 + 1}) {
      hs::detail::simulation_setup setup;
      setup.cost = h;
      setup.block_bytes = [bytes](int) { return bytes; };
      setup.nodes.node_of = std::vector<int>(8, 0);
      const double flat = hs::detail::simulate(g, s, setup).makespan;
      setup.shm = true;
      const double path = hs::detail::simulate(g, s, setup).makespan;
      INFO(s.rounds.size() << " rounds, blocks of " << bytes << " B: " << flat << " s flat, " << path << " s on the path");
      if (bytes > static_cast<double>(hs::detail::shared_slot_bytes))
        CHECK(path == flat);
      else
        CHECK(path < flat);
    }
}

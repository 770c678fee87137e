// SPDX-License-Identifier: BSD-3-Clause
// The round table (model/calibration/round_table.hpp): a model built from per-size
// round times must give back, at every measured size, the chain's time per
// round and the burst's gap it was built from, through the same hockney
// calls the simulator makes; noise that makes a time fall with size is pooled.

#include "../support/catch.hpp"
#include <haloshift/model/calibration/calibration.hpp>
#include <haloshift/model/calibration/round_table.hpp>

#include <cstdio>
#include <fstream>
#include <numeric>

namespace hs = haloshift;

TEST_CASE("non_decreasing pools the values that fall and keeps the rest", "[model][fit]") {
  CHECK(hs::detail::fit::non_decreasing({1, 2, 3}) == std::vector<double>{1, 2, 3});
  CHECK(hs::detail::fit::non_decreasing({1, 3, 2, 4}) == std::vector<double>{1, 2.5, 2.5, 4});
  // A dip that needs two pools: 5 joins 1 and 0 (mean 2), and then 2 stays below 3.
  CHECK(hs::detail::fit::non_decreasing({5, 1, 0, 3}) == std::vector<double>{2, 2, 2, 3});
  const std::vector<double> noisy{3, 1, 4, 1, 5, 9, 2, 6};
  const auto pooled = hs::detail::fit::non_decreasing(noisy);
  REQUIRE(pooled.size() == noisy.size());
  CHECK(std::is_sorted(pooled.begin(), pooled.end()));
  CHECK(std::accumulate(pooled.begin(), pooled.end(), 0.0) == Approx(std::accumulate(noisy.begin(), noisy.end(), 0.0)));
  CHECK(hs::detail::fit::non_decreasing({}).empty());
}

namespace {
/// A table shaped like the 8-rank one of docs/performance.md: flat below the eager limit, a step at
/// 4 KiB, and a gap that more than doubles per doubling of the size (so pieces need negative gammas).
std::vector<hs::detail::round_point> example_table() {
  std::vector<hs::detail::round_point> t;
  for (double m = 8; m <= 16 << 20; m *= 2) {
    const double gap = 0.6e-6 + (m >= 4096 ? 15e-6 : 0) + 0.55e-9 * m + (m >= (1 << 20) ? 1e-15 * m * m : 0);
    const double single = 19e-6 + (m >= 4096 ? 35e-6 : 0) + 0.15e-9 * m;
    const int burst = static_cast<int>(std::clamp((32.0 * (1 << 20)) / m, 2.0, 32.0));
    t.push_back({m, single + gap, gap, burst});
  }
  return t;
}
}  // namespace

TEST_CASE("the round-table model gives back the measured rounds at every size", "[model][round_table]") {
  const double growth = 1.2e-9;
  const auto table = example_table();
  const hs::hockney h = hs::detail::round_table_model(table, growth);
  bool negative_gamma = false;
  for (const auto& p : h.pieces()) negative_gamma |= p.gamma < 0;
  CHECK(negative_gamma);  // the case the NaN sentinel exists for
  for (const auto& p : table) {
    INFO("m = " << p.bytes);
    // A round of the chain: 2 messages, one gap (what simulate() charges a rank posting 2).
    CHECK(h.burst(2, p.bytes) == Approx(p.per_round).epsilon(1e-9));
    // A burst of n: its gap per further message, growth included, as measured.
    CHECK(h.gap(p.bytes, p.burst) + h.beta(p.bytes) * p.bytes == Approx(p.gap).epsilon(1e-9));
    CHECK(h.time(p.bytes) == Approx(p.per_round - p.gap + growth * (p.burst - 2)).epsilon(1e-9));
  }
  CHECK(h.gamma_growth() == growth);
  CHECK(h.round_delta() == 0);  // folded into t(m): a chain cannot separate them
  CHECK(h.time(0) == Approx(h.time(table.front().bytes)));
  // Beyond the largest size: the last slope goes on.
  const auto& last = table.back();
  CHECK(h.time(2 * last.bytes) > h.time(last.bytes));

  SECTION("a file keeps it, negative piece gammas included") {
    const std::string path = "haloshift-test-round-table.json";
    hs::calibration c;
    c.cost = h;
    hs::save_calibration(c, path);
    const auto back = hs::load_calibration(path).cost;
    for (const auto& p : table) {
      CHECK(back.time(p.bytes) == Approx(h.time(p.bytes)));
      CHECK(back.gap(p.bytes, p.burst) == Approx(h.gap(p.bytes, p.burst)));
    }
    std::remove(path.c_str());
  }
}

TEST_CASE("the round-table model pools noise and refuses what it cannot fit", "[model][round_table][errors]") {
  auto table = example_table();
  // A lucky measurement at 64 KiB: its time and gap fall below the smaller size's.
  auto& lucky =
      *std::find_if(table.begin(), table.end(), [](const hs::detail::round_point& p) { return p.bytes == 65536; });
  lucky.per_round *= 0.5;
  lucky.gap *= 0.5;
  const hs::hockney h = hs::detail::round_table_model(table);
  for (std::size_t i = 1; i < table.size(); ++i) {
    INFO("m = " << table[i].bytes);
    CHECK(h.burst(2, table[i].bytes) >= h.burst(2, table[i - 1].bytes) * (1 - 1e-12));
    CHECK(h.burst(32, table[i].bytes) >= h.burst(32, table[i - 1].bytes) * (1 - 1e-12));
  }
  CHECK_THROWS_WITH(hs::detail::round_table_model({table.front()}), Catch::Contains("need at least 2 sizes, got 1"));
  CHECK_THROWS_WITH(hs::detail::round_table_model({table[0], table[0]}), Catch::Contains("two points at 8"));
}

TEST_CASE("a piece whose injection would be negative is refused, in code and in files", "[model][round_table][errors]") {
  CHECK_THROWS_WITH(hs::hockney::piecewise({{0, 1e-6, 0}, {4096, 1e-6, 1e-9, -5e-6}}, 0),
                    Catch::Contains("piece 1 has gamma") && Catch::Contains("negative time to inject"));
  const std::string path = "haloshift-test-round-table-bad.json";
  std::ofstream(path) << R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s_per_byte": 0, "gamma_s": 0,
      "pieces": [{"from_bytes": 0, "alpha_s": 1e-6, "beta_s_per_byte": 0},
                 {"from_bytes": 4096, "alpha_s": 1e-6, "beta_s_per_byte": 1e-9, "gamma_s": -5e-6}]})";
  CHECK_THROWS_WITH(hs::load_calibration(path),
                    Catch::Contains(path) && Catch::Contains("field 'pieces[1].gamma_s' = -5e-06"));
  std::ofstream(path) << R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s_per_byte": 0, "gamma_s": 0,
      "pieces": [{"from_bytes": 0, "alpha_s": 1e-6, "beta_s_per_byte": 0},
                 {"from_bytes": 4096, "alpha_s": -1e-5, "beta_s_per_byte": 1e-9}]})";
  CHECK_THROWS_WITH(hs::load_calibration(path), Catch::Contains("field 'pieces[1].alpha_s' = -1e-05"));
  std::remove(path.c_str());
}

// SPDX-License-Identifier: BSD-3-Clause
// Fitting Hockney parameters to synthetic ping-pong samples with known answers.

#include "../support/catch.hpp"
#include <haloshift/auto.hpp>

#include <cstdio>
#include <fstream>

namespace hs = haloshift;

namespace {
std::vector<hs::detail::fit::sample> synthetic(double alpha, double beta, double knee = 0, double alpha2 = 0,
                                               double beta2 = 0) {
  std::vector<hs::detail::fit::sample> out;
  for (double m : {0.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0})
    for (int rep = 0; rep < 10; ++rep) {
      const double t = (knee > 0 && m >= knee) ? alpha2 + beta2 * m : alpha + beta * m;
      out.push_back({m, t * (1 + 0.01 * rep)});  // the fastest is the true value, the others slower
    }
  return out;
}
}  // namespace

TEST_CASE("linear regression and per-size means recover alpha and beta", "[model][fit]") {
  const auto samples = hs::detail::fit::fastest(synthetic(2e-6, 1e-9), 0.1);
  const auto h = hs::detail::fit::linear_regression(samples);
  CHECK(h.alpha() == Approx(2e-6).epsilon(1e-6));
  CHECK(h.beta() == Approx(1e-9).epsilon(1e-6));
  const auto table = hs::detail::fit::per_size_means(samples);
  CHECK(table.time(0) == Approx(2e-6));
  CHECK(table.time(1024) == Approx(2e-6 + 1024e-9));
  CHECK(table.time(3000) == Approx(2e-6 + 3000e-9));  // interpolated
  CHECK_THROWS_WITH(hs::detail::fit::per_size_means({{8, 1e-6}}), Catch::Contains("0-byte"));
}

TEST_CASE("the fastest-20 % filter keeps the best samples of each size", "[model][fit]") {
  const auto all = synthetic(1e-6, 1e-9);
  const auto best = hs::detail::fit::fastest(all, 0.2);
  CHECK(best.size() == 9 * 2);
  for (const auto& s : best) CHECK(s.seconds <= (1e-6 + 1e-9 * s.bytes) * 1.011);
  CHECK_THROWS_WITH(hs::detail::fit::fastest(all, 0.0), Catch::Contains("fraction must lie in (0, 1], got 0"));
}

TEST_CASE("a two-piece fit finds the eager-to-rendezvous knee", "[model][fit]") {
  const auto samples = hs::detail::fit::fastest(synthetic(1e-6, 1e-9, 65536, 20e-6, 0.5e-9), 0.1);
  const auto [h, knee] = hs::detail::fit::two_piece(samples);
  CHECK(knee == 65536);
  CHECK(h.time(1024) == Approx(1e-6 + 1024e-9).epsilon(1e-6));
  CHECK(h.time(262144) == Approx(20e-6 + 0.5e-9 * 262144).epsilon(1e-6));
  const auto [one, none] = hs::detail::fit::two_piece(hs::detail::fit::fastest(synthetic(1e-6, 1e-9), 0.1));
  CHECK(none == 0);
  CHECK(one.pieces().size() == 1);
}

TEST_CASE("calibration files round-trip, and bad ones name the file and the field", "[model][calibration]") {
  const std::string path = "haloshift-test-calibration.json";
  hs::calibration c;
  c.cost = hs::hockney::piecewise({{0, 1e-6, 1e-9}, {65536, 5e-6, 0.8e-9}}, 0.2e-6);
  c.method = "two-piece";
  c.knee_bytes = 65536;
  hs::save_calibration(c, path);
  const auto back = hs::load_calibration(path);
  CHECK(back.cost.time(1000) == Approx(c.cost.time(1000)));
  CHECK(back.cost.time(1e6) == Approx(c.cost.time(1e6)));
  CHECK(back.cost.gamma() == Approx(0.2e-6));
  CHECK(back.method == "two-piece");

  auto write = [&](const std::string& text) { std::ofstream(path) << text; };
  write("{ not json");
  CHECK_THROWS_WITH(hs::load_calibration(path), Catch::Contains(path) && Catch::Contains("not valid JSON"));
  write(R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s_per_byte": 1e-9})");
  CHECK_THROWS_WITH(hs::load_calibration(path), Catch::Contains("field 'gamma_s' is missing"));
  write(R"({"haloshift_calibration": 1, "alpha_s": -1, "beta_s_per_byte": 1e-9, "gamma_s": 0})");
  CHECK_THROWS_WITH(hs::load_calibration(path), Catch::Contains("field 'alpha_s' = -1") && Catch::Contains("out of range"));
  write(R"({"alpha_s": 1e-6})");
  CHECK_THROWS_WITH(hs::load_calibration(path), Catch::Contains("'haloshift_calibration' is missing"));
  CHECK_THROWS_WITH(hs::load_calibration("/nonexistent/haloshift.json"), Catch::Contains("cannot be read"));
  std::remove(path.c_str());
}

TEST_CASE("explain ranks strategies by the model: latency-bound with overlap favours SingleHop, serialized "
          "messages favour Shift, large k favours TeamShift",
          "[model][auto]") {
  const hs::grid_shape g({4, 4, 4}, {true, true, true});
  const auto k1 = hs::make_range(g, 1);
  CHECK(hs::explain(g, k1, 64, hs::hockney(50e-6, 1e-10, 0.0)).front().strategy == "SingleHop");
  CHECK(hs::explain(g, k1, 64, hs::hockney(2e-6, 1e-9)).front().strategy == "Shift");
  const hs::grid_shape line({64}, {true});
  const auto k8 = hs::make_range(line, 8);
  const auto ranking = hs::explain(line, k8, 8, hs::hockney(10e-6, 1e-10));  // gamma = alpha: every message paid
  CHECK(ranking.front().strategy == "TeamShift");
  for (std::size_t i = 1; i < ranking.size(); ++i) CHECK(ranking[i - 1].seconds <= ranking[i].seconds);
}

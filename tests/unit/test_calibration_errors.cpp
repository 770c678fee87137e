// SPDX-License-Identifier: BSD-3-Clause
// Bad calibration files and bad model arguments raise haloshift::error naming
// the file, the field or the argument and the value; never a nlohmann
// exception, a crash or a silently accepted value (issue 17).

#include "../support/catch.hpp"
#include "../support/model_oracles/round_by_round.hpp"
#include <haloshift/model/calibration/calibration.hpp>
#include <haloshift/model/cost/paper_formulas.hpp>
#include <haloshift/model/simulation/simulator.hpp>
#include <haloshift/select/advisor.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

namespace hs = haloshift;

namespace calibration_errors_test {
/// Only haloshift::error, with every expected piece of text; anything else fails.
void expect_error(const std::string& text, const std::vector<std::string>& expected) {
  INFO("file text: " << text);
  try {
    (void)hs::detail::parse_calibration(text, "bad.json");
    FAIL("accepted");
  } catch (const hs::error& e) {
    const std::string what = e.what();
    INFO("error: " << what);
    CHECK(what.find("calibration file bad.json: ") != std::string::npos);
    for (const std::string& part : expected) CHECK(what.find(part) != std::string::npos);
  } catch (const std::exception& e) {
    FAIL("foreign exception: " << e.what());
  }
}
const std::string head = R"({"haloshift_calibration": 1, )";
}  // namespace calibration_errors_test

TEST_CASE("wrong JSON types and values in a calibration raise haloshift::error naming field and value",
          "[model][calibration][errors]") {
  using calibration_errors_test::expect_error;
  using calibration_errors_test::head;
  const std::string rest = R"("beta_s_per_byte": 1e-10, "gamma_s": 0})";
  expect_error(head + R"("alpha_s": "fast", )" + rest, {"field 'alpha_s' is not a number", "\"fast\""});
  expect_error(head + R"("alpha_s": [1, 2], )" + rest, {"field 'alpha_s' is not a number", "array"});
  expect_error(head + R"("alpha_s": {}, )" + rest, {"field 'alpha_s' is not a number", "object"});
  expect_error(head + R"("alpha_s": null, )" + rest, {"field 'alpha_s' is not a number", "null"});
  expect_error(head + R"("alpha_s": true, )" + rest, {"field 'alpha_s' is not a number", "true"});
  expect_error(head + R"("alpha_s": -1e-6, )" + rest, {"field 'alpha_s' = -1e-06", "out of range"});
  expect_error(head + R"("alpha_s": 1e300, )" + rest, {"field 'alpha_s' = 1e+300", "out of range"});
  expect_error(head + R"("alpha_s": NaN, )" + rest, {"not valid JSON"});
  expect_error(head + R"("alpha_s": 1e999, )" + rest, {"not valid JSON"});
  expect_error(head + R"("alpha_s": 1e-6, "gamma_s": 0})", {"field 'beta_s_per_byte' is missing"});
  expect_error(head + R"("alpha_s": 1e-6, "beta_s_per_byte": 1e-10, "gamma_s": 0, "ranks": "four"})",
               {"field 'ranks' is not a number", "\"four\""});
  expect_error(head + R"("alpha_s": 1e-6, "beta_s_per_byte": 1e-10, "gamma_s": 0, "ranks": 2.5})",
               {"field 'ranks' = 2.5", "whole number"});
  expect_error(head + R"("alpha_s": 1e-6, "beta_s_per_byte": 1e-10, "gamma_s": 0, "host": 7})",
               {"field 'host' is not a string", "7"});
  expect_error(head + R"("alpha_s": 1e-6, "beta_s_per_byte": 1e-10, "gamma_s": 0, "round_s": -0.5})",
               {"field 'round_s' = -0.5"});
  // Pieces: an array of objects.
  expect_error(head + R"("gamma_s": 0, "pieces": {"from_bytes": 0}})", {"field 'pieces' must be a non-empty array"});
  expect_error(head + R"("gamma_s": 0, "pieces": []})", {"field 'pieces' must be a non-empty array"});
  expect_error(head + R"("gamma_s": 0, "pieces": [3]})", {"field 'pieces[0]' must be an object", "3"});
  expect_error(head + R"("gamma_s": 0, "pieces": [{"from_bytes": 0, "alpha_s": 1e-6, "beta_s_per_byte": "x"}]})",
               {"field 'pieces[0].beta_s_per_byte' is not a number"});
  expect_error(head + R"("gamma_s": 0, "pieces": [{"from_bytes": 0, "alpha_s": 1e-6, "beta_s_per_byte": 0},
                                                  {"from_bytes": 0, "alpha_s": 1e-6, "beta_s_per_byte": 0}]})",
               {"field 'pieces'", "increasing"});
  // Not a calibration at all, or not JSON.
  expect_error("[1, 2, 3]", {"top level must be a JSON object", "array"});
  expect_error("42", {"top level must be a JSON object", "42"});
  expect_error("", {"not valid JSON"});
  expect_error(R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s)", {"not valid JSON"});  // truncated
  expect_error(R"({"haloshift_calibration": "yes", "alpha_s": 1e-6})", {"field 'haloshift_calibration' is not a number"});
  expect_error(R"({"haloshift_calibration": 2, "alpha_s": 1e-6})", {"field 'haloshift_calibration' = 2"});
  expect_error(std::string(100000, '[') + std::string(100000, ']'), {"top level must be a JSON object"});
  expect_error(head + R"("alpha_s": )" + std::string(50000, '[') + std::string(50000, ']') + ", " + rest,
               {"field 'alpha_s' is not a number", "array of 1"});
  expect_error(head + R"("alpha_s": ")" + std::string(1000, 'x') + R"(", )" + rest,
               {"a string of 1000 characters"});
  // A good one still loads.
  const hs::calibration c = hs::detail::parse_calibration(head + R"("alpha_s": 1e-6, )" + rest, "good.json");
  CHECK(c.cost.alpha() == 1e-6);
}

TEST_CASE("a calibration path that is a directory, missing or empty raises haloshift::error",
          "[model][calibration][errors]") {
  const std::string dir = "haloshift-calibration-dir-" + std::to_string(::getpid());
  std::filesystem::create_directory(dir);
  CHECK_THROWS_WITH(hs::load_calibration(dir), Catch::Contains(dir) && Catch::Contains("is a directory"));
  std::filesystem::remove(dir);
  CHECK_THROWS_WITH(hs::load_calibration(dir), Catch::Contains(dir) && Catch::Contains("no such file"));
  { std::ofstream(dir) << ""; }
  CHECK_THROWS_WITH(hs::load_calibration(dir), Catch::Contains(dir) && Catch::Contains("not valid JSON"));
  std::remove(dir.c_str());
}

TEST_CASE("explain, the closed forms, the simulator and the advisor reject bad byte counts and ranges",
          "[model][explain][errors]") {
  const hs::grid_shape g({4, 4}, {true, true});
  const hs::range r = hs::make_range(g, 1);
  const hs::hockney h(1e-6, 1e-9);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(hs::explain(g, r, nan, h), Catch::Contains("explain: bytes") && Catch::Contains("got nan"));
  CHECK_THROWS_WITH(hs::explain(g, r, inf, h), Catch::Contains("explain: bytes") && Catch::Contains("got inf"));
  CHECK_THROWS_WITH(hs::explain(g, r, -1, h), Catch::Contains("explain: bytes") && Catch::Contains("got -1"));
  CHECK_THROWS_WITH(hs::explain(g, hs::range{}, 8, h), Catch::Contains("explain: r is empty"));
  CHECK_THROWS_WITH(hs::explain(g, hs::range{{-1, 1, 0}}, 8, h), Catch::Contains("explain: r.k[0]") &&
                                                                     Catch::Contains("got -1"));
  CHECK_THROWS_WITH(hs::explain(g, hs::range{{1, 1, 1}}, 8, h), Catch::Contains("explain: r.k[2] = 1") &&
                                                                    Catch::Contains("2 dimension(s)"));
  CHECK_THROWS_WITH(hs::explain(g, hs::range{{1 << 30, 1, 0}}, 8, h), Catch::Contains("explain: r.k[0]"));
  CHECK_THROWS_WITH(hs::explain(g, hs::range{{1, 1, 0}, static_cast<hs::shell>(7)}, 8, h),
                    Catch::Contains("explain: r.kind") && Catch::Contains("got 7"));
  CHECK_THROWS_WITH(hs::explain(g, r, 8, h, static_cast<hs::protocol>(9)),
                    Catch::Contains("explain: mode") && Catch::Contains("got 9"));

  CHECK_THROWS_WITH(hs::detail::closed_form::shift(r, nan, h, hs::protocol::overlapping),
                    Catch::Contains("closed_form::shift: m") && Catch::Contains("nan"));
  CHECK_THROWS_WITH(hs::detail::closed_form::single_hop(r, -inf, h, hs::protocol::overlapping),
                    Catch::Contains("closed_form::single_hop: m") && Catch::Contains("-inf"));
  CHECK_THROWS_WITH(hs::detail::closed_form::ttl_multi_hop(r, 2, -3, h, hs::protocol::overlapping),
                    Catch::Contains("closed_form::ttl_multi_hop: m") && Catch::Contains("-3"));
  CHECK_THROWS_WITH(hs::detail::closed_form::ttl_multi_hop(r, 0, 8, h, hs::protocol::overlapping),
                    Catch::Contains("ndims must be in [1, 3], got 0"));
  CHECK_THROWS_WITH(
      hs::detail::closed_form::team_shift_rounds(g, hs::range{}, {2, 2, 1}, 8, h, hs::protocol::overlapping),
      Catch::Contains("closed_form::team_shift_rounds: r is empty"));
  CHECK_THROWS_WITH(
      hs::detail::closed_form::shift(hs::range{{100000, 100000, 100000}}, 8, h, hs::protocol::overlapping),
      Catch::Contains("closed_form::shift: r = (100000,100000,100000)") && Catch::Contains("blocks"));

  hs::detail::simulation_setup setup;
  setup.cost = h;
  setup.block_bytes = [nan](int rank) { return rank == 3 ? nan : 8.0; };
  const hs::schedule s = hs::detail::strategy_registry::instance().find("Shift").make_schedule(g, r, {});
  CHECK_THROWS_WITH(hs::detail::simulate(g, s, setup),
                    Catch::Contains("simulate: setup.block_bytes(3)") && Catch::Contains("got nan"));
  CHECK_THROWS_WITH(hs::round_by_round_time(g, s, setup), Catch::Contains("round_by_round_time: setup.block_bytes(3)"));
  setup.block_bytes = nullptr;
  CHECK_THROWS_WITH(hs::detail::simulate(g, s, setup), Catch::Contains("simulate: setup.block_bytes is empty"));

  hs::advice_request request;
  request.grid = g;
  request.cost = h;
  request.ks = {1};
  request.sizes = {8, inf};
  CHECK_THROWS_WITH(hs::advise(request), Catch::Contains("advise: request.sizes[]") && Catch::Contains("inf"));
  request.sizes = {8, nan};
  CHECK_THROWS_WITH(hs::advise(request), Catch::Contains("advise: request.sizes[]") && Catch::Contains("nan"));
  CHECK_THROWS_WITH(hs::detail::team_shift_tradeoff(g, 2, 8, inf, h, hs::protocol::overlapping),
                    Catch::Contains("team_shift_tradeoff") && Catch::Contains("high inf"));
}

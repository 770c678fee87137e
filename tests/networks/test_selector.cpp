// SPDX-License-Identifier: BSD-3-Clause
// The announcement selector: the paper's reading of Table III, and costs
// recomputed here from Hockney's formula.

#include "../support/catch.hpp"
#include <haloshift/select/announce_selector.hpp>

#include <algorithm>
#include <cmath>

#include "table_iii.hpp"

namespace hs = haloshift;

TEST_CASE("diameter limit 28: the degree Table III highlights per process count", "[selector][table3]") {
  const auto formula = [](int p, int n) { return hs::msn_topology(p, n).formula_diameter(); };
  for (const auto& row : table_iii::rows) {
    // The paper's reading: the first degree whose printed diameter is at most 28.
    int highlighted = 0;
    for (int n = 2; n <= 10 && !highlighted; ++n)
      if (row.diameter[n - 2] <= 28) highlighted = n;
    INFO(row.processes << " processes");
    CHECK(hs::msn_smallest_degree(row.processes, 28, formula) == highlighted);
  }
}

TEST_CASE("the selector ranks by Hockney cost per step among methods that fit the delay", "[selector]") {
  const double alpha = 2e-6, beta = 1e-9;
  const hs::hockney h(alpha, beta);
  auto burst = [&](int n, double m) { return alpha + (n - 1) * alpha + n * beta * m; };
  const hs::grid_shape grid({16, 16, 16}, {true, true, true});
  for (double b : {400.0, 8e3, 8e5})
    for (int delay : {1, 8, 20, 40}) {
      const hs::detail::announce_workload w{4096, b, delay, grid};
      const auto choice = hs::choose_announcement(h, w);
      INFO("bytes " << b << " delay " << delay);
      // MSN: smallest degree whose exact diameter fits.
      int degree = 0;
      for (int n = 1; n <= 30 && !degree; ++n)
        if (hs::detail::msn_diameter_estimate()(4096, n) <= delay) degree = n;
      const double ring = 4095 * (alpha + beta * b / 4096), doubling = 12 * alpha + beta * b * 4095 / 4096;
      for (const auto& o : choice.options) {
        switch (o.method) {
          case hs::announce_method::msn:
            CHECK(o.degree == degree);
            CHECK(o.seconds_per_step == Approx(burst(degree, b)));
            break;
          case hs::announce_method::ttl_multi_hop:
            CHECK(o.delay_steps == 8);
            CHECK(o.fits == (delay >= 8));
            CHECK(o.seconds_per_step == Approx(burst(26, b / 26)));
            break;
          case hs::announce_method::iallgatherv:
            CHECK(o.seconds_per_step == Approx(std::min(ring, doubling)));
            break;
        }
      }
      CHECK(std::any_of(choice.options.begin(), choice.options.end(),
                        [](const auto& o) { return o.method == hs::announce_method::msn; }) == (degree > 0));
      // The best fits and nothing that fits is cheaper.
      CHECK(choice.best.fits);
      for (const auto& o : choice.options)
        if (o.fits) CHECK(choice.best.seconds_per_step <= o.seconds_per_step);
    }
}

TEST_CASE("bad selector arguments name the argument and value", "[selector][errors]") {
  const hs::hockney h(1e-6, 1e-9);
  CHECK_THROWS_WITH(hs::choose_announcement(h, {0, 400, 5}), Catch::Contains("processes must be >= 1, got 0"));
  CHECK_THROWS_WITH(hs::choose_announcement(h, {8, 400, 0}), Catch::Contains("max_delay_steps must be >= 1, got 0"));
  CHECK_THROWS_WITH(hs::choose_announcement(h, {8, -1, 3}), Catch::Contains("bytes_per_step must be >= 0"));
}

// SPDX-License-Identifier: BSD-3-Clause
// Arguments that must agree across ranks are checked collectively when a plan
// is built: a mismatch raises the same error on every rank instead of hanging.

#include "../support/catch.hpp"
#include "../support/world.hpp"
#include <haloshift/haloshift.hpp>

namespace hs = haloshift;

namespace {
/// A strategy with the same schedule as Shift but another name.
struct RenamedShift {
  static constexpr std::string_view name = "RenamedShift";
  static hs::schedule make_schedule(const hs::grid_shape& g, const hs::range& r) { return hs::Shift::make_schedule(g, r); }
};
}  // namespace

TEST_CASE("invalid k raises the same error on every rank", "[plan][errors]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, false}});
  CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, 0, 4)), Catch::Contains("k must be >= 1, got 0"));
  CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, -3, 4)), Catch::Contains("k must be >= 1, got -3"));
  CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, hs::offset{1, 1, 1}, 4)),
                    Catch::Contains("k[2] = 1 but the grid has only 2 dimension(s)"));
}

TEST_CASE("k that is invalid on one rank only raises on all ranks", "[plan][errors]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  const int last = world_size() - 1;
  const int k = world_rank() == last ? 0 : 1;
  CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, k, 4)), Catch::Contains("k must be >= 1, got 0"));
}

TEST_CASE("k, strategy, options and element size must agree across ranks", "[plan][errors]") {
  if (world_size() < 2) return;  // nothing can disagree with itself
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}});
  const bool odd = world_rank() % 2 == 1;
  CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, odd ? 2 : 1, 4)),
                    Catch::Contains("k[0] must be the same on all ranks, got values from 1 to 2"));
  if (odd)
    CHECK_THROWS_WITH((hs::make_plan<RenamedShift, double>(grid, 1, 4)), Catch::Contains("strategy must be the same"));
  else
    CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, 1, 4)), Catch::Contains("strategy must be the same"));
  if (odd)
    CHECK_THROWS_WITH((hs::make_plan<hs::Shift, float>(grid, 1, 4)), Catch::Contains("sizeof(T) must be the same"));
  else
    CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, 1, 4)), Catch::Contains("sizeof(T) must be the same"));
  const hs::protocol mode = odd ? hs::protocol::rendezvous : hs::protocol::overlapping;
  CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, 1, 4, {.mode = mode})),
                    Catch::Contains("protocol must be the same"));
  const hs::shell kind = odd ? hs::shell::eighth : hs::shell::full;
  CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, 1, 4, {.kind = kind})),
                    Catch::Contains("shell must be the same"));
}

TEST_CASE("a plan is still usable after a failed build on the same grid", "[plan][errors]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  CHECK_THROWS_AS((hs::make_plan<hs::Shift, int>(grid, 0, 1)), hs::error);
  std::vector<int> mine{world_rank()};
  auto halo = hs::exchange<hs::Shift>(grid, 1, mine);
  CHECK(halo.size() == 2);
  CHECK(halo.at({1, 0, 0}).data[0] == grid.neighbor_at({1, 0, 0})->rank);
}

TEST_CASE("forward and reverse reject data of the wrong size and foreign halos locally", "[plan][errors]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  auto plan = hs::make_plan<hs::Shift, double>(grid, 1, 3);
  auto other = hs::make_plan<hs::Shift, double>(grid, 1, 3);
  std::vector<double> wrong(2), right(3);
  auto halo = plan.make_halo();
  CHECK_THROWS_WITH(plan.forward(wrong, halo), Catch::Contains("local data has 2 elements but the plan was built for 3"));
  auto foreign = other.make_halo();
  CHECK_THROWS_WITH(plan.forward(right, foreign), Catch::Contains("not made by this plan"));
  CHECK_THROWS_WITH(plan.reverse(halo, std::span<double>(wrong)), Catch::Contains("local data has 2 elements"));
}

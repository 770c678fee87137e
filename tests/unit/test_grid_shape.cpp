// SPDX-License-Identifier: BSD-3-Clause
#include "../support/catch.hpp"
#include <haloshift/haloshift.hpp>

namespace hs = haloshift;

TEST_CASE("grid_shape numbers ranks like MPI_Cart_rank and wraps periodic offsets", "[grid]") {
  const hs::grid_shape g({4, 3, 2}, {true, false, true});
  CHECK(g.size() == 24);
  CHECK(g.ndims() == 3);
  CHECK(g.rank_of({0, 0, 1}) == 1);
  CHECK(g.rank_of({0, 1, 0}) == 2);
  CHECK(g.rank_of({1, 0, 0}) == 6);
  for (int r = 0; r < g.size(); ++r) CHECK(g.rank_of(g.coords_of(r)) == r);

  auto n = g.neighbor_at({0, 1, 1}, {-1, 1, 3});
  REQUIRE(n);
  CHECK(n->rank == g.rank_of({3, 2, 0}));
  CHECK(n->image == hs::offset{-1, 0, 2});
  CHECK_FALSE(g.neighbor_at({0, 2, 0}, {0, 1, 0}));  // y is not periodic
  CHECK(g.neighbor_at({0, 0, 0}, {-9, 0, -5})->image == hs::offset{-3, 0, -3});
}

TEST_CASE("a periodic dimension of one box wraps onto itself", "[grid]") {
  const hs::grid_shape g({1}, {true});
  CHECK(g.dim(1) == 1);
  auto n = g.neighbor_at({0, 0, 0}, {3, 0, 0});
  REQUIRE(n);
  CHECK(n->rank == 0);
  CHECK(n->image == hs::offset{3, 0, 0});
}

TEST_CASE("grid_shape rejects bad dimensions with the argument and value", "[grid][errors]") {
  CHECK_THROWS_WITH(hs::grid_shape({}, {}), Catch::Contains("dims must have 1, 2 or 3 entries, got 0"));
  CHECK_THROWS_WITH(hs::grid_shape({1, 1, 1, 1}, {true, true, true, true}),
                    Catch::Contains("dims must have 1, 2 or 3 entries, got 4"));
  CHECK_THROWS_WITH(hs::grid_shape({2, 0}, {true, true}), Catch::Contains("dims[1] must be >= 1, got 0"));
  CHECK_THROWS_WITH(hs::grid_shape({2, -3}, {true, true}), Catch::Contains("dims[1] must be >= 1, got -3"));
  CHECK_THROWS_WITH(hs::grid_shape({2, 2}, {true}), Catch::Contains("periodic must have one entry per dimension"));
  CHECK_THROWS_AS(hs::grid_shape({2, 2}, {true}), hs::error);
}

TEST_CASE("ranges: k per dimension, zero beyond the grid, errors name the value", "[grid][errors]") {
  const hs::grid_shape g2({2, 2}, {true, true});
  CHECK(hs::make_range(g2, 3).k == hs::offset{3, 3, 0});
  CHECK(hs::make_range(g2, hs::offset{2, 0, 0}).k == hs::offset{2, 0, 0});
  CHECK_THROWS_WITH(hs::make_range(g2, 0), Catch::Contains("k must be >= 1, got 0"));
  CHECK_THROWS_WITH(hs::make_range(g2, -2), Catch::Contains("k must be >= 1, got -2"));
  CHECK_THROWS_WITH(hs::make_range(g2, hs::offset{1, 1, 1}), Catch::Contains("k[2] = 1 but the grid has only 2"));
  CHECK_THROWS_WITH(hs::make_range(g2, hs::offset{0, 0, 0}), Catch::Contains("at least one dimension"));
  CHECK_THROWS_WITH(hs::make_range(g2, hs::offset{1, -1, 0}), Catch::Contains("k[1] must be >= 0, got -1"));
  CHECK(hs::offsets(hs::make_range(g2, 1)).size() == 8);
  CHECK(hs::offsets(hs::make_range(hs::grid_shape({2, 2, 2}, {true, true, true}), 2)).size() == 124);
  CHECK(hs::offsets(hs::make_range(hs::grid_shape({2, 2, 2}, {true, true, true}), 2, hs::shell::eighth)).size() == 26);
}

// SPDX-License-Identifier: BSD-3-Clause
#include "../support/catch.hpp"
#include <haloshift/haloshift.hpp>

#include <cmath>
#include <vector>

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

namespace {
using shape_order = hs::grid_shape::rank_order;
using shape_remainder = hs::grid_shape::remainder_cells;

/// Every grid of 1 to 8 boxes in 1, 2 and 3 dimensions (odd and prime counts, 1 and 2 per dimension).
std::vector<std::vector<int>> small_grids() {
  std::vector<std::vector<int>> out;
  for (int p = 1; p <= 8; ++p)
    for (int a = 1; a <= p; ++a)
      for (int b = 1; b <= p; ++b)
        for (int c = 1; c <= p; ++c) {
          if (a * b * c != p) continue;
          out.push_back({a, b, c});
          if (c == 1) out.push_back({a, b});
          if (b == 1 && c == 1) out.push_back({a});
        }
  return out;
}
}  // namespace

TEST_CASE("grid_shape numbers ranks with the last or the first dimension fastest, as brute force counts them",
          "[grid]") {
  std::size_t grids = 0;
  for (const std::vector<int>& dims : small_grids()) {
    const std::vector<int> d3{dims[0], dims.size() > 1 ? dims[1] : 1, dims.size() > 2 ? dims[2] : 1};
    for (shape_order o : {shape_order::last_fastest, shape_order::first_fastest}) {
      const hs::grid_shape g(dims, std::vector<bool>(dims.size(), true), o);
      CHECK(g.order() == o);
      CHECK(g.remainder() == shape_remainder::spread);
      // Brute force: count the boxes in nested loops, the fastest dimension innermost.
      int r = 0;
      for (int i = 0; i < (o == shape_order::first_fastest ? d3[2] : d3[0]); ++i)
        for (int j = 0; j < d3[1]; ++j)
          for (int k = 0; k < (o == shape_order::first_fastest ? d3[0] : d3[2]); ++k, ++r) {
            const hs::offset c = o == shape_order::first_fastest ? hs::offset{k, j, i} : hs::offset{i, j, k};
            INFO("dims " << hs::to_string(g) << (o == shape_order::first_fastest ? " x fastest" : " z fastest") << " rank "
                         << r);
            CHECK(g.rank_of(c) == r);
            CHECK(g.coords_of(r) == c);
          }
      CHECK(r == g.size());
      ++grids;
    }
  }
  CHECK(grids > 40);
  // The other order is a different grid: plans and fields built on it see the difference.
  CHECK(hs::grid_shape({2, 3}, {true, true}) != hs::grid_shape({2, 3}, {true, true}, shape_order::first_fastest));
  CHECK(hs::grid_shape({2, 3}, {true, true}) == hs::grid_shape({2, 3}, {true, true}, shape_order::last_fastest));
  CHECK(hs::grid_shape({4, 3, 2}, {true, true, true}, shape_order::first_fastest).rank_of({1, 2, 1}) == 1 + 4 * (2 + 3 * 1));
}

TEST_CASE("the even split puts the remainder cells where asked, as a brute-force split does", "[grid][fields]") {
  std::size_t splits = 0;
  for (shape_remainder rule : {shape_remainder::spread, shape_remainder::first, shape_remainder::last})
    for (int p = 1; p <= 8; ++p)
      for (int n = 1; n <= 3 * p + 2; ++n) {
        const hs::grid_shape line({p}, {true}, shape_order::last_fastest, rule);
        CHECK(line.remainder() == rule);
        // Brute force: box c's width, then the offsets as running sums.
        std::vector<int> bounds{0};
        for (int c = 0; c < p; ++c) {
          const int narrow = n / p, extra = n % p;
          const bool wider = rule == shape_remainder::first  ? c < extra
                             : rule == shape_remainder::last ? c >= p - extra
                                                       : (c + 1) * n / p - c * n / p > narrow;  // spread: the definition
          bounds.push_back(bounds.back() + narrow + (wider ? 1 : 0));
        }
        REQUIRE(bounds.back() == n);
        for (int c = 0; c < p; ++c) {
          INFO("rule " << static_cast<int>(rule) << " P " << p << " N " << n << " box " << c);
          const hs::field_shape s(line, {c, 0, 0}, {n, 1, 1}, {1, 0, 0});
          CHECK(s.remainder == rule);
          CHECK(s.lo[0] == bounds[static_cast<std::size_t>(c)]);
          CHECK(s.interior[0] == bounds[static_cast<std::size_t>(c) + 1] - bounds[static_cast<std::size_t>(c)]);
        }
        const hs::field_shape s(line, {0, 0, 0}, {n, 1, 1}, {1, 0, 0});
        for (int t = -2 * p; t <= 3 * p; ++t) {  // periodic images: whole domains further
          const int images = (t + 2 * p) / p - 2, i = t - images * p;
          CHECK(s.first_cell(line, 0, t) == images * n + bounds[static_cast<std::size_t>(i)]);
        }
        ++splits;
      }
  CHECK(splits == 3 * (3 * 36 + 2 * 8));  // per rule, 3 P + 2 cell counts for each P from 1 to 8
}

TEST_CASE("grid_shape rejects a rank order or remainder rule outside its enumeration", "[grid][errors]") {
  CHECK_THROWS_WITH(hs::grid_shape({2}, {true}, static_cast<shape_order>(2)),
                    Catch::Contains("order must be rank_order::last_fastest (0) or rank_order::first_fastest (1), got 2"));
  CHECK_THROWS_WITH(hs::grid_shape({2}, {true}, shape_order::first_fastest, static_cast<shape_remainder>(-1)),
                    Catch::Contains("remainder must be remainder_cells::spread (0), first (1) or last (2), got -1"));
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

TEST_CASE("smallest_surface_dims splits space as MD codes do", "[grid]") {
  using dims = std::vector<int>;
  const std::vector<double> cube{1, 1, 1};
  CHECK(hs::smallest_surface_dims(1, cube, {0, 0, 0}) == dims{1, 1, 1});
  CHECK(hs::smallest_surface_dims(2, cube, {0, 0, 0}) == dims{1, 1, 2});
  CHECK(hs::smallest_surface_dims(3, cube, {0, 0, 0}) == dims{1, 1, 3});
  CHECK(hs::smallest_surface_dims(4, cube, {0, 0, 0}) == dims{1, 2, 2});
  CHECK(hs::smallest_surface_dims(6, cube, {0, 0, 0}) == dims{1, 2, 3});
  CHECK(hs::smallest_surface_dims(8, cube, {0, 0, 0}) == dims{2, 2, 2});
  CHECK(hs::smallest_surface_dims(12, cube, {0, 0, 0}) == dims{2, 2, 3});
  // A long domain is cut across its length; given entries are kept.
  CHECK(hs::smallest_surface_dims(4, {8, 1, 1}, {0, 0, 0}) == dims{4, 1, 1});
  CHECK(hs::smallest_surface_dims(4, cube, {4, 0, 0}) == dims{4, 1, 1});
  CHECK(hs::smallest_surface_dims(6, {1, 1}, {0, 0}) == dims{2, 3});
  CHECK(hs::smallest_surface_dims(5, {1}, {0}) == dims{5});
  // Every result multiplies to the rank count and has the least surface of all factorisations.
  for (int ranks = 1; ranks <= 64; ++ranks) {
    const dims d = hs::smallest_surface_dims(ranks, {3, 2, 1}, {0, 0, 0});
    REQUIRE(d.size() == 3);
    CHECK(d[0] * d[1] * d[2] == ranks);
    auto surface = [](int a, int b, int c) { return 2.0 / (b * c) + 3.0 / (a * c) + 6.0 / (a * b); };
    for (int a = 1; a <= ranks; ++a)
      for (int b = 1; a * b <= ranks; ++b)
        if (ranks % (a * b) == 0) CHECK(surface(d[0], d[1], d[2]) <= surface(a, b, ranks / (a * b)) * (1 + 1e-12));
  }
}

TEST_CASE("cutoff thresholds decide exactly as the distance test", "[particles][cutoff]") {
  // Adversarial coordinates: every box edge, each shifted by 1-4 ulps, the cutoff's own
  // boundaries, the domain's bounds and -0.0; grids whose boxes are thin against the cutoff.
  for (int n : {1, 2, 3, 7}) {
    const hs::grid_shape grid({n}, {true});
    const hs::domain dom{{-0.3, 0, 0}, {1.7 + 1e-9, 1, 1}};
    for (double cutoff : {0.0, 0.1, (dom.hi[0] - dom.lo[0]) / n, 0.45, 1.3}) {
      const int reach = dom.cutoff_reach(grid, 0, cutoff);
      const hs::detail::offset_box box{{-reach, 0, 0}, {reach, 0, 0}};
      for (int me = 0; me < n; ++me) {
        const hs::detail::cutoff_thresholds t(grid, dom, {cutoff, 0, 0}, {me, 0, 0}, box);
        std::vector<double> xs{-0.0, dom.lo[0], dom.hi[0]};
        for (int c = -reach - 1; c <= n + reach + 1; ++c)
          for (double base : {dom.edge(grid, 0, c), dom.edge(grid, 0, c) - cutoff, dom.edge(grid, 0, c) + cutoff}) {
            double up = base, down = base;
            xs.push_back(base);
            for (int u = 0; u < 4; ++u) {
              up = std::nextafter(up, INFINITY);
              down = std::nextafter(down, -INFINITY);
              xs.push_back(up);
              xs.push_back(down);
            }
          }
        for (int source = me - reach; source <= me + reach; ++source) {
          const int s = ((source % n) + n) % n;
          for (int rel = -reach; rel <= reach; ++rel)
            for (double x : xs) {
              // Nested: a box needs x only if every box between it and the source does.
              bool want = true;
              for (int j = rel > 0 ? 1 : -1; want && (rel > 0 ? j <= rel : j >= rel); j += rel > 0 ? 1 : -1)
                want = hs::detail::within_cutoff_along(grid, dom, 0, cutoff, s, j, x);
              INFO("n " << n << " cutoff " << cutoff << " source " << s << " rel " << rel << " x " << x);
              CHECK(t.interval(0, s, rel).contains(x) == want);
            }
        }
      }
    }
  }
}

// SPDX-License-Identifier: BSD-3-Clause
// The MSN construction against an independent one (msn_oracle.hpp): sizes,
// edges, the incomplete hyperplane, strong connectivity, formula (1).

#include "../support/catch.hpp"
#include <haloshift/network/msn_distances.hpp>
#include <haloshift/network/msn_topology.hpp>

#include <algorithm>
#include <string>

#include "msn_oracle.hpp"

namespace hs = haloshift;

TEST_CASE("MSN sizes follow the paper's rule", "[msn]") {
  for (int n = 1; n <= 10; ++n)
    for (int p = 1; p <= 3000; ++p) {
      const auto want = msn_oracle::sizes(p, n);
      REQUIRE(hs::msn_topology::sizes_for(p, n) == want);
      long long box = 1;
      for (int s : want) box *= s;
      REQUIRE(box >= p);
    }
  // A few from Table III, where floating-point roots could go wrong.
  for (int p : {10240, 22960, 114486, 185088, 361760, 2282544, 10649600})
    for (int n = 2; n <= 10; ++n) REQUIRE(hs::msn_topology::sizes_for(p, n) == msn_oracle::sizes(p, n));
  CHECK(hs::msn_topology::sizes_for(15, 2) == std::vector<int>{4, 4});  // the paper's Fig. 4
}

TEST_CASE("MSN edges: +1 along i when the other coordinates sum to an even number", "[msn]") {
  for (int n = 1; n <= 10; ++n)
    for (int p = 1; p <= (n <= 3 ? 600 : 200); ++p) {
      const hs::msn_topology net(p, n);
      const msn_oracle::network want(p, net.sizes());
      const auto in = want.reversed();
      // One assertion per network naming the first wrong edge (a million REQUIREs cost minutes under ASan).
      std::string first_wrong;
      for (int v = 0; v < p && first_wrong.empty(); ++v) {
        for (int i = 0; i < n && first_wrong.empty(); ++i) {
          const int to = net.successor(v, i);
          if (to != want.out[v][i] || net.predecessor(to, i) != v)
            first_wrong = "edge " + std::to_string(v) + " along " + std::to_string(i) + ": successor " +
                          std::to_string(to) + " (oracle " + std::to_string(want.out[v][i]) + "), its predecessor " +
                          std::to_string(net.predecessor(to, i));
        }
        // The incomplete hyperplane adds no links: in-degree = out-degree = n.
        if (first_wrong.empty() && in[v].size() != static_cast<std::size_t>(n))
          first_wrong = "vertex " + std::to_string(v) + " has in-degree " + std::to_string(in[v].size());
      }
      INFO("P = " << p << ", n = " << n);
      REQUIRE(first_wrong == "");
    }
  // Fig. 3's 4x4: rows alternate east/west, columns south/north.
  const hs::msn_topology fig3(16, 2);
  CHECK(fig3.successor(0, 1) == 1);   // (0,0) -> (0,1): x0 = 0 even
  CHECK(fig3.successor(4, 1) == 7);   // (1,0) -> (1,3): x0 = 1 odd, wraps
  CHECK(fig3.successor(1, 0) == 13);  // (0,1) -> (3,1): x1 = 1 odd, wraps
}

TEST_CASE("the incomplete hyperplane is one hop from and to the cuboid", "[msn]") {
  for (int n = 2; n <= 6; ++n)
    for (int p = 2; p <= 1500; ++p) {
      const hs::msn_topology net(p, n);
      if (net.regular()) continue;
      const int last = net.coords_of(p - 1)[0];  // the incomplete layer along dimension 0
      for (int v = p - 1; v >= 0 && net.coords_of(v)[0] == last; --v) {
        REQUIRE(net.coords_of(net.successor(v, 0))[0] < last);
        REQUIRE(net.coords_of(net.predecessor(v, 0))[0] < last);
      }
    }
}

TEST_CASE("every MSN is strongly connected", "[msn]") {
  // Independently for n <= 3: every P up to 1000, then every 5th up to 3000 ...
  for (int n = 1; n <= 3; ++n)
    for (int p = 1; p <= 3000; p += p < 1000 ? 1 : 5) {
      const msn_oracle::network g(p, msn_oracle::sizes(p, n));
      const auto forward = g.from(0);
      REQUIRE(std::find(forward.begin(), forward.end(), -1) == forward.end());
      // backwards: BFS over reversed edges
      const auto in = g.reversed();
      std::vector<int> seen(p, 0), stack{0};
      seen[0] = 1;
      while (!stack.empty()) {
        const int u = stack.back();
        stack.pop_back();
        for (int w : in[u])
          if (!seen[w]) seen[w] = 1, stack.push_back(w);
      }
      REQUIRE(std::count(seen.begin(), seen.end(), 1) == p);
    }
  // ... and with the library (whose edges equal the oracle's, above) for every n up to 10:
  // every P up to 600, then every 11th up to 3000.
  for (int n = 4; n <= 10; ++n)
    for (int p = 1; p <= 3000; p += p < 600 ? 1 : 11) REQUIRE(hs::detail::msn_strongly_connected(hs::msn_topology(p, n)));
}

TEST_CASE("formula (1) is the BFS diameter of regular MSNs with even sizes", "[msn]") {
  // d = sum N_i / 2 + v, v = 1 iff every N_i is a multiple of 4.
  auto formula = [](const std::vector<int>& sizes) {
    int d = 0, v = 1;
    for (int s : sizes) d += s / 2, v = v && s % 4 == 0;
    return d + v;
  };
  auto boxes = std::vector<std::vector<int>>{{4, 4}, {8, 8}, {4, 4, 4}, {8, 8, 8}, {2, 2}, {2, 4}, {4, 6},
                                             {6, 6}, {6, 10}, {8, 12}, {2, 2, 2}, {2, 4, 6}, {6, 6, 6},
                                             {4, 8, 4}, {4, 4, 4, 4}, {2, 6, 2, 4}, {2, 2, 2, 2, 2}};
  for (const auto& sizes : boxes) {
    int p = 1;
    for (int s : sizes) p *= s;
    const hs::msn_topology net(p, sizes);
    REQUIRE(net.regular());
    const int bfs = msn_oracle::network(p, sizes).diameter();
    INFO("sizes " << Catch::Detail::stringify(sizes));
    CHECK(bfs == formula(sizes));
    CHECK(hs::detail::msn_diameter(net) == bfs);
    CHECK(net.formula_diameter() == bfs);
  }
  CHECK(msn_oracle::network(16, {4, 4}).diameter() == 5);
  CHECK(msn_oracle::network(64, {8, 8}).diameter() == 9);
  CHECK(msn_oracle::network(64, {4, 4, 4}).diameter() == 7);
  CHECK(msn_oracle::network(512, {8, 8, 8}).diameter() == 13);
}

TEST_CASE("the bit-parallel diameter equals BFS from every vertex", "[msn]") {
  for (int n = 1; n <= 5; ++n)
    for (int p = 1; p <= 300; p += n == 1 ? 2 : 5) {
      const hs::msn_topology net(p, n);
      const int want = msn_oracle::network(p, net.sizes()).diameter();
      REQUIRE(hs::detail::msn_diameter(net) == want);
      int worst = 0;
      for (int s = 0; s < p; ++s) worst = std::max(worst, hs::detail::msn_eccentricity(net, s));
      REQUIRE(worst == want);
    }
}

TEST_CASE("bad MSN arguments name the argument and value", "[msn][errors]") {
  CHECK_THROWS_WITH(hs::msn_topology(8, 0), Catch::Contains("degree must be from 1 to 30, got 0"));
  CHECK_THROWS_WITH(hs::msn_topology(0, 2), Catch::Contains("processes must be >= 1, got 0"));
  CHECK_THROWS_WITH(hs::msn_topology(20, std::vector<int>{4, 4}), Catch::Contains("fewer than 20"));
  CHECK_THROWS_WITH(hs::msn_topology(8, std::vector<int>{4, 4}), Catch::Contains("empty"));
  CHECK_THROWS_WITH(hs::msn_topology(16, 2).successor(16, 0), Catch::Contains("got 16"));
}

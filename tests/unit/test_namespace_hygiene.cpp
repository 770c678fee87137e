// SPDX-License-Identifier: BSD-3-Clause
// Namespace hygiene: a program that says `using namespace haloshift;` and
// `using namespace std;` together still compiles calls to the C and C++
// standard libraries (no public haloshift name collides with them), and the
// library's internals are out of sight in haloshift::detail.

#include "../support/catch.hpp"
#include <haloshift/auto.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

using namespace haloshift;
using namespace std;


TEST_CASE("haloshift and std together: no name collides", "[namespace]") {
  CHECK(round(2.5) == 3.0);
  vector<int> v{1, 2, 3, 2};
  replace(v.begin(), v.end(), 2, 7);
  CHECK(v == vector<int>{1, 7, 3, 7});
  CHECK(count(v.begin(), v.end(), 7) == 2);
  CHECK(accumulate(v.begin(), v.end(), 0) == 18);
  CHECK(abs(-3) == 3);
  CHECK(log(1.0) == 0.0);
  CHECK(exp(0.0) == 1.0);
  CHECK(max(2, 3) == 3);
  CHECK(min(2, 3) == 2);
  CHECK(to_string(4) == "4");
  CHECK(size(v) == 4);
  CHECK(data(v) == v.data());
  CHECK(distance(v.begin(), v.end()) == 4);
  CHECK(remove(v.begin(), v.end(), 7) - v.begin() == 2);
  CHECK(reduce(v.begin(), v.begin() + 2) == 4);
  CHECK(copysign(1.0, -2.0) == -1.0);
  CHECK(swap_ranges(v.begin(), v.begin(), v.begin()) == v.begin());
  int a = 1, b = 2;
  swap(a, b);
  CHECK(a == 2);
  CHECK(exchange(a, 5) == 2);  // std::exchange; haloshift::exchange needs its strategy spelled out
  CHECK(a == 5);
  // haloshift's own names still work unqualified.
  const grid_shape g({2, 3}, {true, false});  // 2D: 8 offsets for k = 1
  CHECK(offsets(make_range(g, 1)).size() == 8);
  CHECK(to_string(offset{1, -1, 0}) == "(1,-1,0)");
  CHECK(Shift::make_schedule(g, make_range(g, 1)).rounds.size() == 2);  // one round per dimension for k = 1
  schedule_round r;
  CHECK(r.transfers.empty());
  byte_buffer bytes_ok(3);
  CHECK(bytes_ok.size() == 3);
}

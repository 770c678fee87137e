// SPDX-License-Identifier: BSD-3-Clause
// Block halos, randomized: random grids, strategies (TeamShift with random
// team sizes that tile the grid, Auto now and then), k per dimension from 0 to
// beyond the grid, full or eighth shell, protocols, uneven and empty
// payloads. Forward equals the coordinate oracle bit for bit; reverse sums
// (integer-valued doubles, so exact in any order) equal a serial sum over all
// holders.

#include <cstring>

#include "property_config.hpp"

namespace property_blocks {

using namespace property;

struct config {
  grid_config grid;
  std::string strategy;
  std::array<int, 3> k{0, 0, 0};
  bool eighth = false;
  hs::protocol mode = hs::protocol::overlapping;
  hs::offset team{0, 0, 0};
  std::vector<std::size_t> counts;  ///< per rank
  driving forward = driving::blocking, reverse = driving::blocking;

  std::string describe() const {
    std::ostringstream s;
    s << strategy << " grid " << grid.describe() << " k " << k[0] << "," << k[1] << "," << k[2]
      << (eighth ? " eighth" : " full") << " " << to_string(mode) << " team " << hs::to_string(team) << " forward "
      << to_string(forward) << " reverse " << to_string(reverse) << " counts";
    for (std::size_t n : counts) s << " " << n;
    return s.str();
  }
};

/// Offsets a range imports (its own block included).
int blocks_of(const std::array<int, 3>& k, bool eighth) {
  int n = 1;
  for (int d = 0; d < 3; ++d) n *= eighth ? k[d] + 1 : 2 * k[d] + 1;
  return n;
}

config draw(rng& r, int ranks) {
  config c;
  c.grid = random_grid(r, ranks);
  c.strategy = r.pick(block_strategies());
  c.eighth = r.chance(0.25);
  c.mode = random_protocol(r, c.strategy);
  // k per dimension: 0 now and then, mostly 1 or 2, often up to two beyond the grid's boxes
  // (periodic images appear once per offset); neighbourhoods of at most 125 blocks.
  do {
    c.k = {0, 0, 0};
    bool any = false;
    for (int d = 0; d < c.grid.ndims; ++d) {
      const int n = c.grid.dims[d];
      c.k[d] = r.chance(0.12) ? 0 : r.chance(0.35) ? r.uniform(n, n + 2) : r.uniform(1, 2);
      any = any || c.k[d] > 0;
    }
    if (!any) c.k[static_cast<std::size_t>(r.uniform(0, c.grid.ndims - 1))] = r.uniform(1, 3);
  } while (blocks_of(c.k, c.eighth) > 125);
  if (c.strategy == "TeamShift")
    for (int d = 0; d < c.grid.ndims; ++d) {
      std::vector<int> divisors{0};
      for (int t = 1; t <= c.grid.dims[d]; ++t)
        if (c.grid.dims[d] % t == 0) divisors.push_back(t);
      c.team[d] = r.pick(divisors);
    }
  // Counts: the same on every rank (the plan then skips the count exchange), or uneven with zeros.
  const bool uniform = r.chance(0.25);
  const std::size_t same = static_cast<std::size_t>(r.chance(0.2) ? 0 : r.uniform(1, 6));
  for (int rank = 0; rank < ranks; ++rank)
    c.counts.push_back(uniform          ? same
                       : r.chance(0.3)  ? 0
                       : r.chance(0.05) ? static_cast<std::size_t>(r.uniform(30, 60))
                                        : static_cast<std::size_t>(r.uniform(1, 9)));
  c.forward = random_driving(r);
  c.reverse = random_driving(r);
  return c;
}

double value_of(int rank, std::size_t i) { return rank * 1000.0 + static_cast<double>(i) + 0.25; }
double contribution(int holder, const oracle::coords& o, std::size_t i) {
  return holder * 100003.0 + oracle::offset_code(o) * 11.0 + static_cast<double>(i);
}

std::string compare_forward(const hs::halo<double>& got, const config& c, int me) {
  const auto want = oracle::halo_of(c.grid.as_oracle(), me, c.k, c.eighth);
  std::ostringstream why;
  if (got.size() != want.size()) {
    why << "forward: " << got.size() << " blocks, expected " << want.size();
    return why.str();
  }
  std::size_t i = 0;
  for (const auto& b : got) {
    const auto& w = want[i++];
    const hs::offset o{w.offset[0], w.offset[1], w.offset[2]}, image{w.image[0], w.image[1], w.image[2]};
    if (b.offset != o || b.source != w.source || b.image != image) {
      why << "forward block " << i - 1 << ": offset " << hs::to_string(b.offset) << " source " << b.source
          << " image " << hs::to_string(b.image) << ", expected offset " << hs::to_string(o) << " source " << w.source
          << " image " << hs::to_string(image);
      return why.str();
    }
    const std::size_t n = c.counts[static_cast<std::size_t>(w.source)];
    bool same = b.data.size() == n;
    for (std::size_t e = 0; same && e < n; ++e) {
      const double v = value_of(w.source, e);
      same = std::memcmp(&b.data[e], &v, sizeof v) == 0;
    }
    if (!same) {
      why << "forward block " << hs::to_string(b.offset) << " from rank " << w.source << ": data differs ("
          << b.data.size() << " elements, expected " << n << ")";
      return why.str();
    }
  }
  return {};
}

std::string check_reverse(hs::plan<double>& plan, const config& c, int me) {
  hs::halo<double> contributions = plan.make_halo();
  for (auto b : contributions)
    for (std::size_t e = 0; e < b.data.size(); ++e)
      b.data[e] = contribution(me, {b.offset[0], b.offset[1], b.offset[2]}, e);
  std::vector<double> own(c.counts[static_cast<std::size_t>(me)]);
  for (std::size_t e = 0; e < own.size(); ++e) own[e] = value_of(me, e);
  if (c.reverse == driving::blocking)
    plan.reverse(contributions, std::span<double>(own));
  else
    drive(plan.start_reverse(contributions, std::span<double>(own)), c.reverse);

  const oracle::grid g = c.grid.as_oracle();
  std::vector<double> want(own.size());
  for (std::size_t e = 0; e < want.size(); ++e) want[e] = value_of(me, e);
  for (int holder = 0; holder < g.size(); ++holder)
    for (const auto& b : oracle::halo_of(g, holder, c.k, c.eighth))
      if (b.source == me)
        for (std::size_t e = 0; e < want.size(); ++e) want[e] += contribution(holder, b.offset, e);
  for (std::size_t e = 0; e < want.size(); ++e)
    if (own[e] != want[e])
      return "reverse element " + std::to_string(e) + ": " + exact(own[e]) + ", expected " + exact(want[e]);
  return {};
}

}  // namespace property_blocks

TEST_CASE("property: random block halos match the oracle", "[property][blocks]") {
  using namespace property_blocks;
  const settings s = settings_from_environment();
  fixed_calibration calibration;
  grid_cache grids;
  failures failed("blocks", s);
  const int ranks = world_size(), me = world_rank();
  for (int index = 0; index < s.count(); ++index) {
    rng r(s.config_seed(kind::blocks, ranks, index));
    const config c = draw(r, ranks);
    if (!s.runs(index)) continue;
    const hs::cartesian_grid& grid = grids.get(c.grid);
    std::vector<double> mine(c.counts[static_cast<std::size_t>(me)]);
    for (std::size_t e = 0; e < mine.size(); ++e) mine[e] = value_of(me, e);
    std::string where = c.describe(), why;
    try {  // a library error is collective (the same on every rank), so the sweep can go on
      auto plan = hs::make_plan<double>(grid, c.strategy, hs::offset{c.k[0], c.k[1], c.k[2]}, mine.size(),
                                        {.mode = c.mode, .kind = c.eighth ? hs::shell::eighth : hs::shell::full,
                                         .team = c.team});
      where += " (ran " + std::string(plan.strategy()) + ")";
      hs::halo<double> halo = plan.make_halo();
      if (c.forward == driving::blocking)
        plan.forward(mine, halo);
      else
        drive(plan.start_forward(mine, halo), c.forward);
      note(why, compare_forward(halo, c, me));
      // A plan repeats: again, into a second halo, driven the other way.
      hs::halo<double> again = plan.make_halo();
      if (c.forward != driving::blocking)
        plan.forward(mine, again);
      else
        drive(plan.start_forward(mine, again), driving::test_until_done);
      note(why, compare_forward(again, c, me));
      note(why, check_reverse(plan, c, me));
    } catch (const std::exception& e) {
      note(why, std::string("exception: ") + e.what());
    }
    failed.check(index, where, why);
  }
  failed.summarise();
}

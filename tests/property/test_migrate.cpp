// SPDX-License-Identifier: BSD-3-Clause
// Migration, randomized: random domains and grids, uneven and empty ranks,
// displacements that stay, move a little, several boxes, many domain lengths
// across periodic borders, exactly onto box edges (and a few ulps off them),
// onto the domain's bounds and -0.0. Afterwards: the same particle ids over
// all ranks (none lost or duplicated), every particle in its owner's box (by
// the oracle's own edges), positions unchanged but for periodic wrapping,
// payload moved with its particle, the documented order (those that stayed,
// then arrivals by source rank), and the same result for an array of structs
// and a structure of arrays.

#include <cstring>
#include <set>

#include "particle_space.hpp"

namespace property_migrate {

using namespace property;

/// Payload carried in a separate array (structure of arrays).
struct tag {
  std::int32_t a;
  double b;
};
tag tag_of(std::int64_t id) { return {static_cast<std::int32_t>(id * 7 % 100003), static_cast<double>(id) * 0.5}; }

struct config {
  space sp;
  bool soa = true, aos = true;  ///< migrate as a structure of arrays, an array of structs (or both)
  bool twice = false;           ///< a second migrate after a small move
  double far_share = 0;         ///< share of displacements of several boxes or domain lengths

  std::string describe() const {
    std::ostringstream s;
    s << sp.describe() << (soa ? " soa" : "") << (aos ? " aos" : "") << (twice ? " twice" : "") << " far "
      << far_share;
    return s.str();
  }
};

config draw(rng& r, int ranks) {
  config c;
  c.sp = random_space(r, ranks);
  const int how = r.uniform(0, 2);
  c.soa = how != 1;
  c.aos = how != 0;
  c.twice = r.chance(0.25);
  c.far_share = r.pick(std::vector<double>{0.0, 0.1, 0.5});
  return c;
}

/// A new coordinate along `d` for a particle at `x`.
double displaced(rng& r, const config& c, int d, double x) {
  const space& sp = c.sp;
  const int n = sp.grid.dims[d];
  const bool periodic = sp.grid.periodic[d];
  const double len = sp.length(d), width = len / n;
  double y = x;
  if (r.chance(c.far_share)) {
    y = periodic ? x + r.real(-4, 4) * len : r.real(sp.lo[d], sp.hi[d]);
  } else {
    switch (r.uniform(0, 6)) {
      case 0: break;  // stays
      case 1: y = x + r.real(-0.5, 0.5) * width; break;
      case 2: y = x + r.real(-3, 3) * width; break;
      case 3: y = sp.edge(d, r.uniform(0, periodic ? n : n - 1)) + (periodic ? r.uniform(-2, 2) * len : 0.0); break;
      case 4: y = ulps(sp.edge(d, r.uniform(0, n)), r.uniform(-3, 3)); break;
      case 5: y = sp.lo[d] == 0 && r.chance(0.5) ? -0.0 : r.chance(0.5) ? sp.lo[d] : sp.hi[d]; break;
      default: y = x + r.real(-1.5, 1.5) * width;
    }
  }
  // Along a non-periodic dimension only the domain is legal: clamp into [lo, hi).
  if (!periodic && !(y >= sp.lo[d] && y < sp.hi[d])) y = std::clamp(y, sp.lo[d], std::nextafter(sp.hi[d], sp.lo[d]));
  return y;
}

/// Every particle displaced as above, or (`small`) by less than a third of a box, as between two
/// re-neighbourings.
std::vector<particle> displace(rng& r, const config& c, std::vector<particle> ps, bool small) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (particle& p : ps)
    for (int d = 0; d < c.sp.grid.ndims; ++d) {
      const bool periodic = c.sp.grid.periodic[d];
      p.x[d] = small ? std::clamp(p.x[d] + r.real(-0.3, 0.3) * c.sp.length(d) / c.sp.grid.dims[d],
                                  periodic ? -inf : c.sp.lo[d], periodic ? inf : std::nextafter(c.sp.hi[d], c.sp.lo[d]))
                     : displaced(r, c, d, p.x[d]);
    }
  return ps;
}

/// Whether `after` is `before` wrapped along the periodic dimensions: bit for bit where `before` lay
/// inside the domain (or along dimensions the grid lacks), else inside [lo, hi) and whole lengths away.
bool wrapped_from(const space& sp, const hs::position& before, const hs::position& after) {
  for (int d = 0; d < 3; ++d) {
    if (d >= sp.grid.ndims || (before[d] >= sp.lo[d] && before[d] < sp.hi[d])) {
      if (!(after[d] == before[d])) return false;  // value (-0.0 on lo = 0 may become lo)
      continue;
    }
    if (!sp.grid.periodic[d] || !(after[d] >= sp.lo[d] && after[d] < sp.hi[d])) return false;
    const double len = sp.length(d), shift = after[d] - before[d], m = std::round(shift / len);
    const double scale = std::abs(before[d]) + std::abs(m * len) + std::abs(sp.lo[d]) + std::abs(sp.hi[d]);
    if (std::abs(shift - m * len) > 1e-13 * scale) return false;
  }
  return true;
}

/// One migrate of `ps` as configured: an array of structs and/or a structure of arrays (positions,
/// ids, charges, tags), which must agree; returns the array of structs.
std::vector<particle> run_migrate(const hs::cartesian_grid& grid, const config& c, std::vector<particle> ps,
                                  std::string& why) {
  std::vector<hs::position> x = positions_of(ps);
  std::vector<std::int64_t> ids;
  std::vector<double> charges;
  std::vector<tag> tags;
  for (const particle& p : ps) ids.push_back(p.id), charges.push_back(p.charge), tags.push_back(tag_of(p.id));
  if (c.aos) hs::migrate(grid, c.sp.domain(), ps, &particle::x);
  if (c.soa) hs::migrate(grid, c.sp.domain(), x, ids, charges, tags);
  if (!(x.size() == ids.size() && ids.size() == charges.size() && charges.size() == tags.size()))
    note(why, "structure of arrays: lengths differ");
  else if (c.soa) {
    std::vector<particle> soa;
    for (std::size_t i = 0; i < x.size(); ++i) {
      soa.push_back({x[i], ids[i], charges[i]});
      const tag want = tag_of(ids[i]);
      if (tags[i].a != want.a || tags[i].b != want.b) note(why, "tag of id " + std::to_string(ids[i]) + " differs");
    }
    if (c.aos) {
      bool same = soa.size() == ps.size();
      for (std::size_t i = 0; same && i < ps.size(); ++i)
        same = ps[i].id == soa[i].id && ps[i].charge == soa[i].charge && same_position(ps[i].x, soa[i].x);
      if (!same) note(why, "structure of arrays and array of structs differ");
    }
    ps = soa;
  }
  return ps;
}

/// Everything migrate promises, from the particles of every rank before and after.
std::string check_migrated(const config& c, const std::vector<std::vector<particle>>& before,
                           const std::vector<std::vector<particle>>& after) {
  const int me = world_rank();
  const oracle::grid g = c.sp.grid.as_oracle();
  std::map<std::int64_t, std::pair<int, particle>> was;  // id: old rank, particle
  for (int r = 0; r < g.size(); ++r)
    for (const particle& p : before[static_cast<std::size_t>(r)]) was[p.id] = {r, p};
  std::map<std::int64_t, int> now;  // id: new rank
  std::size_t total = 0;
  for (int r = 0; r < g.size(); ++r)
    for (const particle& p : after[static_cast<std::size_t>(r)]) {
      ++total;
      if (!now.emplace(p.id, r).second) return "particle " + std::to_string(p.id) + " is on two ranks (or twice)";
      if (!was.count(p.id)) return "particle " + std::to_string(p.id) + " appeared from nowhere";
    }
  if (total != was.size())
    return std::to_string(was.size() - now.size()) + " particles lost (" + std::to_string(total) + " of " +
           std::to_string(was.size()) + ")";
  const oracle::coords coords = g.coords_of(me);
  for (const particle& p : after[static_cast<std::size_t>(me)]) {
    const particle& old = was[p.id].second;
    if (!c.sp.in_box(coords, p.x))
      return "particle " + std::to_string(p.id) + " at " + show(p.x) + " (was " + show(old.x) +
             ") is not in this rank's box";
    if (!wrapped_from(c.sp, old.x, p.x))
      return "particle " + std::to_string(p.id) + " moved from " + show(old.x) + " to " + show(p.x) +
             ", not a periodic wrap";
    if (p.charge != charge_of(p.id)) return "particle " + std::to_string(p.id) + " lost its charge";
  }
  // The order: those that stayed in their old order, then the arrivals by source rank, each source's in its order.
  std::vector<std::int64_t> want, got;
  for (int from : {me, -1})
    for (int r = 0; r < g.size(); ++r) {
      if ((from == me) != (r == me)) continue;
      for (const particle& p : before[static_cast<std::size_t>(r)])
        if (now[p.id] == me) want.push_back(p.id);
    }
  for (const particle& p : after[static_cast<std::size_t>(me)]) got.push_back(p.id);
  if (got != want) return "particles are not in the documented order (stayed, then arrivals by source rank)";
  return {};
}

}  // namespace property_migrate

TEST_CASE("property: random migrations lose nothing and put every particle in its owner's box",
          "[property][migrate]") {
  using namespace property_migrate;
  const settings s = settings_from_environment();
  grid_cache grids;
  failures failed("migrate", s);
  const int ranks = world_size(), me = world_rank();
  for (int index = 0; index < s.count(); ++index) {
    const std::uint64_t seed = s.config_seed(kind::migration, ranks, index);
    rng r(seed);
    const config c = draw(r, ranks);
    if (!s.runs(index)) continue;
    const hs::cartesian_grid& grid = grids.get(c.sp.grid);
    rng mine_r(mix(seed, 1000 + static_cast<std::uint64_t>(me)));
    // Particles start in their box (as after a migrate), then move.
    const oracle::coords coords = c.sp.grid.as_oracle().coords_of(me);
    const std::vector<particle> start = random_particles(mine_r, c.sp, coords, me, {0, 0, 0});
    std::vector<particle> moved = displace(mine_r, c, start, false);
    std::string why;
    try {
      for (int round = 0; round < (c.twice ? 2 : 1); ++round) {
        const auto before = particle_world::gather_by_rank(moved, MPI_COMM_WORLD);
        std::vector<particle> mine = run_migrate(grid, c, moved, why);
        const auto after = particle_world::gather_by_rank(mine, MPI_COMM_WORLD);
        const std::string wrong = check_migrated(c, before, after);
        if (!wrong.empty()) note(why, (round ? "second migrate: " : "") + wrong);
        moved = displace(mine_r, c, mine, true);
      }
    } catch (const std::exception& e) {
      note(why, std::string("exception: ") + e.what());
    }
    failed.check(index, c.describe(), why);
  }
  failed.summarise();
}

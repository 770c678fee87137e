// SPDX-License-Identifier: BSD-3-Clause
// Particle ghosts, randomized: random domains with non-round bounds, cutoffs
// per dimension (0, tiny, around and exactly one or more box widths, beyond
// the domain), uneven and empty ranks, particles on box edges and cutoff
// thresholds give or take a few ulps, every strategy that can select (Auto
// too), both protocols. The ghosts (which, in which order, at which shifted
// position), the blocks, the ghosts' origins and reverse sums must equal a
// brute-force oracle computed from the gathered coordinates alone; after the
// particles move (and migrate), rebuild() must give what a new plan and the
// oracle give.

#include <cstring>
#include <set>

#include "particle_space.hpp"

namespace property_particles {

using namespace property;

struct config {
  space sp;
  hs::position cutoff{0, 0, 0};
  std::array<std::string, 3> cutoff_kind;
  std::string strategy;
  hs::protocol mode = hs::protocol::overlapping;
  driving forward = driving::blocking, reverse = driving::blocking;
  bool rebuild_by_migrate = true;  ///< new positions: the old ones moved and migrated, or new particles

  std::string describe() const {
    std::ostringstream s;
    s << strategy << " " << sp.describe() << " cutoff";
    for (int d = 0; d < sp.grid.ndims; ++d) s << " " << exact(cutoff[d]) << " (" << cutoff_kind[d] << ")";
    s << " " << to_string(mode) << " forward " << to_string(forward) << " reverse " << to_string(reverse)
      << " rebuild " << (rebuild_by_migrate ? "after migrate" : "with new particles");
    return s.str();
  }
};

/// Boxes along `d` a cutoff reaches at most (about floor(rc / width) + 1), for the budget.
int reach_estimate(const space& sp, int d, double rc) {
  return static_cast<int>(std::floor(rc / (sp.length(d) / sp.grid.dims[d]))) + 1;
}

double random_cutoff(rng& r, const space& sp, int d, std::string& kind) {
  const double len = sp.length(d), width = len / sp.grid.dims[d];
  switch (r.uniform(0, 9)) {
    case 0: kind = "zero"; return 0.0;
    case 1: kind = "tiny"; return r.chance(0.5) ? 4.9e-324 : width * 1e-13;
    case 2: kind = "below a box"; return r.real(0, width);
    case 3: kind = "one box width"; return width;
    case 4: kind = "one box width +- ulps"; return ulps(width, r.chance(0.5) ? r.uniform(1, 3) : -r.uniform(1, 3));
    case 5: {
      const int j = r.uniform(2, 3);
      kind = std::to_string(j) + " box widths";
      return j * width;
    }
    case 6: kind = "one to three boxes"; return r.real(width, 3 * width);
    case 7: kind = "the domain length"; return len;
    case 8: kind = "beyond the domain"; return r.real(1.0, 2.2) * len;
    default: kind = "a few boxes"; return r.real(0, 5 * width);
  }
}

config draw(rng& r, int ranks) {
  config c;
  c.sp = random_space(r, ranks);
  // Neighbourhoods (the plan's offsets) of at most 125 boxes; cutoffs drawn again until they fit.
  for (int attempt = 0;; ++attempt) {
    int offsets = 1;
    for (int d = 0; d < c.sp.grid.ndims; ++d) {
      c.cutoff[d] = attempt < 20 ? random_cutoff(r, c.sp, d, c.cutoff_kind[d]) : 0.0;
      if (attempt >= 20) c.cutoff_kind[d] = "zero";
      offsets *= 2 * reach_estimate(c.sp, d, c.cutoff[d]) + 1;
    }
    if (offsets <= 125) break;
  }
  c.strategy = r.pick(selective_strategies());
  c.mode = random_protocol(r, c.strategy);
  c.forward = random_driving(r);
  c.reverse = random_driving(r);
  c.rebuild_by_migrate = r.chance(0.5);
  return c;
}

/// Whether the box `rel` boxes from the source box at `s` along `d` (unwrapped) needs coordinate `x` of
/// the source, as docs/particles.md defines it: the particle shifted by the periodic image that box sees
/// lies at most the cutoff from its near face, and so for every box between them (closed test).
bool needed_along(const space& sp, int d, double rc, int s, int rel, double x) {
  const int n = sp.grid.dims[d], step = rel > 0 ? 1 : -1;
  for (int j = step; j != rel + step; j += step) {
    const int u = s + j;
    const int wraps = u >= 0 ? u / n : -((-u + n - 1) / n), inside = u - wraps * n;
    const double g = x + static_cast<double>(-wraps) * sp.length(d);  // image = -wraps
    const bool near = j > 0 ? sp.edge(d, inside) - g <= rc : g - sp.edge(d, inside + 1) <= rc;
    if (!near) return false;
  }
  return true;
}

/// A ghost as the oracle expects it.
struct ghost {
  particle p;  ///< shifted position
  int source;
  std::size_t index;  ///< in the source's order
  oracle::coords offset, image;
};

/// The ghosts rank `me` must hold: every box within a reach wider than any cutoff can need (canonical
/// order, z slowest, x fastest), of each the particles the test above selects along every dimension,
/// in the owner's order, shifted by the image.
std::vector<ghost> expected_ghosts(const config& c, int me, const std::vector<std::vector<particle>>& all) {
  const oracle::grid g = c.sp.grid.as_oracle();
  oracle::coords reach{0, 0, 0};
  for (int d = 0; d < c.sp.grid.ndims; ++d) reach[d] = reach_estimate(c.sp, d, c.cutoff[d]) + 1;
  std::vector<ghost> out;
  for (const auto& b : oracle::halo_of(g, me, reach, false)) {
    const oracle::coords src = g.coords_of(b.source);
    const auto& theirs = all[static_cast<std::size_t>(b.source)];
    for (std::size_t i = 0; i < theirs.size(); ++i) {
      particle p = theirs[i];
      bool needed = true;
      for (int d = 0; needed && d < c.sp.grid.ndims; ++d)
        if (b.offset[d] != 0) needed = needed_along(c.sp, d, c.cutoff[d], src[d], -b.offset[d], p.x[d]);
      if (!needed) continue;
      for (int d = 0; d < c.sp.grid.ndims; ++d)
        if (b.image[d] != 0) p.x[d] += b.image[d] * c.sp.length(d);
      out.push_back({p, b.source, i, b.offset, b.image});
    }
  }
  return out;
}

/// Runs a plan's forwards (positions split phase or not, ids, the plan's own positions, its blocks
/// and the ghosts' origins) against the oracle. Every collective call first, on every rank, then
/// the comparisons (a rank that finds a difference must not leave the others waiting).
std::string check_ghosts(hs::particle_plan& plan, const config& c, const std::vector<particle>& mine,
                         const std::vector<ghost>& want, const std::string& what) {
  std::vector<hs::position> x(plan.size());
  std::vector<std::int64_t> ids(plan.size());
  for (std::size_t i = 0; i < mine.size() && i < plan.size(); ++i) x[i] = mine[i].x, ids[i] = mine[i].id;
  if (c.forward == driving::blocking)
    plan.forward_positions(x);
  else
    drive(plan.start_forward_positions(std::span<hs::position>(x)), c.forward);
  plan.forward(ids);
  const std::vector<hs::ghost_origin> origins = plan.ghost_origins();

  std::ostringstream why;
  if (plan.owned() != mine.size() || plan.ghosts() != want.size()) {
    why << what << ": " << plan.owned() << " owned and " << plan.ghosts() << " ghosts, expected " << mine.size()
        << " and " << want.size();
    // The first ghost missing and the first one too many, by id.
    std::multiset<std::int64_t> got(ids.begin() + static_cast<std::ptrdiff_t>(std::min(plan.owned(), ids.size())),
                                    ids.end());
    bool missing = false;
    for (const ghost& w : want) {
      const auto at = got.find(w.p.id);
      if (at != got.end()) {
        got.erase(at);
      } else if (!missing) {
        missing = true;
        why << "; missing: id " << w.p.id << " at " << show(w.p.x) << " from rank " << w.source << " offset "
            << w.offset[0] << "," << w.offset[1] << "," << w.offset[2];
      }
    }
    if (!got.empty()) why << "; " << got.size() << " unexpected, the first id " << *got.begin();
    return why.str();
  }
  for (std::size_t i = 0; i < want.size(); ++i) {
    const std::size_t at = mine.size() + i;
    if (ids[at] != want[i].p.id || !same_position(x[at], want[i].p.x) ||
        !same_position(plan.positions()[at], want[i].p.x)) {
      why << what << " ghost " << i << ": id " << ids[at] << " at " << show(x[at]) << " (plan's copy "
          << show(plan.positions()[at]) << "), expected id " << want[i].p.id << " at " << show(want[i].p.x)
          << " from rank " << want[i].source << " offset " << want[i].offset[0] << "," << want[i].offset[1] << ","
          << want[i].offset[2];
      return why.str();
    }
  }
  // Owned entries stay as they were.
  for (std::size_t i = 0; i < mine.size(); ++i)
    if (ids[i] != mine[i].id || std::memcmp(&x[i], &mine[i].x, sizeof(hs::position)) != 0)
      return what + ": owned particle " + std::to_string(i) + " changed";
  // Blocks: the non-empty ones are the oracle's runs of ghosts from one offset, in order.
  std::size_t next = mine.size(), g = 0;
  for (const hs::ghost_block& b : plan.blocks()) {
    if (b.first != next) return what + ": block at " + hs::to_string(b.offset) + " starts at " + std::to_string(b.first);
    next += b.count;
    for (std::size_t i = 0; i < b.count && g < want.size(); ++i, ++g) {
      const ghost& w = want[g];
      if (b.source != w.source || b.offset != hs::offset{w.offset[0], w.offset[1], w.offset[2]} ||
          b.image != hs::offset{w.image[0], w.image[1], w.image[2]})
        return what + ": ghost " + std::to_string(g) + " in block " + hs::to_string(b.offset) + " from rank " +
               std::to_string(b.source) + " image " + hs::to_string(b.image) + ", expected rank " +
               std::to_string(w.source) + " image " + hs::to_string({w.image[0], w.image[1], w.image[2]});
    }
  }
  if (next != plan.size())
    return what + ": blocks cover " + std::to_string(next) + " entries of " + std::to_string(plan.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    if (origins[i].rank != want[i].source || origins[i].index != want[i].index)
      return what + ": ghost " + std::to_string(i) + " origin rank " + std::to_string(origins[i].rank) + " index " +
             std::to_string(origins[i].index) + ", expected " + std::to_string(want[i].source) + " " +
             std::to_string(want[i].index);
  return {};
}

double contribution(int holder, std::int64_t id) { return holder * 1000.0 + static_cast<double>(id % 997) + 1; }

/// Reverse: every holder's ghost contribution summed onto the owner once (integer-valued: exact).
std::string check_reverse(hs::particle_plan& plan, const config& c, const std::vector<particle>& mine,
                          const std::vector<ghost>& want, const std::vector<std::vector<particle>>& all) {
  const int me = world_rank();
  std::vector<double> f(plan.size());
  const bool sized = plan.size() == mine.size() + want.size();  // else check_ghosts says why
  for (std::size_t i = 0; sized && i < mine.size(); ++i) f[i] = static_cast<double>(mine[i].id % 100000);
  for (std::size_t i = 0; sized && i < want.size(); ++i) f[mine.size() + i] = contribution(me, want[i].p.id);
  if (c.reverse == driving::blocking)
    plan.reverse(f);
  else
    drive(plan.start_reverse(std::span<double>(f)), c.reverse);
  if (!sized) return {};
  std::vector<double> sum(mine.size());
  for (std::size_t i = 0; i < mine.size(); ++i) sum[i] = static_cast<double>(mine[i].id % 100000);
  for (int holder = 0; holder < world_size(); ++holder)
    for (const ghost& g : expected_ghosts(c, holder, all))
      if (g.source == me) sum[g.index] += contribution(holder, g.p.id);
  for (std::size_t i = 0; i < mine.size(); ++i)
    if (f[i] != sum[i])
      return "reverse: particle " + std::to_string(i) + " (id " + std::to_string(mine[i].id) + ") " + exact(f[i]) +
             ", expected " + exact(sum[i]);
  return {};
}

/// New positions for a rebuild: the particles moved by up to about a box (some by several, some onto
/// box edges) and migrated, or new particles in this rank's box.
std::vector<particle> next_particles(rng& r, const config& c, const hs::cartesian_grid& grid,
                                     const std::vector<particle>& mine, const oracle::coords& me) {
  if (!c.rebuild_by_migrate) return random_particles(r, c.sp, me, world_rank(), c.cutoff, 1LL << 40);
  std::vector<particle> moved = mine;
  for (particle& p : moved)
    for (int d = 0; d < c.sp.grid.ndims; ++d) {
      const double width = c.sp.length(d) / c.sp.grid.dims[d];
      double x = r.chance(0.1) ? c.sp.edge(d, r.uniform(0, c.sp.grid.dims[d] - 1))
                               : p.x[d] + r.real(-1, 1) * width * (r.chance(0.1) ? 3 : 0.7);
      if (!c.sp.grid.periodic[d]) x = std::clamp(x, c.sp.lo[d], std::nextafter(c.sp.hi[d], c.sp.lo[d]));
      p.x[d] = x;
    }
  hs::migrate(grid, c.sp.domain(), moved, &particle::x);
  return moved;
}

}  // namespace property_particles

TEST_CASE("property: random particle ghosts, reverse and rebuild match the oracle", "[property][particles]") {
  using namespace property_particles;
  const settings s = settings_from_environment();
  fixed_calibration calibration;
  grid_cache grids;
  failures failed("particles", s);
  const int ranks = world_size(), me = world_rank();
  for (int index = 0; index < s.count(); ++index) {
    const std::uint64_t seed = s.config_seed(kind::particles, ranks, index);
    rng r(seed);
    const config c = draw(r, ranks);
    if (!s.runs(index)) continue;
    const hs::cartesian_grid& grid = grids.get(c.sp.grid);
    const oracle::coords coords = c.sp.grid.as_oracle().coords_of(me);
    rng mine_r(mix(seed, 1000 + static_cast<std::uint64_t>(me)));
    const std::vector<particle> mine = random_particles(mine_r, c.sp, coords, me, c.cutoff);
    const auto all = particle_world::gather_by_rank(mine, MPI_COMM_WORLD);
    std::string where = c.describe(), why;
    try {
      hs::particle_plan plan = hs::make_particle_plan(grid, c.strategy, c.sp.domain(), c.cutoff, positions_of(mine),
                                                      {.mode = c.mode});
      where += " (ran " + std::string(plan.strategy()) + ")";
      const std::vector<ghost> want = expected_ghosts(c, me, all);
      note(why, check_ghosts(plan, c, mine, want, "build"));
      note(why, check_reverse(plan, c, mine, want, all));

      // Re-neighbouring: rebuild() against a new plan and the oracle.
      const std::vector<particle> next = next_particles(mine_r, c, grid, mine, coords);
      const auto next_all = particle_world::gather_by_rank(next, MPI_COMM_WORLD);
      const std::vector<ghost> next_want = expected_ghosts(c, me, next_all);
      plan.rebuild(positions_of(next));
      note(why, check_ghosts(plan, c, next, next_want, "rebuild"));
      hs::particle_plan fresh = hs::make_particle_plan(grid, c.strategy, c.sp.domain(), c.cutoff, positions_of(next),
                                                       {.mode = c.mode});
      note(why, check_ghosts(fresh, c, next, next_want, "new plan after the move"));
      note(why, check_reverse(plan, c, next, next_want, next_all));
    } catch (const std::exception& e) {
      note(why, std::string("exception: ") + e.what());
    }
    failed.check(index, where, why);
  }
  failed.summarise();
}

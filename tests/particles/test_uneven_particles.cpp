// SPDX-License-Identifier: BSD-3-Clause
// Load-balanced boxes (docs/balance.md) over the rank sweep: particle ghosts
// on domains cut unevenly (very thin boxes whose ghosts come from several
// boxes away, empty boxes) against a brute-force oracle that knows only the
// cuts and the positions; migration onto new cuts; the balancer on a slab;
// bad cuts raising on every rank.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <haloshift/auto.hpp>
#include <map>
#include <random>
#include <sstream>

#include "../support/catch.hpp"
#include "../support/oracle.hpp"
#include "../support/sweep.hpp"
#include "particle_world.hpp"

namespace hs = haloshift;

// A named namespace: the test programs compile as unity sources, whose files share one scope.
namespace uneven {
using particle_world::particle;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

/// `boxes + 1` cuts over [lo, lo + length): widths drawn from empty, very thin (1/30 of a mean box),
/// ordinary and wide, the same on every rank for the same generator state.
std::vector<double> draw_cuts(std::mt19937& rng, int boxes, double lo, double length, bool allow_empty) {
  std::vector<double> width(static_cast<std::size_t>(boxes));
  for (double& w : width) {
    const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
    w = kind == 0 && allow_empty ? 0.0 : kind <= 2 ? 1.0 / 30 : kind <= 7 ? 0.5 + 0.1 * kind : 3.0;
  }
  double total = 0;
  for (double w : width) total += w;
  if (total == 0) width.assign(width.size(), 1.0), total = static_cast<double>(boxes);
  std::vector<double> cuts{lo};
  double sum = 0;
  for (int i = 0; i + 1 < boxes; ++i) {
    sum += width[static_cast<std::size_t>(i)];
    cuts.push_back(std::min(lo + length, lo + length * sum / total));
  }
  cuts.push_back(lo + length);
  return cuts;
}

/// A configuration: the grid, the domain with its cuts, and the cutoff.
struct uneven_config {
  oracle::grid g;
  int ndims = 0;
  hs::domain dom;
  std::array<double, 3> cutoff{0, 0, 0};
  std::array<double, 3> box_lo(const oracle::coords& c) const {
    std::array<double, 3> out = dom.lo;
    for (int d = 0; d < ndims; ++d) out[d] = dom.cuts[d][static_cast<std::size_t>(c[d])];
    return out;
  }
  std::array<double, 3> box_hi(const oracle::coords& c) const {
    std::array<double, 3> out = dom.lo;
    for (int d = 0; d < ndims; ++d) out[d] = dom.cuts[d][static_cast<std::size_t>(c[d]) + 1];
    return out;
  }
  /// Every offset that could hold a particle within the cutoff: all boxes of every periodic image
  /// the cutoff reaches (the library's reach is what is being tested, so the oracle does not use it).
  oracle::coords generous_reach() const {
    oracle::coords k{0, 0, 0};
    for (int d = 0; d < ndims; ++d) {
      const int images = g.periodic[d] ? static_cast<int>(std::ceil(cutoff[d] / dom.length(d))) + 1 : 1;
      k[d] = g.dims[d] * images;
    }
    return k;
  }
};

/// The ghosts rank `me` must hold, from the gathered positions and the cuts alone: for every offset
/// (canonical order), the source's particles, shifted by the image, within the cutoff of my box.
std::vector<particle> expected_ghosts(const uneven_config& c, int me, const std::vector<std::vector<particle>>& all) {
  std::vector<particle> out;
  const oracle::coords mine = c.g.coords_of(me);
  const auto blo = c.box_lo(mine), bhi = c.box_hi(mine);
  for (const auto& b : oracle::halo_of(c.g, me, c.generous_reach(), false))
    for (particle p : all[static_cast<std::size_t>(b.source)]) {
      bool near = true;
      for (int d = 0; d < c.ndims; ++d) {
        p.x[d] += b.image[d] * c.dom.length(d);
        near = near && blo[d] - p.x[d] <= c.cutoff[d] && p.x[d] - bhi[d] <= c.cutoff[d];
      }
      if (near) out.push_back(p);
    }
  return out;
}

/// This rank's particles: drawn over its box, kept where the cuts say it owns them (an empty box none).
std::vector<particle> own_particles(const uneven_config& c, int rank, unsigned seed) {
  const oracle::coords me = c.g.coords_of(rank);
  std::vector<particle> out;
  for (const particle& p : particle_world::make(rank, c.box_lo(me), c.box_hi(me), c.ndims, seed)) {
    bool inside = true;
    for (int d = 0; d < c.ndims; ++d) inside = inside && p.x[d] >= c.box_lo(me)[d] && p.x[d] < c.box_hi(me)[d];
    if (inside) out.push_back(p);
  }
  return out;
}

double contribution(int holder, std::int64_t id) { return holder * 1000.0 + static_cast<double>(id % 997); }

}  // namespace uneven

TEST_CASE("particle ghosts on unevenly cut domains match the oracle", "[particles][balance][oracle]") {
  const int size = uneven::world_size(), rank = uneven::world_rank();
  std::size_t configurations = 0;
  std::mt19937 rng(1603);
  for (const sweep::shape& s : sweep::shapes(size)) {
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic});
    uneven::uneven_config c;
    c.ndims = static_cast<int>(s.dims.size());
    for (int d = 0; d < c.ndims; ++d) c.g.dims[d] = s.dims[d], c.g.periodic[d] = s.periodic[d];
    const auto lo = particle_world::lo(), length = particle_world::length();
    c.dom = hs::domain{lo, {lo[0] + length[0], lo[1] + length[1], lo[2] + length[2]}};
    for (int d = 0; d < c.ndims; ++d)
      c.dom.cuts[d] = uneven::draw_cuts(rng, s.dims[static_cast<std::size_t>(d)], lo[d], length[d], true);
    const std::vector<double> factors =
        c.ndims == 3 || sweep::reduced() ? std::vector<double>{0.6} : std::vector<double>{0.45, 1.6};
    for (double factor : factors) {
      for (int d = 0; d < 3; ++d) c.cutoff[d] = d < c.ndims ? factor * length[d] / c.g.dims[d] : 0.0;
      const unsigned seed = static_cast<unsigned>(configurations + 11);
      const std::vector<uneven::particle> mine = uneven::own_particles(c, rank, seed);
      const auto all = particle_world::gather(mine, MPI_COMM_WORLD);
      const auto want = uneven::expected_ghosts(c, rank, all);
      std::vector<hs::position> x;
      for (const uneven::particle& p : mine) x.push_back(p.x);
      for (const char* name : {"Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall", "Auto"}) {
        std::ostringstream text;
        text << name << " on " << s.name() << ", cutoff " << factor << " mean boxes, cuts";
        for (int d = 0; d < c.ndims; ++d)
          for (double v : c.dom.cuts[d]) text << " " << v;
        INFO(text.str());
        auto plan = hs::make_particle_plan(grid, name, c.dom, hs::position{c.cutoff[0], c.cutoff[1], c.cutoff[2]}, x);
        REQUIRE(plan.owned() == mine.size());
        std::vector<uneven::particle> atoms(plan.size());
        std::copy(mine.begin(), mine.end(), atoms.begin());
        plan.forward_positions(std::span<uneven::particle>(atoms), &uneven::particle::x);
        bool same = atoms.size() - mine.size() == want.size();
        for (std::size_t i = 0; same && i < want.size(); ++i)
          same = std::memcmp(&atoms[mine.size() + i], &want[i], sizeof(particle)) == 0;
        CHECK(same);
        {  // split phase: the same ghosts again
          auto pending = plan.start_forward_positions(std::span<uneven::particle>(atoms), &uneven::particle::x);
          pending.progress();
          pending.wait();
        }
        bool again = atoms.size() - mine.size() == want.size();
        for (std::size_t i = 0; again && i < want.size(); ++i)
          again = std::memcmp(&atoms[mine.size() + i], &want[i], sizeof(particle)) == 0;
        CHECK(again);
        // Reverse: every holder's contribution reaches the owner once.
        std::vector<double> f(plan.size());
        for (std::size_t i = 0; i < mine.size(); ++i) f[i] = static_cast<double>(mine[i].id);
        for (std::size_t i = mine.size(); i < f.size(); ++i) f[i] = uneven::contribution(rank, atoms[i].id);
        plan.reverse(f);
        std::map<std::int64_t, double> sum;
        for (const uneven::particle& p : mine) sum[p.id] = static_cast<double>(p.id);
        for (int holder = 0; holder < size; ++holder)
          for (const uneven::particle& p : uneven::expected_ghosts(c, holder, all))
            if (sum.count(p.id)) sum[p.id] += uneven::contribution(holder, p.id);
        bool sums = true;
        for (std::size_t i = 0; i < mine.size(); ++i) sums = sums && f[i] == sum[mine[i].id];
        CHECK(sums);
        ++configurations;
      }
    }
  }
  CHECK(configurations > 0);
}

TEST_CASE("migrate moves every particle onto new cuts, none lost or duplicated", "[particles][balance][migrate]") {
  const int rank = uneven::world_rank();
  std::mt19937 rng(77);
  for (const sweep::shape& s : sweep::shapes(uneven::world_size())) {
    INFO(s.name());
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic});
    uneven::uneven_config even;
    even.ndims = static_cast<int>(s.dims.size());
    for (int d = 0; d < even.ndims; ++d) even.g.dims[d] = s.dims[d], even.g.periodic[d] = s.periodic[d];
    const auto lo = particle_world::lo(), length = particle_world::length();
    even.dom = hs::domain{lo, {lo[0] + length[0], lo[1] + length[1], lo[2] + length[2]}};
    for (int d = 0; d < even.ndims; ++d) {  // the even split, written out as cuts
      for (int i = 0; i <= s.dims[static_cast<std::size_t>(d)]; ++i)
        even.dom.cuts[d].push_back(even.dom.edge(grid.shape(), d, i));
    }
    uneven::uneven_config cut = even;
    for (int d = 0; d < cut.ndims; ++d)
      cut.dom.cuts[d] = uneven::draw_cuts(rng, s.dims[static_cast<std::size_t>(d)], lo[d], length[d], true);
    const std::vector<uneven::particle> mine = uneven::own_particles(even, rank, 5);
    std::vector<hs::position> x;
    std::vector<std::int64_t> id;
    for (const uneven::particle& p : mine) x.push_back(p.x), id.push_back(p.id);
    hs::migrate(grid, cut.dom, x, id);
    // Each particle now lies in this rank's box by the new cuts...
    const oracle::coords me = cut.g.coords_of(rank);
    bool owned = x.size() == id.size();
    for (const hs::position& p : x)
      for (int d = 0; d < cut.ndims; ++d) owned = owned && p[d] >= cut.box_lo(me)[d] && p[d] < cut.box_hi(me)[d];
    CHECK(owned);
    // ... and together the ranks hold every particle once (positions inside the domain are not moved).
    std::vector<std::int64_t> ids_after, ids_before;
    for (const auto& r : particle_world::gather_by_rank(id, MPI_COMM_WORLD))
      ids_after.insert(ids_after.end(), r.begin(), r.end());
    for (const auto& r : particle_world::gather(mine, MPI_COMM_WORLD))
      for (const uneven::particle& p : r) ids_before.push_back(p.id);
    std::sort(ids_after.begin(), ids_after.end());
    std::sort(ids_before.begin(), ids_before.end());
    CHECK(ids_after == ids_before);
  }
}

TEST_CASE("the balancer evens out a slab in a few calls", "[particles][balance]") {
  const int size = uneven::world_size(), rank = uneven::world_rank();
  for (const sweep::shape& s : sweep::shapes(size)) {
    if (!s.periodic[0]) continue;  // one boundary condition is enough here: the cuts do not depend on it
    INFO(s.name());
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic});
    const int nd = grid.ndims(), slab = s.widest();
    hs::domain dom{{0, 0, 0}, {4, 3, 5}};
    // 12000 particles per rank's worth, uniform in the lower half of the domain along `slab`: each rank
    // draws them all and keeps those it owns (the same set whatever the rank count).
    std::mt19937_64 gen(2026);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<hs::position> x;
    for (int i = 0; i < 12000 * size; ++i) {
      hs::position p{0, 0, 0};
      for (int d = 0; d < nd; ++d) p[d] = u(gen) * dom.length(d) * (d == slab ? 0.5 : 1.0);
      if (dom.owns(grid.shape(), grid.coords(), p)) x.push_back(p);
    }
    std::vector<double> weights(x.size(), 2.0);  // weights scale the work, not the balance
    double first = 0, last = 0;
    int calls = 0;
    for (; calls < 12; ++calls) {
      const hs::domain old = dom;
      const hs::balance_report r = hs::rebalance(grid, dom, x, weights, {.max_move = 0.5});
      // Bounded: no cut moved more than half of the old box it moved into.
      for (int d = 0; d < nd; ++d)
        for (int i = 1; i < grid.dim(d); ++i) {
          const double was = old.edge(grid.shape(), d, i), now = dom.edge(grid.shape(), d, i);
          const double room =
              now < was ? was - old.edge(grid.shape(), d, i - 1) : old.edge(grid.shape(), d, i + 1) - was;
          CHECK(std::abs(now - was) <= 0.5 * room * (1 + 1e-12));
        }
      if (calls == 0) first = r.imbalance_before;
      hs::migrate(grid, dom, x);
      weights.assign(x.size(), 2.0);
      // The report's count after the call is the ranks' own count once the particles moved.
      double mine = static_cast<double>(x.size()), most = 0, total = 0;
      MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      CHECK(r.imbalance_after == Approx(most * size / total).epsilon(1e-12));
      last = r.imbalance_after;
      if (last <= 1.05) break;
    }
    if (grid.dim(slab) > 1) CHECK(first > 1.5);
    CHECK(last <= 1.05);
    CHECK(calls < 12);
    // The cuts stay a brick: every dimension's cuts are the same on every rank, nondecreasing, from lo to hi.
    for (int d = 0; d < nd; ++d) {
      if (grid.dim(d) == 1) continue;
      REQUIRE(dom.cuts[d].size() == static_cast<std::size_t>(grid.dim(d)) + 1);
      CHECK(std::is_sorted(dom.cuts[d].begin(), dom.cuts[d].end()));
      std::vector<double> root = dom.cuts[d];
      MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
      CHECK(root == dom.cuts[d]);
    }
    if (rank == 0) UNSCOPED_INFO(s.name() << ": " << first << " -> " << last << " in " << calls + 1 << " calls");
  }
}

TEST_CASE("the balancer from measured work per rank converges on a slab", "[particles][balance]") {
  const int size = uneven::world_size();
  for (const sweep::shape& s : sweep::shapes(size)) {
    if (!s.periodic[0]) continue;
    INFO(s.name());
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic});
    const int nd = grid.ndims(), slab = s.widest();
    hs::domain dom{{0, 0, 0}, {4, 3, 5}};
    // The work of a box: the volume it shares with the dense half along `slab` (density 1, vacuum 0).
    auto work = [&] {
      double w = 1;
      for (int d = 0; d < nd; ++d) {
        const double blo = dom.edge(grid.shape(), d, grid.coords()[d]),
                     bhi = dom.edge(grid.shape(), d, grid.coords()[d] + 1);
        w *= d == slab ? std::max(0.0, std::min(bhi, dom.length(d) / 2) - blo) : bhi - blo;
      }
      return w;
    };
    double last = 0;
    int calls = 0;
    for (; calls < 8; ++calls) {
      const hs::balance_report r = hs::rebalance(grid, dom, work(), {.max_move = 0.5});
      double mine = work(), most = 0, total = 0;
      MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      last = most * size / total;
      if (calls == 0 && grid.dim(slab) > 1) CHECK(r.imbalance_before > 1.5);
      if (last <= 1.05) break;
    }
    CHECK(last <= 1.05);
  }
}

TEST_CASE("bad cuts and balancer options raise on every rank", "[particles][balance][errors]") {
  const int size = uneven::world_size(), rank = uneven::world_rank();
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, false}});
  const int p0 = grid.dim(0);
  hs::domain dom{{0, 0, 0}, {2, 2, 1}};
  const auto [lo, hi] = hs::box_of(grid, dom);
  std::vector<hs::position> x{{(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, 0}};
  auto with_cuts = [&](std::vector<double> cuts) {
    hs::domain d = dom;
    d.cuts[0] = std::move(cuts);
    return d;
  };
  std::vector<double> good;
  for (int i = 0; i <= p0; ++i) good.push_back(2.0 * i / p0);
  SECTION("the wrong number of cuts") {
    std::vector<double> short_cuts(good.begin(), good.end() - 1);
    CHECK_THROWS_WITH(hs::make_particle_plan<hs::Shift>(grid, with_cuts(short_cuts), 0.3, x),
                      Catch::Contains("domain.cuts[0] must have P_0 + 1 = " + std::to_string(p0 + 1) + " values"));
  }
  SECTION("cuts that do not start at lo or end at hi") {
    std::vector<double> shifted = good;
    shifted.front() = 0.25;
    CHECK_THROWS_WITH(hs::make_particle_plan<hs::Shift>(grid, with_cuts(shifted), 0.3, x),
                      Catch::Contains("domain.cuts[0][0] = 0.25 must equal lo[0] = 0"));
    std::vector<double> short_end = good;
    short_end.back() = 1.5;
    CHECK_THROWS_WITH(hs::migrate(grid, with_cuts(short_end), x), Catch::Contains("must equal hi[0] = 2"));
  }
  SECTION("decreasing cuts") {
    if (p0 >= 2) {
      std::vector<double> bad = good;
      bad[1] = 2.5;  // above the next cut (and the domain)
      CHECK_THROWS_WITH(hs::make_particle_plan<hs::SingleHop>(grid, with_cuts(bad), 0.3, x),
                        Catch::Contains("cuts must be nondecreasing"));
    }
  }
  SECTION("cuts beyond the grid's dimensions") {
    hs::domain d = dom;
    d.cuts[2] = {0, 1};
    CHECK_THROWS_WITH(hs::make_particle_plan<hs::Shift>(grid, d, 0.3, x),
                      Catch::Contains("domain.cuts[2] has 2 values but the grid has only 2 dimension(s)"));
  }
  SECTION("cuts that differ on one rank") {
    if (size > 1 && p0 >= 2) {
      std::vector<double> mine = good;
      if (rank == size - 1) mine[1] = std::nextafter(mine[1], 0.0);  // one ulp: still a valid split
      CHECK_THROWS_WITH(hs::make_particle_plan<hs::Shift>(grid, with_cuts(mine), 0.3, x),
                        Catch::Contains("domain.cuts[0] (hash of the values) must be the same on all ranks"));
      CHECK_THROWS_WITH(hs::migrate(grid, with_cuts(mine), x),
                        Catch::Contains("domain.cuts[0] (hash of the values) must be the same on all ranks"));
      hs::domain d = with_cuts(mine);
      CHECK_THROWS_WITH(hs::rebalance(grid, d, x), Catch::Contains("domain.cuts[0] (hash of the values)"));
    }
  }
  SECTION("balancer options, weights and work") {
    hs::domain d = dom;
    CHECK_THROWS_WITH(hs::rebalance(grid, d, x, {}, {.max_move = 0}),
                      Catch::Contains("balance_options.max_move must be > 0, got 0"));
    std::vector<double> weights(rank == 0 ? 2 : 1, 1.0);
    CHECK_THROWS_WITH(hs::rebalance(grid, d, x, weights), Catch::Contains("weights has 2 values for 1 particles"));
    CHECK_THROWS_WITH(hs::rebalance(grid, d, rank == 0 ? -1.0 : 1.0), Catch::Contains("work must be finite and >= 0"));
    CHECK(d.cuts[0].empty());  // nothing changed
  }
}

// SPDX-License-Identifier: BSD-3-Clause
// Migration over the rank sweep: random displacements of up to several boxes;
// afterwards every particle lies in its owner's box, none is lost or
// duplicated, and the particles' data is unchanged but for periodic wrapping.

#include "../support/catch.hpp"
#include <cmath>
#include <map>
#include <haloshift/haloshift.hpp>
#include <random>
#include <set>

#include "../support/sweep.hpp"
#include "particle_world.hpp"

namespace hs = haloshift;
using particle_world::particle;

TEST_CASE("migrate moves particles any distance, losing and duplicating none", "[particles][migrate]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::size_t configurations = 0;
  for (const sweep::shape& s : sweep::shapes(size)) {
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic});
    const int ndims = static_cast<int>(s.dims.size());
    const auto lo = particle_world::lo(), length = particle_world::length();
    const hs::domain dom{lo, {lo[0] + length[0], lo[1] + length[1], lo[2] + length[2]}};
    for (double boxes : {0.4, 3.5}) {
      INFO(s.name() + " displacements up to " + std::to_string(boxes) + " boxes");
      const auto [blo, bhi] = hs::box_of(grid, dom);
      std::vector<particle> mine = particle_world::make(rank, blo, bhi, ndims, static_cast<unsigned>(configurations));
      // Displace; along non-periodic dimensions stay inside the domain.
      std::mt19937_64 gen(1234u + static_cast<unsigned>(rank));
      for (particle& p : mine)
        for (int d = 0; d < ndims; ++d) {
          const double width = length[d] / s.dims[d];
          std::uniform_real_distribution<double> u(-boxes * width, boxes * width);
          double x = p.x[d] + u(gen);
          if (!s.periodic[d]) x = std::clamp(x, dom.lo[d], std::nextafter(dom.hi[d], dom.lo[d]));
          p.x[d] = x;
        }
      const auto before = particle_world::gather(mine, MPI_COMM_WORLD);
      // The same particles as a structure of arrays: positions, ids, charges.
      std::vector<hs::position> xs;
      std::vector<std::int64_t> ids;
      std::vector<double> charges;
      for (const particle& p : mine) xs.push_back(p.x), ids.push_back(p.id), charges.push_back(p.charge);
      hs::migrate(grid, dom, mine, &particle::x);
      hs::migrate(grid, dom, xs, ids, charges);
      // The same particles, in the same order, as the array of structs.
      bool soa = xs.size() == mine.size() && ids.size() == mine.size() && charges.size() == mine.size();
      for (std::size_t i = 0; soa && i < mine.size(); ++i)
        soa = xs[i] == mine[i].x && ids[i] == mine[i].id && charges[i] == mine[i].charge;
      CHECK(soa);

      // Every particle is now inside this rank's box.
      bool inside = true;
      for (const particle& p : mine)
        for (int d = 0; d < ndims; ++d) inside = inside && p.x[d] >= blo[d] && p.x[d] < bhi[d];
      CHECK(inside);

      // Globally: the same ids, once each, each with its charge, at its position wrapped into the domain.
      const auto after = particle_world::gather(mine, MPI_COMM_WORLD);
      std::map<std::int64_t, particle> was;
      for (const auto& r : before)
        for (const particle& p : r) was[p.id] = p;
      std::set<std::int64_t> seen;
      bool same = true;
      std::size_t total = 0;
      for (const auto& r : after)
        for (const particle& p : r) {
          ++total;
          same = same && seen.insert(p.id).second && was.count(p.id) && was[p.id].charge == p.charge;
          for (int d = 0; same && d < ndims; ++d) {
            const double shift = p.x[d] - was[p.id].x[d];
            same = std::abs(shift - std::round(shift / length[d]) * length[d]) < 1e-12;
          }
        }
      CHECK(same);
      CHECK(total == was.size());
      ++configurations;
    }
  }
  CHECK(configurations > 0);
}

TEST_CASE("migrate of arrays of differing lengths raises on every rank", "[particles][migrate][errors]") {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  const hs::domain dom{{0, 0, 0}, {1, 1, 1}};
  std::vector<hs::position> x(3, hs::position{0.5, 0.5, 0.5});
  std::vector<std::int64_t> ids(3);
  std::vector<double> short_on_last(rank == size - 1 ? 2 : 3);  // one rank only: all ranks raise
  CHECK_THROWS_WITH(hs::migrate(grid, dom, x, ids, short_on_last),
                    Catch::Contains("array 2 after the positions has 2 entries, the positions 3"));
  CHECK(x.size() == 3);  // nothing moved
}

TEST_CASE("migrate rejects a particle outside a non-periodic domain on every rank", "[particles][migrate][errors]") {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {false}});
  const hs::domain dom{{0, 0, 0}, {1, 1, 1}};
  std::vector<hs::position> x;
  if (rank == 0) x.push_back({1.5, 0, 0});
  CHECK_THROWS_WITH(hs::migrate(grid, dom, x), Catch::Contains("left the non-periodic domain") &&
                                                   Catch::Contains("particle 0"));
}

// Migrate in place, on the caller's own arrays in every layout the plans accept, with companion
// arrays whose every value encodes its particle's id. The oracle is brute force from every rank's
// particles before: each particle's wrapped position (positions on a grid of 1/64, so wrapping and
// storing as float are exact) and the rank whose box holds it, hence each rank's exact contents.
namespace in_place {

struct record {
  std::int64_t id;
  std::array<double, 3> x;
};

/// A layout under test: load() fills its arrays with `particles` (room for `room`), run() migrates
/// them in place, at(i) reads particle `i` back (id from a companion, position) and whether every
/// companion value of that particle encodes the same id.
struct entry {
  record r;
  bool consistent;
};

std::int64_t id_of(double value) { return static_cast<std::int64_t>(value); }

/// Positions x[i*4 + d] (double, padded), velocities v[i*4 + d] = id + d/4, types t[i] = id: raw
/// pointer variables, a resize callback that moves the memory.
struct padded {
  std::vector<double> xs, vs;
  std::vector<int> ts;
  double *x = nullptr, *v = nullptr;
  int* t = nullptr;
  void load(const std::vector<record>& ps, std::size_t room) {
    xs.assign(room * 4, -7.0), vs.assign(room * 4, -7.0), ts.assign(room, -7);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      for (std::size_t d = 0; d < 3; ++d) xs[i * 4 + d] = ps[i].x[d], vs[i * 4 + d] = ps[i].id + 0.25 * d;
      ts[i] = static_cast<int>(ps[i].id);
    }
    x = xs.data(), v = vs.data(), t = ts.data();
  }
  std::size_t run(const hs::cartesian_grid& g, const hs::domain& dom, hs::detail::migrate_options how) {
    if (!how.capacity)
      how.resize = [&](std::size_t n) {
        std::vector<double> nx(n * 4 + 4), nv(n * 4 + 4);  // new memory: the columns must follow
        std::vector<int> nt(n + 1);
        std::copy_n(xs.begin(), std::min(xs.size(), nx.size()), nx.begin());
        std::copy_n(vs.begin(), std::min(vs.size(), nv.size()), nv.begin());
        std::copy_n(ts.begin(), std::min(ts.size(), nt.size()), nt.begin());
        xs.swap(nx), vs.swap(nv), ts.swap(nt);
        x = xs.data(), v = vs.data(), t = ts.data();
      };
    if (how.capacity)
      return hs::migrate(g, dom, how, hs::column(xs.data(), 4, 3), hs::column(vs.data(), 4, 3), hs::column(ts.data()));
    return hs::migrate(g, dom, how, hs::column(x, 4, 3), hs::column(v, 4, 3), hs::column(t));
  }
  entry at(std::size_t i) const {
    bool same = true;
    for (std::size_t d = 0; d < 3; ++d) same = same && v[i * 4 + d] == t[i] + 0.25 * d;
    return {{t[i], {x[i * 4], x[i * 4 + 1], x[i * 4 + 2]}}, same};
  }
};

/// One float array per coordinate (vectors), charges q[i] = id + 0.5 and ids.
struct split {
  std::vector<float> x, y, z;
  std::vector<double> q;
  std::vector<std::int64_t> id;
  void load(const std::vector<record>& ps, std::size_t room) {
    x.assign(room, 0), y.assign(room, 0), z.assign(room, 0), q.assign(room, 0), id.assign(room, 0);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      x[i] = static_cast<float>(ps[i].x[0]), y[i] = static_cast<float>(ps[i].x[1]);
      z[i] = static_cast<float>(ps[i].x[2]), q[i] = static_cast<double>(ps[i].id) + 0.5, id[i] = ps[i].id;
    }
  }
  std::size_t run(const hs::cartesian_grid& g, const hs::domain& dom, hs::detail::migrate_options how) {
    if (!how.capacity)
      how.resize = [&](std::size_t n) { x.resize(n), y.resize(n), z.resize(n), q.resize(n), id.resize(n); };
    if (how.capacity)  // pointers by value
      return hs::migrate(g, dom, how, hs::coordinates(x.data(), y.data(), z.data()), hs::column(q.data()),
                         hs::column(id.data()));
    return hs::migrate(g, dom, how, hs::coordinates(x, y, z), hs::column(q), hs::column(id));
  }
  entry at(std::size_t i) const { return {{id[i], {x[i], y[i], z[i]}}, id_of(q[i]) == id[i]}; }
};

/// An array per particle, std::array<float, 4> whose fourth value (the id) moves with it; ids.
struct per_particle {
  std::vector<std::array<float, 4>> p;
  std::vector<std::int64_t> id;
  std::array<float, 4>* first = nullptr;
  void load(const std::vector<record>& ps, std::size_t room) {
    p.assign(room, {}), id.assign(room, 0);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      p[i] = {static_cast<float>(ps[i].x[0]), static_cast<float>(ps[i].x[1]), static_cast<float>(ps[i].x[2]),
              static_cast<float>(ps[i].id)};
      id[i] = ps[i].id;
    }
    first = p.data();
  }
  std::size_t run(const hs::cartesian_grid& g, const hs::domain& dom, hs::detail::migrate_options how) {
    if (!how.capacity) how.resize = [&](std::size_t n) { p.resize(n), id.resize(n), first = p.data(); };
    return hs::migrate(g, dom, how, hs::column(first), hs::column(id));
  }
  entry at(std::size_t i) const { return {{id[i], {p[i][0], p[i][1], p[i][2]}}, id_of(p[i][3]) == id[i]}; }
};

/// Positions a member of each particle's struct (the whole struct moves), velocities padded apart.
struct member {
  struct atom {
    int type;
    std::array<double, 3> x;
    std::int64_t id;
  };
  std::vector<atom> a;
  std::vector<double> v;
  void load(const std::vector<record>& ps, std::size_t room) {
    a.assign(room, {}), v.assign(room * 4, 0);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      a[i] = {static_cast<int>(ps[i].id), ps[i].x, ps[i].id};
      for (std::size_t d = 0; d < 3; ++d) v[i * 4 + d] = static_cast<double>(ps[i].id) + 0.25 * d;
    }
  }
  std::size_t run(const hs::cartesian_grid& g, const hs::domain& dom, hs::detail::migrate_options how) {
    if (!how.capacity) how.resize = [&](std::size_t n) { a.resize(n), v.resize(n * 4); };
    if (how.capacity) return hs::migrate(g, dom, how, hs::column(a.data(), &atom::x), hs::column(v.data(), 4, 3));
    return hs::migrate(g, dom, how, hs::column(a, &atom::x), hs::column(v, 4, 3));
  }
  entry at(std::size_t i) const {
    bool same = a[i].type == a[i].id;
    for (std::size_t d = 0; d < 3; ++d) same = same && v[i * 4 + d] == a[i].id + 0.25 * d;
    return {{a[i].id, a[i].x}, same};
  }
};

/// Positions x[i*3 + d] in float (unpadded), ids.
struct strided_float {
  std::vector<float> x;
  std::vector<std::int64_t> id;
  float* first = nullptr;
  std::int64_t* ids = nullptr;
  void load(const std::vector<record>& ps, std::size_t room) {
    x.assign(room * 3, 0), id.assign(room, 0);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      for (std::size_t d = 0; d < 3; ++d) x[i * 3 + d] = static_cast<float>(ps[i].x[d]);
      id[i] = ps[i].id;
    }
    first = x.data(), ids = id.data();
  }
  std::size_t run(const hs::cartesian_grid& g, const hs::domain& dom, hs::detail::migrate_options how) {
    if (!how.capacity)
      how.resize = [&](std::size_t n) { x.resize(n * 3), id.resize(n), first = x.data(), ids = id.data(); };
    return hs::migrate(g, dom, how, hs::column(first, 3), hs::column(ids));
  }
  entry at(std::size_t i) const { return {{id[i], {x[i * 3], x[i * 3 + 1], x[i * 3 + 2]}}, true}; }
};

/// The oracle: each rank's particles after migrate, in the default order (survivors in order, then
/// arrivals by source rank, each source in its order), from every rank's particles before.
std::vector<record> expected(const hs::cartesian_grid& grid, const hs::domain& dom,
                             const std::vector<std::vector<record>>& before, int ndims,
                             std::vector<std::size_t>& totals) {
  std::vector<std::vector<record>> after(before.size());
  for (int pass = 0; pass < 2; ++pass)  // survivors first, then arrivals
    for (std::size_t r = 0; r < before.size(); ++r)
      for (record p : before[r]) {
        for (int d = 0; d < ndims; ++d)
          if (grid.periodic(d)) p.x[d] = dom.wrap(d, p.x[d]);
        int owner = -1;
        for (int q = 0; q < grid.size(); ++q) {
          const auto [lo, hi] = dom.box(grid.shape(), grid.shape().coords_of(q));
          bool inside = true;
          for (int d = 0; d < ndims; ++d) inside = inside && p.x[d] >= lo[d] && p.x[d] < hi[d];
          if (inside) owner = q;
        }
        if ((owner == static_cast<int>(r)) == (pass == 0)) after[static_cast<std::size_t>(owner)].push_back(p);
      }
  totals.clear();
  for (const auto& a : after) totals.push_back(a.size());
  return after[static_cast<std::size_t>(grid.rank())];
}

/// Particles of this rank on the 1/64 grid, displaced up to `boxes` boxes (inside along closed dimensions).
std::vector<record> make(const hs::cartesian_grid& grid, const hs::domain& dom, double boxes, unsigned seed) {
  const auto [blo, bhi] = hs::box_of(grid, dom);
  std::vector<record> out;
  std::mt19937_64 gen(seed * 31u + static_cast<unsigned>(grid.rank()));
  for (const particle& p : particle_world::make(grid.rank(), blo, bhi, grid.ndims(), seed)) {
    record r{p.id, p.x};
    for (int d = 0; d < grid.ndims(); ++d) {
      std::uniform_real_distribution<double> u(-boxes, boxes);
      double x = std::round((r.x[d] + u(gen) * dom.length(d) / grid.dim(d)) * 64) / 64;
      if (!grid.periodic(d)) x = std::clamp(x, dom.lo[d], dom.hi[d] - 1.0 / 64);
      r.x[d] = x;
    }
    out.push_back(r);
  }
  return out;
}

/// The layout's particles after migrate against the oracle: exactly in order when `keep_order`;
/// otherwise the survivors as a set with those below the first hole in place, then the arrivals in order.
std::string compare(const std::vector<entry>& got, const std::vector<record>& mine, const std::vector<record>& want,
                    std::size_t kept, bool keep_order) {
  if (got.size() != want.size())
    return "count " + std::to_string(got.size()) + ", expected " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!got[i].consistent) return "companions of particle " + std::to_string(i) + " disagree";
  auto same = [](const record& a, const record& b) { return a.id == b.id && a.x == b.x; };
  if (keep_order) {
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!same(got[i].r, want[i])) return "particle " + std::to_string(i) + " differs";
    return "";
  }
  for (std::size_t i = kept; i < got.size(); ++i)
    if (!same(got[i].r, want[i])) return "arrival " + std::to_string(i) + " differs";
  std::size_t hole = 0;  // the first particle that left
  while (hole < mine.size() && hole < kept && mine[hole].id == want[hole].id) ++hole;
  for (std::size_t i = 0; i < hole; ++i)
    if (!same(got[i].r, want[i])) return "survivor " + std::to_string(i) + " below the first hole moved";
  std::map<std::int64_t, std::array<double, 3>> a, b;
  for (std::size_t i = 0; i < kept; ++i) a[got[i].r.id] = got[i].r.x, b[want[i].id] = want[i].x;
  return a == b ? "" : "the survivors differ as a set";
}

/// Runs every mode of one layout on `mine`: resize and reserved capacity, in order and from the end.
template <class Layout>
void check_layout(const char* name, const hs::cartesian_grid& grid, const hs::domain& dom,
                  const std::vector<record>& mine, const std::vector<record>& want, std::size_t largest) {
  for (int mode = 0; mode < 4; ++mode) {
    const bool keep_order = mode % 2 == 0, reserved = mode >= 2;
    INFO(std::string(name) + (keep_order ? " in order" : " from the end") + (reserved ? ", capacity" : ", resize"));
    Layout l;
    l.load(mine, reserved ? largest : mine.size());
    std::size_t survivors = 0;
    for (const record& p : mine)
      survivors += std::count_if(want.begin(), want.end(), [&](const record& q) { return q.id == p.id; });
    const std::size_t n =
        l.run(grid, dom, {.count = mine.size(), .capacity = reserved ? largest : 0, .keep_order = keep_order});
    std::vector<entry> got;
    for (std::size_t i = 0; i < n; ++i) got.push_back(l.at(i));
    CHECK(compare(got, mine, want, survivors, keep_order) == "");
  }
}

}  // namespace in_place

TEST_CASE("migrate in place moves every layout and its companions, in order or from the end",
          "[particles][migrate][in-place]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const auto lo = particle_world::lo(), length = particle_world::length();
  const hs::domain dom{lo, {lo[0] + length[0], lo[1] + length[1], lo[2] + length[2]}};
  unsigned seed = 0;
  for (const sweep::shape& s : sweep::shapes(size)) {
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic});
    const double boxes = ++seed % 3 == 0 ? 2.5 : 0.4;  // every third shape beyond the neighbours
    INFO(s.name() + " displacements up to " + std::to_string(boxes) + " boxes");
    const std::vector<in_place::record> mine = in_place::make(grid, dom, boxes, seed);
    std::vector<std::size_t> totals;
    const auto want =
        in_place::expected(grid, dom, particle_world::gather_by_rank(mine, MPI_COMM_WORLD), grid.ndims(), totals);
    const std::size_t largest = *std::max_element(totals.begin(), totals.end()) + mine.size();
    in_place::check_layout<in_place::padded>("padded", grid, dom, mine, want, largest);
    in_place::check_layout<in_place::split>("split", grid, dom, mine, want, largest);
    in_place::check_layout<in_place::per_particle>("per particle", grid, dom, mine, want, largest);
    in_place::check_layout<in_place::member>("member", grid, dom, mine, want, largest);
    in_place::check_layout<in_place::strided_float>("strided float", grid, dom, mine, want, largest);
  }
  CHECK(seed > 0);
}

TEST_CASE("migrate in place into a reserved capacity too small raises on every rank, nothing moved",
          "[particles][migrate][in-place][errors]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {size}, .periodic = {true}});
  const hs::domain dom{{0, 0, 0}, {1, 1, 1}};
  // Rank 0 sends 3 particles to rank 1, every other rank 2 to the next, each with its count as
  // capacity: rank 1 overflows (3 arrive, room for 2), the others fit. On one rank, the capacity
  // (2) is below the count.
  const auto [lo, hi] = dom.box(grid.shape(), grid.shape().coords_of((rank + 1) % size));
  std::vector<in_place::record> mine;
  for (int i = 0; i < (rank == 0 ? 3 : 2); ++i) mine.push_back({rank * 10 + i, {(lo[0] + hi[0]) / 2, 0.5, 0.5}});
  in_place::padded l;
  const std::size_t count = mine.size(), capacity = size > 1 ? count : 2;
  l.load(mine, count);
  CHECK_THROWS_WITH(l.run(grid, dom, {.count = count, .capacity = capacity}),
                    Catch::Contains(size > 1 ? "particles after migration exceed the capacity 2"
                                             : "the capacity 2 is below the count 3"));
  bool unchanged = true;  // nothing moved: every particle where it was
  for (std::size_t i = 0; i < count; ++i) unchanged = unchanged && l.at(i).r.id == mine[i].id;
  CHECK(unchanged);
  // A pointer given by value cannot follow a resize.
  l.load(mine, 3);
  CHECK_THROWS_WITH(
      hs::migrate(grid, dom, {.count = count, .resize = [](std::size_t) {}}, hs::column(l.xs.data(), 4, 3)),
      Catch::Contains("column 0 holds a copy of its pointer"));
  CHECK_THROWS_WITH(hs::migrate(grid, dom, {.count = count, .capacity = 3}, hs::column(l.x, 2, 3)),
                    Catch::Contains("column 0 has width 3 and stride 2"));
  // Every rank empty: the callback hears 0, nothing else happens.
  std::size_t resized = 99;
  double* none = nullptr;
  CHECK(hs::migrate(grid, dom, {.count = 0, .resize = [&](std::size_t n) { resized = n; }}, hs::column(none, 4, 3)) ==
        0);
  CHECK(resized == 0);
  // Coordinates of pointers carry no count: only migrate in place takes them.
  std::vector<double> cx(count, 0.5), cy(count, 0.5), cz(count, 0.5);
  CHECK_THROWS_WITH(hs::migrate(grid, dom, hs::coordinates(cx.data(), cy.data(), cz.data())),
                    Catch::Contains("coordinates of pointers need migrate in place"));
}

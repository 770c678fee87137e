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
#include "migrate_in_place.hpp"
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

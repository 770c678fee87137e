// SPDX-License-Identifier: BSD-3-Clause
// Positions as MD codes store them (float or double; an array per particle,
// padded; a flat strided array; one array per coordinate; a struct member)
// give the same plan, bit for bit, as the same values handed over as
// hs::position; float positions move and shift in float; migrate of float
// positions never leaves one on a box's upper bound; the particle grid
// defaults to the smallest surface.

#include "../support/catch.hpp"
#include <cmath>
#include <cstring>
#include <haloshift/haloshift.hpp>
#include <random>
#include <vector>

#include "../support/sweep.hpp"
#include "../support/world.hpp"

namespace hs = haloshift;

namespace {

struct atom {
  std::int64_t id;
  std::array<float, 3> x;
  float charge;
};

bool same_plan(const hs::particle_plan& a, const hs::particle_plan& b) {
  if (a.size() != b.size() || a.owned() != b.owned() || a.blocks().size() != b.blocks().size()) return false;
  for (std::size_t i = 0; i < a.blocks().size(); ++i)
    if (a.blocks()[i].first != b.blocks()[i].first || a.blocks()[i].count != b.blocks()[i].count ||
        a.blocks()[i].source != b.blocks()[i].source || a.blocks()[i].image != b.blocks()[i].image)
      return false;
  return a.positions().empty() ||
         std::memcmp(a.positions().data(), b.positions().data(), a.positions().size() * sizeof(hs::position)) == 0;
}

}  // namespace

TEST_CASE("particle plans take positions in the layouts MD codes use", "[particles][layouts]") {
  const int size = world_size(), rank = world_rank();
  std::size_t configurations = 0;
  for (const sweep::shape& s : sweep::shapes(size)) {
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic});
    const int nd = grid.ndims();
    const hs::domain dom{{-1.0, 0.5, 2.0}, {3.0, 3.5, 7.0}};
    const auto [lo, hi] = hs::box_of(grid, dom);
    // Float positions inside this rank's box (as floats), a few exactly on its lower edges.
    std::mt19937 gen(static_cast<unsigned>(17 * rank + static_cast<int>(configurations)));
    const int n = (rank * 5 + 2) % 7 * 3;
    std::vector<std::array<float, 3>> xf;
    for (int i = 0; i < n; ++i) {
      std::array<float, 3> p{0, 0, 0};
      for (int d = 0; d < nd; ++d) {
        std::uniform_real_distribution<double> u(lo[d], hi[d]);
        float f = i % 5 == 0 ? static_cast<float>(lo[d]) : static_cast<float>(u(gen));
        while (static_cast<double>(f) < lo[d]) f = std::nextafter(f, INFINITY);
        while (static_cast<double>(f) >= hi[d]) f = std::nextafter(f, -INFINITY);
        p[static_cast<std::size_t>(d)] = f;
      }
      xf.push_back(p);
    }
    std::vector<hs::position> xd;  // the same values as doubles: the reference
    std::vector<double> padded;    // x[i*4 + d], the fourth a charge
    std::vector<float> sx, sy, sz;
    std::vector<atom> atoms;
    for (int i = 0; i < n; ++i) {
      const auto& p = xf[static_cast<std::size_t>(i)];
      xd.push_back({p[0], p[1], p[2]});
      padded.insert(padded.end(), {p[0], p[1], p[2], 0.25 * i});
      sx.push_back(p[0]), sy.push_back(p[1]), sz.push_back(p[2]);
      atoms.push_back({i, p, 0.5f});
    }
    for (double factor : {0.4, 1.3}) {
      hs::position cutoff{0, 0, 0};
      for (int d = 0; d < nd; ++d) cutoff[d] = factor * dom.length(d) / grid.dim(d);
      INFO(s.name() << " cutoff " << factor << " boxes");
      auto reference = hs::make_particle_plan<hs::Shift>(grid, dom, cutoff, xd);
      CHECK(same_plan(hs::make_particle_plan<hs::Shift>(
                          grid, dom, cutoff, hs::array_positions<std::array<float, 3>>(xf)),
                      reference));
      CHECK(same_plan(hs::make_particle_plan<hs::Shift>(
                          grid, dom, cutoff, hs::strided_positions<double>(padded.data(), xd.size(), 4, nd)),
                      reference));
      const std::span<const float> cx(sx), cy(sy), cz(sz);
      const hs::split_positions<float> split = nd == 1   ? hs::split_positions<float>(cx)
                                               : nd == 2 ? hs::split_positions<float>(cx, cy)
                                                         : hs::split_positions<float>(cx, cy, cz);
      auto from_split = hs::make_particle_plan<hs::SingleHop>(grid, dom, cutoff, split);
      CHECK(same_plan(from_split, reference));
      CHECK(same_plan(hs::make_particle_plan(grid, "singlehop", dom, cutoff,
                                             hs::member_positions<atom, std::array<float, 3>>(atoms, &atom::x)),
                      reference));
      // rebuild from another layout: the same plan again.
      from_split.rebuild(hs::array_positions<std::array<float, 3>>(xf));
      CHECK(same_plan(from_split, reference));

      // Float positions moved and shifted in float: the reference's double ghosts rounded once.
      std::vector<std::array<float, 3>> f(reference.size());
      std::copy(xf.begin(), xf.end(), f.begin());
      reference.forward_positions(f);
      std::vector<float> fx(reference.size()), fy(reference.size()), fz(reference.size());
      std::copy(sx.begin(), sx.end(), fx.begin());
      std::copy(sy.begin(), sy.end(), fy.begin());
      std::copy(sz.begin(), sz.end(), fz.begin());
      reference.forward_positions(std::span<float>(fx), std::span<float>(fy), std::span<float>(fz));
      std::vector<atom> ga(reference.size());
      std::copy(atoms.begin(), atoms.end(), ga.begin());
      reference.forward_positions(std::span<atom>(ga), &atom::x);
      bool rounded = true;
      for (std::size_t i = 0; i < reference.size(); ++i)
        for (std::size_t d = 0; d < 3; ++d) {
          const float want = static_cast<float>(reference.positions()[i][d]);
          const float split_got = d == 0 ? fx[i] : d == 1 ? fy[i] : fz[i];
          rounded = rounded && f[i][d] == want && split_got == want && ga[i].x[d] == want;
        }
      CHECK(rounded);
      bool others = true;  // the struct's other members move unchanged
      for (std::size_t i = reference.owned(); i < reference.size(); ++i) others = others && ga[i].charge == 0.5f;
      CHECK(others);
      ++configurations;
    }
  }
  CHECK(configurations > 0);
}

TEST_CASE("positions with fewer coordinates than the grid raise on every rank", "[particles][layouts][errors]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}});
  const hs::domain dom{{0, 0, 0}, {1, 1, 1}};
  std::vector<double> flat;
  CHECK_THROWS_WITH(hs::make_particle_plan<hs::Shift>(grid, dom, 0.1, hs::strided_positions<double>(flat.data(), 0, 2, 2)),
                    Catch::Contains("2 coordinates per particle, the grid has 3 dimensions"));
  std::vector<std::array<float, 2>> flat2;
  CHECK_THROWS_WITH(hs::migrate(grid, dom, flat2), Catch::Contains("migrate: positions have 2 coordinates"));
}

TEST_CASE("migrate of float positions keeps every one inside its box", "[particles][layouts][migrate]") {
  const int size = world_size(), rank = world_rank();
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}});
  // Bounds no float holds: wrapping just below the upper bound rounds onto it, or past it.
  const hs::domain dom{{-0.1, 0.0, 1e-3}, {1.0000001, 2.0000001, 3.0000002}};
  std::vector<std::array<float, 4>> x;  // padded: the fourth entry an id, carried along
  std::vector<std::int64_t> id;
  for (int i = 0; i < 40; ++i) {
    std::array<float, 4> p{};
    for (int d = 0; d < 3; ++d) {
      const double len = dom.length(d);
      // Just below lo (wraps to just below hi), just below hi, hi itself, far away, and -0.0.
      const double choices[] = {dom.lo[d] - 1e-9, dom.hi[d] - 1e-9, dom.hi[d], dom.lo[d] + 7.3 * len, -0.0,
                                dom.lo[d] + (i + 0.5) * len / 40};
      p[static_cast<std::size_t>(d)] = static_cast<float>(choices[(i + d + rank) % 6]);
    }
    p[3] = static_cast<float>(rank * 1000 + i);
    x.push_back(p);
    id.push_back(rank * 1000 + i);
  }
  // The same particles as one array per coordinate: the same result, entry for entry.
  std::vector<float> cx, cy, cz;
  std::vector<std::int64_t> cid = id;
  for (const auto& p : x) cx.push_back(p[0]), cy.push_back(p[1]), cz.push_back(p[2]);
  hs::migrate(grid, dom, x, id);
  hs::migrate(grid, dom, hs::coordinates(cx, cy, cz), cid);
  bool same = cx.size() == x.size() && cid == id;
  for (std::size_t i = 0; same && i < x.size(); ++i) same = cx[i] == x[i][0] && cy[i] == x[i][1] && cz[i] == x[i][2];
  CHECK(same);
  const auto [lo, hi] = hs::box_of(grid, dom);
  bool inside = true, carried = x.size() == id.size();
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (int d = 0; d < 3; ++d) inside = inside && x[i][d] >= lo[d] && x[i][d] < hi[d];
    carried = carried && x[i][3] == static_cast<float>(id[i]);
  }
  CHECK(inside);
  CHECK(carried);
  long total = static_cast<long>(x.size());
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK(total == 40L * size);
  // The plan accepts what migrate left.
  auto plan = hs::make_particle_plan<hs::Shift>(grid, dom, 0.2, hs::array_positions<std::array<float, 4>>(x));
  CHECK(plan.owned() == x.size());
}

TEST_CASE("particle grids split space with the smallest surface when given the domain", "[particles][grid]") {
  const int size = world_size();
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}, .lengths = {2, 2, 2}});
  std::vector<int> dims{grid.dim(0), grid.dim(1), grid.dim(2)};
  CHECK(dims == hs::smallest_surface_dims(size, {2, 2, 2}, {0, 0, 0}));
  if (size == 2) CHECK(dims == std::vector<int>{1, 1, 2});
  // make_particle_grid: the same from the domain; 2D and a long domain too.
  const hs::cartesian_grid from_domain = hs::make_particle_grid(MPI_COMM_WORLD, {{0, 0, 0}, {2, 2, 2}});
  CHECK(std::vector<int>{from_domain.dim(0), from_domain.dim(1), from_domain.dim(2)} == dims);
  const hs::cartesian_grid flat =
      hs::make_particle_grid(MPI_COMM_WORLD, {{0, 0, 0}, {8, 1, 1}}, {.dims = {0, 0}, .periodic = {true, false}});
  CHECK(std::vector<int>{flat.dim(0), flat.dim(1)} == hs::smallest_surface_dims(size, {8, 1}, {0, 0}));
  CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, true}, .lengths = {1}}),
                    Catch::Contains("lengths must be empty or have one entry per dimension"));
  const int rank = world_rank();
  if (size > 1)
    CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true},
                                                          .lengths = {1, 1, rank == 0 ? 1.0 : 2.0}}),
                      Catch::Contains("grid_options.lengths[2] must be the same on all ranks"));
}

TEST_CASE("make_particle_grid keeps the caller's dims and rank order; migrate follows the order", "[particles][grid]") {
  const int size = world_size(), rank = world_rank();
  const hs::domain cube{{0, 0, 0}, {2, 2, 2}};
  auto dims_of = [](const hs::cartesian_grid& g) { return std::vector<int>{g.dim(0), g.dim(1), g.dim(2)}; };
  // Dims given in full are taken as they are, even where another split has less surface.
  CHECK(dims_of(hs::make_particle_grid(MPI_COMM_WORLD, cube, {.dims = {1, size, 1}})) == std::vector<int>{1, size, 1});
  // Some given: the others chosen for the smallest surface around them.
  const hs::cartesian_grid flat = hs::make_particle_grid(MPI_COMM_WORLD, cube, {.dims = {0, 0, 1}});
  CHECK(dims_of(flat) == hs::smallest_surface_dims(size, {2, 2, 2}, {0, 0, 1}));
  CHECK(flat.dim(2) == 1);
  // A given dim that does not divide the ranks: the grid's error, on every rank.
  CHECK_THROWS_WITH(hs::make_particle_grid(MPI_COMM_WORLD, cube, {.dims = {size + 1, 0, 0}}),
                    Catch::Contains("which does not divide the communicator size") &&
                        Catch::Contains("make_particle_grid takes the lengths from the domain"));
  // x fastest (LAMMPS's `processors ... map xyz`): migrate hands each particle to the rank so numbered.
  const hs::cartesian_grid xfast =
      hs::make_particle_grid(MPI_COMM_WORLD, cube, {.order = hs::grid_options::rank_order::first_fastest});
  CHECK(xfast.shape().order() == hs::grid_options::rank_order::first_fastest);
  CHECK(dims_of(xfast) == hs::smallest_surface_dims(size, {2, 2, 2}, {0, 0, 0}));
  const int p[3] = {xfast.dim(0), xfast.dim(1), xfast.dim(2)};
  std::vector<hs::position> x;  // the centres of a lattice of two cells per box and dimension, dealt round the ranks
  std::vector<int> owner;       // each particle's rank by hand: box coordinates, then x fastest
  for (int k = 0; k < 2 * p[2]; ++k)
    for (int j = 0; j < 2 * p[1]; ++j)
      for (int i = 0; i < 2 * p[0]; ++i)
        if ((i + j + k) % size == rank) {
          x.push_back({(i + 0.5) / p[0], (j + 0.5) / p[1], (k + 0.5) / p[2]});
          owner.push_back(i / 2 + p[0] * (j / 2 + p[1] * (k / 2)));
        }
  hs::migrate(xfast, cube, x, owner);
  bool here = true;
  for (int o : owner) here = here && o == rank;
  CHECK(here);
  long total = static_cast<long>(x.size());
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK(total == 8L * size);
}

// SPDX-License-Identifier: BSD-3-Clause
// Migrate: the domain (agreed), positions that cannot be owned, arrays of
// differing lengths; on every rank or on one.

#include "battery.hpp"

#include <haloshift/haloshift.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace hs = haloshift;

namespace misuse {

namespace {
const hs::domain migrate_cube{{0, 0, 0}, {1, 1, 1}};
hs::cartesian_grid periodic_cube(const world& w) { return hs::cartesian_grid(w.comm, {.dims = {0, 0, 0}}); }
hs::cartesian_grid closed_cube(const world& w) {
  return hs::cartesian_grid(w.comm, {.dims = {0, 0, 0}, .periodic = {false, false, false}});
}
std::vector<hs::position> one_inside() { return {{0.5, 0.5, 0.5}}; }
}  // namespace

void register_migrate_cases() {
  add("migrate/domain-differ", {"domain.lo[0] must be the same on all ranks, got values from -1 to 0"},
      [](const world& w) {
        const auto g = periodic_cube(w);
        auto x = one_inside();
        hs::migrate(g, {{w.first_or(-1.0, 0.0), 0, 0}, {1, 1, 1}}, x);
      }, 2, true);
  add("migrate/domain-differ-last-dimension", {"domain.hi[2] must be the same on all ranks"}, [](const world& w) {
    const auto g = periodic_cube(w);
    auto x = one_inside();
    hs::migrate(g, {{0, 0, 0}, {1, 1, w.last() ? 1.0000000000000002 : 1.0}}, x);
  }, 2);
  add("migrate/domain-inverted", {"domain: lo[1] = 1 must be below hi[1] = 0"}, [](const world& w) {
    const auto g = periodic_cube(w);
    auto x = one_inside();
    hs::migrate(g, {{0, 1, 0}, {1, 0, 1}}, x);
  }, 1, true);
  add("migrate/domain-inverted-one-rank", {"domain: lo[0] = 3 must be below hi[0] = 1"}, [](const world& w) {
    const auto g = periodic_cube(w);
    auto x = one_inside();
    hs::migrate(g, {{w.on_last(3.0, 0.0), 0, 0}, {1, 1, 1}}, x);
  });
  add("migrate/nan-position", {"non-finite coordinate nan along dimension 0", "particle 0"}, [](const world& w) {
    const auto g = periodic_cube(w);
    std::vector<hs::position> x{{std::numeric_limits<double>::quiet_NaN(), 0.5, 0.5}};
    hs::migrate(g, migrate_cube, x);
  }, 1, true);
  add("migrate/infinite-position-one-rank", {"non-finite coordinate -inf along dimension 2", "particle 1"},
      [](const world& w) {
        const auto g = periodic_cube(w);
        std::vector<hs::position> x{{0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}};
        if (w.last()) x[1][2] = -std::numeric_limits<double>::infinity();
        hs::migrate(g, migrate_cube, x);
      }, 1, true);
  add("migrate/left-closed-domain", {"a particle at coordinate 1.5 along dimension 0 left the non-periodic domain [0, 1)"},
      [](const world& w) {
        const auto g = closed_cube(w);
        std::vector<hs::position> x{{1.5, 0.5, 0.5}};
        hs::migrate(g, migrate_cube, x);
      });
  add("migrate/on-closed-upper-bound-one-rank", {"at coordinate 1 along dimension 1 left the non-periodic domain"},
      [](const world& w) {
        const auto g = closed_cube(w);
        std::vector<hs::position> x = one_inside();
        if (w.last()) x[0][1] = 1.0;
        hs::migrate(g, migrate_cube, x);
      });
  add("migrate/below-closed-domain", {"at coordinate -1e-300 along dimension 2 left the non-periodic domain"},
      [](const world& w) {
        const auto g = closed_cube(w);
        std::vector<hs::position> x{{0.5, 0.5, -1e-300}};
        hs::migrate(g, migrate_cube, x);
      });
  add("migrate/arrays-differ", {"migrate: array 1 after the positions has 2 entries, the positions 1"},
      [](const world& w) {
        const auto g = periodic_cube(w);
        auto x = one_inside();
        std::vector<int> id(2);
        hs::migrate(g, migrate_cube, x, id);
      }, 1, true);
  add("migrate/arrays-differ-one-rank", {"migrate: array 2 after the positions has 0 entries, the positions 1"},
      [](const world& w) {
        const auto g = periodic_cube(w);
        auto x = one_inside();
        std::vector<int> id(1);
        std::vector<double> v(w.last() ? 0 : 1);
        hs::migrate(g, migrate_cube, x, id, v);
      });
  add("migrate/coordinates-differ", {"migrate: array 1 after the x coordinates has 3 entries"}, [](const world& w) {
    const auto g = periodic_cube(w);
    std::vector<double> x{0.5}, y{0.5, 0.5, 0.5}, z{0.5};
    hs::migrate(g, migrate_cube, hs::coordinates(x, y, z));
  });
  add("migrate/coordinates-too-few", {"migrate: positions have 2 coordinates, the grid 3 dimensions"},
      [](const world& w) {
        const auto g = periodic_cube(w);
        std::vector<double> x{0.5}, y{0.5};
        hs::migrate(g, migrate_cube, hs::coordinates(x, y));
      });
  add("migrate/array-positions-too-few", {"migrate: positions have 2 coordinates, the grid 3 dimensions"},
      [](const world& w) {
        const auto g = periodic_cube(w);
        std::vector<std::array<float, 2>> x{{0.5f, 0.5f}};
        hs::migrate(g, migrate_cube, x);
      });
  add("migrate/float-nan-one-rank", {"non-finite coordinate nan along dimension 0"}, [](const world& w) {
    const auto g = periodic_cube(w);
    std::vector<float> x{w.on_last(std::numeric_limits<float>::quiet_NaN(), 0.5f)}, y{0.5f}, z{0.5f};
    std::vector<std::int64_t> id{7};
    hs::migrate(g, migrate_cube, hs::coordinates(x, y, z), id);
  });
  // The arrays' element sizes agree, each (a long id on one rank, an int one elsewhere: the
  // records' lengths differed and particles were lost).
  add("migrate/id-type-differ", {"migrate: the element size (bytes) of array 1 must be the same on all ranks",
                                 "got values from 4 to 8"},
      [](const world& w) {
        const auto g = periodic_cube(w);
        auto x = one_inside();
        std::vector<long> wide(1);
        std::vector<int> narrow(1);
        if (w.first()) hs::migrate(g, migrate_cube, x, wide);
        else hs::migrate(g, migrate_cube, x, narrow);
      }, 2, true);
  add("migrate/arrays-count-differ", {"migrate: the number of arrays must be the same on all ranks, got values from 2 to 3"},
      [](const world& w) {
        const auto g = periodic_cube(w);
        auto x = one_inside();
        std::vector<double> charge(1);
        std::vector<int> id(1), type(1);
        if (w.first()) hs::migrate(g, migrate_cube, x, charge);
        else hs::migrate(g, migrate_cube, x, id, type);  // 8 bytes more per particle either way
      }, 2);
  add("migrate/position-type-differ", {"migrate: sizeof(T) must be the same on all ranks, got values from 12 to 24"},
      [](const world& w) {
        const auto g = periodic_cube(w);
        std::vector<hs::position> x = one_inside();
        std::vector<std::array<float, 3>> f{{0.5f, 0.5f, 0.5f}};
        if (w.first()) hs::migrate(g, migrate_cube, x);
        else hs::migrate(g, migrate_cube, f);
      }, 2);
  add("migrate/coordinates-type-differ",
      {"migrate: the element size (bytes) of array 0 must be the same on all ranks, got values from 4 to 8"},
      [](const world& w) {
        const auto g = periodic_cube(w);
        std::vector<double> x{0.5}, y{0.5}, z{0.5};
        std::vector<float> fx{0.5f}, fy{0.5f}, fz{0.5f};
        if (w.first()) hs::migrate(g, migrate_cube, hs::coordinates(x, y, z));
        else hs::migrate(g, migrate_cube, hs::coordinates(fx, fy, fz));
      }, 2);
}

}  // namespace misuse

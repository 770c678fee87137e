// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The migrate-in-place oracle and layouts, shared by the host sweep
// (test_migrate.cpp) and the device-space sweep (../device/test_device_migrate.cpp).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <haloshift/haloshift.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../support/catch.hpp"
#include "particle_world.hpp"

// Migrate in place, on the caller's own arrays in every layout the plans accept, with companion
// arrays whose every value encodes its particle's id. The oracle is brute force from every rank's
// particles before: each particle's wrapped position (positions on a grid of 1/64, so wrapping and
// storing as float are exact) and the rank whose box holds it, hence each rank's exact contents.
namespace in_place {

namespace hs = haloshift;

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

inline std::int64_t id_of(double value) { return static_cast<std::int64_t>(value); }

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
inline std::vector<record> expected(const hs::cartesian_grid& grid, const hs::domain& dom,
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
inline std::vector<record> make(const hs::cartesian_grid& grid, const hs::domain& dom, double boxes, unsigned seed) {
  const auto [blo, bhi] = hs::box_of(grid, dom);
  std::vector<record> out;
  std::mt19937_64 gen(seed * 31u + static_cast<unsigned>(grid.rank()));
  for (const particle_world::particle& p : particle_world::make(grid.rank(), blo, bhi, grid.ndims(), seed)) {
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
inline std::string compare(const std::vector<entry>& got, const std::vector<record>& mine,
                           const std::vector<record>& want, std::size_t kept, bool keep_order) {
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

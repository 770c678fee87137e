// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Particle-plan sweeps over the arrays of a memory space, without a test
// framework (as space_sweeps.hpp for fields): forward of one array and of
// several in one exchange (blocking, split phase with progress()/wait() or
// test()), forward_positions with the periodic shift run by the space's
// executor (hs::position with companions, padded std::array<F, 4>, x/y/z
// arrays with a companion, float and double), reverse (std::plus<> of one
// array and of two together, take_min, take_max) and a rebuild, over every
// particle strategy, periodic, non-periodic and mixed grids in 1, 2 and 3
// dimensions, cutoffs within a box and reaching several (beyond the grid:
// periodic images of a rank's own particles), uneven counts (none on some
// ranks). Each result must equal, bit for bit, (a) the particle oracle
// (tests/particles/particle_oracle.hpp: ghosts from the gathered positions
// alone) and (b) the same exchange over host arrays.

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <haloshift/haloshift.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../particles/particle_oracle.hpp"
#include "space_oracle.hpp"

namespace particle_sweeps {

namespace hs = haloshift;
using particle_world::particle;
using space_sweeps::result;
using space_sweeps::space_array;

/// Whether two arrays hold the same bytes.
template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

/// The world of one configuration, known to every rank, and what the oracle says about it.
struct world {
  particle_oracle::config c;
  int rank = 0, size = 1;
  std::vector<particle> mine, want;        ///< this rank's particles; the ghosts it must hold
  std::vector<std::vector<particle>> all;  ///< every rank's
  std::map<std::int64_t, particle> by_id;  ///< every particle
  std::int64_t id_at(std::size_t i) const { return i < mine.size() ? mine[i].id : want[i - mine.size()].id; }
};

/// Runs the checks of one plan over arrays of Storage (allocated there, filled and read back
/// through its copies), exchanged by calls that name `space` (with its stream if any; `settle` runs
/// after every wait, e.g. synchronising that stream), against the same calls of `host_plan` (the
/// same plan, or one packing host arrays on its own path) on host arrays.
template <class Storage, class Space = Storage>
class runner {
 public:
  runner(hs::particle_plan& plan, hs::particle_plan& host_plan, const world& w, Space space,
         std::function<void()> settle, result& r, std::string what)
      : plan_(plan),
        host_plan_(host_plan),
        w_(w),
        space_(space),
        settle_(std::move(settle)),
        r_(r),
        what_(std::move(what)) {}

  /// One array (blocking), then ids and charges together (split phase): the oracle's ids, the owners' charges.
  void forward_arrays(int variant) {
    std::vector<std::int64_t> ids = owned_then(std::int64_t{-1}, [](const particle& p) { return p.id; });
    std::vector<double> q = owned_then(-1.0, [](const particle& p) { return p.charge; });
    std::vector<std::int64_t> ids_host = ids;
    std::vector<double> q_host = q;
    space_array<Storage, std::int64_t> d_ids(ids);
    space_array<Storage, double> d_q(q);
    plan_.forward(space_, span(d_ids, ids));
    settle_();
    check("forward of one array", d_ids.read(), oracle_of(ids, [](const particle& p) { return p.id; }), host(ids_host));
    ids_host = ids;
    {
      auto pending = plan_.start_forward(space_, span(d_q, q), span(d_ids, ids));
      finish(pending, variant);
    }
    host_plan_.forward(q_host, ids_host);
    check("forward of two arrays (charges)", d_q.read(), oracle_of(q, [](const particle& p) { return p.charge; }),
          q_host);
    check("forward of two arrays (ids)", d_ids.read(), oracle_of(ids, [](const particle& p) { return p.id; }),
          ids_host);
  }

  /// hs::position with an id companion, in one exchange; then the positions alone after they were spoiled.
  void forward_positions(int variant) {
    std::vector<hs::position> x = owned_then(hs::position{-9, -9, -9}, [](const particle& p) { return p.x; });
    std::vector<std::int64_t> ids = owned_then(std::int64_t{-1}, [](const particle& p) { return p.id; });
    std::vector<hs::position> x_host = x;
    std::vector<std::int64_t> ids_host = ids;
    space_array<Storage, hs::position> d_x(x);
    space_array<Storage, std::int64_t> d_ids(ids);
    {
      auto pending = plan_.start_forward_positions(space_, span(d_x, x), span(d_ids, ids));
      finish(pending, variant);
    }
    host_plan_.forward_positions(x_host, ids_host);
    const std::vector<hs::position> want_x = oracle_of(x, [](const particle& p) { return p.x; });
    check("forward_positions of hs::position", d_x.read(), want_x, x_host);
    check("forward_positions' companion", d_ids.read(), oracle_of(ids, [](const particle& p) { return p.id; }),
          ids_host);
    std::vector<hs::position> again = x;  // owned as before, ghosts spoiled: a second exchange rewrites them
    space_array<Storage, hs::position> d_again(again);
    plan_.forward_positions(space_, span(d_again, again));
    settle_();
    check("forward_positions alone", d_again.read(), want_x, x_host);
  }

  /// Positions of F padded to 4 (the fourth entry a tag, moved unshifted), and as x, y, z arrays with
  /// a 4-byte companion: the owner's coordinates stored as F, shifted in double, rounded once.
  template <class F>
  void forward_positions_of(int variant) {
    const std::size_t n = plan_.size(), owned = plan_.owned();
    std::vector<std::array<F, 4>> p4(n, {F(-9), F(-9), F(-9), F(-9)}), want4 = p4;
    std::vector<F> xyz[3], want_xyz[3];
    std::vector<std::int32_t> type(n, -1), want_type(n, -1);
    for (int d = 0; d < 3; ++d) xyz[d].assign(n, F(-9));
    for (std::size_t i = 0; i < n; ++i) {
      const particle& g = i < owned ? w_.mine[i] : w_.want[i - owned];
      const particle& o = w_.by_id.at(g.id);
      const std::array<long, 3> image = particle_oracle::image_of(w_.c, g, o);
      for (int d = 0; d < 3; ++d) {
        const F v = static_cast<F>(static_cast<double>(static_cast<F>(o.x[d])) + image[d] * w_.c.length[d]);
        want4[i][d] = v;
        if (i < owned) p4[i][d] = xyz[d][i] = v;
      }
      want4[i][3] = static_cast<F>(g.id % 1000);
      want_type[i] = static_cast<std::int32_t>(g.id % 5);
      if (i < owned) p4[i][3] = want4[i][3], type[i] = want_type[i];
    }
    for (int d = 0; d < 3; ++d) {
      want_xyz[d].resize(n);
      for (std::size_t i = 0; i < n; ++i) want_xyz[d][i] = want4[i][d];
    }
    std::vector<std::array<F, 4>> p4_host = p4;
    std::vector<F> xyz_host[3] = {xyz[0], xyz[1], xyz[2]};
    std::vector<std::int32_t> type_host = type;
    space_array<Storage, std::array<F, 4>> d_p4(p4);
    space_array<Storage, F> dx(xyz[0]), dy(xyz[1]), dz(xyz[2]);
    space_array<Storage, std::int32_t> d_type(type);
    plan_.forward_positions(space_, span(d_p4, p4));
    settle_();
    host_plan_.forward_positions(std::span<std::array<F, 4>>(p4_host));
    check("forward_positions of std::array<F, 4>", d_p4.read(), want4, p4_host);
    {
      auto pending = plan_.start_forward_positions(space_, span(dx, xyz[0]), span(dy, xyz[1]), span(dz, xyz[2]),
                                                   span(d_type, type));
      finish(pending, variant);
    }
    host_plan_.forward_positions(hs::split_positions<F>(xyz_host[0], xyz_host[1], xyz_host[2]),
                                 std::span<std::int32_t>(type_host));
    check("forward_positions of x", dx.read(), want_xyz[0], xyz_host[0]);
    check("forward_positions of y", dy.read(), want_xyz[1], xyz_host[1]);
    check("forward_positions of z", dz.read(), want_xyz[2], xyz_host[2]);
    check("forward_positions' 4-byte companion", d_type.read(), want_type, type_host);
  }

  /// Reverse: sums of one array, of two together, take_min and take_max: owners hold the oracle's
  /// fold of every copy; the whole arrays (ghosts hold partial results) as on the host.
  void reverse(int variant) {
    const std::size_t n = plan_.size(), owned = plan_.owned();
    std::vector<double> f(n), f_host;
    std::vector<std::int64_t> g(n), lo(n), hi(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t id = w_.id_at(i);
      f[i] = i < owned ? static_cast<double>(id) : particle_oracle::contribution(w_.rank, id);
      g[i] = lo[i] = hi[i] = i < owned ? own(id) : held(w_.rank, id);
    }
    f_host = f;
    std::vector<std::int64_t> g_host = g, lo_host = lo, hi_host = hi;
    space_array<Storage, double> d_f(f);
    space_array<Storage, std::int64_t> d_g(g), d_lo(lo), d_hi(hi);
    {
      auto pending = plan_.start_reverse(space_, span(d_f, f));
      finish(pending, variant);
    }
    host_plan_.reverse(std::span<double>(f_host));
    plan_.reverse(space_, span(d_lo, lo), span(d_hi, hi), hs::take_min{});  // two arrays, one op
    settle_();
    host_plan_.reverse(lo_host, hi_host, hs::take_min{});
    std::vector<std::int64_t> maxima = hi;
    space_array<Storage, std::int64_t> d_max(maxima);
    plan_.reverse(space_, span(d_max, maxima), hs::take_max{});
    plan_.reverse(space_, span(d_g, g), std::plus<>{});
    settle_();
    std::vector<std::int64_t> max_host = hi;
    host_plan_.reverse(std::span<std::int64_t>(max_host), hs::take_max{});
    host_plan_.reverse(std::span<std::int64_t>(g_host), std::plus<>{});
    std::vector<double> want_f = d_f.read();
    std::vector<std::int64_t> want_g = d_g.read(), want_lo = d_lo.read(), want_max = d_max.read();
    for (std::size_t i = 0; i < owned; ++i) fold(w_.mine[i].id, want_f[i], want_g[i], want_lo[i], want_max[i]);
    check("reverse (plus)", d_f.read(), want_f, f_host);
    check("reverse (plus, int64)", d_g.read(), want_g, g_host);
    check("reverse of two arrays (take_min)", d_lo.read(), want_lo, lo_host);
    check("reverse of two arrays (take_min, the second)", d_hi.read(), want_lo, hi_host);
    check("reverse (take_max)", d_max.read(), want_max, max_host);
  }

 private:
  static std::int64_t own(std::int64_t id) { return id % 1000 * 3; }
  static std::int64_t held(int holder, std::int64_t id) { return (holder * 37 + id) % 1001; }

  /// What owned particle `id` holds after each reverse: its own value folded with every copy's.
  void fold(std::int64_t id, double& sum, std::int64_t& isum, std::int64_t& low, std::int64_t& high) const {
    sum = static_cast<double>(id);
    isum = low = high = own(id);
    for (int h = 0; h < w_.size; ++h)
      for (const particle& p : particle_oracle::expected_ghosts(w_.c, h, w_.all))
        if (p.id == id) {
          sum += particle_oracle::contribution(h, id);
          isum += held(h, id);
          low = std::min(low, held(h, id));
          high = std::max(high, held(h, id));
        }
  }

  /// An array of size() entries: the owned particles' `of(p)`, then `fill`.
  template <class T, class Of>
  std::vector<T> owned_then(T fill, Of of) const {
    std::vector<T> out(plan_.size(), fill);
    for (std::size_t i = 0; i < w_.mine.size(); ++i) out[i] = of(w_.mine[i]);
    return out;
  }
  /// `start` with every ghost set to the oracle's `of(ghost)`.
  template <class T, class Of>
  std::vector<T> oracle_of(std::vector<T> start, Of of) const {
    if (start.size() != w_.mine.size() + w_.want.size()) return {};  // the plan's count is wrong: fails below
    for (std::size_t i = 0; i < w_.want.size(); ++i) start[w_.mine.size() + i] = of(w_.want[i]);
    return start;
  }
  template <class T>
  static std::span<T> span(const space_array<Storage, T>& a, const std::vector<T>& host) {
    return {a.get(), host.size()};
  }
  template <class T>
  std::vector<T>& host(std::vector<T>& v) {
    host_plan_.forward(std::span<T>(v));
    return v;
  }
  template <class Handle>
  void finish(Handle& pending, int variant) {
    if (variant % 2 == 0) {
      pending.progress();
      pending.wait();
    } else {
      while (!pending.test()) {
      }
    }
    settle_();
  }
  template <class T>
  void check(const char* call, const std::vector<T>& got, const std::vector<T>& oracle, const std::vector<T>& host) {
    r_.cells += got.size();
    if (!same_bytes(got, oracle)) r_.fail(what_ + ": " + call + " differs from the oracle");
    if (!same_bytes(got, host)) r_.fail(what_ + ": " + call + " differs from host memory");
  }

  hs::particle_plan& plan_;
  hs::particle_plan& host_plan_;
  const world& w_;
  Space space_;
  std::function<void()> settle_;
  result& r_;
  std::string what_;
};

/// The world of a sweep shape with cutoff `factor` box widths, `seed` varying the particles.
inline world make_world(const sweep::shape& s, double factor, unsigned seed, MPI_Comm comm) {
  world w;
  MPI_Comm_rank(comm, &w.rank);
  MPI_Comm_size(comm, &w.size);
  particle_oracle::config& c = w.c;
  c.ndims = static_cast<int>(s.dims.size());
  for (int d = 0; d < c.ndims; ++d) c.g.dims[d] = s.dims[d], c.g.periodic[d] = s.periodic[d];
  c.lo = particle_world::lo();
  c.length = particle_world::length();
  for (int d = 0; d < 3; ++d) {
    c.cutoff[d] = d < c.ndims ? factor * c.length[d] / c.g.dims[d] : 0.0;
    c.reach[d] = d < c.ndims ? static_cast<int>(std::ceil(factor)) : 0;
  }
  const oracle::coords me = c.g.coords_of(w.rank);
  w.mine = particle_world::make(w.rank, c.box_lo(me), c.box_hi(me), c.ndims, seed);
  w.all = particle_world::gather(w.mine, comm);
  w.want = particle_oracle::expected_ghosts(c, w.rank, w.all);
  for (const auto& r : w.all)
    for (const particle& p : r) w.by_id[p.id] = p;
  return w;
}

/// Positions of `w`'s particles, for building a plan.
inline std::vector<hs::position> positions_of(const world& w) {
  std::vector<hs::position> x;
  for (const particle& p : w.mine) x.push_back(p.x);
  return x;
}

/// One configuration of the sweep; what fails (a mismatch, an exception) is noted in `r`.
template <class Storage, class Space>
void run_one(const hs::cartesian_grid& grid, const sweep::shape& s, double factor, const char* strategy, int variant,
             const hs::plan_options& options, Space space, const std::function<void()>& settle, result& r) {
  const hs::domain dom{
      particle_world::lo(),
      {particle_world::lo()[0] + particle_world::length()[0], particle_world::lo()[1] + particle_world::length()[1],
       particle_world::lo()[2] + particle_world::length()[2]}};
  const unsigned seed = static_cast<unsigned>(variant + 1);
  const world w = make_world(s, factor, seed, grid.comm());
  const std::string what = std::string(strategy) + " " + s.name() + " cutoff " + std::to_string(factor);
  try {
    auto make = [&](const std::vector<hs::position>& x, const hs::plan_options& o, std::string_view name) {
      return hs::make_particle_plan(grid, name, dom, hs::position(w.c.cutoff), x, o);
    };
    hs::particle_plan plan = make(positions_of(w), options, strategy);
    // With pack_threads, the host side runs on a plan of its own that packs on the calling thread, with
    // the strategy the plan runs (Auto may choose otherwise without pack threads: the shared-memory path).
    std::optional<hs::particle_plan> serial;
    if (options.pack_threads != 1) serial.emplace(make(positions_of(w), hs::plan_options{}, plan.strategy()));
    hs::particle_plan& host_plan = serial ? *serial : plan;
    runner<Storage, Space> t(plan, host_plan, w, space, settle, r, what);
    t.forward_arrays(variant);
    t.forward_positions(variant);
    t.template forward_positions_of<double>(variant);
    t.template forward_positions_of<float>(variant + 1);
    t.reverse(variant);
    // Re-neighbouring: other particles through rebuild(); the shift follows the new blocks.
    const world next = make_world(s, factor, seed + 7919, grid.comm());
    plan.rebuild(positions_of(next));
    if (serial) serial->rebuild(positions_of(next));
    runner<Storage, Space>(plan, host_plan, next, space, settle, r, what + " rebuilt").forward_positions(variant + 1);
    ++r.configurations;
  } catch (const std::exception& e) {
    r.fail(what + ": " + e.what());
  }
}

/// The whole sweep on `comm` (collective): arrays allocated in Storage, exchanged by calls naming
/// `space`. `variants` are the plan options the configurations take in turn; `settle` runs after
/// each wait.
template <class Storage, class Space = Storage>
result run(
    MPI_Comm comm, const std::vector<hs::plan_options>& variants, Space space = {},
    const std::function<void()>& settle = [] {}) {
  result r;
  int size = 0, variant = 0;
  MPI_Comm_size(comm, &size);
  for (const sweep::shape& s : sweep::shapes(size)) {
    const hs::cartesian_grid grid(comm, {.dims = s.dims, .periodic = s.periodic});
    for (double factor : particle_oracle::cutoff_factors(s))
      for (const char* strategy : {"Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall"}) {
        const hs::plan_options& options = variants[static_cast<std::size_t>(variant) % variants.size()];
        run_one<Storage>(grid, s, factor, strategy, variant++, options, space, settle, r);
      }
  }
  return r;
}

}  // namespace particle_sweeps

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Field-plan sweeps over the arrays of a memory space, without a test framework
// (so that a device test compiled by nvcc runs them as they are): forward
// (blocking, and split phase with progress()/wait() or test()) and reverse
// (std::plus<>, take_min, take_max) of double, float and int64 views exchanged
// together (or one at a time), over every strategy a field plan takes (Auto included), periodic,
// non-periodic and mixed grids in 1, 2 and 3 dimensions, even and uneven splits
// (boxes without cells), ghost widths the same on each side, per side (0 on one
// side), and wider than the boxes next door, and the halo patterns. Every array
// lives in `Space` (allocated there, filled and read back through its copies);
// each result must equal, bit for bit, (a) the oracle from global coordinates
// (tests/grids/box_oracle.hpp) and (b) the same exchange over host arrays.
//
// Space: `allocate<T>(n)`, `deallocate(p)`, `copy_to_device(to, from, bytes)`,
// `copy_to_host(to, from, bytes)`; its views are made with
// `make_field_view(Space{}, ...)` when it is a memory::device_space, else as
// host views (a host space, e.g. for plan_options::pack_threads).

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <haloshift/auto.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../grids/box_oracle.hpp"
#include "../support/sweep.hpp"

namespace space_sweeps {

namespace hs = haloshift;
using coords = std::array<int, 3>;

/// What a sweep found on this rank: what it ran, and the first failures (one a line).
struct result {
  std::size_t configurations = 0, cells = 0, mismatches = 0;
  std::string failures;
  void fail(const std::string& what) {
    ++mismatches;
    if (failures.size() < 3000) failures += what + "\n";
  }
};

/// One array of `Space`, freed with it.
template <class Space, class T>
class space_array {
 public:
  explicit space_array(const std::vector<T>& host) : n_(host.size()), p_(Space::template allocate<T>(n_)) {
    Space::copy_to_device(p_, host.data(), n_ * sizeof(T));
  }
  space_array(const space_array&) = delete;
  space_array& operator=(const space_array&) = delete;
  ~space_array() { Space::deallocate(p_); }
  T* get() const { return p_; }
  std::vector<T> read() const {
    std::vector<T> out(n_);
    Space::copy_to_host(out.data(), p_, n_ * sizeof(T));
    return out;
  }

 private:
  std::size_t n_;
  T* p_;
};

/// The caller's array around this rank's box, worked out by the oracle alone: the plan's ghost
/// widths plus `extra` layers (which the exchange must leave alone), padded rows and planes, x or
/// z fastest.
struct view_layout {
  coords low{}, high{}, padding{}, interior{}, origin{};
  hs::storage_order order = hs::storage_order::x_fastest;
  std::array<std::size_t, 3> stride{};
  std::size_t size = 1;

  view_layout(const box_oracle::boxes& w, int rank, bool x_fastest, int extra) {
    const coords c = w.g.coords_of(rank);
    order = x_fastest ? hs::storage_order::x_fastest : hs::storage_order::z_fastest;
    std::array<std::size_t, 3> e{};
    for (int d = 0; d < 3; ++d) {
      const bool used = d < w.ndims;
      low[d] = w.ghost[d] + (used ? extra : 0);
      high[d] = w.ghost_high[d] + (used ? extra : 0);
      padding[d] = used ? (d + rank) % 3 : 0;
      origin[d] = w.bounds[d][c[d]];
      interior[d] = w.bounds[d][c[d] + 1] - origin[d];
      e[d] = static_cast<std::size_t>(low[d] + interior[d] + high[d] + padding[d]);
      size *= e[d];
    }
    stride =
        x_fastest ? std::array<std::size_t, 3>{1, e[0], e[0] * e[1]} : std::array<std::size_t, 3>{e[2] * e[1], e[2], 1};
  }
  /// Calls f(index, unwrapped global coordinates) for every cell of the view.
  template <class F>
  void for_each(F&& f) const {
    for (int k = -low[2]; k < interior[2] + high[2]; ++k)
      for (int j = -low[1]; j < interior[1] + high[1]; ++j)
        for (int i = -low[0]; i < interior[0] + high[0]; ++i)
          f(static_cast<std::size_t>(i + low[0]) * stride[0] + static_cast<std::size_t>(j + low[1]) * stride[1] +
                static_cast<std::size_t>(k + low[2]) * stride[2],
            coords{origin[0] + i, origin[1] + j, origin[2] + k});
  }
  template <class T>
  auto view(T* p, const hs::offset& interior_cells) const {
    return hs::make_field_view(p, interior_cells, to_offset(low), to_offset(high), order, to_offset(padding));
  }
  template <class Space, class T>
  auto view_in(T* p, const hs::offset& interior_cells) const {
    if constexpr (hs::memory::device_space<Space>)
      return hs::make_field_view(Space{}, p, interior_cells, to_offset(low), to_offset(high), order,
                                 to_offset(padding));
    else
      return view(p, interior_cells);
  }
  static hs::offset to_offset(const coords& c) { return {c[0], c[1], c[2]}; }
};

/// Values from global coordinates (forward) and a holder's contributions (reverse): small
/// integers plus a quarter where exact, so that every sum is exact in float, double and int64
/// whatever the order of its terms.
inline double value_at(const coords& p) { return p[0] + 64.0 * p[1] + 4096.0 * p[2] + 0.25; }
inline std::int64_t own_value(const coords& p) { return (p[0] * 7 + p[1] * 131 + p[2] * 977) % 3001; }
inline std::int64_t contribution(int holder, const coords& p) {
  return ((holder + 1) * 7919 + (p[0] + 50) * 31 + (p[1] + 50) * 997 + (p[2] + 50) * 3) % 4001 - 2000;
}
constexpr double sentinel = -7.5;

/// Whether cell u (unwrapped) of rank r's view lies inside the plan's padded box.
inline bool in_plan_box(const box_oracle::boxes& w, int r, const coords& u) {
  const coords lo = w.lo(r), e = w.extent(r);
  for (int d = 0; d < 3; ++d)
    if (u[d] < lo[d] || u[d] >= lo[d] + e[d]) return false;
  return true;
}

/// The three element types of every exchange, as one tuple of per-type things.
template <template <class> class F>
struct per_type {
  F<double> f64;
  F<float> f32;
  F<std::int64_t> i64;
};
template <class T>
using host_vector = std::vector<T>;

/// Fills one array per type: every view cell from `cell(index, u)` (a double), the padding with
/// the sentinel.
template <class Cell>
per_type<host_vector> fill(const view_layout& l, Cell&& cell) {
  per_type<host_vector> a{std::vector<double>(l.size, sentinel), std::vector<float>(l.size, sentinel),
                          std::vector<std::int64_t>(l.size, -8)};
  l.for_each([&](std::size_t i, const coords& u) {
    const double v = cell(i, u);
    a.f64[i] = v;
    a.f32[i] = static_cast<float>(v);
    a.i64[i] = static_cast<std::int64_t>(v);
  });
  return a;
}

/// Compares an array read back from the space with `want`, bit for bit; `what` names it.
template <class T>
void compare(const std::vector<T>& got, const std::vector<T>& want, const std::string& what, result& r) {
  r.cells += got.size();
  if (got.size() == want.size() && std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0) return;
  std::size_t i = 0;
  while (i < got.size() && i < want.size() && std::memcmp(&got[i], &want[i], sizeof(T)) == 0) ++i;
  r.fail(what + ": element " + std::to_string(i) + " of " + std::to_string(got.size()) +
         (i < got.size() && i < want.size()
              ? ": got " + std::to_string(got[i]) + ", expected " + std::to_string(want[i])
              : std::string(": sizes differ")));
}

/// The interior of rank `rank` after a reverse, from every holder's padded box: the owner's value
/// folded with every ghost copy of the cell in the pattern (sum, min, max).
struct folded {
  std::vector<std::int64_t> sum, low, high;
};
inline folded fold(const box_oracle::boxes& w, int rank, int size, const view_layout& l) {
  const std::size_t n = static_cast<std::size_t>(l.interior[0]) * l.interior[1] * l.interior[2];
  folded f{std::vector<std::int64_t>(n), std::vector<std::int64_t>(n), std::vector<std::int64_t>(n)};
  auto at = [&](const coords& q) {
    return (static_cast<std::size_t>(q[2] - l.origin[2]) * l.interior[1] + (q[1] - l.origin[1])) * l.interior[0] +
           (q[0] - l.origin[0]);
  };
  w.for_each_cell(rank, [&](std::size_t, const coords& p) {
    if (w.interior(rank, p)) f.sum[at(p)] = f.low[at(p)] = f.high[at(p)] = own_value(p);
  });
  for (int h = 0; h < size; ++h)
    w.for_each_cell(h, [&](std::size_t, const coords& p) {
      coords q = p;
      if (w.interior(h, p) || !w.in_pattern(h, p) || !w.wrap(q) || !w.interior(rank, q)) return;
      const std::int64_t v = contribution(h, p);
      f.sum[at(q)] += v;
      f.low[at(q)] = std::min(f.low[at(q)], v);
      f.high[at(q)] = std::max(f.high[at(q)], v);
    });
  return f;
}

/// One configuration: the oracle's split, widths and pattern, the cuts the library is given, the
/// strategy, and a number that varies the rest (storage order, blocking or split phase, options).
struct config {
  box_oracle::boxes w;
  hs::cell_cuts cuts{};
  std::string strategy;
  int variant = 0;
};

/// A configuration in words, for failures.
inline std::string describe(const config& k) {
  std::string s = k.strategy + " grid";
  for (int d = 0; d < k.w.ndims; ++d)
    s += (d ? "x" : " ") + std::to_string(k.w.g.dims[d]) + (k.w.g.periodic[d] ? "p" : "");
  s += " cells";
  for (int d = 0; d < k.w.ndims; ++d) s += (d ? "," : " ") + std::to_string(k.w.cells(d));
  s += k.cuts[0].empty() ? " even" : " cut";
  s += " ghost " + std::to_string(k.w.ghost[0]) + "," + std::to_string(k.w.ghost[1]) + "," +
       std::to_string(k.w.ghost[2]) + " ghost_high " + std::to_string(k.w.ghost_high[0]) + "," +
       std::to_string(k.w.ghost_high[1]) + "," + std::to_string(k.w.ghost_high[2]);
  return s + " pattern dims " + std::to_string(k.w.pattern_dims) + " variant " + std::to_string(k.variant);
}

/// Runs one configuration over arrays of Space and over host arrays.
template <class Space>
class runner {
 public:
  runner(const hs::cartesian_grid& grid, const config& k, const hs::plan_options& options, result& r)
      : grid_(grid),
        k_(k),
        w_(k.w),
        options_(options),
        r_(r),
        rank_(grid.rank()),
        layout_(w_, rank_, k.variant % 2 == 0, 1) {
    options_.pattern = w_.pattern();
    hs::plan_options plain;
    plain.pattern = options_.pattern;
    plan_.emplace(make_plan(options_));
    if (options_.pack_threads != 1) reference_.emplace(make_plan(plain));
    interior_ = plan_->shape().interior;
  }

  void forward() {
    auto start =
        fill(layout_, [&](std::size_t, const coords& u) { return w_.interior(rank_, u) ? value_at(u) : sentinel; });
    auto want = fill(layout_, [&](std::size_t, const coords& u) {
      coords q = u;
      if (!in_plan_box(w_, rank_, u) || !w_.in_pattern(rank_, u) || !w_.wrap(q)) return sentinel;
      return value_at(q);
    });
    auto host = start;
    reference().forward(view(host.f64), view(host.f32), view(host.i64));
    const auto got = in_space(start, [&](const auto&... views) {
      const auto one = [&](const auto&... v) {
        if (k_.variant % 3 == 0) {
          plan_->forward(v...);
        } else {
          auto pending = plan_->start_forward(v...);
          finish(pending, k_.variant % 3 == 1);
        }
      };
      together_or_alone(one, views...);
    });
    check("forward", got, host, want);
  }

  template <class Op>
  void reverse(Op op, const char* name, const folded& expect, std::vector<std::int64_t> folded::*part) {
    auto start = fill(layout_, [&](std::size_t, const coords& u) {
      return static_cast<double>(w_.interior(rank_, u) ? own_value(u) : contribution(rank_, u));
    });
    auto host = start;
    reference().reverse(view(host.f64), view(host.f32), view(host.i64), op);
    const auto got = in_space(start, [&](const auto&... views) {
      const auto one = [&](const auto&... v) {
        if (k_.variant / 2 % 3 == 0) {
          plan_->reverse(v..., op);
        } else {
          auto pending = plan_->start_reverse(v..., op);
          finish(pending, k_.variant / 2 % 3 == 1);
        }
      };
      together_or_alone(one, views...);
    });
    // The oracle speaks of the interior; the host exchange of every element.
    auto want = host;
    std::size_t n = 0;
    layout_.for_each([&](std::size_t i, const coords& u) {
      if (!w_.interior(rank_, u)) return;
      const std::int64_t v = (expect.*part)[n++];
      want.f64[i] = static_cast<double>(v);
      want.f32[i] = static_cast<float>(v);
      want.i64[i] = v;
    });
    check(std::string("reverse ") + name, got, host, want);
  }

  folded expected_reverse(int size) const { return fold(w_, rank_, size, layout_); }

 private:
  hs::field_plan make_plan(const hs::plan_options& o) const {
    hs::offset global{1, 1, 1}, low{}, high{};
    for (int d = 0; d < 3; ++d) global[d] = w_.cells(d), low[d] = w_.ghost[d], high[d] = w_.ghost_high[d];
    const hs::field_shape shape(grid_.shape(), grid_.coords(), global, k_.cuts, low, high);
    return hs::make_field_plan(grid_, k_.strategy, shape, o, sizeof(double));
  }
  hs::field_plan& reference() { return reference_ ? *reference_ : *plan_; }
  template <class T>
  auto view(std::vector<T>& a) const {
    return layout_.view(a.data(), interior_);
  }
  /// The three views in one exchange, or (one configuration in four) each in its own: the calls
  /// of one view and of several are separate overloads.
  template <class Exchange, class... Views>
  void together_or_alone(Exchange& exchange, const Views&... views) const {
    if (k_.variant % 4 != 3)
      exchange(views...);
    else
      (exchange(views), ...);
  }
  template <class Pending>
  static void finish(Pending& pending, bool progress_then_wait) {
    if (progress_then_wait) {
      pending.progress();
      pending.wait();
    } else {
      while (!pending.test()) {
      }
    }
  }
  /// Copies `start` into arrays of Space, runs `exchange` over their views, and reads them back.
  template <class Exchange>
  per_type<host_vector> in_space(const per_type<host_vector>& start, Exchange&& exchange) const {
    const space_array<Space, double> a(start.f64);
    const space_array<Space, float> b(start.f32);
    const space_array<Space, std::int64_t> c(start.i64);
    exchange(layout_.view_in<Space>(a.get(), interior_), layout_.view_in<Space>(b.get(), interior_),
             layout_.view_in<Space>(c.get(), interior_));
    return {a.read(), b.read(), c.read()};
  }
  void check(const std::string& what, const per_type<host_vector>& got, const per_type<host_vector>& host,
             const per_type<host_vector>& want) {
    const std::string prefix = describe(k_) + ": ";
    compare(got.f64, host.f64, prefix + what + " double vs host memory", r_);
    compare(got.f32, host.f32, prefix + what + " float vs host memory", r_);
    compare(got.i64, host.i64, prefix + what + " int64 vs host memory", r_);
    compare(got.f64, want.f64, prefix + what + " double vs oracle", r_);
    compare(got.f32, want.f32, prefix + what + " float vs oracle", r_);
    compare(got.i64, want.i64, prefix + what + " int64 vs oracle", r_);
  }

  const hs::cartesian_grid& grid_;
  const config& k_;
  const box_oracle::boxes& w_;
  hs::plan_options options_;
  result& r_;
  int rank_;
  view_layout layout_;
  std::optional<hs::field_plan> plan_, reference_;
  hs::offset interior_{};
};

/// At most six of sweep::shapes(size) (three where HALOSHIFT_TEST_SWEEP=reduced, for MPIs that
/// busy-poll): 1D, 2D and 3D, periodic, not and mixed among them.
inline std::vector<sweep::shape> some_shapes(int size) {
  const std::vector<sweep::shape> all = sweep::shapes(size);
  const std::size_t most = sweep::reduced() ? 3 : 6, step = (all.size() + most - 1) / most;
  std::vector<sweep::shape> out;
  for (std::size_t i = 0; i < all.size(); i += step) out.push_back(all[i]);
  return out;
}

/// The split of `s`: even (some boxes one cell wider), or cut into boxes of 2, 0, 3 and 1 cells
/// in turn (boxes without cells included).
inline config split_of(const sweep::shape& s, bool cut) {
  config k;
  k.w.ndims = static_cast<int>(s.dims.size());
  std::array<int, 3> n{1, 1, 1};
  for (int d = 0; d < k.w.ndims; ++d) {
    k.w.g.dims[d] = s.dims[d];
    k.w.g.periodic[d] = s.periodic[d];
    n[d] = (k.w.ndims == 3 ? 2 : 3) * s.dims[d] + d + 1;
  }
  k.w.split_evenly(n);
  for (int d = 0; cut && d < k.w.ndims; ++d) {
    std::vector<int>& b = k.w.bounds[d];
    b.assign(1, 0);
    for (int c = 0; c < s.dims[d]; ++c) b.push_back(b.back() + std::array<int, 4>{2, 0, 3, 1}[(c + d) % 4]);
    if (b.back() == 0) b.back() = 1;
    k.cuts[d] = b;
  }
  return k;
}

/// Ghost widths (below, above) and halo patterns for a split: 1 all round; per side with 0 on one
/// side; wider than the widest box (so than the boxes next door), faces and edges; per side,
/// faces only.
inline std::vector<std::array<coords, 3>> widths(const box_oracle::boxes& w) {
  int beyond = 1;
  for (int d = 0; d < w.ndims; ++d)
    for (std::size_t c = 0; c + 1 < w.bounds[d].size(); ++c)
      beyond = std::max(beyond, w.bounds[d][c + 1] - w.bounds[d][c] + 1);
  std::vector<std::array<coords, 3>> out{{coords{1, 1, 1}, coords{1, 1, 1}, coords{3, 0, 0}},
                                         {coords{2, 0, 1}, coords{1, 2, 0}, coords{3, 0, 0}},
                                         {coords{beyond, beyond, beyond}, coords{beyond, 1, beyond}, coords{2, 0, 0}},
                                         {coords{0, 2, 1}, coords{1, 0, 2}, coords{1, 0, 0}}};
  for (auto& g : out)
    for (int d = w.ndims; d < 3; ++d) g[0][d] = g[1][d] = 0;
  return out;
}

/// Runs one configuration; what fails (a mismatch, an exception) is noted in `r`.
template <class Space>
void run_one(const hs::cartesian_grid& grid, const config& k, const hs::plan_options& options, int size, result& r) {
  try {
    runner<Space> t(grid, k, options, r);
    t.forward();
    const folded f = t.expected_reverse(size);
    t.reverse(std::plus<>{}, "plus", f, &folded::sum);
    t.reverse(hs::take_min{}, "take_min", f, &folded::low);
    t.reverse(hs::take_max{}, "take_max", f, &folded::high);
    ++r.configurations;
  } catch (const std::exception& e) {
    r.fail(describe(k) + ": " + e.what());
  }
}

/// The whole sweep on `comm` (collective: every rank runs it alike). `variants` are the plan
/// options the configurations take in turn (the sweep sets their pattern).
template <class Space>
result run(MPI_Comm comm, const std::vector<hs::plan_options>& variants) {
  result r;
  int size = 0, variant = 0;
  MPI_Comm_size(comm, &size);
  for (const sweep::shape& s : some_shapes(size)) {
    const hs::cartesian_grid grid(comm, {.dims = s.dims, .periodic = s.periodic});
    for (const bool cut : {false, true}) {
      config k = split_of(s, cut);
      const auto sets = widths(k.w);
      for (std::size_t g = 0; g < sets.size(); ++g)
        for (const char* strategy : {"SingleHop", "Shift", "TtlMultiHop", "NeighborAlltoall", "Auto"}) {
          if (std::string(strategy) == "Auto" && g != 0) continue;  // Auto picks among the others
          k.w.ghost = sets[g][0];
          k.w.ghost_high = sets[g][1];
          k.w.pattern_dims = sets[g][2][0];
          k.strategy = strategy;
          k.variant = variant;
          run_one<Space>(grid, k, variants[static_cast<std::size_t>(variant++ / 3) % variants.size()], size, r);
        }
    }
  }
  return r;
}

}  // namespace space_sweeps

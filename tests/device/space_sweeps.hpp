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
// `make_field_view(Space{}, ...)` when it is a detail::device_space, else as
// host views (a host space, e.g. for plan_options::pack_threads).

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <haloshift/auto.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../support/sweep.hpp"
#include "space_oracle.hpp"

namespace space_sweeps {

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
    plan_.emplace(make_plan(options_, k_.strategy));
    // The one-thread reference runs the strategy the plan runs: Auto may choose otherwise without pack
    // threads (the shared-memory path is open to it then), and reverse leaves ghosts as each strategy's
    // rounds do (Shift sums through them), which the comparison of every element would take for a fault.
    if (options_.pack_threads != 1) reference_.emplace(make_plan(plain, std::string(plan_->strategy())));
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
  hs::field_plan make_plan(const hs::plan_options& o, const std::string& strategy) const {
    hs::offset global{1, 1, 1}, low{}, high{};
    for (int d = 0; d < 3; ++d) global[d] = w_.cells(d), low[d] = w_.ghost[d], high[d] = w_.ghost_high[d];
    const hs::field_shape shape(grid_.shape(), grid_.coords(), global, k_.cuts, low, high);
    return hs::make_field_plan(grid_, strategy, shape, o, sizeof(double));
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

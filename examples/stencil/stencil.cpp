// SPDX-License-Identifier: BSD-3-Clause
// haloshift-stencil: a 3D heat equation (explicit Jacobi-type sweeps) with a
// 7-point or 27-point stencil on a grid_field with ghost layers of width g.
// With g > 1 it exchanges only every g sweeps and recomputes the shrinking
// ghost region in between (communication avoiding): each sweep is valid one
// layer less far out. Prints the residual (max |u_new - u|, exact under any
// split) and the time per sweep split into compute, exchange and reduction.
// --overlap computes the cells that need no ghosts while the ghosts travel
// (interior_regions: start_forward, progress() between slabs of z planes, wait, then the rim),
// runs the same sweeps blocking, and reports the hidden share of the exchange
// and whether both runs agree bit for bit. --cuts and --uneven split the cells
// unevenly (user-given cell cuts, docs/grids.md "Uneven splits"), boxes
// without cells included. --pattern picks which ghosts the plan fills (default:
// the narrowest the sweeps read, see needed_pattern).
//
//   mpiexec -n 4 haloshift-stencil [--size N | NX,NY,NZ] [--iters I] [--ghost G] [--stencil 7|27]
//                     [--strategy Shift|SingleHop|TtlMultiHop|NeighborAlltoall|Auto (any case)] [--periodic | --nonperiodic]
//                     [--pattern faces|faces_and_edges|full]
//                     [--cuts x:0,3,10,32 ... | --uneven] [--print EVERY] [--overlap] [--verify]
//                     [--sweep] [--help] [--version]
//
// --verify gathers the field on rank 0 and compares it and the residual
// history, bit for bit, with a serial run written independently of the
// library; --sweep verifies every strategy, boundary, stencil and ghost width
// at a small uneven size (what the tests run; with --uneven, on the uneven
// split). Exit code 1 on any difference.

#include <mpi.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <haloshift/auto.hpp>
#include <haloshift/haloshift.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "heat.hpp"
#include "tool.hpp"

namespace hs = haloshift;

namespace {

struct options {
  std::array<int, 3> n{32, 32, 32};
  int iters = 20;
  int ghost = 1;
  int points = 7;
  std::string strategy = "shift";
  std::string pattern;  ///< --pattern; empty: needed_pattern(points, ghost)
  bool periodic = true;
  int print = 1;
  bool verify = false;
  bool sweep = false;
  bool overlap = false;
  std::array<std::vector<int>, 3> cuts{};  ///< --cuts, per dimension (empty: the even split)
  bool uneven = false;
};

struct outcome {
  std::vector<double> residuals;
  std::uint64_t checksum = 0;
  double compute = 0, exchange = 0, reduce = 0;  // seconds per sweep, slowest rank
  std::string strategy;
  hs::offset dims{1, 1, 1};
  std::vector<double> global;  // rank 0, with --verify: the final field, x fastest
};

/// --pattern's values, narrowest first.
struct named_pattern {
  const char* name;
  hs::halo_pattern value;
};
constexpr std::array<named_pattern, 3> patterns{{{"faces", hs::halo_pattern::faces},
                                                 {"faces_and_edges", hs::halo_pattern::faces_and_edges},
                                                 {"full", hs::halo_pattern::full}}};

/// The narrowest pattern holding every ghost cell the sweeps between two exchanges read. The
/// 27-point stencil reads corners. The 7-point one reads the face neighbours, and each of the G
/// sweeps between exchanges (ghost width G) reaches one step further, so the interior depends on
/// cells up to G steps away: outside the interior along at most G dimensions (faces for G = 1,
/// edges too for G = 2, corners from G = 3). Ghosts outside the pattern keep stale values that
/// only the cells recomputed outside the interior read.
const named_pattern& needed_pattern(int points, int ghost) {
  return patterns[points == 27 ? 2 : static_cast<std::size_t>(std::min(ghost, 3) - 1)];
}

/// The pattern a run uses: --pattern (one of `patterns`, checked by the command line), or what its
/// stencil and ghost width need.
const named_pattern& pattern_for(const options& o) {
  for (const named_pattern& p : patterns)
    if (o.pattern == p.name) return p;
  return needed_pattern(o.points, o.ghost);
}

hs::field_plan make_plan(const std::string& name, const hs::grid_field<double>& u, hs::halo_pattern pattern) {
  hs::plan_options po;
  po.pattern = pattern;
  // By name (the registry's, any case): one plan type, compiled once rather than once per strategy.
  return hs::make_field_plan(u.grid(), name, u.shape(), po, sizeof(double));
}

/// --uneven: along each dimension of P boxes, box c gets a share 1, 3, 0, 2, 1, 3, 0, 2, ... of the
/// cells (box 2, 6, ... none at all), rounded down: deterministic, the same on every rank.
std::vector<int> uneven_cuts(int cells, int boxes) {
  auto share = [](int c) { return std::array<int, 4>{1, 3, 0, 2}[static_cast<std::size_t>(c % 4)]; };
  long total = 0;
  for (int c = 0; c < boxes; ++c) total += share(c);
  std::vector<int> cuts{0};
  long sum = 0;
  for (int c = 0; c < boxes; ++c) cuts.push_back(static_cast<int>((sum += share(c)) * cells / total));
  return cuts;
}

outcome run(const options& o, bool gather) {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {o.periodic, o.periodic, o.periodic}});
  const hs::offset global{o.n[0], o.n[1], o.n[2]};
  hs::cell_cuts cuts = o.cuts;  // empty along a dimension: the even split
  if (o.uneven)
    for (int d = 0; d < 3; ++d) cuts[d] = uneven_cuts(o.n[d], grid.dim(d));
  const hs::field_shape shape(grid.shape(), grid.coords(), global, cuts, hs::offset{o.ghost, o.ghost, o.ghost});
  hs::grid_field<double> u(grid, shape), v(grid, shape);  // 0 outside: Dirichlet
  const hs::field_shape& s = u.shape();
  for (int k = 0; k < s.interior[2]; ++k)
    for (int j = 0; j < s.interior[1]; ++j)
      for (int i = 0; i < s.interior[0]; ++i) u(i, j, k) = heat::initial(s.lo[0] + i, s.lo[1] + j, s.lo[2] + k);
  hs::field_plan plan = make_plan(o.strategy, u, pattern_for(o).value);
  outcome out;
  out.strategy = std::string(plan.strategy());
  out.dims = {grid.dim(0), grid.dim(1), grid.dim(2)};

  const std::ptrdiff_t sy = static_cast<std::ptrdiff_t>(s.stride[1]), sz = static_cast<std::ptrdiff_t>(s.stride[2]);
  double residual = 0;
  // One sweep over the cells [from, to) (per dimension), the residual taken over interior cells.
  auto sweep_box = [&](const int* from, const int* to) {
    for (int k = from[2]; k < to[2]; ++k)
      for (int j = from[1]; j < to[1]; ++j)
        for (int i = from[0]; i < to[0]; ++i) {
          const double* c = &u(i, j, k);
          const double next = heat::step(o.points, [&](int dx, int dy, int dz) { return c[dx + dy * sy + dz * sz]; });
          v(i, j, k) = next;
          if (i >= 0 && j >= 0 && k >= 0 && i < s.interior[0] && j < s.interior[1] && k < s.interior[2])
            residual = std::max(residual, std::abs(next - *c));
        }
  };
  // The cells [from, to) outside the interior (the ghost layers a sweep recomputes when g > 1), as
  // slabs below and above the interior along z, then y, then x; all of them when the box owns none.
  auto sweep_beyond_interior = [&](const int* from, const int* to) {
    if (s.interior[0] == 0 || s.interior[1] == 0 || s.interior[2] == 0) return sweep_box(from, to);
    for (int d = 2; d >= 0; --d) {
      int lo[3], hi[3];
      for (int e = 0; e < 3; ++e) {  // dimensions above d span the interior, below d the whole region
        lo[e] = e > d ? 0 : from[e];
        hi[e] = e > d ? s.interior[e] : to[e];
      }
      hi[d] = 0;
      sweep_box(lo, hi);
      lo[d] = s.interior[d];
      hi[d] = to[d];
      sweep_box(lo, hi);
    }
  };
  // Overlap: the interior cells whose 1-cell stencil reads no ghost, and the rim around them.
  const auto parts = plan.interior_regions({1, 1, 1});
  for (int it = 0; it < o.iters; ++it) {
    // Cells valid after this sweep: the interior grown by the ghost layers not yet consumed,
    // never beyond a non-periodic edge (the fixed boundary).
    const int grow = o.ghost - 1 - it % o.ghost;
    int from[3], to[3];
    for (int d = 0; d < 3; ++d) {
      from[d] = -grow;
      to[d] = s.interior[d] + grow;
      if (!o.periodic) {
        from[d] = std::max(from[d], -s.lo[d]);
        to[d] = std::min(to[d], s.global[d] - s.lo[d]);
      }
    }
    residual = 0;
    double t0 = MPI_Wtime(), t1 = t0;
    if (it % o.ghost == 0 && o.overlap) {
      // The cells whose stencil reads no ghost (parts.inner) are computed while the ghosts travel, a
      // slab of z planes at a time with progress() in between (multi-round strategies post their
      // next round there); then the rim around them, and the ghost layers this sweep recomputes
      // (g > 1), which read the ghosts.
      auto pending = plan.start_forward(u);
      const auto& inner = parts.inner;
      double exposed = MPI_Wtime() - t0;
      // About 8 progress() calls per sweep: enough to move every round of a multi-round strategy and
      // the large messages' rendezvous along, few enough that their own cost stays small.
      for (int k = inner.lo[2], chunk = std::max(1, (inner.hi[2] - inner.lo[2]) / 8); k < inner.hi[2]; k += chunk) {
        const int plane_from[3] = {inner.lo[0], inner.lo[1], k};
        const int plane_to[3] = {inner.hi[0], inner.hi[1], std::min(k + chunk, inner.hi[2])};
        sweep_box(plane_from, plane_to);
        const double c1 = MPI_Wtime();
        pending.progress();
        exposed += MPI_Wtime() - c1;
      }
      const double w0 = MPI_Wtime();
      pending.wait();
      exposed += MPI_Wtime() - w0;
      t1 = t0 + exposed;
      for (const auto& box : parts.rim) sweep_box(box.lo.data(), box.hi.data());
      sweep_beyond_interior(from, to);
    } else {
      if (it % o.ghost == 0) plan.forward(u);
      t1 = MPI_Wtime();
      sweep_box(from, to);
    }
    std::swap(u, v);
    double t2 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, &residual, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double t3 = MPI_Wtime();
    out.residuals.push_back(residual);
    out.exchange += t1 - t0;  // overlapped: only the exposed part (start, progress, wait)
    out.compute += t2 - t1;
    out.reduce += t3 - t2;
  }
  double times[3] = {out.compute, out.exchange, out.reduce};
  MPI_Allreduce(MPI_IN_PLACE, times, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  out.compute = times[0] / o.iters;
  out.exchange = times[1] / o.iters;
  out.reduce = times[2] / o.iters;

  std::vector<double> mine;
  for (int k = 0; k < s.interior[2]; ++k)
    for (int j = 0; j < s.interior[1]; ++j)
      for (int i = 0; i < s.interior[0]; ++i) {
        out.checksum += heat::checksum(s.lo[0] + i, s.lo[1] + j, s.lo[2] + k, u(i, j, k));
        mine.push_back(u(i, j, k));
      }
  MPI_Allreduce(MPI_IN_PLACE, &out.checksum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (!gather) return out;

  // Rank 0 collects every interior with its corner and extents.
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int box[6] = {s.lo[0], s.lo[1], s.lo[2], s.interior[0], s.interior[1], s.interior[2]};
  std::vector<int> boxes(6 * static_cast<std::size_t>(size)), counts(size), displs(size);
  MPI_Gather(box, 6, MPI_INT, boxes.data(), 6, MPI_INT, 0, MPI_COMM_WORLD);
  for (int r = 0, at = 0; r < size; ++r) {
    counts[r] = boxes[6 * r + 3] * boxes[6 * r + 4] * boxes[6 * r + 5];
    displs[r] = at;
    at += counts[r];
  }
  std::vector<double> all(static_cast<std::size_t>(o.n[0]) * o.n[1] * o.n[2]);
  MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), counts.data(), displs.data(),
              MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank != 0) return out;
  out.global.resize(all.size());
  for (int r = 0; r < size; ++r) {
    const int* b = &boxes[6 * r];
    std::size_t next = static_cast<std::size_t>(displs[r]);
    for (int k = 0; k < b[5]; ++k)
      for (int j = 0; j < b[4]; ++j)
        for (int i = 0; i < b[3]; ++i)
          out.global[(static_cast<std::size_t>(b[2] + k) * o.n[1] + (b[1] + j)) * o.n[0] + (b[0] + i)] = all[next++];
  }
  return out;
}

/// The serial reference: the whole grid in one array, neighbours by
/// wrapping (periodic) or reading 0 outside (Dirichlet). No library code.
std::vector<double> serial(const options& o, std::vector<double>& residuals) {
  const int nx = o.n[0], ny = o.n[1], nz = o.n[2];
  std::vector<double> a(static_cast<std::size_t>(nx) * ny * nz), b(a.size());
  auto at = [&](const std::vector<double>& f, int x, int y, int z) {
    if (o.periodic) {
      x = (x + nx) % nx;
      y = (y + ny) % ny;
      z = (z + nz) % nz;
    } else if (x < 0 || y < 0 || z < 0 || x >= nx || y >= ny || z >= nz) {
      return 0.0;
    }
    return f[(static_cast<std::size_t>(z) * ny + y) * nx + x];
  };
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) a[(static_cast<std::size_t>(z) * ny + y) * nx + x] = heat::initial(x, y, z);
  for (int it = 0; it < o.iters; ++it) {
    double residual = 0;
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x) {
          const double next =
              heat::step(o.points, [&](int dx, int dy, int dz) { return at(a, x + dx, y + dy, z + dz); });
          const std::size_t i = (static_cast<std::size_t>(z) * ny + y) * nx + x;
          residual = std::max(residual, std::abs(next - a[i]));
          b[i] = next;
        }
    std::swap(a, b);
    residuals.push_back(residual);
  }
  return a;
}

/// Runs one configuration; with `verify`, compares against the serial run. False on a difference.
bool run_and_report(const options& o, bool verbose) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const outcome r = run(o, o.verify);
  // --overlap: the same run blocking, side by side, for the hidden share and a bit-for-bit comparison.
  outcome blocking;
  if (o.overlap && verbose) {
    options b = o;
    b.overlap = false;
    blocking = run(b, false);
  }
  const std::string what = std::to_string(o.n[0]) + "x" + std::to_string(o.n[1]) + "x" + std::to_string(o.n[2]) +
                           " cells on " + std::to_string(r.dims[0]) + "x" + std::to_string(r.dims[1]) + "x" +
                           std::to_string(r.dims[2]) + " ranks, " + (o.periodic ? "periodic" : "non-periodic") +
                           ", " + std::to_string(o.points) + "-point, ghost " + std::to_string(o.ghost) + ", " +
                           pattern_for(o).name + ", " + r.strategy + ", " + std::to_string(o.iters) + " sweeps" +
                           (o.overlap ? ", overlapped" : "") + (o.uneven ? ", uneven split" : "") +
                           (o.cuts[0].empty() && o.cuts[1].empty() && o.cuts[2].empty() ? "" : ", cuts given");
  bool ok = true;
  std::string verdict;
  const bool same_as_blocking = !(o.overlap && verbose) || (blocking.checksum == r.checksum &&
                                                              std::memcmp(blocking.residuals.data(), r.residuals.data(),
                                                                          r.residuals.size() * sizeof(double)) == 0);
  ok = same_as_blocking;
  if (rank == 0 && o.verify) {
    std::vector<double> residuals;
    const std::vector<double> want = serial(o, residuals);
    const bool field = std::memcmp(want.data(), r.global.data(), want.size() * sizeof(double)) == 0;
    const bool history = std::memcmp(residuals.data(), r.residuals.data(), residuals.size() * sizeof(double)) == 0;
    ok = ok && field && history;
    verdict = ok ? "equal to the serial run bit for bit" : std::string("DIFFERS from the serial run:") +
                                                              (field ? "" : " field") + (history ? "" : " residuals");
  }
  int good = ok ? 1 : 0;
  MPI_Bcast(&good, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank != 0) return good == 1;
  if (verbose) {
    std::printf("stencil: %s\n", what.c_str());
    for (int it = 0; it < o.iters; ++it)
      if ((it + 1) % o.print == 0 || it + 1 == o.iters) std::printf("  sweep %4d  residual %.17g\n", it + 1, r.residuals[it]);
    std::printf("checksum %016llx\n", static_cast<unsigned long long>(r.checksum));
    const double total = r.compute + r.exchange + r.reduce;
    std::printf("time per sweep: %.2f us = compute %.2f us + exchange %.2f us (%.0f %%) + residual reduction %.2f us\n",
                total * 1e6, r.compute * 1e6, r.exchange * 1e6, total > 0 ? 100 * r.exchange / total : 0.0,
                r.reduce * 1e6);
    if (o.overlap) {
      const double blocking_total = blocking.compute + blocking.exchange + blocking.reduce;
      std::printf("blocking run:  %.2f us = compute %.2f us + exchange %.2f us + residual reduction %.2f us\n",
                  blocking_total * 1e6, blocking.compute * 1e6, blocking.exchange * 1e6, blocking.reduce * 1e6);
      const double hidden = blocking.exchange > 0 ? 1 - r.exchange / blocking.exchange : 0;
      std::printf("overlap hides %.0f %% of the exchange (%.2f us blocking, %.2f us exposed); %.2fx per sweep\n",
                  100 * std::max(0.0, hidden), blocking.exchange * 1e6, r.exchange * 1e6,
                  total > 0 ? blocking_total / total : 0.0);
      std::printf("overlapped run %s the blocking run bit for bit\n", same_as_blocking ? "equals" : "DIFFERS from");
    }
    if (o.verify) std::printf("verify: %s\n", verdict.c_str());
  } else {
    std::printf("%-4s %s: %s\n", ok ? "ok" : "FAIL", what.c_str(), verdict.c_str());
  }
  std::fflush(stdout);
  return ok;
}

/// Appends the comma-separated integers of `text` to `out`; false when a part is not an integer.
bool integers(const std::string& text, std::vector<int>& out) {
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) return false;
    out.push_back(v);
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

/// "N" (a cube) or "NX,NY,NZ", each in 1..2^20.
std::array<int, 3> parse_size(const std::string& text) {
  std::vector<int> parts;
  bool ok = integers(text, parts);
  for (int v : parts) ok = ok && v >= 1 && v <= 1 << 20;
  if (!ok || (parts.size() != 1 && parts.size() != 3))
    throw std::invalid_argument("expected N or NX,NY,NZ (each 1 to 1048576), got '" + text + "'");
  if (parts.size() == 1) return {parts[0], parts[0], parts[0]};
  return {parts[0], parts[1], parts[2]};
}

/// "x:0,3,10,32": the dimension (x, y or z) and its cell cuts (P + 1 nondecreasing values from 0 to the
/// cells along it; the library checks them against the grid).
std::pair<int, std::vector<int>> parse_cuts(const std::string& text) {
  const std::size_t colon = text.find(':');
  const std::string axis = text.substr(0, colon);
  if (colon == std::string::npos || (axis != "x" && axis != "y" && axis != "z"))
    throw std::invalid_argument("expected x:, y: or z: and the cuts (e.g. x:0,3,10,32), got '" + text + "'");
  std::vector<int> cuts;
  if (!integers(text.substr(colon + 1), cuts))
    throw std::invalid_argument("expected integers after '" + axis + ":', got '" + text + "'");
  return {axis[0] - 'x', cuts};
}

/// The command line; `app` gets every option (the caller parses).
void add_options(CLI::App& app, options& o, std::string& size, std::vector<std::string>& cuts) {
  app.add_option("--size", size, "Cells: N (a cube) or NX,NY,NZ")
      ->type_name("N|NX,NY,NZ")
      ->check(tool::parses(parse_size))
      ->capture_default_str();
  app.add_option("--iters", o.iters, "Sweeps")->check(tool::integer(1, 1 << 20))->capture_default_str();
  app.add_option("--ghost", o.ghost, "Ghost width G: exchange every G sweeps")
      ->check(tool::integer(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--stencil", o.points, "Stencil points")->check(CLI::IsMember({7, 27}))->capture_default_str();
  app.add_option("--strategy", o.strategy, "Exchange strategy")
      ->check(CLI::IsMember({"Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall", "Auto"}, CLI::ignore_case))
      ->capture_default_str();
  app.add_flag("--periodic,!--nonperiodic", o.periodic, "Periodic boundaries (default) or fixed ones (0 outside)");
  app.add_option("--print", o.print, "Print the residual every N sweeps")
      ->check(tool::integer(1, 1 << 20))
      ->capture_default_str();
  app.add_flag("--verify", o.verify, "Compare field and residuals with a serial run, bit for bit");
  app.add_flag("--overlap", o.overlap,
               "Compute the cells that need no ghosts while the ghosts travel (split-phase exchange, progress() "
               "between slabs of z planes); also runs blocking and reports the hidden share");
  auto* given = app.add_option("--cuts", cuts,
                               "Cell cuts along one dimension, e.g. x:0,3,10,32: box c of the P boxes along x owns "
                               "cells [cuts[c], cuts[c+1]); P + 1 nondecreasing values from 0 to the cells along x "
                               "(equal values: a box without cells). Repeat for y and z; a dimension without "
                               "--cuts is split evenly")
                    ->type_name("D:C0,C1,...")
                    ->check(tool::parses(parse_cuts));
  app.add_flag("--uneven", o.uneven,
               "Split every dimension unevenly: box c of P gets a share 1, 3, 0, 2, 1, 3, 0, 2, ... of the "
               "cells (boxes 2, 6, ... none); with --sweep, the sweep runs on this split")
      ->excludes(given);
  auto* sweep = app.add_flag("--sweep", o.sweep,
                             "Verify every strategy, boundary, stencil and ghost width at a small size (each with "
                             "the pattern it needs)")
                    ->excludes(given);
  app.add_option("--pattern", o.pattern,
                 "Ghost cells the plan fills: faces, faces_and_edges or full. Default: the narrowest the sweeps "
                 "between two exchanges read (7-point: faces at ghost 1, faces_and_edges at ghost 2, full from 3; "
                 "27-point: full); a narrower one is refused")
      ->check(CLI::IsMember({patterns[0].name, patterns[1].name, patterns[2].name}))
      ->excludes(sweep);
  app.callback([&o, &size, &cuts] {
    const named_pattern& need = needed_pattern(o.points, o.ghost);
    if (&pattern_for(o) < &need)  // `patterns` runs from narrowest to widest
      throw tool::usage_error("--pattern", o.pattern + " leaves out ghost cells the " + std::to_string(o.points) +
                                               "-point stencil reads at ghost " + std::to_string(o.ghost) +
                                               " (it needs " + need.name + " or wider)");
    o.n = parse_size(size);
    for (const std::string& text : cuts) {
      const auto [d, values] = parse_cuts(text);
      o.cuts[static_cast<std::size_t>(d)] = values;
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  return tool::mpi_main("haloshift-stencil", argc, argv, [&](tool::context& ctx) {
    CLI::App app{
        "A 3D heat equation (explicit sweeps, 7- or 27-point stencil) on a grid field with ghost layers of "
        "width G: exchanges every G sweeps and recomputes the shrinking ghost region in between. Prints "
        "the residual and the time per sweep split into compute, exchange and reduction. Exit status 1 on "
        "any difference from the serial run (--verify, --sweep).",
        "haloshift-stencil"};
    tool::add_version(app);
    options o;
    std::string size = "32";
    std::vector<std::string> cuts;
    add_options(app, o, size, cuts);
    if (const int status = tool::parse(app, argc, argv, ctx.lead()); status >= 0) return status;
    int status = 0;
    if (!o.sweep) {
      status = run_and_report(o, true) ? 0 : 1;
    } else {
      // Every strategy, boundary, stencil and ghost width at a small uneven size; Auto once
      // (it may calibrate, which takes a moment).
      o.verify = true;
      o.n = {11, 9, 8};
      o.iters = 6;
      bool all = true;
      for (const char* strategy : {"Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall"})
        for (bool periodic : {true, false})
          for (int points : {7, 27})
            for (int ghost : {1, 2, 3}) {
              const char* trim = std::getenv("HALOSHIFT_TEST_SWEEP");  // slow MPIs: fewer widths
              if (ghost == 2 && trim && std::string(trim) == "reduced") continue;
              o.strategy = strategy;
              o.periodic = periodic;
              o.points = points;
              o.ghost = ghost;
              o.overlap = points == 27;  // split phase on half the configurations
              all = run_and_report(o, false) && all;
            }
      o.strategy = "auto";
      o.overlap = false;
      all = run_and_report(o, false) && all;
      status = all ? 0 : 1;
    }
    return status;
  });
}

// SPDX-License-Identifier: BSD-3-Clause
// haloshift_bench_particles: the library's particle plans (Shift, SingleHop,
// Auto) against a hand-written LAMMPS/miniMD-style exchange (raw_particles.hpp)
// on the same atoms: an FCC lattice at the LJ melt density (0.8442) with a
// thermal displacement, `--cells`^3 unit cells (4 atoms each) per rank.
//
//   mpiexec -n 2 ./haloshift_bench_particles                      4,000 atoms per rank, cutoff 2.8
//   mpiexec -n 2 ./haloshift_bench_particles --cells 2 --cutoff 4  multi-hop: the cutoff spans boxes
//   ./haloshift_bench_particles --quick                           a check and a short timing, for CI
//
// First it checks that both give the same ghosts (global id and periodic image
// of every ghost, as sets), the same forces after the reverse sum (integer-
// valued, so exact), the same positions after forward, and the same atoms on
// every rank after migrate. Then it times, round robin (bench::round_robin:
// barrier, one call, maximum over ranks; medians): plan build (borders),
// forward of positions, reverse of forces, migrate of displaced atoms (in
// place, on the arrays the hand-written exchange moves: positions and ids;
// holes filled from the end as it does, then in order), and a re-neighbouring
// cycle (migrate, rebuild, 19 forwards and 19 reverses). A
// library plan is built once with make_particle_plan and then re-neighboured
// with rebuild(), which keeps what does not depend on the positions: both rows.
// Prints a Markdown table: microseconds and library / hand-written.
//
// --shared-memory: instead, the shared-memory path inside a node (plan_options::shared_memory,
// docs/node-aware.md) against MPI on the same atoms (--cells, --cutoff, --budget, --quick as above):
// the best of Shift, SingleHop, TtlMultiHop and NeighborAlltoall over MPI against the best of Shift,
// SingleHop and TtlMultiHop on the path (NeighborAlltoall keeps MPI), for forward of positions,
// reverse of forces, rebuild and the re-neighbouring cycle. Every variant's ghosts (id, image and
// the bits of the position) and summed forces are first checked against Shift's over MPI, bit for
// bit (exit 1 otherwise). Forward and reverse take the window for messages to ranks of the node up
// to 64 KiB (through its slots: position views are three columns, which do not lend); rebuild's
// selection and migrate are MPI collectives, and rebuild makes the plan's window again.
//
//   mpiexec -n 4 ./haloshift_bench_particles --shared-memory --cells 10 --budget 1
#include <mpi.h>

#include <haloshift/auto.hpp>
#include <haloshift/haloshift.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "best_of_groups.hpp"
#include "raw_particles.hpp"
#include "round_robin.hpp"

namespace hs = haloshift;

namespace {

struct atom {
  hs::position x;
  std::int64_t id;
};

/// A deterministic uniform number in [-1, 1) from an id and a stream.
double jitter(std::int64_t id, int stream) {
  std::uint64_t z = static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(stream) * 0xD1B54A32D192ED03ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / 4503599627370496.0 - 1.0;
}

/// Force summation as a function object (inlined into the reverse, as the hand-written loop adds inline).
constexpr auto sum = [](hs::position a, const hs::position& b) {
  for (int d = 0; d < 3; ++d) a[d] += b[d];
  return a;
};

struct setup {
  hs::domain dom;
  std::vector<atom> atoms;  ///< owned, settled by migrate
  std::vector<atom> moved;  ///< the same atoms displaced further (not wrapped): migrate's input
};

setup make_atoms(const hs::cartesian_grid& grid, int cells, double displacement) {
  const double a = std::cbrt(4.0 / 0.8442);
  setup s;
  std::int64_t global[3];
  for (int d = 0; d < 3; ++d) {
    global[d] = static_cast<std::int64_t>(cells) * grid.dim(d);
    s.dom.lo[d] = 0;
    s.dom.hi[d] = static_cast<double>(global[d]) * a;
  }
  const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  for (int k = 0; k < cells; ++k)
    for (int j = 0; j < cells; ++j)
      for (int i = 0; i < cells; ++i) {
        const std::int64_t c[3] = {grid.coords()[0] * cells + i, grid.coords()[1] * cells + j,
                                   grid.coords()[2] * cells + k};
        for (int b = 0; b < 4; ++b) {
          atom t;
          t.id = ((c[2] * global[1] + c[1]) * global[0] + c[0]) * 4 + b;
          for (int d = 0; d < 3; ++d)
            t.x[d] = s.dom.wrap(d, (static_cast<double>(c[d]) + basis[b][d]) * a + 0.05 * a * jitter(t.id, d));
          s.atoms.push_back(t);
        }
      }
  hs::migrate(grid, s.dom, s.atoms, [](atom& t) -> hs::position& { return t.x; });
  s.moved = s.atoms;
  for (atom& t : s.moved)
    for (int d = 0; d < 3; ++d) t.x[d] += displacement * jitter(t.id, 3 + d);
  return s;
}

/// Positions as one flat array, x[i*3 + d].
std::vector<double> flat(const std::vector<hs::position>& x) {
  std::vector<double> out;
  for (const hs::position& p : x) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::vector<hs::position> positions_of(const std::vector<atom>& atoms) {
  std::vector<hs::position> x;
  for (const atom& t : atoms) x.push_back(t.x);
  return x;
}

/// migrate in place on parallel arrays, as a code holds them: the vectors grow in the callback.
std::size_t migrate_arrays(const hs::cartesian_grid& grid, const hs::domain& dom, std::vector<hs::position>& x,
                           std::vector<std::int64_t>& id, bool keep_order) {
  return hs::migrate(grid, dom,
                     {.count = x.size(),
                      .resize = [&](std::size_t n) { x.resize(n), id.resize(n); },
                      .keep_order = keep_order},
                     hs::column(x), hs::column(id));
}

using ghost_key = std::tuple<std::int64_t, int, int, int>;  // id, image

/// Integer-valued force contribution of a ghost, the same in both layouts.
hs::position contribution(const ghost_key& g) {
  return {static_cast<double>(std::get<0>(g) % 97), static_cast<double>(std::get<1>(g) + 2 * std::get<2>(g) + 7),
          static_cast<double>(std::get<3>(g) + 1)};
}

/// Both exchanges on the same atoms: ghosts, reverse sums, positions and migrate agree. Returns
/// the number of disagreements on this rank (0 when identical) and prints what differs.
long check(const hs::cartesian_grid& grid, const setup& s, double cutoff, double& max_position_difference) {
  const std::size_t n = s.atoms.size();
  std::vector<std::int64_t> ids;
  for (const atom& t : s.atoms) ids.push_back(t.id);
  long wrong = 0;
  // The library.
  std::vector<hs::position> xl = positions_of(s.atoms);
  auto plan = hs::make_particle_plan<hs::Shift>(grid, s.dom, cutoff, std::span<const hs::position>(xl));
  std::vector<std::int64_t> id_l(plan.size());
  std::copy(ids.begin(), ids.end(), id_l.begin());
  plan.forward(id_l);
  std::vector<ghost_key> ghosts_l;
  for (const hs::ghost_block& b : plan.blocks())
    for (std::size_t i = b.first; i < b.first + b.count; ++i)
      ghosts_l.emplace_back(id_l[i], b.image[0], b.image[1], b.image[2]);
  xl.resize(plan.size());
  plan.forward_positions(xl);
  // The same forward into a flat x[i*3 + d] through a position view: the same ghosts, bit for bit.
  std::vector<double> xf = flat(positions_of(s.atoms));
  xf.resize(3 * plan.size());
  plan.forward_positions(hs::strided_positions<double>(xf.data(), plan.size(), 3));
  if (flat(xl) != xf) {
    std::printf("rank %d: forward into a flat array differs from forward into positions\n", grid.rank());
    ++wrong;
  }
  std::vector<hs::position> fl(plan.size(), hs::position{0, 0, 0});
  for (std::size_t i = n; i < plan.size(); ++i) fl[i] = contribution(ghosts_l[i - n]);
  plan.reverse(fl, sum);
  // The hand-written exchange.
  bench::raw_particles raw(grid.comm(), grid, s.dom, cutoff);
  std::vector<hs::position> xr = positions_of(s.atoms);
  raw.borders(xr, n);
  std::vector<std::int64_t> id_r(xr.size());
  std::copy(ids.begin(), ids.end(), id_r.begin());
  raw.forward_values(id_r);
  std::vector<hs::offset> image(xr.size(), hs::offset{0, 0, 0});
  raw.forward_images(image);
  std::vector<ghost_key> ghosts_r;
  for (std::size_t i = n; i < xr.size(); ++i) ghosts_r.emplace_back(id_r[i], image[i][0], image[i][1], image[i][2]);
  std::vector<hs::position> fr(xr.size(), hs::position{0, 0, 0});
  for (std::size_t i = n; i < xr.size(); ++i) fr[i] = contribution(ghosts_r[i - n]);
  raw.forward(xr);
  raw.reverse(fr);

  std::vector<ghost_key> sorted_l = ghosts_l, sorted_r = ghosts_r;
  std::sort(sorted_l.begin(), sorted_l.end());
  std::sort(sorted_r.begin(), sorted_r.end());
  if (sorted_l != sorted_r) {
    std::printf("rank %d: ghosts differ: library %zu, hand-written %zu\n", grid.rank(), sorted_l.size(), sorted_r.size());
    ++wrong;
  }
  long forces = 0, positions = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (fl[i] != fr[i]) ++forces;
  // Positions of the same ghost (id, image) in both.
  std::vector<std::pair<ghost_key, hs::position>> pl, pr;
  for (std::size_t i = n; i < xl.size(); ++i) pl.emplace_back(ghosts_l[i - n], xl[i]);
  for (std::size_t i = n; i < xr.size(); ++i) pr.emplace_back(ghosts_r[i - n], xr[i]);
  std::sort(pl.begin(), pl.end());
  std::sort(pr.begin(), pr.end());
  // The hand-written exchange shifts a ghost at every hop that wraps ((x + L) + L), the library once by
  // its whole image (x + 2L): equal up to the rounding of those additions, a few ulps of L.
  double largest = 0;
  for (int d = 0; d < 3; ++d) largest = std::max(largest, s.dom.length(d));
  const double tolerance = 8 * largest * std::numeric_limits<double>::epsilon();
  if (pl.size() == pr.size())
    for (std::size_t i = 0; i < pl.size(); ++i)
      for (int d = 0; d < 3; ++d) {
        const double diff = std::abs(pl[i].second[d] - pr[i].second[d]);
        max_position_difference = std::max(max_position_difference, diff);
        if (pl[i].first != pr[i].first || diff > tolerance) ++positions;
      }
  if (forces || positions)
    std::printf("rank %d: %ld owned atoms' summed forces and %ld ghost positions differ\n", grid.rank(), forces,
                positions);
  wrong += forces + positions;
  // Migrate: the same atoms end on every rank.
  std::vector<atom> ml = s.moved;
  hs::migrate(grid, s.dom, ml, [](atom& t) -> hs::position& { return t.x; });
  std::vector<hs::position> mx = positions_of(s.moved);
  std::vector<std::int64_t> mid;
  for (const atom& t : s.moved) mid.push_back(t.id);
  raw.exchange(mx, mid);
  std::vector<std::int64_t> kept_l;
  for (const atom& t : ml) kept_l.push_back(t.id);
  // In place, on the arrays the timings use, holes filled from the end.
  std::vector<hs::position> px = positions_of(s.moved);
  std::vector<std::int64_t> pid;
  for (const atom& t : s.moved) pid.push_back(t.id);
  if (migrate_arrays(grid, s.dom, px, pid, false) != pid.size()) ++wrong;
  std::sort(kept_l.begin(), kept_l.end());
  std::sort(pid.begin(), pid.end());
  std::sort(mid.begin(), mid.end());
  if (kept_l != mid || pid != mid) {
    std::printf("rank %d: migrate differs: library keeps %zu atoms (%zu in place), hand-written %zu\n", grid.rank(),
                kept_l.size(), pid.size(), mid.size());
    ++wrong;
  }
  return wrong;
}

/// The library side of the timings: a plan per named strategy (with its options) on the settled atoms,
/// each with its positions and forces as flat arrays x[i*3 + d] (the layout of the hand-written side's
/// std::vector<hs::position>), written in place through position views.
struct library_side {
  const hs::cartesian_grid& grid;
  const setup& s;
  double cutoff;
  std::vector<std::string> names;
  std::vector<hs::plan_options> options;
  std::vector<hs::position> owned;
  std::vector<std::optional<hs::particle_plan>> plans;
  std::vector<std::vector<double>> x, f;

  /// Builds every plan (Auto calibrates once per process and grid: not in the timings).
  library_side(const hs::cartesian_grid& g, const setup& atoms, double c, std::vector<std::string> strategies,
               std::vector<hs::plan_options> plan_options)
      : grid(g), s(atoms), cutoff(c), names(std::move(strategies)), options(std::move(plan_options)),
        owned(positions_of(s.atoms)), plans(names.size()), x(names.size()), f(names.size()) {
    for (std::size_t v = 0; v < names.size(); ++v) {
      build(v)();
      x[v] = flat(owned);
      x[v].resize(3 * plans[v]->size());
    }
  }
  std::function<void()> build(std::size_t v) {
    return [this, v] {
      plans[v].emplace(
          hs::make_particle_plan(grid, names[v], s.dom, cutoff, std::span<const hs::position>(owned), options[v]));
    };
  }
  std::function<void()> rebuild(std::size_t v) {
    return [this, v] { plans[v]->rebuild(std::span<const hs::position>(owned)); };
  }
  std::function<void()> forward(std::size_t v) {
    return [this, v] { plans[v]->forward_positions(hs::strided_positions<double>(x[v].data(), plans[v]->size(), 3)); };
  }
  std::function<void()> reverse(std::size_t v) {
    return [this, v] {
      f[v].assign(3 * plans[v]->size(), 1.0);
      plans[v]->reverse(hs::strided_positions<double>(f[v].data(), plans[v]->size(), 3));
    };
  }
};

/// Migrate's input: the displaced atoms on the arrays the hand-written exchange moves (positions,
/// ids), which migrate changes in place, so each repetition starts from them afresh.
struct displaced_atoms {
  const setup& s;
  std::vector<hs::position> x;
  std::vector<std::int64_t> id;

  void reset() {
    x = positions_of(s.moved);
    id.clear();
    for (const atom& t : s.moved) id.push_back(t.id);
  }
  /// Migrate in place, holes filled from the end as the hand-written exchange does, or in order.
  std::function<void()> migrate(const hs::cartesian_grid& grid, bool keep_order) {
    return [this, &grid, keep_order] { migrate_arrays(grid, s.dom, x, id, keep_order); };
  }
};

/// A re-neighbouring cycle of variant `v`: migrate, rebuild, 19 forwards and 19 reverses.
std::function<void()> library_cycle(library_side& lib, displaced_atoms& moved, std::size_t v) {
  return [migrate = moved.migrate(lib.grid, false), rebuild = lib.rebuild(v), forward = lib.forward(v),
          reverse = lib.reverse(v)] {
    migrate();
    rebuild();
    for (int i = 0; i < 19; ++i) {
      forward();
      reverse();
    }
  };
}

/// Times the variants of one row: round robin (bench::round_robin), or where they migrate (`moved`
/// not null) each repetition from the displaced atoms (reset untimed). Returns times[variant][rep].
std::vector<std::vector<double>> time_row(const std::vector<std::function<void()>>& run, displaced_atoms* moved,
                                          double budget, bool quick) {
  if (!moved) return bench::round_robin(MPI_COMM_WORLD, run, budget, quick ? 3 : 9, 2001);
  std::vector<std::vector<double>> t(run.size());
  const int reps = quick ? 3 : std::max(5, static_cast<int>(budget / 0.05));
  for (int rep = 0; rep < reps; ++rep)
    for (std::size_t v = 0; v < run.size(); ++v) {
      moved->reset();
      t[v].push_back(bench::timed(MPI_COMM_WORLD, run[v]));
    }
  return t;
}

/// The library's plans (Shift, SingleHop, Auto) against the hand-written exchange, row by row.
void hand_written_table(const hs::cartesian_grid& grid, const setup& s, double cutoff, double budget, bool quick) {
  const std::size_t n = s.atoms.size();
  library_side lib(grid, s, cutoff, {"Shift", "SingleHop", "Auto"}, {{}, {}, {}});
  bench::raw_particles raw(grid.comm(), grid, s.dom, cutoff);
  std::vector<hs::position> xr = lib.owned, fr;
  raw.borders(xr, n);
  displaced_atoms moved{s, {}, {}};
  auto raw_reverse = [&] {
    fr.assign(xr.size(), hs::position{1, 1, 1});
    raw.reverse(fr);
  };
  auto raw_cycle = [&] {
    raw.exchange(moved.x, moved.id);
    xr = lib.owned;
    raw.borders(xr, n);
    for (int i = 0; i < 19; ++i) {
      raw.forward(xr);
      raw_reverse();
    }
  };
  auto raw_borders = [&] {
    xr = lib.owned;
    raw.borders(xr, n);
  };
  auto raw_exchange = [&] { raw.exchange(moved.x, moved.id); };
  struct row {
    const char* name;
    std::function<void()> raw;
    std::function<std::function<void()>(std::size_t)> lib;
    bool migrates;
  };
  const row rows[] = {
      {"plan build (borders)", raw_borders, [&](std::size_t v) { return lib.build(v); }, false},
      {"rebuild (borders)", raw_borders, [&](std::size_t v) { return lib.rebuild(v); }, false},
      {"forward positions", [&] { raw.forward(xr); }, [&](std::size_t v) { return lib.forward(v); }, false},
      {"reverse forces", raw_reverse, [&](std::size_t v) { return lib.reverse(v); }, false},
      {"migrate (holes filled from the end)", raw_exchange, [&](std::size_t) { return moved.migrate(grid, false); },
       true},
      {"migrate (order kept)", raw_exchange, [&](std::size_t) { return moved.migrate(grid, true); }, true},
      {"cycle: 1 rebuild, 19 fwd, 19 rev, 1 migrate", raw_cycle,
       [&](std::size_t v) { return library_cycle(lib, moved, v); }, true},
  };
  if (grid.rank() == 0)
    std::printf("\n| operation | hand-written (us) | Shift (us) | ratio | SingleHop (us) | ratio | Auto [%s] (us) | "
                "ratio |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
                std::string(lib.plans[2]->strategy()).c_str());
  for (const row& r : rows) {
    const auto t = time_row({r.raw, r.lib(0), r.lib(1), r.lib(2)}, r.migrates ? &moved : nullptr, budget, quick);
    const double base = bench::median(t[0]);
    if (grid.rank() != 0) continue;
    std::printf("| %s | %.1f", r.name, base * 1e6);
    for (std::size_t v = 1; v < t.size(); ++v)
      std::printf(" | %.1f | %.2f", bench::median(t[v]) * 1e6, bench::median(t[v]) / base);
    std::printf(" |\n");
  }
}

/// --shared-memory: the strategies over MPI, then on the shared-memory path (plan_options::shared_memory;
/// NeighborAlltoall keeps MPI, so it has no second entry).
const std::vector<std::string> shared_memory_names{"Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall",
                                                   "Shift", "SingleHop", "TtlMultiHop"};
const std::vector<std::size_t> shared_memory_groups{0, 4, 7};

/// What --shared-memory compares of one plan: its ghosts (id, image, the bits of the forwarded
/// position), sorted, and the owned atoms' sums after a reverse of integer-valued contributions.
struct exchanged {
  std::vector<std::pair<ghost_key, std::array<std::uint64_t, 3>>> ghosts;
  std::vector<double> sums;
  bool operator==(const exchanged&) const = default;
};

/// Forwards ids and positions and reverses forces with `lib`'s plan `v`, through the calls and
/// arrays the timings use (position views of its flat arrays).
exchanged exchange_once(library_side& lib, std::size_t v) {
  hs::particle_plan& plan = *lib.plans[v];
  const std::size_t n = lib.owned.size();
  std::vector<std::int64_t> id(plan.size());
  for (std::size_t i = 0; i < n; ++i) id[i] = lib.s.atoms[i].id;
  plan.forward(id);
  lib.forward(v)();
  std::vector<double>& f = lib.f[v];
  f.assign(3 * plan.size(), 0.0);
  exchanged out;
  for (const hs::ghost_block& b : plan.blocks())
    for (std::size_t i = b.first; i < b.first + b.count; ++i) {
      const ghost_key key{id[i], b.image[0], b.image[1], b.image[2]};
      const hs::position c = contribution(key);
      std::copy(c.begin(), c.end(), f.begin() + static_cast<std::ptrdiff_t>(3 * i));
      std::array<std::uint64_t, 3> bits;
      for (std::size_t d = 0; d < 3; ++d) bits[d] = std::bit_cast<std::uint64_t>(lib.x[v][3 * i + d]);
      out.ghosts.emplace_back(key, bits);
    }
  plan.reverse(hs::strided_positions<double>(f.data(), plan.size(), 3));
  out.sums.assign(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(3 * n));
  std::sort(out.ghosts.begin(), out.ghosts.end());
  return out;
}

/// Every variant's ghosts and sums against Shift's over MPI, bit for bit, and no message lent (a
/// particle plan's position views are several columns: they go through the slots). Returns the
/// failures on any rank.
int check_shared_memory(const hs::cartesian_grid& grid, library_side& lib) {
  const std::uint64_t lent = hs::detail::lent_messages;
  const exchanged mpi_shift = exchange_once(lib, 0);
  int failures = 0;
  for (std::size_t v = 1; v < lib.names.size(); ++v)
    if (exchange_once(lib, v) != mpi_shift) {
      std::fprintf(stderr, "rank %d: %s%s: ghosts or sums differ from Shift's over MPI\n", grid.rank(),
                   lib.names[v].c_str(), lib.options[v].shared_memory ? " (shared memory)" : "");
      ++failures;
    }
  if (hs::detail::lent_messages != lent) {
    std::fprintf(stderr, "rank %d: a particle exchange lent its array (zero copy)\n", grid.rank());
    ++failures;
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return failures;
}

/// --shared-memory: the best strategy over MPI against the best on the shared-memory path (the
/// slots), checked first; forward, reverse, rebuild and the re-neighbouring cycle. Returns 1 after a
/// mismatch.
int shared_memory_table(const hs::cartesian_grid& grid, const setup& s, double cutoff, double budget, bool quick) {
  std::vector<hs::plan_options> options;
  for (std::size_t v = 0; v < shared_memory_names.size(); ++v)
    options.push_back({.shared_memory = v >= shared_memory_groups[1]});
  library_side lib(grid, s, cutoff, shared_memory_names, options);
  const int failures = check_shared_memory(grid, lib);
  const bool root = grid.rank() == 0;
  if (root)
    std::printf("# %d ranks on %d node(s) (grid %dx%dx%d), %zu atoms and %zu ghosts on rank 0, cutoff %.2f, %s: check "
                "%s (ghosts and sums bit for bit against Shift over MPI)\n",
                grid.size(), hs::detail::nodes_of(grid).count, grid.dim(0), grid.dim(1), grid.dim(2), s.atoms.size(),
                lib.plans[0]->ghosts(), cutoff, bench::mpi_library().c_str(), failures ? "FAILED" : "identical");
  if (failures) return 1;
  if (root)
    std::printf("\nmedian of the max over ranks, us; the best of Shift, SingleHop, TtlMultiHop and NeighborAlltoall "
                "over MPI against the best of Shift, SingleHop and TtlMultiHop on the shared-memory path (slots)\n\n"
                "| operation | MPI | shared memory | speedup |\n|---|---:|---:|---:|\n");
  displaced_atoms moved{s, {}, {}};
  struct row {
    const char* name;
    std::function<std::function<void()>(std::size_t)> variant;
    bool migrates;
  };
  const row rows[] = {
      {"forward positions", [&](std::size_t v) { return lib.forward(v); }, false},
      {"reverse forces", [&](std::size_t v) { return lib.reverse(v); }, false},
      {"rebuild (borders)", [&](std::size_t v) { return lib.rebuild(v); }, false},
      {"cycle: 1 rebuild, 19 fwd, 19 rev, 1 migrate", [&](std::size_t v) { return library_cycle(lib, moved, v); },
       true},
  };
  for (const row& r : rows) {
    std::vector<std::function<void()>> run;
    for (std::size_t v = 0; v < shared_memory_names.size(); ++v) run.push_back(r.variant(v));
    const auto t = time_row(run, r.migrates ? &moved : nullptr, budget, quick);
    if (root) bench::print_best_of_groups(r.name, t, shared_memory_groups, shared_memory_names);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    int cells = 10;
    double cutoff = 2.8, budget = 2.0;
    bool quick = false, shared_memory = false;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--quick") quick = true;
      else if (a == "--shared-memory") shared_memory = true;
      else if (a == "--cells" && i + 1 < argc) cells = std::atoi(argv[++i]);
      else if (a == "--cutoff" && i + 1 < argc) cutoff = std::atof(argv[++i]);
      else if (a == "--budget" && i + 1 < argc) budget = std::atof(argv[++i]);
      else
        throw hs::error("unknown or incomplete option " + a +
                        " (--cells N, --cutoff X, --budget S, --quick, --shared-memory)");
    }
    if (quick) budget = 0.05;
    // The smallest surface between boxes (2 ranks: 1x1x2), as MD codes split space.
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}, .lengths = {1, 1, 1}});
    const setup s = make_atoms(grid, cells, 0.3);
    if (shared_memory) {
      status = shared_memory_table(grid, s, cutoff, budget, quick);
    } else {
      double max_difference = 0;
      long wrong = check(grid, s, cutoff, max_difference);
      MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, &max_difference, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (grid.rank() == 0)
        std::printf("# %d ranks (grid %dx%dx%d), %zu atoms on rank 0, cutoff %.2f: check %s (ghost ids, images, "
                    "summed forces and migrated atoms exact; ghost positions differ by at most %.3g)\n",
                    grid.size(), grid.dim(0), grid.dim(1), grid.dim(2), s.atoms.size(), cutoff,
                    wrong ? "FAILED" : "identical", max_difference);
      if (wrong) throw hs::error("the library and the hand-written exchange differ");
      hand_written_table(grid, s, cutoff, budget, quick);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "haloshift_bench_particles: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}

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
#include <mpi.h>

#include <haloshift/auto.hpp>
#include <haloshift/haloshift.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

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

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    int cells = 10;
    double cutoff = 2.8, budget = 2.0;
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--quick") quick = true;
      else if (a == "--cells" && i + 1 < argc) cells = std::atoi(argv[++i]);
      else if (a == "--cutoff" && i + 1 < argc) cutoff = std::atof(argv[++i]);
      else if (a == "--budget" && i + 1 < argc) budget = std::atof(argv[++i]);
      else throw hs::error("unknown or incomplete option " + a + " (--cells N, --cutoff X, --budget S, --quick)");
    }
    if (quick) budget = 0.05;
    // The smallest surface between boxes (2 ranks: 1x1x2), as MD codes split space.
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}, .lengths = {1, 1, 1}});
    const setup s = make_atoms(grid, cells, 0.3);
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

    const std::size_t n = s.atoms.size();
    const std::vector<hs::position> owned = positions_of(s.atoms);
    bench::raw_particles raw(grid.comm(), grid, s.dom, cutoff);
    std::vector<hs::position> xr = owned, fr;
    raw.borders(xr, n);
    const char* names[3] = {"Shift", "SingleHop", "Auto"};
    std::optional<hs::particle_plan> plan[3];
    // The library side's positions and forces: flat arrays x[i*3 + d], the layout of the
    // hand-written side's std::vector<hs::position>, written in place through position views.
    std::vector<double> xl[3], fl[3];
    for (int v = 0; v < 3; ++v) {  // Auto calibrates once per process and grid: not in the timings
      plan[v].emplace(hs::make_particle_plan(grid, names[v], s.dom, cutoff, std::span<const hs::position>(owned)));
      xl[v] = flat(owned);
      xl[v].resize(3 * plan[v]->size());
    }
    auto build = [&](int v) {
      return [&, v] {
        plan[v].emplace(hs::make_particle_plan(grid, names[v], s.dom, cutoff, std::span<const hs::position>(owned)));
      };
    };
    auto rebuild = [&](int v) { return [&, v] { plan[v]->rebuild(std::span<const hs::position>(owned)); }; };
    auto forward = [&](int v) {
      return [&, v] { plan[v]->forward_positions(hs::strided_positions<double>(xl[v].data(), plan[v]->size(), 3)); };
    };
    auto reverse = [&](int v) {
      return [&, v] {
        fl[v].assign(3 * plan[v]->size(), 1.0);
        plan[v]->reverse(hs::strided_positions<double>(fl[v].data(), plan[v]->size(), 3));
      };
    };
    // Migrate in place on the hand-written side's own arrays (positions, ids), holes filled from the
    // end as its exchange does; the row after keeps the order (the default).
    std::vector<hs::position> mx;
    std::vector<std::int64_t> mid;
    auto reset = [&] {
      mx = positions_of(s.moved);
      mid.clear();
      for (const atom& t : s.moved) mid.push_back(t.id);
    };
    auto migrate_in_place = [&](bool keep_order) {
      return [&, keep_order](int) {
        return [&, keep_order] { migrate_arrays(grid, s.dom, mx, mid, keep_order); };
      };
    };
    auto migrate = migrate_in_place(false);
    auto cycle = [&](int v) {
      return [&, v] {
        migrate(v)();
        rebuild(v)();
        for (int i = 0; i < 19; ++i) {
          forward(v)();
          reverse(v)();
        }
      };
    };
    auto raw_reverse = [&] {
      fr.assign(xr.size(), hs::position{1, 1, 1});
      raw.reverse(fr);
    };
    auto raw_cycle = [&] {
      raw.exchange(mx, mid);
      xr = owned;
      raw.borders(xr, n);
      for (int i = 0; i < 19; ++i) {
        raw.forward(xr);
        raw_reverse();
      }
    };
    struct row {
      const char* name;
      std::function<void()> raw;
      std::function<std::function<void()>(int)> lib;
      bool needs_reset;
    };
    const row rows[] = {
        {"plan build (borders)", [&] { xr = owned; raw.borders(xr, n); }, build, false},
        {"rebuild (borders)", [&] { xr = owned; raw.borders(xr, n); }, rebuild, false},
        {"forward positions", [&] { raw.forward(xr); }, forward, false},
        {"reverse forces", raw_reverse, reverse, false},
        {"migrate (holes filled from the end)", [&] { raw.exchange(mx, mid); }, migrate, true},
        {"migrate (order kept)", [&] { raw.exchange(mx, mid); }, migrate_in_place(true), true},
        {"cycle: 1 rebuild, 19 fwd, 19 rev, 1 migrate", raw_cycle, cycle, true},
    };
    if (grid.rank() == 0) {
      std::printf("\n| operation | hand-written (us) | Shift (us) | ratio | SingleHop (us) | ratio | Auto [%s] (us) | ratio |\n",
                  std::string(plan[2]->strategy()).c_str());
      std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    }
    for (const row& r : rows) {
      std::vector<std::function<void()>> run{r.raw, r.lib(0), r.lib(1), r.lib(2)};
      std::vector<std::vector<double>> t(run.size());
      if (r.needs_reset) {  // each repetition starts from the displaced atoms (reset untimed)
        const int reps = quick ? 3 : std::max(5, static_cast<int>(budget / 0.05));
        for (int rep = 0; rep < reps; ++rep)
          for (std::size_t v = 0; v < run.size(); ++v) {
            reset();
            t[v].push_back(bench::timed(MPI_COMM_WORLD, run[v]));
          }
      } else {
        t = bench::round_robin(MPI_COMM_WORLD, run, budget, quick ? 3 : 9, 2001);
      }
      const double base = bench::median(t[0]);
      if (grid.rank() == 0) {
        std::printf("| %s | %.1f", r.name, base * 1e6);
        for (std::size_t v = 1; v < run.size(); ++v)
          std::printf(" | %.1f | %.2f", bench::median(t[v]) * 1e6, bench::median(t[v]) / base);
        std::printf(" |\n");
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "haloshift_bench_particles: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}

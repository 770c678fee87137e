// SPDX-License-Identifier: BSD-3-Clause
// haloshift-md: a Lennard-Jones molecular-dynamics mini-app in the standard
// "LJ melt" setup of LAMMPS and miniMD (fcc lattice at reduced density 0.8442,
// T = 1.44, cutoff 2.5 sigma, skin 0.3 sigma, dt = 0.005, re-neighbouring
// every 20 steps, binned neighbour lists), with haloshift particle plans for
// the ghosts and migration. docs/md.md describes it.
//
// Two precisions, one code (the simulation is a template over them):
//
// --precision double (the default, the timing mode): positions, forces and
// sums are doubles, as in LAMMPS and miniMD; the ghost positions travel with
// the plan's forward_positions, the ghost forces come back with reverse. The
// thermo output depends on the order of the sums, so it may differ in the last
// digits between strategies, rank counts and --newton.
//
// --precision fixed (the reproducible mode): positions are fixed point
// (2^-32 sigma) and forces, energies and virials are summed in fixed point,
// so every difference of positions is exact (also across periodic images) and
// every sum is independent of its order. The thermo output is therefore the
// same bit for bit whatever the strategy, the rank count, or Newton's third law.
//
// Both start from the same atoms (the fixed-point lattice, converted to double
// in double mode) and velocities.
//
//   mpiexec -n 4 haloshift-md [--precision double|fixed] [--strategy Shift|SingleHop|TtlMultiHop|NeighborAlltoall|Auto]
//                             [--size N] [--steps N] [--thermo N] [--reneighbor N] [--newton on|off]
//                             [--grid PxQxR] [--check] [--overlap] [--slab] [--balance N]
//                             [--max-move F] [--hand-written] [--help] [--version]
//
// --slab puts the lattice in the lower half of the box along z (vacuum above):
// an inhomogeneous system. --balance N moves the cuts between the boxes
// (haloshift::rebalance, LAMMPS's balance shift) so that every rank owns as
// many atoms, before step 1 and every N steps, at most --max-move of a box
// per call; the report gives the load (atoms per rank, force time) at the end.
//
// --overlap computes the forces between owned atoms while the ghost positions
// travel (start_forward, progress() every 512 atoms, wait, then the forces
// with ghosts), after a quiet blocking run of the same steps, and reports the
// hidden share of the position exchange and whether the thermo agrees.
//
// --hand-written replaces the library by the hand-written LAMMPS/miniMD-style
// sendlist exchange of the particle benchmark (examples/common/raw_particles.hpp:
// borders with the ids in the positions' messages, forward, reverse, exchange
// of positions, velocities and ids in one message): the same steps with the
// communication written by hand, to compare the communication timers.

#include <mpi.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <haloshift/auto.hpp>
#include <haloshift/haloshift.hpp>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "raw_particles.hpp"
#include "tool.hpp"

namespace hs = haloshift;

namespace {

using fixed = std::int64_t;
using fixed3 = std::array<fixed, 3>;
using vec3 = std::array<double, 3>;

// Fixed-point units: positions, forces, and energy-like sums.
constexpr double position_unit = 1.0 / 4294967296.0;  // 2^-32 sigma
constexpr double force_unit = 1.0 / 4294967296.0;
constexpr double energy_unit = 1.0 / 4294967296.0;

fixed to_fixed(double value, double unit) { return std::llround(value / unit); }

/// The reproducible mode: fixed-point positions and exact, order-independent sums.
struct fixed_precision {
  static constexpr bool exact = true;
  static constexpr const char* name = "fixed";
  /// Step 0 against the serial all-pairs sum: positions are exact, each pair's energy is rounded to 2^-32.
  static constexpr double check_tolerance = 1e-9;
  using coordinate = fixed;
  using point = fixed3;  ///< a position
  using sum = fixed;     ///< a force component, an energy or virial sum
  static coordinate from_lattice(fixed x) { return x; }
  static double to_double(coordinate x) { return static_cast<double>(x) * position_unit; }
  static double delta(coordinate a, coordinate b) { return static_cast<double>(a - b) * position_unit; }
  static coordinate displacement(double dx) { return to_fixed(dx, position_unit); }
  static sum force_part(double f) { return to_fixed(f, force_unit); }
  static double force_value(sum f) { return static_cast<double>(f) * force_unit; }
  static sum energy_part(double e) { return to_fixed(e, energy_unit); }
  static double energy_value(sum e) { return static_cast<double>(e) * energy_unit; }
};

/// The timing mode: doubles throughout, as LAMMPS and miniMD.
struct double_precision {
  static constexpr bool exact = false;
  static constexpr const char* name = "double";
  /// Step 0 against the serial all-pairs sum: only the rounding of double sums differs.
  static constexpr double check_tolerance = 1e-11;
  using coordinate = double;
  using point = hs::position;
  using sum = double;
  static coordinate from_lattice(fixed x) { return static_cast<double>(x) * position_unit; }
  static double to_double(coordinate x) { return x; }
  static double delta(coordinate a, coordinate b) { return a - b; }
  static coordinate displacement(double dx) { return dx; }
  static sum force_part(double f) { return f; }
  static double force_value(sum f) { return f; }
  static sum energy_part(double e) { return e; }
  static double energy_value(sum e) { return e; }
};

struct options {
  std::string precision = "double";
  std::string strategy = "shift";
  int size = 8;  // fcc unit cells per side
  int steps = 100;
  int thermo = 10;
  int reneighbor = 20;
  bool newton = false;
  std::string newton_text = "off";
  bool check = false;  // compare step 0 against a serial all-pairs computation
  bool overlap = false;  // owned-owned forces while the positions travel
  bool hand_written = false;  // the hand-written sendlist exchange instead of the library
  bool quiet = false;    // the blocking reference run of --overlap prints nothing
  std::string grid = "0x0x0";
  int balance = 0;       // rebalance the cuts every N steps (0: never)
  double max_move = 0.5;  // how far a cut moves per rebalancing, in boxes
  bool slab = false;     // the lattice in the lower half of the box along z, vacuum above
  double dt = 0.005, cutoff = 2.5, skin = 0.3, density = 0.8442, temperature = 1.44;
};

/// "PxQxR": three grid sizes >= 0 (0: MPI_Dims_create chooses).
std::vector<int> parse_grid(const std::string& text) {
  std::vector<int> dims;
  bool ok = true;
  for (std::size_t start = 0;;) {
    const std::size_t x = text.find('x', start);
    const std::string part = text.substr(start, x == std::string::npos ? std::string::npos : x - start);
    int v = -1;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    ok = ok && !part.empty() && ec == std::errc() && end == part.data() + part.size() && v >= 0;
    dims.push_back(v);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (!ok || dims.size() != 3)
    throw std::invalid_argument("expected three sizes PxQxR (0 to choose), got '" + text + "'");
  return dims;
}

/// The command line; `app` gets every option (the caller parses).
void add_options(CLI::App& app, options& o) {
  app.add_option("--precision", o.precision,
                 "double: positions, forces and sums in double precision (fast); fixed: fixed point, the "
                 "thermo output the same bit for bit for every strategy, rank count and --newton")
      ->check(CLI::IsMember({"double", "fixed"}))
      ->capture_default_str();
  app.add_option("--strategy", o.strategy, "Exchange strategy of the particle plan")
      ->check(CLI::IsMember({"Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall", "Auto"}, CLI::ignore_case))
      ->capture_default_str();
  app.add_option("--size", o.size, "fcc unit cells per side")->check(tool::integer(1, 4096))->capture_default_str();
  app.add_option("--steps", o.steps, "Time steps")->check(tool::integer(0))->capture_default_str();
  app.add_option("--thermo", o.thermo, "Thermo output every N steps")->check(tool::integer(1))->capture_default_str();
  app.add_option("--reneighbor", o.reneighbor, "Migrate and rebuild the neighbour lists every N steps")
      ->check(tool::integer(1))
      ->capture_default_str();
  app.add_option("--newton", o.newton_text, "Newton's third law across ranks (reverse exchange of forces)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app.add_option("--grid", o.grid, "Ranks per dimension, PxQxR (0: chosen for the smallest surface between boxes)")
      ->type_name("PxQxR")
      ->check(tool::parses(parse_grid))
      ->capture_default_str();
  app.add_flag("--check", o.check, "Compare step 0 with a serial all-pairs computation");
  app.add_flag("--slab", o.slab,
               "Put the fcc lattice in the lower half of the box along z, vacuum above (an inhomogeneous "
               "start for --balance)");
  app.add_option("--balance", o.balance,
                 "Move the cuts between boxes so every rank owns as many atoms (haloshift::rebalance) before "
                 "step 1 and then every N steps (a multiple of --reneighbor; 0: never)")
      ->check(tool::integer(0))
      ->capture_default_str();
  app.add_option("--max-move", o.max_move,
                 "How far a cut moves in one rebalancing, as a fraction of the box it moves into (> 0)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--overlap", o.overlap,
               "Compute the forces between owned atoms while the ghost positions travel (split-phase "
               "exchange); also runs blocking and reports the hidden share");
  app.add_flag("--hand-written", o.hand_written,
               "Communicate with the hand-written LAMMPS/miniMD-style sendlist exchange of the particle "
               "benchmark instead of the library (the baseline of its communication timer; double precision, "
               "not with --overlap; --strategy is ignored)");
  app.callback([&o] {
    o.newton = o.newton_text == "on";
    if (o.hand_written && o.precision != "double")
      throw tool::usage_error("--hand-written", "needs --precision double (the hand-written exchange moves doubles)");
    if (o.hand_written && o.overlap)
      throw tool::usage_error("--hand-written", "is blocking: leave out --overlap");
    if (o.balance > 0 && o.balance % o.reneighbor != 0)
      throw tool::usage_error("--balance", std::to_string(o.balance) + " is not a multiple of --reneighbor " +
                                               std::to_string(o.reneighbor) + " (the cuts move when atoms migrate)");
    const double length = o.size * std::cbrt(4.0 / o.density);
    if (length < 2 * (o.cutoff + o.skin))
      throw tool::usage_error("--size", std::to_string(o.size) + " gives a box of " + std::to_string(length) +
                                            " sigma, below twice the cutoff plus skin: use --size 4 or more");
  });
}

/// A deterministic number in [-0.5, 0.5) from an atom id and a component.
double hashed_uniform(std::int64_t id, int component) {
  std::uint64_t z = static_cast<std::uint64_t>(id) * 3 + static_cast<std::uint64_t>(component) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / 9007199254740992.0 - 0.5;
}

struct timers {
  double force = 0, neighbor = 0, comm = 0, other = 0, balance = 0;
  double positions = 0;  ///< the part of comm that forwards ghost positions between re-neighbourings (exposed)
  double migrate = 0;    ///< the part of comm that moves atoms to their new owners
  double ghosts = 0;     ///< the part of comm that builds the exchange and fills the ghosts at re-neighbouring
  double forces = 0;     ///< the part of comm that sums ghost forces back (--newton on)
};

/// Moves a ghost's fixed-point position by its periodic image.
struct shift_fixed {
  fixed length;
  void operator()(fixed3& p, const hs::offset& image) const noexcept {
    for (int d = 0; d < 3; ++d) p[d] += image[d] * length;
  }
};

class clock_section {
 public:
  explicit clock_section(double& into) : into_(into), start_(std::chrono::steady_clock::now()) {}
  ~clock_section() { into_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  double& into_;
  std::chrono::steady_clock::time_point start_;
};

/// Global sums of four values: exact for fixed point.
template <class T>
std::array<T, 4> sum_all(std::array<T, 4> local, MPI_Comm comm) {
  static_assert(std::is_same_v<T, fixed> || std::is_same_v<T, double>);
  MPI_Allreduce(MPI_IN_PLACE, local.data(), 4, std::is_same_v<T, double> ? MPI_DOUBLE : MPI_INT64_T, MPI_SUM, comm);
  return local;
}

/// The bins of the neighbour search: this rank's box grown by the cutoff plus skin (where the ghosts
/// lie), cut into bins at least half that reach wide, so that the atoms within reach of an atom lie
/// in the 5 x 5 x 5 bins around its own.
struct binning {
  static constexpr int span = 2;  ///< bins searched on either side
  vec3 origin{}, inverse{};       ///< lower corner, bins per unit length
  std::array<int, 3> n{};

  binning() = default;
  binning(const hs::position& lo, const hs::position& hi, double reach) {
    for (int d = 0; d < 3; ++d) {
      origin[d] = lo[d] - reach;
      const double extent = hi[d] - lo[d] + 2 * reach;
      n[d] = std::max(1, static_cast<int>(extent / (reach / span)));
      inverse[d] = n[d] / extent;
    }
  }
  std::size_t count() const { return static_cast<std::size_t>(n[0]) * n[1] * n[2]; }
  std::size_t index(int x, int y, int z) const { return (static_cast<std::size_t>(z) * n[1] + y) * n[0] + x; }
  int coordinate(double x, int d) const { return std::clamp(static_cast<int>((x - origin[d]) * inverse[d]), 0, n[d] - 1); }
  template <class P>
  std::array<int, 3> of(const typename P::point& x) const {
    return {coordinate(P::to_double(x[0]), 0), coordinate(P::to_double(x[1]), 1), coordinate(P::to_double(x[2]), 2)};
  }
  /// `row(first, last)` for each row of bins (consecutive along x) around bin `c`: bins [first, last).
  template <class Row>
  void rows_around(const std::array<int, 3>& c, Row row) const {
    const int x0 = std::max(c[0] - span, 0), x1 = std::min(c[0] + span, n[0] - 1);
    for (int z = std::max(c[2] - span, 0); z <= std::min(c[2] + span, n[2] - 1); ++z)
      for (int y = std::max(c[1] - span, 0); y <= std::min(c[1] + span, n[1] - 1); ++y)
        row(index(x0, y, z), index(x1, y, z) + 1);
  }
};

/// The simulation in precision P (fixed_precision or double_precision).
template <class P>
class simulation {
  using point = typename P::point;
  using sum = typename P::sum;

 public:
  simulation(const options& o, MPI_Comm world)
      // A cube: 0 entries of --grid are chosen for the smallest surface between boxes, as MD codes split
      // space (2 ranks: 1x1x2).
      : o_(o), grid_(world, {.dims = parse_grid(o.grid), .periodic = {true, true, true}, .lengths = {1, 1, 1}}) {
    const double lattice = std::cbrt(4.0 / o.density);
    length_fixed_ = to_fixed(o.size * lattice, position_unit);
    const double length = static_cast<double>(length_fixed_) * position_unit;
    if (length < 2 * (o.cutoff + o.skin))
      throw hs::error("--size " + std::to_string(o.size) + " gives a box of " + std::to_string(length) +
                      " sigma, below twice the cutoff plus skin: use --size 4 or more");
    domain_ = {{0, 0, 0}, {length, length, length}};
    const auto [lo, hi] = hs::box_of(grid_, domain_);
    bins_ = binning(lo, hi, o.cutoff + o.skin);
    MPI_Comm_rank(world, &rank_);
    create_lattice(lattice);
    create_velocities();
  }

  /// False if --check finds step 0 different from the serial computation (on every rank alike).
  bool run() {
    if (rank_ == 0 && !o_.quiet) {
      std::printf("# LJ melt: %lld atoms, %d^3 fcc cells, grid %s, strategy %s, newton %s, precision %s\n",
                  static_cast<long long>(atoms_), o_.size, hs::to_string(grid_.shape()).c_str(),
                  o_.strategy.c_str(), o_.newton ? "on" : "off", P::name);
    }
    if (o_.strategy == "auto") explain_choice();
    if (o_.balance > 0) balance(0);
    neighbor();
    if (rank_ == 0 && !o_.quiet && raw_)
      std::printf("# exchange: hand-written sendlist (examples/common/raw_particles.hpp)\n");
    else if (rank_ == 0 && !o_.quiet)
      std::printf("# exchange: %s, ghosts reach %s boxes%s\n", std::string(plan_->strategy()).c_str(),
                  hs::to_string(plan_->reach()).c_str(), o_.overlap ? ", overlapped with the forces" : "");
    energy_step_ = true;
    compute_forces();
    if (rank_ == 0 && !o_.quiet) std::printf("%-8s %14s %14s %14s %14s\n", "thermo", "step", "temp", "pe/atom", "press");
    thermo(0);
    if (o_.check && !check_step_zero()) return false;
    time_ = {};  // time the steps only, not the set-up
    const auto start = std::chrono::steady_clock::now();
    for (int step = 1; step <= o_.steps; ++step) {
      {
        clock_section t(time_.other);
        kick();
        drift();
      }
      // Energies and virials only where the thermo output needs them (as LAMMPS and miniMD).
      energy_step_ = step % o_.thermo == 0 || step == o_.steps;
      if (step % o_.reneighbor == 0) {
        if (o_.balance > 0 && step % o_.balance == 0) balance(step);
        neighbor();
        compute_forces();
      } else if (o_.overlap) {
        overlapped_step();
      } else {
        {
          clock_section t(time_.comm), p(time_.positions);
          forward_positions();
        }
        compute_forces();
      }
      {
        clock_section t(time_.other);
        kick();
      }
      if (energy_step_) thermo(step);
    }
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report(total);
    return true;
  }

  /// What the blocking reference run of --overlap reports: its timers and the final thermo values.
  const timers& time() const noexcept { return time_; }
  std::array<double, 3> last_thermo() const noexcept { return {temperature_, pe_per_atom_, pressure_}; }

 private:
  void create_lattice(double a) {
    static constexpr double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
    const int n = o_.size;
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          for (int b = 0; b < 4; ++b) {
            // The same lattice in both precisions: fixed point, converted to double in double mode.
            const fixed3 x{to_fixed((i + basis[b][0]) * a, position_unit), to_fixed((j + basis[b][1]) * a, position_unit),
                           to_fixed((k + basis[b][2]) * a, position_unit)};
            // --slab: the planes below half the box along z (counted in half cells, no rounding), vacuum above.
            if (o_.slab && 2 * k + static_cast<int>(2 * basis[b][2]) >= n) continue;
            hs::position where{};
            for (int d = 0; d < 3; ++d) where[d] = static_cast<double>(x[d]) * position_unit;
            if (hs::owner_of(grid_.shape(), domain_, where) != rank_) continue;
            const std::int64_t id = ((static_cast<std::int64_t>(k) * n + j) * n + i) * 4 + b;
            x_.push_back({P::from_lattice(x[0]), P::from_lattice(x[1]), P::from_lattice(x[2])});
            v_.push_back({0, 0, 0});
            id_.push_back(id);
          }
    atoms_ = static_cast<long long>(v_.size());
    MPI_Allreduce(MPI_IN_PLACE, &atoms_, 1, MPI_LONG_LONG, MPI_SUM, grid_.comm());
  }

  /// Moves the cuts so that every rank owns as many atoms (the slabs of boxes along each dimension
  /// carry equal counts), then the next neighbor() migrates the atoms and builds a new plan for the
  /// new boxes.
  void balance(int step) {
    clock_section t(time_.balance);
    const hs::balance_report r =
        hs::rebalance(grid_, domain_, owned_positions(), {}, {.max_move = o_.max_move});
    const auto [lo, hi] = hs::box_of(grid_, domain_);
    bins_ = binning(lo, hi, o_.cutoff + o_.skin);
    plan_.reset();  // a plan keeps the domain it was built for
    raw_.reset();
    if (rank_ == 0 && !o_.quiet)
      std::printf("# balance at step %d: imbalance (most atoms on a rank / mean) %.3f -> %.3f\n", step,
                  r.imbalance_before, r.imbalance_after);
  }

  /// Random velocities from the atom ids (the same whatever the decomposition),
  /// no net momentum, scaled to the target temperature, all with exact sums
  /// (in both precisions: both start from the same velocities).
  void create_velocities() {
    std::array<fixed, 4> momentum{0, 0, 0, 0};
    for (std::size_t i = 0; i < v_.size(); ++i)
      for (int d = 0; d < 3; ++d) {
        v_[i][d] = hashed_uniform(id_[i], d);
        momentum[d] += to_fixed(v_[i][d], energy_unit);
      }
    momentum = sum_all(momentum, grid_.comm());
    for (vec3& u : v_)
      for (int d = 0; d < 3; ++d) u[d] -= static_cast<double>(momentum[d]) * energy_unit / atoms_;
    std::array<fixed, 4> ke{0, 0, 0, 0};
    for (const vec3& u : v_) ke[0] += to_fixed(u[0] * u[0] + u[1] * u[1] + u[2] * u[2], energy_unit);
    ke = sum_all(ke, grid_.comm());
    const double scale = std::sqrt(o_.temperature / (static_cast<double>(ke[0]) * energy_unit / (3.0 * atoms_ - 3.0)));
    for (vec3& u : v_)
      for (int d = 0; d < 3; ++d) u[d] *= scale;
  }

  /// What Auto decides with: the calibration, and the predicted cost of each strategy.
  void explain_choice() {
    const hs::hockney model = hs::agreed_model(grid_.comm());
    std::uint64_t largest = v_.size();
    MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_UINT64_T, MPI_MAX, grid_.comm());
    if (rank_ != 0) return;
    const std::string path = hs::default_calibration_path();
    std::printf("# calibration: %s: alpha %.3f us, beta %.4f ns/B, gamma %.3f us\n",
                std::filesystem::exists(path) ? path.c_str() : "measured now (no file)", model.alpha() * 1e6,
                model.beta() * 1e9, model.gamma() * 1e6);
    const double reach = o_.cutoff + o_.skin;
    for (const hs::prediction& p : hs::explain_particles(grid_.shape(), domain_, {reach, reach, reach}, largest,
                                                         sizeof(hs::position), model))
      std::printf("# predicted %-12s %10.2f us per exchange\n", p.strategy.c_str(), p.seconds * 1e6);
  }

  /// Re-neighbouring: wrap, migrate, sort the owned atoms by bin, rebuild the particle plan, the
  /// ghosts and the neighbour lists.
  void neighbor() {
    {
      clock_section t(time_.comm), part(time_.migrate);
      // The owned atoms as parallel arrays: positions, velocities and ids migrate together (no
      // packing into structs); migrate wraps double positions into the box.
      const std::size_t owned = v_.size();
      x_.resize(owned);
      id_.resize(owned);
      if constexpr (P::exact) {
        // Fixed point: wrapped exactly, and their double copies decide the ownership.
        for (fixed3& p : x_)
          for (fixed& c : p) c = ((c % length_fixed_) + length_fixed_) % length_fixed_;
        hs::migrate(grid_, domain_, owned_as_doubles(), x_, v_, id_);
      } else if (o_.hand_written) {
        hand_written().exchange(x_, v_, id_);
      } else {
        // In place, holes filled from the end (LAMMPS's order): the atoms are sorted by bin next.
        hs::migrate(grid_, domain_,
                    {.count = owned,
                     .resize = [&](std::size_t n) { x_.resize(n), v_.resize(n), id_.resize(n); },
                     .keep_order = false},
                    hs::column(x_), hs::column(v_), hs::column(id_));
      }
      owned_ = v_.size();
    }
    {
      clock_section t(time_.neighbor);
      sort_by_bin();
    }
    {
      clock_section t(time_.comm), part(time_.ghosts);
      // The plan is built once; every later re-neighbouring rebuilds it for the new positions,
      // keeping its strategy, schedule and buffers.
      if constexpr (!P::exact) {
        if (o_.hand_written) hand_written().borders(x_, owned_, id_);  // ghost positions and ids
      }
      if (!o_.hand_written) {
        if (plan_)
          plan_->rebuild(owned_positions());
        else
          plan_ = std::make_unique<hs::particle_plan>(make_plan());
        x_.resize(plan_->size());
        id_.resize(plan_->size());
        // The ghosts' ids, and their positions: in double those the rebuild's key exchange brought
        // (shifted, the same bits as forward_positions), in fixed point a forward of their own.
        plan_->forward(std::span<std::int64_t>(id_));
        if constexpr (P::exact) {
          start_forward_positions().wait();
        } else {
          const std::vector<hs::position>& at = plan_->positions();
          const auto ghosts = static_cast<std::ptrdiff_t>(owned_);
          std::copy(at.begin() + ghosts, at.end(), x_.begin() + ghosts);
        }
      }
      if (x_.size() > std::numeric_limits<std::uint32_t>::max())
        throw hs::error("more than 2^32 atoms and ghosts on a rank");
    }
    clock_section t(time_.neighbor);
    build_lists();
  }

  /// The owned atoms in the order of their bins (a counting sort, as LAMMPS and miniMD sort): the
  /// atoms of a bin, and of a row of bins, are consecutive, which the neighbour search uses, and
  /// atoms close in space are close in memory for the force loop.
  void sort_by_bin() {
    const std::size_t owned = v_.size();
    std::vector<std::uint32_t> order;
    bin_atoms(0, owned, owned_head_, order);
    auto permute = [&](auto& values) {
      std::remove_reference_t<decltype(values)> sorted(owned);
      for (std::size_t k = 0; k < owned; ++k) sorted[k] = values[order[k]];
      values.swap(sorted);
    };
    permute(x_);
    permute(v_);
    permute(id_);
  }

  /// Atoms [begin, end) by bin (a counting sort): bin b's are order[head[b], head[b + 1]).
  void bin_atoms(std::size_t begin, std::size_t end, std::vector<std::size_t>& head, std::vector<std::uint32_t>& order) {
    head.assign(bins_.count() + 1, 0);
    bin_.resize(end - begin);
    for (std::size_t i = begin; i < end; ++i) {
      const auto c = bins_.of<P>(x_[i]);
      bin_[i - begin] = static_cast<std::uint32_t>(bins_.index(c[0], c[1], c[2]));
      ++head[bin_[i - begin] + 1];
    }
    for (std::size_t b = 0; b < bins_.count(); ++b) head[b + 1] += head[b];
    order.resize(end - begin);
    std::vector<std::size_t> fill(head.begin(), head.end() - 1);
    for (std::size_t i = begin; i < end; ++i) order[fill[bin_[i - begin]]++] = static_cast<std::uint32_t>(i);
  }

  /// Fixed point: the owned atoms' positions as doubles (exact conversions), in where_.
  std::vector<hs::position>& owned_as_doubles() {
    where_.resize(v_.size());
    for (std::size_t i = 0; i < where_.size(); ++i)
      for (int d = 0; d < 3; ++d) where_[i][d] = P::to_double(x_[i][d]);
    return where_;
  }

  /// The owned atoms' positions as doubles (in fixed point: converted, exactly); between
  /// re-neighbourings the ghosts follow them in x_.
  std::span<const hs::position> owned_positions() {
    if constexpr (P::exact)
      return owned_as_doubles();
    else
      return std::span<const hs::position>(x_).first(v_.size());
  }

  /// The plan from the owned atoms' positions.
  hs::particle_plan make_plan() {
    const double reach = o_.cutoff + o_.skin;
    // The strategy by name: one plan type, so the plan code is compiled once, not once per strategy.
    return hs::make_particle_plan(grid_, o_.strategy, domain_, reach, owned_positions());
  }

  /// The hand-written exchange, made for the current boxes.
  bench::raw_particles& hand_written() {
    if (!raw_) raw_ = std::make_unique<bench::raw_particles>(grid_.comm(), grid_, domain_, o_.cutoff + o_.skin);
    return *raw_;
  }

  /// The ghost positions from their owners, shifted by their periodic images (blocking).
  void forward_positions() {
    if constexpr (!P::exact) {
      if (raw_) return raw_->forward(x_);
    }
    start_forward_positions().wait();
  }

  /// The ghost positions from their owners, shifted by their periodic images.
  auto start_forward_positions() {
    if constexpr (P::exact)
      return plan_->start_forward(std::span<fixed3>(x_), shift_fixed{length_fixed_});
    else
      return plan_->start_forward_positions(std::span<hs::position>(x_));
  }

  /// Verlet lists from the bins: without Newton's third law, full lists; with
  /// it, each pair once: of two owned atoms the lower index owns the pair (the
  /// owned atoms are sorted by bin, so only the rest of the atom's bin row and
  /// the later rows hold candidates), of an owned atom and a ghost the lower
  /// atom id (so exactly one rank computes a pair across ranks, and one of an
  /// atom and a periodic image of another on one rank). Each atom's list holds
  /// its owned neighbours first, then its ghosts: --overlap computes the first
  /// part while the ghosts travel.
  void build_lists() {
    const double reach = o_.cutoff + o_.skin, reach2 = reach * reach;
    const std::size_t owned = owned_;
    bin_atoms(owned, x_.size(), ghost_head_, ghost_order_);  // the owned atoms are sorted already: owned_head_
    first_.assign(owned + 1, 0);
    split_.assign(owned, 0);
    // Without a branch: every candidate is written, and kept if it counts (a third of them or so).
    std::size_t count = 0;
    auto room = [&](std::size_t candidates) {
      if (count + candidates > neighbors_.size()) neighbors_.resize(2 * (count + candidates));
    };
    for (std::size_t i = 0; i < owned; ++i) {
      const point xi = x_[i];
      auto within = [&](std::size_t j) {
        const double dx = P::delta(xi[0], x_[j][0]), dy = P::delta(xi[1], x_[j][1]), dz = P::delta(xi[2], x_[j][2]);
        return dx * dx + dy * dy + dz * dz < reach2;
      };
      const auto c = bins_.of<P>(xi);
      bins_.rows_around(c, [&](std::size_t first, std::size_t last) {
        std::size_t j = owned_head_[first];
        if (o_.newton) j = std::max(j, i + 1);
        const std::size_t end = owned_head_[last];
        if (j >= end) return;
        room(end - j);
        for (; j < end; ++j) {
          neighbors_[count] = static_cast<std::uint32_t>(j);
          count += (j != i) & within(j);
        }
      });
      split_[i] = count;
      bins_.rows_around(c, [&](std::size_t first, std::size_t last) {
        room(ghost_head_[last] - ghost_head_[first]);
        for (std::size_t s = ghost_head_[first]; s < ghost_head_[last]; ++s) {
          const std::uint32_t j = ghost_order_[s];
          neighbors_[count] = j;
          count += static_cast<unsigned>(!o_.newton || id_[j] > id_[i]) & static_cast<unsigned>(within(j));  // no branch
        }
      });
      first_[i + 1] = count;
    }
  }

  void compute_forces() {
    {
      clock_section t(time_.force);
      clear_forces();
      pair_forces(0, owned_, false);
      pair_forces(0, owned_, true);
    }
    reverse_forces();
  }

  /// A step between re-neighbourings with --overlap: the ghost positions travel while the forces
  /// between owned atoms are computed (progress() every few hundred atoms moves multi-round
  /// strategies on), then the forces involving ghosts. The same sums in the same order as
  /// compute_forces(), so the same results bit for bit in both precisions.
  void overlapped_step() {
    auto start = std::chrono::steady_clock::now();
    auto pending = start_forward_positions();
    auto lap = [&](double& into) {
      const auto now = std::chrono::steady_clock::now();
      into += std::chrono::duration<double>(now - start).count();
      start = now;
    };
    lap(time_.positions);
    clear_forces();
    const std::size_t owned = owned_, chunk = 512;
    for (std::size_t i = 0; i < owned; i += chunk) {
      pair_forces(i, std::min(owned, i + chunk), false);
      lap(time_.force);
      pending.progress();
      lap(time_.positions);
    }
    pending.wait();
    lap(time_.positions);
    pair_forces(0, owned, true);
    lap(time_.force);
    reverse_forces();
  }

  void clear_forces() {
    f_.assign(o_.newton ? x_.size() : owned_, point{0, 0, 0});
    energy_ = virial_ = 0;
  }

  /// The pairs of atoms [begin, end) with their owned neighbours, or with their ghost neighbours.
  void pair_forces(std::size_t begin, std::size_t end, bool ghosts) {
    if (o_.newton)
      energy_step_ ? pairs<true, true>(begin, end, ghosts) : pairs<true, false>(begin, end, ghosts);
    else
      energy_step_ ? pairs<false, true>(begin, end, ghosts) : pairs<false, false>(begin, end, ghosts);
  }

  /// The force kernel: one pass over a flat neighbour array, the atom's force
  /// summed in registers, with Newton's third law the neighbour's updated too.
  /// Energies and virials are summed unweighted, in the order of the pairs
  /// (the same order whether or not --overlap cuts the pass into chunks).
  template <bool newton, bool energy>
  void pairs(std::size_t begin, std::size_t end, bool ghosts) {
    const double cut2 = o_.cutoff * o_.cutoff;
    const point* __restrict x = x_.data();
    point* __restrict f = f_.data();
    const std::uint32_t* __restrict neighbors = neighbors_.data();
    const std::size_t* from = ghosts ? split_.data() : first_.data();
    const std::size_t* to = ghosts ? first_.data() + 1 : split_.data();
    sum e = energy_, w = virial_;
    for (std::size_t i = begin; i < end; ++i) {
      const typename P::coordinate xi = x[i][0], yi = x[i][1], zi = x[i][2];
      sum fx = 0, fy = 0, fz = 0;
      for (std::size_t n = from[i], last = to[i]; n < last; ++n) {
        const std::uint32_t j = neighbors[n];
        const double dx = P::delta(xi, x[j][0]), dy = P::delta(yi, x[j][1]), dz = P::delta(zi, x[j][2]);
        const double r2 = dx * dx + dy * dy + dz * dz;
        // In double precision without a branch: a list pair beyond the cutoff (about a third) adds
        // zeros. In fixed point the branch costs less than rounding those zeros.
        if constexpr (P::exact)
          if (r2 >= cut2) continue;
        const double inside = r2 < cut2 ? 1.0 : 0.0;
        const double sr2 = 1.0 / r2, sr6 = sr2 * sr2 * sr2;
        const double fpair = inside * (48.0 * sr6 * (sr6 - 0.5) * sr2);
        const sum qx = P::force_part(fpair * dx), qy = P::force_part(fpair * dy), qz = P::force_part(fpair * dz);
        fx += qx;
        fy += qy;
        fz += qz;
        if constexpr (newton) {
          f[j][0] -= qx;
          f[j][1] -= qy;
          f[j][2] -= qz;
        }
        if constexpr (energy) {
          e += P::energy_part(inside * (4.0 * sr6 * (sr6 - 1.0)));
          w += P::energy_part(fpair * r2);
        }
      }
      f[i][0] += fx;
      f[i][1] += fy;
      f[i][2] += fz;
    }
    energy_ = e;
    virial_ = w;
  }

  /// With Newton's third law, the ghosts' forces summed onto their owners.
  void reverse_forces() {
    if (!o_.newton) return;
    clock_section t(time_.comm), part(time_.forces);
    if constexpr (!P::exact) {
      if (raw_) return raw_->reverse(f_);
    }
    plan_->reverse(std::span<point>(f_),
                   [](const point& a, const point& b) { return point{a[0] + b[0], a[1] + b[1], a[2] + b[2]}; });
  }

  void kick() {
    for (std::size_t i = 0; i < v_.size(); ++i)
      for (int d = 0; d < 3; ++d) v_[i][d] += 0.5 * o_.dt * P::force_value(f_[i][d]);
  }
  void drift() {
    for (std::size_t i = 0; i < v_.size(); ++i)
      for (int d = 0; d < 3; ++d) x_[i][d] += P::displacement(v_[i][d] * o_.dt);
  }

  void thermo(int step) {
    clock_section t(time_.other);
    // Each pair's energy and virial were summed twice without Newton, once with it: weighted the same.
    const sum weight = o_.newton ? 2 : 1;
    std::array<sum, 4> sums{0, weight * energy_, weight * virial_, 0};
    for (const vec3& u : v_) sums[0] += P::energy_part(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    sums = sum_all(sums, grid_.comm());
    const double twice_ke = P::energy_value(sums[0]);
    const double pe = P::energy_value(sums[1]) / 2;  // every pair was counted twice
    const double w = P::energy_value(sums[2]) / 2;
    const double volume = domain_.length(0) * domain_.length(1) * domain_.length(2);
    temperature_ = twice_ke / (3.0 * atoms_ - 3.0);
    pe_per_atom_ = pe / atoms_;
    pressure_ = (twice_ke + w) / (3.0 * volume);
    if (rank_ == 0 && !o_.quiet)
      std::printf("%-8s %14d %14.8f %14.8f %14.8f\n", "thermo", step, temperature_, pe_per_atom_, pressure_);
  }

  /// Step 0 against a serial all-pairs sum (minimum image) over every atom, on rank 0.
  bool check_step_zero() {
    const int n = static_cast<int>(owned_);
    int size = 0;
    MPI_Comm_size(grid_.comm(), &size);
    std::vector<int> counts(size), displs(size);
    const int bytes = n * static_cast<int>(sizeof(point));
    MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, grid_.comm());
    int total = 0;
    for (int r = 0; r < size; ++r) displs[r] = total, total += counts[r];
    std::vector<point> all(rank_ == 0 ? static_cast<std::size_t>(total) / sizeof(point) : 0);
    MPI_Gatherv(x_.data(), bytes, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0, grid_.comm());
    int same = 1;
    if (rank_ == 0) same = serial_check(all);
    MPI_Bcast(&same, 1, MPI_INT, 0, grid_.comm());  // every rank fails alike
    return same != 0;
  }

  /// Rank 0: the serial all-pairs sum over `all` atoms against the thermo output of step 0.
  bool serial_check(const std::vector<point>& all) const {
    const double length = static_cast<double>(length_fixed_) * position_unit, cut2 = o_.cutoff * o_.cutoff;
    long double energy = 0, virial = 0;
    for (std::size_t i = 0; i < all.size(); ++i)
      for (std::size_t j = i + 1; j < all.size(); ++j) {
        double r2 = 0;
        for (int d = 0; d < 3; ++d) {
          double dx = P::delta(all[i][d], all[j][d]);
          dx -= length * std::round(dx / length);
          r2 += dx * dx;
        }
        if (r2 >= cut2) continue;
        const double sr2 = 1.0 / r2, sr6 = sr2 * sr2 * sr2;
        energy += 4.0 * sr6 * (sr6 - 1.0);
        virial += 48.0 * sr6 * (sr6 - 0.5);
      }
    const double volume = length * length * length;
    const double pe = static_cast<double>(energy) / atoms_;
    const double press = ((3.0 * atoms_ - 3.0) * temperature_ + static_cast<double>(virial)) / (3.0 * volume);
    const double tolerance = P::check_tolerance;
    const bool same = std::abs(pe - pe_per_atom_) < tolerance * std::abs(pe) &&
                      std::abs(press - pressure_) < tolerance * std::abs(press) + 1e-12;
    std::printf("check: serial all-pairs pe/atom %.10f press %.10f: %s (relative differences %.1e, %.1e)\n", pe,
                press, same ? "match" : "MISMATCH", std::abs(pe - pe_per_atom_) / std::abs(pe),
                std::abs(press - pressure_) / std::abs(press));
    return same;
  }

  void report(double total) {
    // The overlapped step's position time is the exposed part of the exchange: part of communication.
    if (o_.overlap) time_.comm += time_.positions;
    double t[10] = {time_.force,   time_.neighbor, time_.comm,      time_.other,     time_.balance,
                    total,         time_.migrate,  time_.ghosts,    time_.positions, time_.forces};
    MPI_Allreduce(MPI_IN_PLACE, t, 10, MPI_DOUBLE, MPI_MAX, grid_.comm());
    // The load: atoms per rank now (largest over mean), and the force time's spread.
    double load[2] = {static_cast<double>(v_.size()), time_.force}, most[2] = {0, 0};
    MPI_Allreduce(load, most, 2, MPI_DOUBLE, MPI_MAX, grid_.comm());
    MPI_Allreduce(MPI_IN_PLACE, load, 2, MPI_DOUBLE, MPI_SUM, grid_.comm());
    if (rank_ != 0 || o_.quiet) return;
    const double ranks = grid_.size();
    std::printf("# time (max over ranks): total %.3f s for %d steps, %.1f us/step\n", t[5], o_.steps,
                o_.steps ? 1e6 * t[5] / o_.steps : 0.0);
    const char* names[5] = {"force", "neighbor", "communication", "other", "balance"};
    for (int i = 0; i < 5; ++i)
      std::printf("#   %-14s %9.3f s  %5.1f %%\n", names[i], t[i], t[5] > 0 ? 100 * t[i] / t[5] : 0.0);
    std::printf("#   communication: migrate %.3f s, ghosts at re-neighbouring %.3f s, positions %.3f s, "
                "forces back %.3f s\n",
                t[6], t[7], t[8], t[9]);
    std::printf("# load: atoms per rank at the end, most / mean %.3f; force time, most / mean %.3f\n",
                load[0] > 0 ? most[0] * ranks / load[0] : 1.0, load[1] > 0 ? most[1] * ranks / load[1] : 1.0);
    std::printf("# throughput: %.3f M atom-steps/s (%lld atoms x %d steps), communication %.1f %% of the time\n",
                t[5] > 0 ? 1e-6 * static_cast<double>(atoms_) * o_.steps / t[5] : 0.0, atoms_, o_.steps,
                t[5] > 0 ? 100 * t[2] / t[5] : 0.0);
  }

  options o_;
  hs::cartesian_grid grid_;
  hs::domain domain_;
  binning bins_;
  fixed length_fixed_ = 0;
  int rank_ = 0;
  long long atoms_ = 0;
  std::vector<hs::position> where_;  // fixed point: the owned positions as doubles, for ownership and the plan
  std::unique_ptr<hs::particle_plan> plan_;
  std::unique_ptr<bench::raw_particles> raw_;  // --hand-written
  std::size_t owned_ = 0;                      // atoms this rank owns (the rest of x_ are ghosts)
  std::vector<point> x_, f_;
  std::vector<vec3> v_;
  std::vector<std::int64_t> id_;
  std::vector<std::uint32_t> bin_;                        // bin_atoms(): each atom's bin
  std::vector<std::size_t> owned_head_, ghost_head_;      // per bin: where its owned atoms, its ghosts start
  std::vector<std::uint32_t> ghost_order_;                // the ghosts in the order of their bins
  std::vector<std::size_t> first_, split_;                // split_[i]: where atom i's ghost neighbours start
  std::vector<std::uint32_t> neighbors_;
  sum energy_ = 0, virial_ = 0;                           // unweighted: see thermo()
  bool energy_step_ = true;                               // whether this step's forces sum energies too
  double temperature_ = 0, pe_per_atom_ = 0, pressure_ = 0;
  timers time_;
};

/// The run in precision P; with --overlap, a quiet blocking run of the same steps first.
template <class P>
int run(const options& o, tool::context& ctx) {
  // --overlap: first the same run blocking and quiet, the reference for the hidden share and the thermo.
  std::unique_ptr<simulation<P>> reference;
  if (o.overlap) {
    options b = o;
    b.overlap = false;
    b.quiet = true;
    b.check = false;
    reference = std::make_unique<simulation<P>>(b, MPI_COMM_WORLD);
    reference->run();
  }
  simulation<P> md(o, MPI_COMM_WORLD);  // errors up to here are the same on every rank
  ctx.agreed = false;
  const bool same = md.run();
  ctx.agreed = true;
  if (!same) throw hs::error("step 0 differs from the serial all-pairs reference");
  if (reference) {
    double t[2] = {reference->time().positions, md.time().positions};
    MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const int forwards = std::max(1, o.steps - o.steps / o.reneighbor);
    const bool identical = reference->last_thermo() == md.last_thermo();
    if (ctx.lead())
      std::printf("# overlap: position exchange %.1f us/step blocking, %.1f us/step exposed: %.0f %% hidden; "
                  "thermo %s the blocking run bit for bit\n",
                  1e6 * t[0] / forwards, 1e6 * t[1] / forwards, t[0] > 0 ? std::max(0.0, 100 * (1 - t[1] / t[0])) : 0.0,
                  identical ? "equals" : "DIFFERS from");
    if (!identical) throw hs::error("the overlapped run differs from the blocking run");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The library writes nothing itself: its warnings (a calibration made for another job) go here.
  haloshift::set_log_sink(stderr);
  return tool::mpi_main("haloshift-md", argc, argv, [&](tool::context& ctx) {
    CLI::App app{
        "Lennard-Jones melt (LAMMPS / miniMD setup) with haloshift particle plans for the ghosts and the "
        "migration; with --precision fixed the thermo output is the same bit for bit whatever the strategy, "
        "the rank count or Newton's third law.",
        "haloshift-md"};
    tool::add_version(app);
    options o;
    add_options(app, o);
    if (const int status = tool::parse(app, argc, argv, ctx.lead()); status >= 0) return status;
    return o.precision == "fixed" ? run<fixed_precision>(o, ctx) : run<double_precision>(o, ctx);
  });
}

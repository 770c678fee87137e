// SPDX-License-Identifier: BSD-3-Clause
// haloshift-md: a Lennard-Jones molecular-dynamics mini-app in the standard
// "LJ melt" setup of LAMMPS and miniMD (fcc lattice at reduced density 0.8442,
// T = 1.44, cutoff 2.5 sigma, skin 0.3 sigma, dt = 0.005, re-neighbouring
// every 20 steps, cell lists), with haloshift particle plans for the ghosts
// and migration.
//
// Reproducibility by construction: positions are fixed point (2^-32 sigma)
// and forces, energies and virials are summed in fixed point, so every
// difference of positions is exact (also across periodic images) and every
// sum is independent of its order. The thermo output is therefore the same
// bit for bit whatever the strategy, the rank count, or Newton's third law.
//
//   mpiexec -n 4 haloshift-md [--strategy shift|singlehop|ttl|neighbor|auto] [--size N] [--steps N]
//                             [--thermo N] [--reneighbor N] [--newton on|off] [--grid PxQxR] [--check]
//                             [--overlap] [--help] [--version]
//
// --overlap computes the forces between owned atoms while the ghost positions
// travel (start_forward, progress() every 512 atoms, wait, then the forces
// with ghosts), after a quiet blocking run of the same steps, and reports the
// hidden share of the position exchange and whether the thermo agrees.

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
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

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

struct options {
  std::string strategy = "shift";
  int size = 8;  // fcc unit cells per side
  int steps = 100;
  int thermo = 10;
  int reneighbor = 20;
  bool newton = false;
  std::string newton_text = "off";
  bool check = false;  // compare step 0 against a serial all-pairs computation
  bool overlap = false;  // owned-owned forces while the positions travel
  bool quiet = false;    // the blocking reference run of --overlap prints nothing
  std::string grid = "0x0x0";
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
  app.add_option("--strategy", o.strategy, "Exchange strategy of the particle plan")
      ->check(CLI::IsMember({"shift", "singlehop", "ttl", "neighbor", "auto"}))
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
  app.add_option("--grid", o.grid, "Ranks per dimension, PxQxR (0: MPI chooses)")
      ->type_name("PxQxR")
      ->check(tool::parses(parse_grid))
      ->capture_default_str();
  app.add_flag("--check", o.check, "Compare step 0 with a serial all-pairs computation");
  app.add_flag("--overlap", o.overlap,
               "Compute the forces between owned atoms while the ghost positions travel (split-phase "
               "exchange); also runs blocking and reports the hidden share");
  app.callback([&o] {
    o.newton = o.newton_text == "on";
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
  double force = 0, neighbor = 0, comm = 0, other = 0;
  double positions = 0;  ///< the part of comm that forwards ghost positions between re-neighbourings (exposed)
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

/// Exact global sums of fixed-point quantities.
std::array<fixed, 4> sum_all(std::array<fixed, 4> local, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, local.data(), 4, MPI_INT64_T, MPI_SUM, comm);
  return local;
}

class simulation {
 public:
  simulation(const options& o, MPI_Comm world)
      : o_(o), grid_(world, {.dims = parse_grid(o.grid), .periodic = {true, true, true}}) {
    const double lattice = std::cbrt(4.0 / o.density);
    length_fixed_ = to_fixed(o.size * lattice, position_unit);
    const double length = static_cast<double>(length_fixed_) * position_unit;
    if (length < 2 * (o.cutoff + o.skin))
      throw hs::error("--size " + std::to_string(o.size) + " gives a box of " + std::to_string(length) +
                      " sigma, below twice the cutoff plus skin: use --size 4 or more");
    domain_ = {{0, 0, 0}, {length, length, length}};
    MPI_Comm_rank(world, &rank_);
    create_lattice(lattice);
    create_velocities();
  }

  /// False if --check finds step 0 different from the serial computation (on every rank alike).
  bool run() {
    if (rank_ == 0 && !o_.quiet) {
      std::printf("# LJ melt: %lld atoms, %d^3 fcc cells, grid %s, strategy %s, newton %s\n",
                  static_cast<long long>(atoms_), o_.size, hs::to_string(grid_.shape()).c_str(),
                  o_.strategy.c_str(), o_.newton ? "on" : "off");
    }
    if (o_.strategy == "auto") explain_choice();
    neighbor();
    if (rank_ == 0 && !o_.quiet)
      std::printf("# exchange: %s, ghosts reach %s boxes%s\n", std::string(plan_->strategy()).c_str(),
                  hs::to_string(plan_->reach()).c_str(), o_.overlap ? ", overlapped with the forces" : "");
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
      if (step % o_.reneighbor == 0) {
        neighbor();
        compute_forces();
      } else if (o_.overlap) {
        overlapped_step();
      } else {
        {
          clock_section t(time_.comm), p(time_.positions);
          plan_->forward(std::span<fixed3>(x_), shift_fixed{length_fixed_});
        }
        compute_forces();
      }
      {
        clock_section t(time_.other);
        kick();
      }
      if (step % o_.thermo == 0 || step == o_.steps) thermo(step);
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
            fixed3 x{to_fixed((i + basis[b][0]) * a, position_unit), to_fixed((j + basis[b][1]) * a, position_unit),
                     to_fixed((k + basis[b][2]) * a, position_unit)};
            hs::position where{};
            for (int d = 0; d < 3; ++d) where[d] = static_cast<double>(x[d]) * position_unit;
            if (hs::owner_of(grid_.shape(), domain_, where) != rank_) continue;
            const std::int64_t id = ((static_cast<std::int64_t>(k) * n + j) * n + i) * 4 + b;
            x_.push_back(x);
            v_.push_back({0, 0, 0});
            id_.push_back(id);
          }
    atoms_ = 4LL * n * n * n;
  }

  /// Random velocities from the atom ids (the same whatever the decomposition),
  /// no net momentum, scaled to the target temperature, all with exact sums.
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
    const double scale = std::sqrt(o_.temperature / temperature(v_));
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

  double temperature(const std::vector<vec3>& v) const {
    std::array<fixed, 4> ke{0, 0, 0, 0};
    for (const vec3& u : v) ke[0] += to_fixed(u[0] * u[0] + u[1] * u[1] + u[2] * u[2], energy_unit);
    ke = sum_all(ke, grid_.comm());
    return static_cast<double>(ke[0]) * energy_unit / (3.0 * atoms_ - 3.0);
  }

  /// Re-neighbouring: wrap, migrate, rebuild the particle plan, the ghosts and the neighbour lists.
  void neighbor() {
    {
      clock_section t(time_.comm);
      // The owned atoms as parallel arrays: fixed-point positions wrapped into the box, their double
      // copies for ownership, velocities and ids migrate together (no packing into structs).
      const std::size_t owned = v_.size();
      x_.resize(owned);
      id_.resize(owned);
      where_.resize(owned);
      for (std::size_t i = 0; i < owned; ++i)
        for (int d = 0; d < 3; ++d) {
          x_[i][d] = ((x_[i][d] % length_fixed_) + length_fixed_) % length_fixed_;
          where_[i][d] = static_cast<double>(x_[i][d]) * position_unit;
        }
      hs::migrate(grid_, domain_, where_, x_, v_, id_);
      plan_ = std::make_unique<hs::particle_plan>(make_plan(where_));
      x_.resize(plan_->size());
      id_.resize(plan_->size());
      plan_->forward(std::span<std::int64_t>(id_));
      plan_->forward(std::span<fixed3>(x_), shift_fixed{length_fixed_});
    }
    clock_section t(time_.neighbor);
    build_lists();
  }

  hs::particle_plan make_plan(const std::vector<hs::position>& where) {
    const double reach = o_.cutoff + o_.skin;
    const std::span<const hs::position> x(where);
    // The strategy by name: one plan type, so the plan code is compiled once, not once per strategy.
    const std::string name = o_.strategy == "ttl" ? "TtlMultiHop" : o_.strategy == "neighbor" ? "NeighborAlltoall" : o_.strategy;
    return hs::make_particle_plan(grid_, name, domain_, reach, x);
  }

  vec3 difference(std::size_t i, std::size_t j) const {
    return {static_cast<double>(x_[i][0] - x_[j][0]) * position_unit,
            static_cast<double>(x_[i][1] - x_[j][1]) * position_unit,
            static_cast<double>(x_[i][2] - x_[j][2]) * position_unit};
  }

  /// Cell lists over the box grown by the cutoff plus skin, then Verlet lists:
  /// full lists without Newton's third law; with it, each pair once (the
  /// lower atom id owns it, so exactly one rank computes a pair across ranks).
  void build_lists() {
    const double reach = o_.cutoff + o_.skin, reach2 = reach * reach;
    const auto [lo, hi] = hs::box_of(grid_, domain_);
    std::array<int, 3> cells{};
    vec3 origin{}, width{};
    for (int d = 0; d < 3; ++d) {
      origin[d] = lo[d] - reach;
      cells[d] = std::max(1, static_cast<int>((hi[d] - lo[d] + 2 * reach) / reach));
      width[d] = (hi[d] - lo[d] + 2 * reach) / cells[d];
    }
    auto cell_of = [&](std::size_t i, int d) {
      const double x = static_cast<double>(x_[i][d]) * position_unit;
      return std::clamp(static_cast<int>((x - origin[d]) / width[d]), 0, cells[d] - 1);
    };
    const std::size_t ncells = static_cast<std::size_t>(cells[0]) * cells[1] * cells[2];
    std::vector<std::size_t> head(ncells + 1, 0), order(x_.size());
    std::vector<std::size_t> cell(x_.size());
    for (std::size_t i = 0; i < x_.size(); ++i) {
      cell[i] = (static_cast<std::size_t>(cell_of(i, 2)) * cells[1] + cell_of(i, 1)) * cells[0] + cell_of(i, 0);
      ++head[cell[i] + 1];
    }
    for (std::size_t c = 0; c < ncells; ++c) head[c + 1] += head[c];
    std::vector<std::size_t> fill(head.begin(), head.end() - 1);
    for (std::size_t i = 0; i < x_.size(); ++i) order[fill[cell[i]]++] = i;

    const std::size_t owned = plan_->owned();
    first_.assign(owned + 1, 0);
    split_.assign(owned, 0);
    neighbors_.clear();
    for (std::size_t i = 0; i < owned; ++i) {
      const int ci[3] = {cell_of(i, 0), cell_of(i, 1), cell_of(i, 2)};
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int c[3] = {ci[0] + dx, ci[1] + dy, ci[2] + dz};
            if (c[0] < 0 || c[1] < 0 || c[2] < 0 || c[0] >= cells[0] || c[1] >= cells[1] || c[2] >= cells[2]) continue;
            const std::size_t k = (static_cast<std::size_t>(c[2]) * cells[1] + c[1]) * cells[0] + c[0];
            for (std::size_t s = head[k]; s < head[k + 1]; ++s) {
              const std::size_t j = order[s];
              if (j == i || (o_.newton && id_[j] < id_[i])) continue;
              const vec3 r = difference(i, j);
              if (r[0] * r[0] + r[1] * r[1] + r[2] * r[2] < reach2) neighbors_.push_back(j);
            }
          }
      // Owned neighbours first, then ghosts: --overlap computes the first part while the ghosts travel.
      // (Fixed-point sums do not depend on the order.)
      split_[i] = static_cast<std::size_t>(
          std::stable_partition(neighbors_.begin() + static_cast<std::ptrdiff_t>(first_[i]), neighbors_.end(),
                                [owned](std::size_t j) { return j < owned; }) -
          neighbors_.begin());
      first_[i + 1] = neighbors_.size();
    }
  }

  void compute_forces() {
    {
      clock_section t(time_.force);
      clear_forces();
      pair_forces(0, plan_->owned(), false);
      pair_forces(0, plan_->owned(), true);
    }
    reverse_forces();
  }

  /// A step between re-neighbourings with --overlap: the ghost positions travel while the forces
  /// between owned atoms are computed (progress() every few hundred atoms moves multi-round
  /// strategies on), then the forces involving ghosts. The same sums as compute_forces().
  void overlapped_step() {
    auto start = std::chrono::steady_clock::now();
    auto pending = plan_->start_forward(std::span<fixed3>(x_), shift_fixed{length_fixed_});
    auto lap = [&](double& into) {
      const auto now = std::chrono::steady_clock::now();
      into += std::chrono::duration<double>(now - start).count();
      start = now;
    };
    lap(time_.positions);
    clear_forces();
    const std::size_t owned = plan_->owned(), chunk = 512;
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
    f_.assign(o_.newton ? x_.size() : plan_->owned(), {0, 0, 0});
    energy_ = virial_ = 0;
  }

  /// The pairs of atoms [begin, end) with their owned neighbours, or with their ghost neighbours.
  void pair_forces(std::size_t begin, std::size_t end, bool ghosts) {
    const double cut2 = o_.cutoff * o_.cutoff;
    // Each pair's energy and virial are added twice without Newton, once doubled with it: the same sums.
    const fixed weight = o_.newton ? 2 : 1;
    for (std::size_t i = begin; i < end; ++i)
      for (std::size_t n = ghosts ? split_[i] : first_[i], last = ghosts ? first_[i + 1] : split_[i]; n < last; ++n) {
        const std::size_t j = neighbors_[n];
        const vec3 r = difference(i, j);
        const double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        if (r2 >= cut2) continue;
        const double sr2 = 1.0 / r2, sr6 = sr2 * sr2 * sr2;
        const double fpair = 48.0 * sr6 * (sr6 - 0.5) * sr2;
        for (int d = 0; d < 3; ++d) {
          const fixed q = to_fixed(fpair * r[d], force_unit);
          f_[i][d] += q;
          if (o_.newton) f_[j][d] -= q;
        }
        energy_ += weight * to_fixed(4.0 * sr6 * (sr6 - 1.0), energy_unit);
        virial_ += weight * to_fixed(fpair * r2, energy_unit);
      }
  }

  /// With Newton's third law, the ghosts' forces summed onto their owners.
  void reverse_forces() {
    if (!o_.newton) return;
    clock_section t(time_.comm);
    plan_->reverse(std::span<fixed3>(f_), [](const fixed3& a, const fixed3& b) {
      return fixed3{a[0] + b[0], a[1] + b[1], a[2] + b[2]};
    });
  }

  void kick() {
    for (std::size_t i = 0; i < v_.size(); ++i)
      for (int d = 0; d < 3; ++d) v_[i][d] += 0.5 * o_.dt * static_cast<double>(f_[i][d]) * force_unit;
  }
  void drift() {
    for (std::size_t i = 0; i < v_.size(); ++i)
      for (int d = 0; d < 3; ++d) x_[i][d] += to_fixed(v_[i][d] * o_.dt, position_unit);
  }

  void thermo(int step) {
    clock_section t(time_.other);
    std::array<fixed, 4> sums{0, energy_, virial_, 0};
    for (const vec3& u : v_) sums[0] += to_fixed(u[0] * u[0] + u[1] * u[1] + u[2] * u[2], energy_unit);
    sums = sum_all(sums, grid_.comm());
    const double twice_ke = static_cast<double>(sums[0]) * energy_unit;
    const double pe = static_cast<double>(sums[1]) * energy_unit / 2;  // every pair was counted twice
    const double w = static_cast<double>(sums[2]) * energy_unit / 2;
    const double volume = domain_.length(0) * domain_.length(1) * domain_.length(2);
    temperature_ = twice_ke / (3.0 * atoms_ - 3.0);
    pe_per_atom_ = pe / atoms_;
    pressure_ = (twice_ke + w) / (3.0 * volume);
    if (rank_ == 0 && !o_.quiet)
      std::printf("%-8s %14d %14.8f %14.8f %14.8f\n", "thermo", step, temperature_, pe_per_atom_, pressure_);
  }

  /// Step 0 against a serial all-pairs sum (minimum image) over every atom, on rank 0.
  bool check_step_zero() {
    const int n = static_cast<int>(plan_->owned());
    int size = 0;
    MPI_Comm_size(grid_.comm(), &size);
    std::vector<int> counts(size), displs(size);
    const int bytes = n * static_cast<int>(sizeof(fixed3));
    MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, grid_.comm());
    int total = 0;
    for (int r = 0; r < size; ++r) displs[r] = total, total += counts[r];
    std::vector<fixed3> all(rank_ == 0 ? static_cast<std::size_t>(total) / sizeof(fixed3) : 0);
    MPI_Gatherv(x_.data(), bytes, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0, grid_.comm());
    int same = 1;
    if (rank_ == 0) same = serial_check(all);
    MPI_Bcast(&same, 1, MPI_INT, 0, grid_.comm());  // every rank fails alike
    return same != 0;
  }

  /// Rank 0: the serial all-pairs sum over `all` atoms against the thermo output of step 0.
  bool serial_check(const std::vector<fixed3>& all) const {
    const double length = static_cast<double>(length_fixed_) * position_unit, cut2 = o_.cutoff * o_.cutoff;
    long double energy = 0, virial = 0;
    for (std::size_t i = 0; i < all.size(); ++i)
      for (std::size_t j = i + 1; j < all.size(); ++j) {
        double r2 = 0;
        for (int d = 0; d < 3; ++d) {
          double dx = static_cast<double>(all[i][d] - all[j][d]) * position_unit;
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
    const bool same = std::abs(pe - pe_per_atom_) < 1e-9 * std::abs(pe) && std::abs(press - pressure_) < 1e-9 * std::abs(press) + 1e-12;
    std::printf("check: serial all-pairs pe/atom %.10f press %.10f: %s\n", pe, press, same ? "match" : "MISMATCH");
    return same;
  }

  void report(double total) {
    // The overlapped step's position time is the exposed part of the exchange: part of communication.
    if (o_.overlap) time_.comm += time_.positions;
    double t[5] = {time_.force, time_.neighbor, time_.comm, time_.other, total};
    MPI_Allreduce(MPI_IN_PLACE, t, 5, MPI_DOUBLE, MPI_MAX, grid_.comm());
    if (rank_ != 0 || o_.quiet) return;
    std::printf("# time (max over ranks): total %.3f s for %d steps, %.1f us/step\n", t[4], o_.steps,
                o_.steps ? 1e6 * t[4] / o_.steps : 0.0);
    const char* names[4] = {"force", "neighbor", "communication", "other"};
    for (int i = 0; i < 4; ++i)
      std::printf("#   %-14s %9.3f s  %5.1f %%\n", names[i], t[i], t[4] > 0 ? 100 * t[i] / t[4] : 0.0);
  }

  options o_;
  hs::cartesian_grid grid_;
  hs::domain domain_;
  fixed length_fixed_ = 0;
  int rank_ = 0;
  long long atoms_ = 0;
  std::vector<hs::position> where_;  // the owned atoms' positions as doubles, for ownership and the plan
  std::unique_ptr<hs::particle_plan> plan_;
  std::vector<fixed3> x_, f_;
  std::vector<vec3> v_;
  std::vector<std::int64_t> id_;
  std::vector<std::size_t> first_, split_, neighbors_;  // split_[i]: where atom i's ghost neighbours start
  fixed energy_ = 0, virial_ = 0;
  double temperature_ = 0, pe_per_atom_ = 0, pressure_ = 0;
  timers time_;
};

}  // namespace

int main(int argc, char** argv) {
  // The library writes nothing itself: its warnings (a calibration made for another job) go here.
  haloshift::set_log_sink(haloshift::log_to(stderr));
  return tool::mpi_main("haloshift-md", argc, argv, [&](tool::context& ctx) {
    CLI::App app{
        "Lennard-Jones melt (LAMMPS / miniMD setup) with haloshift particle plans for the ghosts and the "
        "migration; the thermo output is the same bit for bit whatever the strategy, the rank count or "
        "Newton's third law.",
        "haloshift-md"};
    tool::add_version(app);
    options o;
    add_options(app, o);
    if (const int status = tool::parse(app, argc, argv, ctx.lead()); status >= 0) return status;
    // --overlap: first the same run blocking and quiet, the reference for the hidden share and the thermo.
    std::unique_ptr<simulation> reference;
    if (o.overlap) {
      options b = o;
      b.overlap = false;
      b.quiet = true;
      b.check = false;
      reference = std::make_unique<simulation>(b, MPI_COMM_WORLD);
      reference->run();
    }
    simulation md(o, MPI_COMM_WORLD);  // errors up to here are the same on every rank
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
  });
}

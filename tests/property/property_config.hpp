// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What the randomized property tests share: how many configurations a run
// draws and from which seed, a random number generator that gives the same
// numbers on every rank and platform, random grids of the world size, and the
// reporting of a failure with everything needed to run that configuration
// again.
//
// Every configuration is drawn from a seed made of the base seed, the payload
// kind, the world size and the configuration's index, identically on every
// rank, so all ranks agree on it without communicating; what differs per rank
// (particle positions) is drawn from that seed and the rank. To reproduce a
// failure: the same rank count, HALOSHIFT_PROPERTY_SEED (if it was set) and
// HALOSHIFT_PROPERTY_CONFIG=<index> to run that configuration alone.
//
//   HALOSHIFT_PROPERTY_CONFIGS  configurations per payload kind (default below; fewer under
//                               HALOSHIFT_TEST_SWEEP=reduced)
//   HALOSHIFT_PROPERTY_SEED     base seed (decimal or 0x hex)
//   HALOSHIFT_PROPERTY_CONFIG   run only the configuration with this index
//   HALOSHIFT_PROPERTY_VERBOSE  1: rank 0 prints every configuration as it completes

#include "../support/driving.hpp"
#include <mpi.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <haloshift/auto.hpp>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../support/catch.hpp"
#include "../support/oracle.hpp"
#include "../support/sweep.hpp"
#include "../support/world.hpp"

namespace property {

namespace hs = haloshift;

/// Random numbers from std::mt19937_64, whose sequence the standard fixes, mapped to ranges by
/// our own arithmetic (the standard distributions differ between libraries): the same
/// configurations on every rank, compiler and platform.
class rng {
 public:
  explicit rng(std::uint64_t seed) : gen_(seed) {}
  std::uint64_t bits() { return gen_(); }
  /// Uniform in [lo, hi] (inclusive).
  int uniform(int lo, int hi) { return lo + static_cast<int>(gen_() % static_cast<std::uint64_t>(hi - lo + 1)); }
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(gen_() >> 11) * 0x1p-53; }
  double real(double lo, double hi) { return lo + (hi - lo) * unit(); }
  bool chance(double p) { return unit() < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(uniform(0, static_cast<int>(v.size()) - 1))];
  }

 private:
  std::mt19937_64 gen_;
};

/// splitmix64's finaliser: seeds of neighbouring indices far apart.
inline std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline long env_number(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return std::strtol(v, nullptr, 0);
}

/// The payload kinds, part of every configuration's seed.
enum class kind : int { blocks = 1, particles = 2, fields = 3, migration = 4 };

/// How many configurations a test case runs, from which seed.
struct settings {
  std::uint64_t seed = 0x4a105eed;
  int configs = 0;
  int only = -1;  ///< HALOSHIFT_PROPERTY_CONFIG: this index alone
  bool verbose = false;

  /// The seed of configuration `index` of payload kind `kind` at `ranks` ranks.
  std::uint64_t config_seed(kind k, int ranks, int index) const {
    return mix(mix(mix(seed, static_cast<std::uint64_t>(k)), static_cast<std::uint64_t>(ranks)),
               static_cast<std::uint64_t>(index));
  }
  bool runs(int index) const { return only < 0 || index == only; }
  int count() const { return only < 0 ? configs : only + 1; }
};

/// Configurations per payload kind (4 kinds: 500 per rank count, 4000 over the 1-8 rank sweep), tuned
/// for CI: 1-6 s per rank count on an idle 2-core machine (8 ranks oversubscribed, Open MPI), about
/// twice that under load. MPICH busy-polls when oversubscribed (HALOSHIFT_TEST_SWEEP=reduced): a handful.
constexpr int ci_configs = 125, reduced_configs = 8;

inline settings settings_from_environment() {
  settings s;
  if (const char* v = std::getenv("HALOSHIFT_PROPERTY_SEED"); v && *v) s.seed = std::strtoull(v, nullptr, 0);
  s.configs = static_cast<int>(env_number("HALOSHIFT_PROPERTY_CONFIGS", sweep::reduced() ? reduced_configs : ci_configs));
  s.only = static_cast<int>(env_number("HALOSHIFT_PROPERTY_CONFIG", -1));
  s.verbose = env_number("HALOSHIFT_PROPERTY_VERBOSE", 0) != 0;
  return s;
}

/// A random Cartesian grid of the world size: 1 to 3 dimensions, dims one of the ordered
/// factorisations of the rank count (so 1 and 2 boxes along a dimension occur), periodic at random.
struct grid_config {
  int ndims = 1;
  std::array<int, 3> dims{1, 1, 1};
  std::array<bool, 3> periodic{false, false, false};

  oracle::grid as_oracle() const {
    oracle::grid g;
    g.dims = dims;
    for (int d = 0; d < ndims; ++d) g.periodic[d] = periodic[d];
    return g;
  }
  std::string describe() const {
    std::string s;
    for (int d = 0; d < ndims; ++d) s += (d ? "x" : "") + std::to_string(dims[d]) + (periodic[d] ? "p" : "");
    return s;
  }
};

inline grid_config random_grid(rng& r, int ranks) {
  grid_config g;
  g.ndims = r.uniform(1, 3);
  std::vector<std::vector<int>> all;
  std::vector<int> prefix;
  sweep::factorisations(ranks, g.ndims, prefix, all);
  const std::vector<int>& dims = r.pick(all);
  for (int d = 0; d < g.ndims; ++d) {
    g.dims[d] = dims[static_cast<std::size_t>(d)];
    g.periodic[d] = r.chance(0.5);
  }
  return g;
}

/// Grids by shape, built once per test case (each is a communicator duplicate): every rank draws
/// the same configurations, so every rank asks for the same grids in the same order.
class grid_cache {
 public:
  const hs::cartesian_grid& get(const grid_config& g) {
    const std::string key = g.describe();
    auto it = grids_.find(key);
    if (it == grids_.end()) {
      std::vector<int> dims(g.dims.begin(), g.dims.begin() + g.ndims);
      std::vector<bool> periodic(g.periodic.begin(), g.periodic.begin() + g.ndims);
      it = grids_.emplace(key, std::make_unique<hs::cartesian_grid>(
                                   MPI_COMM_WORLD, hs::grid_options{.dims = dims, .periodic = periodic}))
               .first;
    }
    return *it->second;
  }

 private:
  std::map<std::string, std::unique_ptr<hs::cartesian_grid>> grids_;
};

/// Exact text of a double (round-trips), for configurations printed on failure.
inline std::string exact(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

/// The failures of one test case on this rank: the first few in full (configuration, seed, what
/// differs), the rest counted, so a systematic bug does not print thousands of reports.
class failures {
 public:
  explicit failures(const char* what, const settings& s) : what_(what), settings_(s) {}
  ~failures() = default;
  failures(const failures&) = delete;
  failures& operator=(const failures&) = delete;

  /// Records the configuration `index` failed with `why` (nothing when `why` is empty).
  void check(int index, const std::string& config, const std::string& why) {
    ++checked_;
    if (settings_.verbose && world_rank() == 0)
      std::printf("%s %d: %s%s\n", what_, index, config.c_str(), why.empty() ? "" : " FAILED on rank 0");
    if (why.empty()) return;
    if (++failed_ > 5) return;
    std::ostringstream text;
    text << what_ << " property failed on rank " << world_rank() << " of " << world_size() << ", configuration "
         << index << "\nreproduce: HALOSHIFT_PROPERTY_SEED=0x" << std::hex << settings_.seed << std::dec
         << " HALOSHIFT_PROPERTY_CONFIG=" << index << " mpirun -np " << world_size()
         << " haloshift_property_tests [" << what_ << "]\nconfiguration: " << config << "\nwhat differs: " << why;
    FAIL_CHECK(text.str());
  }
  /// At the end: the count, and that configurations ran at all.
  void summarise() {
    if (failed_ > 5) FAIL_CHECK(what_ << ": " << failed_ << " of " << checked_ << " configurations failed on rank "
                                      << world_rank() << " (the first 5 are reported above)");
    CHECK(checked_ > 0);
  }

 private:
  const char* what_;
  settings settings_;
  int checked_ = 0, failed_ = 0;
};

/// Appends to `why` (a failure description), keeping it to a readable length.
inline void note(std::string& why, const std::string& text) {
  if (!text.empty() && why.size() < 1500) why += (why.empty() ? "" : "; ") + text;
}

/// Auto reads a fixed calibration while the guard lives (written by rank 0 to a file of this job),
/// so its choices do not depend on a measurement or on the machine's own calibration file.
class fixed_calibration {
 public:
  fixed_calibration() {
    int tag = world_rank() == 0 ? static_cast<int>(::getpid()) : 0;
    MPI_Bcast(&tag, 1, MPI_INT, 0, MPI_COMM_WORLD);
    path_ = (std::filesystem::temp_directory_path() / ("haloshift-property-" + std::to_string(tag) + ".json")).string();
    if (const char* old = std::getenv("HALOSHIFT_CALIBRATION")) previous_ = old, had_previous_ = true;
    if (world_rank() == 0)
      std::ofstream(path_) << R"({"haloshift_calibration": 1, "alpha_s": 2e-06, "beta_s_per_byte": 1e-09, )"
                           << R"("gamma_s": 5e-07})";
    MPI_Barrier(MPI_COMM_WORLD);
    setenv("HALOSHIFT_CALIBRATION", path_.c_str(), 1);
    hs::detail::forget_agreed_models();
  }
  ~fixed_calibration() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) std::remove(path_.c_str());
    if (had_previous_)
      setenv("HALOSHIFT_CALIBRATION", previous_.c_str(), 1);
    else
      unsetenv("HALOSHIFT_CALIBRATION");
    hs::detail::forget_agreed_models();
  }
  fixed_calibration(const fixed_calibration&) = delete;
  fixed_calibration& operator=(const fixed_calibration&) = delete;

 private:
  std::string path_, previous_;
  bool had_previous_ = false;
};

/// Strategy names for the by-name plan builders. Blocks: all of them; particles and fields:
/// those that can select (TeamShift cannot, by design).
inline const std::vector<std::string>& block_strategies() {
  static const std::vector<std::string> s{"Shift", "TeamShift", "SingleHop", "TtlMultiHop", "NeighborAlltoall", "Auto"};
  return s;
}
inline const std::vector<std::string>& selective_strategies() {
  static const std::vector<std::string> s{"Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall", "Auto"};
  return s;
}

inline const char* to_string(driving d) {
  return d == driving::blocking ? "blocking" : d == driving::progress_once ? "progress+wait" : "test-loop";
}
inline driving random_driving(rng& r) { return static_cast<driving>(r.uniform(0, 2)); }

/// Random protocol: rendezvous now and then (not for NeighborAlltoall, which is a collective).
inline hs::protocol random_protocol(rng& r, const std::string& strategy) {
  if (strategy == "NeighborAlltoall") return hs::protocol::overlapping;
  return r.chance(0.2) ? hs::protocol::rendezvous : hs::protocol::overlapping;
}
inline const char* to_string(hs::protocol p) {
  return p == hs::protocol::rendezvous ? "rendezvous" : "overlapping";
}

}  // namespace property

// SPDX-License-Identifier: BSD-3-Clause
// haloshift_bench_include_cost: does including haloshift (and building a plan
// next to one's loops) slow down a user's own kernel? The same 2D star stencil
// (PRK's, radius 1-4, include_cost_kernel.hpp) is compiled four times into
// this program: include_cost_plain.cpp without the library and with only an
// MPI_Barrier where a code exchanges ghosts ("bare"), include_cost_hand.cpp
// with a face exchange written by hand built next to the loops (the code a user
// ports: no haloshift header either), include_cost_library.cpp with
// <haloshift/haloshift.hpp> included first and a faces-only field plan built in
// the kernel's own function, and include_cost_again.cpp, the bare file once
// more at another address (the control: what placement alone does). All four
// run on the same arrays, side by side, the order rotating from round to round;
// per (n, radius) the table gives the median time per sweep and the medians of
// the per-round ratios with their 10th and 90th percentiles. Target: library /
// hand-written at most 1 % above 1 (issue 37; docs/performance.md, "Including
// the headers"); library / bare and hand-written / bare show what any exchange
// next to the loops costs them. All four results must agree bit for bit
// (checked once per row).
//
//   mpiexec -n 1 ./haloshift_bench_include_cost [--n 500,2000] [--radius 1,2,3,4]
//          [--iterations 5] [--reps 41] [--quick]
//
// One rank only: the kernels exchange nothing at 1 rank, so the loops are
// all that is timed.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "include_cost.hpp"
#include "round_robin.hpp"

namespace {

struct options {
  std::vector<long> n{500, 2000}, radius{1, 2, 3, 4};
  int iterations = 5;
  int reps = 41;
};

/// The `q`-quantile of `v` (nearest rank).
double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

using entry = double (*)(MPI_Comm, const include_cost::run_args&, double*, double*);
/// The four copies, in the order of `entries`; the order within a round rotates from one to the next.
enum kernel_copy : int { bare, hand_written, library, bare_again, variants };
constexpr entry entries[variants] = {run_plain, run_hand_written, run_library, run_plain_again};

struct ratios {
  double median = 0, low = 0, high = 0;  ///< of the per-round ratios: median, 10th, 90th percentile
};
ratios spread(const std::vector<double>& r) { return {quantile(r, 0.5), quantile(r, 0.1), quantile(r, 0.9)}; }

struct row {
  double time[variants] = {};  ///< median seconds per sweep of each entry
  ratios library_hand, library_bare, hand_bare, again_bare;
  bool identical = false;
};

/// One (n, radius): a checked warm-up of each entry, then `reps` timed rounds of all four.
row measure(const options& o, const include_cost::run_args& a, std::vector<double>& in, std::vector<double>& out) {
  row r;
  entries[bare](MPI_COMM_SELF, a, in.data(), out.data());
  const std::vector<double> expected = out;
  r.identical = true;
  for (int e = hand_written; e < variants; ++e) {
    entries[e](MPI_COMM_SELF, a, in.data(), out.data());
    r.identical = r.identical && std::memcmp(expected.data(), out.data(), out.size() * sizeof(double)) == 0;
  }
  std::vector<double> times[variants], library_hand, library_bare, hand_bare, again_bare;
  for (int rep = 0; rep < o.reps; ++rep) {
    double t[variants] = {};
    for (int k = 0; k < variants; ++k) {
      const int e = (rep + k) % variants;
      t[e] = entries[e](MPI_COMM_SELF, a, in.data(), out.data());
    }
    for (int e = 0; e < variants; ++e) times[e].push_back(t[e] / a.iterations);
    library_hand.push_back(t[library] / t[hand_written]);
    library_bare.push_back(t[library] / t[bare]);
    hand_bare.push_back(t[hand_written] / t[bare]);
    again_bare.push_back(t[bare_again] / t[bare]);
  }
  for (int e = 0; e < variants; ++e) r.time[e] = quantile(times[e], 0.5);
  r.library_hand = spread(library_hand), r.library_bare = spread(library_bare);
  r.hand_bare = spread(hand_bare), r.again_bare = spread(again_bare);
  return r;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      o.n = {64}, o.radius = {1, 2, 3, 4}, o.iterations = 1, o.reps = 3;
      continue;
    }
    if (i + 1 >= argc) throw std::runtime_error("option " + a + " needs a value");
    const char* v = argv[++i];
    if (a == "--n") o.n = bench::parse_list(v);
    else if (a == "--radius") o.radius = bench::parse_list(v);
    else if (a == "--iterations") o.iterations = std::atoi(v);
    else if (a == "--reps") o.reps = std::atoi(v);
    else throw std::runtime_error("unknown option " + a + " (see the comment at the top of include_cost.cpp)");
  }
  for (long n : o.n)
    if (n < 1 || n > 40000) throw std::runtime_error("--n must be 1 to 40000, got " + std::to_string(n));
  for (long r : o.radius)
    if (r < 1 || r > 4) throw std::runtime_error("--radius must be 1 to 4, got " + std::to_string(r));
  if (o.iterations < 1) throw std::runtime_error("--iterations must be >= 1, got " + std::to_string(o.iterations));
  if (o.reps < 1) throw std::runtime_error("--reps must be >= 1, got " + std::to_string(o.reps));
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0, status = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    if (size != 1) throw std::runtime_error("run on 1 rank (got " + std::to_string(size) + ")");
    const options o = parse(argc, argv);
    std::printf("kernel loops with and without haloshift's headers, 1 rank, %s, compiler %s\n",
                bench::mpi_library().c_str(), __VERSION__);
    std::printf(
        "%d timed rounds per row (rotating order), %d sweeps per call; ms per sweep (median); ratios: "
        "median (p10, p90) of the per-round ratios\n\n",
        o.reps, o.iterations);
    std::printf(
        "| n | radius | bare ms | hand-written ms | library ms | library / hand-written | library / bare "
        "| hand-written / bare | bare again / bare | results |\n");
    std::printf("|---:|---:|---:|---:|---:|:---|:---|:---|:---|:---|\n");
    double worst = -1, worst_bare = -1, worst_hand_bare = -1, worst_again = 0;  // ratios are positive
    bool all_identical = true;
    auto cell = [](const ratios& q) {
      char text[64];
      std::snprintf(text, sizeof text, "%.4f (%.4f, %.4f)", q.median, q.low, q.high);
      return std::string(text);
    };
    for (long n : o.n) {
      const long width = n + 2 * 4;
      std::vector<double> in(static_cast<std::size_t>(width * width)), out(in.size());
      for (long radius : o.radius) {
        const include_cost::run_args a{n, static_cast<int>(radius), o.iterations};
        const row r = measure(o, a, in, out);
        std::printf("| %ld | %ld | %.3f | %.3f | %.3f | %s | %s | %s | %s | %s |\n", n, radius, 1e3 * r.time[bare],
                    1e3 * r.time[hand_written], 1e3 * r.time[library], cell(r.library_hand).c_str(),
                    cell(r.library_bare).c_str(), cell(r.hand_bare).c_str(), cell(r.again_bare).c_str(),
                    r.identical ? "identical" : "DIFFER");
        worst = std::max(worst, r.library_hand.median - 1);
        worst_bare = std::max(worst_bare, r.library_bare.median - 1);
        worst_hand_bare = std::max(worst_hand_bare, r.hand_bare.median - 1);
        worst_again = std::max(worst_again, std::abs(r.again_bare.median - 1));
        all_identical = all_identical && r.identical;
      }
    }
    std::printf(
        "\nlargest slowdown (median ratio - 1): library / hand-written %.2f %% (target: at most 1 %%), "
        "library / bare %.2f %%, hand-written / bare %.2f %%; largest |bare again / bare - 1| %.2f %% "
        "(placement alone); results %s\n",
        100 * worst, 100 * worst_bare, 100 * worst_hand_bare, 100 * worst_again,
        all_identical ? "identical" : "DIFFER");
    if (!all_identical) status = 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "haloshift_bench_include_cost: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}

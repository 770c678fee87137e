// SPDX-License-Identifier: BSD-3-Clause
// haloshift_bench_include_cost: does including haloshift (and building a plan
// next to one's loops) slow down a user's own kernel? The same 2D star stencil
// (PRK's, radius 1-4, include_cost_kernel.hpp) is compiled three times into
// this program: include_cost_plain.cpp without the library,
// include_cost_library.cpp with <haloshift/haloshift.hpp> included first and a
// faces-only field plan built in the kernel's own function, and
// include_cost_again.cpp, the plain file once more at another address (the
// control: what placement alone does). All three run on the same arrays, side
// by side, the order rotating from triple to triple; per (n, radius) the
// table gives the median time per sweep and the medians of the per-triple
// ratios library / plain and plain again / plain with their 10th and 90th
// percentiles. Target: library / plain within 1 % of 1 (issue 37;
// docs/performance.md, "Including the headers"). All three results must agree
// bit for bit (checked once per row).
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
/// plain, library, plain again: the order within a triple rotates from one to the next.
constexpr entry entries[3] = {run_plain, run_library, run_plain_again};

struct ratios {
  double median = 0, low = 0, high = 0;  ///< of the per-triple ratios: median, 10th, 90th percentile
};
ratios spread(const std::vector<double>& r) { return {quantile(r, 0.5), quantile(r, 0.1), quantile(r, 0.9)}; }

struct row {
  double plain = 0, library = 0;  ///< median seconds per sweep
  ratios library_ratio, again_ratio;
  bool identical = false;
};

/// One (n, radius): a checked warm-up of each entry, then `reps` timed triples.
row measure(const options& o, const include_cost::run_args& a, std::vector<double>& in, std::vector<double>& out) {
  row r;
  run_plain(MPI_COMM_SELF, a, in.data(), out.data());
  const std::vector<double> expected = out;
  r.identical = true;
  for (entry e : {entries[1], entries[2]}) {
    e(MPI_COMM_SELF, a, in.data(), out.data());
    r.identical = r.identical && std::memcmp(expected.data(), out.data(), out.size() * sizeof(double)) == 0;
  }
  std::vector<double> plain, library, library_ratio, again_ratio;
  for (int rep = 0; rep < o.reps; ++rep) {
    double t[3] = {};
    for (int k = 0; k < 3; ++k) {
      const int e = (rep + k) % 3;
      t[e] = entries[e](MPI_COMM_SELF, a, in.data(), out.data());
    }
    plain.push_back(t[0] / a.iterations);
    library.push_back(t[1] / a.iterations);
    library_ratio.push_back(t[1] / t[0]);
    again_ratio.push_back(t[2] / t[0]);
  }
  r.plain = quantile(plain, 0.5), r.library = quantile(library, 0.5);
  r.library_ratio = spread(library_ratio), r.again_ratio = spread(again_ratio);
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
    std::printf("%d timed triples per row (rotating order), %d sweeps per call; ms per sweep (median)\n\n", o.reps,
                o.iterations);
    std::printf("| n | radius | plain ms | library ms | library / plain (p10, p90) | plain again / plain (p10, p90) "
                "| results |\n");
    std::printf("|---:|---:|---:|---:|:---|:---|:---|\n");
    double worst = 0, worst_again = 0;
    bool all_identical = true;
    for (long n : o.n) {
      const long width = n + 2 * 4;
      std::vector<double> in(static_cast<std::size_t>(width * width)), out(in.size());
      for (long radius : o.radius) {
        const include_cost::run_args a{n, static_cast<int>(radius), o.iterations};
        const row r = measure(o, a, in, out);
        const ratios& l = r.library_ratio;
        const ratios& g = r.again_ratio;
        std::printf("| %ld | %ld | %.3f | %.3f | %.4f (%.4f, %.4f) | %.4f (%.4f, %.4f) | %s |\n", n, radius,
                    1e3 * r.plain, 1e3 * r.library, l.median, l.low, l.high, g.median, g.low, g.high,
                    r.identical ? "identical" : "DIFFER");
        worst = std::max(worst, std::abs(l.median - 1));
        worst_again = std::max(worst_again, std::abs(g.median - 1));
        all_identical = all_identical && r.identical;
      }
    }
    std::printf("\nlargest |median ratio - 1|: library %.2f %% (target: within 1 %%), plain again %.2f %% "
                "(placement alone); results %s\n",
                100 * worst, 100 * worst_again, all_identical ? "identical" : "DIFFER");
    if (!all_identical) status = 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "haloshift_bench_include_cost: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}

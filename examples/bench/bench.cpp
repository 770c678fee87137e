// SPDX-License-Identifier: BSD-3-Clause
// haloshift_bench: the library's Shift against a hand-written MPI Shift with
// the same messages (raw_shift.hpp), on a periodic 3D grid of all ranks.
//
//   mpiexec -n 8 ./haloshift_bench            full table: k = 1..4, m = 64 B .. 1 MiB
//   mpiexec -n 2 ./haloshift_bench --quick    a small subset, for a CI smoke run
//   ./haloshift_bench --help                  all options
//
// For every (k, m) it first checks that both produce the same halo, byte for
// byte (and the right data), then times them interleaved: warm-up pairs, then
// repetitions library, raw, library, raw, ... Each repetition is a barrier and
// one timed exchange; its time is the maximum over the ranks. The table shows
// the medians and their ratio library / raw on rank 0, as Markdown.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <haloshift/haloshift.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "raw_shift.hpp"
#include "round_robin.hpp"

namespace {

struct options {
  std::vector<int> ks{1, 2, 3, 4};
  std::vector<std::size_t> ms{64, 1024, 16 * 1024, 128 * 1024, 1024 * 1024};
  double budget = 3.0;        ///< seconds of timed repetitions per configuration (both variants)
  int min_reps = 9;           ///< repetitions of each variant, at least ...
  int max_reps = 1001;        ///< ... and at most
  int warmup = 3;             ///< untimed pairs before the pilot measurement
  double max_cube_mib = 256;  ///< skip configurations whose cube exceeds this per rank
  bench::self_mode self = bench::self_mode::copy;
  bool quick = false;
  bool malloc_default = false;  ///< keep glibc's adaptive mmap threshold (see main)
  /// Which variant goes first in a timed pair. The first exchange after the
  /// barrier absorbs the ranks' skew leaving it (a few per cent of a 2 us
  /// exchange), so by default the order alternates from pair to pair.
  enum class pair_order { alternate, library_first, raw_first } order = pair_order::alternate;
  /// Allocate the raw cube before the library's halo (default: after). At 8 ranks with
  /// 100 MiB cubes the cube allocated first ran 1.4x slower here, whichever code used it.
  bool raw_allocated_first = false;
};

std::size_t parse_size(std::string_view s) {
  std::size_t pos = 0;
  const std::string text(s);
  const double value = std::stod(text, &pos);
  std::string unit = text.substr(pos);
  std::size_t scale = 1;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "K" || unit == "k" || unit == "KiB")
    scale = 1024;
  else if (unit == "M" || unit == "MiB")
    scale = 1024 * 1024;
  else
    throw bench::usage_error{"bad size '" + text + "' (use e.g. 64, 16K, 16KiB, 1M)"};
  if (value <= 0) throw bench::usage_error{"sizes must be positive, got '" + text + "'"};
  return static_cast<std::size_t>(value * static_cast<double>(scale));
}

template <class F>
void split(std::string_view list, F&& each) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    each(list.substr(0, comma));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

const char* help =
    "usage: haloshift_bench [options]\n"
    "  --quick             small subset for a smoke run (k=1,2; m=64,16K; 11 reps)\n"
    "  --k LIST            ranges, e.g. 1,2,3,4 (default)\n"
    "  --m LIST            block sizes per rank, e.g. 64,1K,16K,128K,1M (default)\n"
    "  --budget SECONDS    timed seconds per configuration, both variants (default 3)\n"
    "  --min-reps N        repetitions per variant, at least (default 9)\n"
    "  --max-reps N        repetitions per variant, at most (default 1001)\n"
    "  --warmup N          untimed pairs first (default 3)\n"
    "  --max-cube-mib X    skip configurations whose (2k+1)^3 m cube exceeds X MiB per rank (default 256)\n"
    "  --raw-self MODE     raw exchange with a rank's own image (periodic dimension of size 1):\n"
    "                      copy = one memcpy (default), mpi = MPI_Isend/MPI_Irecv to itself\n"
    "  --raw-first         time each pair raw first (default: alternate the order from pair to pair)\n"
    "  --library-first     time each pair library first (with --raw-first: a control for order bias)\n"
    "  --raw-allocated-first  allocate the raw cube before the library's halo (default: after),\n"
    "                      a control for placement effects on large cubes\n"
    "  --malloc-default    keep glibc's adaptive mmap threshold: buffer alignments then depend on the\n"
    "                      previous rows' frees (see docs/performance.md)\n";

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--quick") {
      o.quick = true;
      o.ks = {1, 2};
      o.ms = {64, 16 * 1024};
      o.min_reps = o.max_reps = 11;
      o.warmup = 2;
    }
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw bench::usage_error{std::string(a) + " needs a value"};
      return argv[++i];
    };
    auto integer = [&](std::string_view v) {
      try {
        return std::stoi(std::string(v));
      } catch (const std::exception&) {
        throw bench::usage_error{"bad number '" + std::string(v) + "' for " + std::string(a)};
      }
    };
    if (a == "--quick") continue;
    if (a == "--help" || a == "-h") throw bench::usage_error{""};
    if (a == "--k") {
      o.ks.clear();
      split(value(), [&](std::string_view v) { o.ks.push_back(integer(v)); });
    } else if (a == "--m") {
      o.ms.clear();
      split(value(), [&](std::string_view v) { o.ms.push_back(parse_size(v)); });
    } else if (a == "--budget") {
      o.budget = std::stod(std::string(value()));
    } else if (a == "--min-reps") {
      o.min_reps = integer(value());
    } else if (a == "--max-reps") {
      o.max_reps = integer(value());
    } else if (a == "--warmup") {
      o.warmup = integer(value());
    } else if (a == "--max-cube-mib") {
      o.max_cube_mib = std::stod(std::string(value()));
    } else if (a == "--raw-first") {
      o.order = options::pair_order::raw_first;
    } else if (a == "--raw-allocated-first") {
      o.raw_allocated_first = true;
    } else if (a == "--library-first") {
      o.order = options::pair_order::library_first;
    } else if (a == "--malloc-default") {
      o.malloc_default = true;
    } else if (a == "--raw-self") {
      const std::string_view v = value();
      if (v == "copy")
        o.self = bench::self_mode::copy;
      else if (v == "mpi")
        o.self = bench::self_mode::mpi;
      else
        throw bench::usage_error{"--raw-self takes copy or mpi, got '" + std::string(v) + "'"};
    } else {
      throw bench::usage_error{"unknown option '" + std::string(a) + "'"};
    }
  }
  for (int k : o.ks)
    if (k < 1) throw bench::usage_error{"k must be >= 1, got " + std::to_string(k)};
  if (o.ks.empty() || o.ms.empty()) throw bench::usage_error{"--k and --m need at least one value"};
  if (o.min_reps < 1 || o.max_reps < o.min_reps || o.warmup < 0)
    throw bench::usage_error{"need 1 <= --min-reps <= --max-reps and --warmup >= 0"};
  return o;
}

const char* order_text(options::pair_order order) {
  switch (order) {
    case options::pair_order::library_first:
      return ", library first in each pair";
    case options::pair_order::raw_first:
      return ", raw first in each pair";
    case options::pair_order::alternate:
      break;
  }
  return ", the order alternating from pair to pair";
}

std::string size_text(std::size_t bytes) {
  char s[32];
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0)
    std::snprintf(s, sizeof s, "%zu MiB", bytes / (1024 * 1024));
  else if (bytes >= 1024 && bytes % 1024 == 0)
    std::snprintf(s, sizeof s, "%zu KiB", bytes / 1024);
  else
    std::snprintf(s, sizeof s, "%zu B", bytes);
  return s;
}

std::string mib_text(std::size_t bytes) {
  char s[32];
  if (bytes < 1024 * 1024)
    std::snprintf(s, sizeof s, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  else
    std::snprintf(s, sizeof s, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return s;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}
double median(const std::vector<double>& v) { return quantile(v, 0.5); }

[[noreturn]] void fail(const std::string& what) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "\n*** haloshift_bench FAILED on rank %d: %s ***\n\n", rank, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

/// The data of rank `r`: a pattern no other rank shares at the same position.
std::byte pattern(int r, std::size_t i) {
  return static_cast<std::byte>((static_cast<std::size_t>(r) * 131u + i * 7u + (i >> 8) + 1u) & 0xffu);
}

/// Runs both once and checks them against each other and against the owners' data.
void verify(const haloshift::cartesian_grid& grid, haloshift::plan<std::byte>& plan, haloshift::halo<std::byte>& halo,
            bench::raw_shift& raw, const std::vector<std::byte>& mine, int k) {
  std::string problem;
  const std::size_t m = mine.size();
  // The raw neighbours must be the library's.
  if (raw.rank() != grid.rank()) problem = "the raw Cartesian communicator renumbered the ranks";
  for (int d = 0; d < 3 && problem.empty(); ++d) {
    if (raw.plus(d) != grid.neighbor_at(haloshift::unit(d))->rank ||
        raw.minus(d) != grid.neighbor_at(-haloshift::unit(d))->rank)
      problem = "raw neighbours along dimension " + std::to_string(d) + " differ from the library's";
  }
  std::fill(halo.buffer().begin(), halo.buffer().end(), std::byte{0xEE});
  std::fill(raw.cube(), raw.cube() + raw.cube_bytes(), std::byte{0xDD});
  plan.forward(mine, halo);
  raw.forward(mine.data());

  const std::size_t side = 2 * static_cast<std::size_t>(k) + 1;
  if (problem.empty() && halo.size() != side * side * side - 1)
    problem = "the library halo has " + std::to_string(halo.size()) + " blocks, expected " +
              std::to_string(side * side * side - 1);
  if (problem.empty() && std::memcmp(raw.cube() + raw.at(0, 0, 0), mine.data(), m) != 0)
    problem = "the raw cube's centre is not the own block";
  for (const auto& b : halo) {
    if (!problem.empty()) break;
    const auto& o = b.offset;
    if (b.data.size() != m) {
      problem = "library block " + haloshift::to_string(o) + " has " + std::to_string(b.data.size()) + " bytes";
      break;
    }
    const std::byte* slot = raw.cube() + raw.at(o[0], o[1], o[2]);
    if (std::memcmp(slot, b.data.data(), m) != 0) {
      const std::size_t i = static_cast<std::size_t>(std::mismatch(slot, slot + m, b.data.begin()).first - slot);
      char text[200];
      std::snprintf(text, sizeof text, "block %s differs at byte %zu: raw 0x%02x, library 0x%02x",
                    haloshift::to_string(o).c_str(), i, static_cast<unsigned>(slot[i]),
                    static_cast<unsigned>(b.data[i]));
      problem = text;
      break;
    }
    const int owner = grid.neighbor_at(o)->rank;
    for (std::size_t i = 0; i < m; ++i)
      if (slot[i] != pattern(owner, i)) {
        problem = "block " + haloshift::to_string(o) + " (both variants) does not hold rank " + std::to_string(owner) +
                  "'s data at byte " + std::to_string(i);
        break;
      }
  }
  int bad = problem.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!problem.empty()) fail("verification, k=" + std::to_string(k) + " m=" + std::to_string(m) + ": " + problem);
  if (bad) fail("verification failed on another rank");
}

struct row {
  int k;
  std::size_t m, cube;
  int reps;
  double lib, raw, paired, paired_q1, paired_q3, lib_min, raw_min;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  options opt;
  if (const int status = bench::parse_or_usage(help, [&] { opt = parse(argc, argv); }); status >= 0) {
    MPI_Finalize();
    return status;
  }

  // Every large buffer from mmap, whatever was freed before: glibc otherwise
  // raises its mmap threshold after the first large free, and later buffers
  // come from the heap at arbitrary relative alignments. On CPUs whose
  // REP MOVSB is slow when (dst - src) mod 4096 is small (AMD Zen 3/4 with
  // affected glibc versions, glibc bug 30994), that alone can change a row by
  // 5x wherever a copy goes between two buffers (docs/performance.md).
#if defined(__GLIBC__)
  if (!opt.malloc_default) mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif

  try {
    haloshift::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}});
    const int dims[3] = {grid.dim(0), grid.dim(1), grid.dim(2)};

    if (rank == 0) {
      char version[MPI_MAX_LIBRARY_VERSION_STRING];
      int length = 0;
      MPI_Get_library_version(version, &length);
      std::string v(version, static_cast<std::size_t>(length));
      v = v.substr(0, v.find_first_of(",\n"));
      std::printf("# haloshift %d.%d.%d Shift vs hand-written MPI Shift%s\n\n", HALOSHIFT_VERSION_MAJOR,
                  HALOSHIFT_VERSION_MINOR, HALOSHIFT_VERSION_PATCH, opt.quick ? " (--quick)" : "");
      std::printf(
          "%d ranks, periodic grid %dx%dx%d, %s; raw self-exchange: %s; timed budget %.1f s per row, "
          "reps in [%d, %d], %d warm-up pairs%s%s%s; median over repetitions of the max over ranks.\n\n",
          size, dims[0], dims[1], dims[2], v.c_str(), opt.self == bench::self_mode::copy ? "memcpy" : "MPI", opt.budget,
          opt.min_reps, opt.max_reps, opt.warmup, order_text(opt.order), opt.raw_allocated_first ? ", raw cube allocated first" : "",
          opt.malloc_default ? "; glibc malloc defaults" : "");
      std::printf(
          "| ranks | grid | k | m | cube/rank | reps | library us | raw us | ratio | paired ratio [q1, q3] | "
          "min ratio |\n");
      std::printf("|---:|:---:|---:|---:|---:|---:|---:|---:|---:|:---:|---:|\n");
      std::fflush(stdout);
    }

    std::vector<std::string> skipped;
    for (int k : opt.ks)
      for (std::size_t m : opt.ms) {
        const std::size_t side = 2 * static_cast<std::size_t>(k) + 1;
        const std::size_t cube = side * side * side * m;
        if (static_cast<double>(cube) > opt.max_cube_mib * 1024 * 1024) {
          skipped.push_back("k=" + std::to_string(k) + ", m=" + size_text(m) + ": the cube is " + mib_text(cube) +
                            " per rank (> --max-cube-mib " + std::to_string(static_cast<int>(opt.max_cube_mib)) +
                            "; the run would hold about 2 cubes plus the library's staging per rank)");
          continue;
        }
        std::vector<std::byte> mine(m);
        for (std::size_t i = 0; i < m; ++i) mine[i] = pattern(rank, i);
        // Which cube is allocated first can matter more than the code (see --raw-allocated-first).
        std::optional<bench::raw_shift> raw_early, raw_late;
        if (opt.raw_allocated_first) raw_early.emplace(MPI_COMM_WORLD, dims, k, m, opt.self);
        auto plan = haloshift::make_plan<haloshift::Shift, std::byte>(grid, k, m);
        auto halo = plan.make_halo();
        if (!opt.raw_allocated_first) raw_late.emplace(MPI_COMM_WORLD, dims, k, m, opt.self);
        bench::raw_shift& raw = raw_early ? *raw_early : *raw_late;
        verify(grid, plan, halo, raw, mine, k);

        auto lib_once = [&] { plan.forward(mine, halo); };
        auto raw_once = [&] { raw.forward(mine.data()); };
        for (int i = 0; i < opt.warmup; ++i) {
          lib_once();
          raw_once();
        }
        // Pilot: one timed pair sets the repetition count (the same on all ranks: max-reduced).
        const double pair = bench::timed(MPI_COMM_WORLD, lib_once) + bench::timed(MPI_COMM_WORLD, raw_once);
        int reps = static_cast<int>(std::clamp(opt.budget / std::max(pair, 1e-9), static_cast<double>(opt.min_reps),
                                               static_cast<double>(opt.max_reps)));
        std::vector<double> tl(static_cast<std::size_t>(reps)), tr(tl.size()), ratio(tl.size());
        for (std::size_t i = 0; i < tl.size(); ++i) {
          const bool raw_first = opt.order == options::pair_order::raw_first ||
                                 (opt.order == options::pair_order::alternate && i % 2 == 1);
          if (raw_first) {
            tr[i] = bench::timed(MPI_COMM_WORLD, raw_once);
            tl[i] = bench::timed(MPI_COMM_WORLD, lib_once);
          } else {
            tl[i] = bench::timed(MPI_COMM_WORLD, lib_once);
            tr[i] = bench::timed(MPI_COMM_WORLD, raw_once);
          }
          ratio[i] = tl[i] / tr[i];
        }
        const row r{k,
                    m,
                    cube,
                    reps,
                    median(tl),
                    median(tr),
                    median(ratio),
                    quantile(ratio, 0.25),
                    quantile(ratio, 0.75),
                    *std::min_element(tl.begin(), tl.end()),
                    *std::min_element(tr.begin(), tr.end())};
        if (rank == 0) {
          std::printf("| %d | %dx%dx%d | %d | %s | %s | %d | %.1f | %.1f | %.3f | %.3f [%.3f, %.3f] | %.3f |\n", size,
                      dims[0], dims[1], dims[2], r.k, size_text(r.m).c_str(), mib_text(r.cube).c_str(), r.reps,
                      r.lib * 1e6, r.raw * 1e6, r.lib / r.raw, r.paired, r.paired_q1, r.paired_q3,
                      r.lib_min / r.raw_min);
          std::fflush(stdout);
        }
      }
    if (rank == 0) {
      std::printf(
          "\nratio = median library / median raw; paired ratio = median (and quartiles) of library/raw "
          "over the interleaved repetition pairs; min ratio = fastest library / fastest raw repetition.\n");
      for (const std::string& s : skipped) std::printf("SKIPPED %s\n", s.c_str());
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    fail(e.what());
  }
  MPI_Finalize();
  return 0;
}

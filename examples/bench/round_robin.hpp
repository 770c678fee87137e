// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Timing helpers shared by the benchmarks (strategies.cpp, validate.cpp,
// faces.cpp; the command-line handling also bench.cpp): variants are timed round robin (A B C ... A B C ...) so that
// load from other processes hits them alike; each repetition is a barrier, one
// call, and the maximum over ranks (an exchange ends when its slowest rank does).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace bench {

/// A bad command line (empty `what`: --help was asked for).
struct usage_error {
  std::string what;
};

/// Runs `parse()` on every rank (after MPI_Init). Returns -1 to go on, else the exit status after
/// rank 0 printed the usage `help`: 0 after --help, 2 after a usage_error or another exception
/// (a value that did not parse), preceded by its message.
template <class Parse>
int parse_or_usage(const char* help, Parse&& parse) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string what;
  try {
    parse();
    return -1;
  } catch (const usage_error& e) {
    what = e.what;
  } catch (const std::exception& e) {
    what = std::string("bad argument: ") + e.what();
  }
  if (rank == 0) std::fprintf(what.empty() ? stdout : stderr, "%s%s%s", what.c_str(), what.empty() ? "" : "\n", help);
  return what.empty() ? 0 : 2;
}

/// A benchmark's main: MPI_Init, `parse()` (parse_or_usage), then `run()`, whose int is the exit
/// status; an exception from `run` is printed and aborts every rank (the others may be waiting in an
/// exchange), as a failed check would. MPI_Finalize on every other path.
template <class Parse, class Run>
int main_of(int argc, char** argv, const char* name, const char* help, Parse&& parse, Run&& run) {
  MPI_Init(&argc, &argv);
  int status = parse_or_usage(help, parse);
  if (status < 0) {
    try {
      status = run();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", name, e.what());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  MPI_Finalize();
  return status;
}

/// "1,2,4" -> {1, 2, 4}.
inline std::vector<long> parse_list(const char* text) {
  std::vector<long> out;
  std::string s(text);
  std::size_t pos = 0;
  while (pos < s.size()) {
    const std::size_t comma = s.find(',', pos);
    out.push_back(std::atol(s.substr(pos, comma - pos).c_str()));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// Mean of the fastest `fraction` of `v` (at least one value).
inline double fastest_mean(std::vector<double> v, double fraction) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto keep = std::max<std::size_t>(1, static_cast<std::size_t>(fraction * static_cast<double>(v.size())));
  double sum = 0;
  for (std::size_t i = 0; i < keep; ++i) sum += v[i];
  return sum / static_cast<double>(keep);
}

/// The first line of MPI_Get_library_version.
inline std::string mpi_library() {
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(lib, &len);
  const std::string v(lib, static_cast<std::size_t>(len));
  return v.substr(0, v.find('\n'));
}

/// Barrier, one call of `f`, the maximum of its time over the ranks of `comm`.
/// A template, so a lambda is called directly inside the timed region.
template <class F>
double timed(MPI_Comm comm, F&& f) {
  MPI_Barrier(comm);
  const double start = MPI_Wtime();
  f();
  double t = MPI_Wtime() - start;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
  return t;
}

/// Times every variant round robin: one untimed warm-up round, one pilot round
/// that sets the repetitions (as many as fit in `budget` seconds, clamped to
/// [min_reps, max_reps], rank 0's count for all), then the repetitions.
/// Returns times[variant][repetition] in seconds, the same on every rank.
inline std::vector<std::vector<double>> round_robin(MPI_Comm comm, const std::vector<std::function<void()>>& run,
                                                   double budget, int min_reps, int max_reps) {
  for (const auto& f : run) timed(comm, f);
  double pilot = 0;
  for (const auto& f : run) pilot += timed(comm, f);
  int reps = std::clamp(static_cast<int>(budget / std::max(pilot, 1e-9)), min_reps, std::max(min_reps, max_reps));
  MPI_Bcast(&reps, 1, MPI_INT, 0, comm);
  std::vector<std::vector<double>> t(run.size());
  for (int r = 0; r < reps; ++r)
    for (std::size_t v = 0; v < run.size(); ++v) t[v].push_back(timed(comm, run[v]));
  return t;
}

}  // namespace bench

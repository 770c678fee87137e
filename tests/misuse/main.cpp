// SPDX-License-Identifier: BSD-3-Clause
// The battery's program: `--list [--mpich]` prints the cases (name and the
// fewest ranks it needs), `--case NAME` runs one on every rank and has rank 0
// judge it: every rank must have raised haloshift::error with the same text,
// holding each expected substring. Exit 0: passed; 1: failed; 77: skipped
// (fewer ranks than the case needs). A hang is the driver's to catch.

#include "battery.hpp"

#include <haloshift/auto.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <typeinfo>
#include <vector>

namespace misuse {
std::vector<misuse_case>& cases() {
  static std::vector<misuse_case> all;
  return all;
}
}  // namespace misuse

namespace {

void register_all() {
  misuse::register_grid_cases();
  misuse::register_plan_cases();
  misuse::register_exchange_cases();
  misuse::register_particle_cases();
  misuse::register_migrate_cases();
  misuse::register_field_cases();
  misuse::register_model_cases();
  misuse::register_network_cases();
}

/// What happened on this rank, as one line.
std::string outcome_of(const misuse::misuse_case& c, const misuse::world& w) {
  try {
    c.run(w);
    return "no error";
  } catch (const haloshift::error& e) {
    return std::string("haloshift::error: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("other exception (") + typeid(e).name() + "): " + e.what();
  } catch (...) {
    return "an exception of unknown type";
  }
}

/// Every rank's outcome, on rank 0.
std::vector<std::string> gather(const std::string& mine, const misuse::world& w) {
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(w.size)), displs(static_cast<std::size_t>(w.size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, w.comm);
  int total = 0;
  for (int r = 0; r < w.size; ++r) displs[static_cast<std::size_t>(r)] = total, total += lengths[static_cast<std::size_t>(r)];
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(), MPI_CHAR, 0, w.comm);
  std::vector<std::string> out;
  if (w.rank == 0)
    for (int r = 0; r < w.size; ++r)
      out.push_back(all.substr(static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]),
                               static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
  return out;
}

/// Empty when the outcomes pass, else why not.
std::string judge(const misuse::misuse_case& c, const std::vector<std::string>& outcomes) {
  const std::string prefix = "haloshift::error: haloshift: ";
  for (std::size_t r = 0; r < outcomes.size(); ++r)
    if (outcomes[r] != outcomes[0]) return "rank " + std::to_string(r) + " differs from rank 0";
  if (outcomes[0].rfind(prefix, 0) != 0) return "not a haloshift::error";
  for (const std::string& e : c.expect)
    if (outcomes[0].find(e) == std::string::npos) return "the message lacks \"" + e + "\"";
  return {};
}

int run_case(const std::string& name) {
  misuse::world w;
  MPI_Comm_rank(w.comm, &w.rank);
  MPI_Comm_size(w.comm, &w.size);
  for (const misuse::misuse_case& c : misuse::cases()) {
    if (c.name != name) continue;
    if (w.size < c.min_ranks) {
      if (w.rank == 0) std::printf("SKIP %s (needs %d ranks)\n", name.c_str(), c.min_ranks);
      return 77;
    }
    const std::vector<std::string> outcomes = gather(outcome_of(c, w), w);
    int status = 0;
    if (w.rank == 0) {
      const std::string why = judge(c, outcomes);
      status = why.empty() ? 0 : 1;
      std::printf("%s %s%s%s\n", why.empty() ? "PASS" : "FAIL", name.c_str(), why.empty() ? "" : ": ", why.c_str());
      for (std::size_t r = 0; r < outcomes.size(); ++r)
        if (!why.empty() || r == 0) std::printf("  rank %zu: %s\n", r, outcomes[r].c_str());
      std::fflush(stdout);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, w.comm);
    return status;
  }
  if (w.rank == 0) std::printf("no case named %s\n", name.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "--list") {
    const bool mpich = args.size() > 1 && args[1] == "--mpich";
    for (const misuse::misuse_case& c : misuse::cases())
      if (!mpich || c.mpich) std::printf("%s %d\n", c.name.c_str(), c.min_ranks);
    return 0;
  }
  if (args.size() != 2 || args[0] != "--case") {
    std::fprintf(stderr, "usage: %s --list [--mpich] | --case NAME\n", argv[0]);
    return 2;
  }
  MPI_Init(&argc, &argv);
  const int status = run_case(args[1]);
  MPI_Finalize();
  return status;
}

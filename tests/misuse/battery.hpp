// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The misuse battery: bad inputs, each run as its own MPI job (run_battery.py)
// so that a hang is caught by a watchdog and a crash cannot hide the cases
// after it. Every case runs on every rank and must end in a haloshift::error
// whose text is the same on every rank and names the argument and its value.

#include <mpi.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace misuse {

/// The job a case runs in.
struct world {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  int size = 1;
  bool first() const noexcept { return rank == 0; }
  bool last() const noexcept { return rank == size - 1; }
  /// `bad` on the last rank, `good` elsewhere: a mistake made on one rank only.
  template <class T>
  T on_last(T bad, T good) const {
    return last() ? bad : good;
  }
  /// `a` on rank 0, `b` elsewhere (with two or more ranks, a disagreement).
  template <class T>
  T first_or(T a, T b) const {
    return first() ? a : b;
  }
};

/// A coordinate, cutoff or cost that is not a number.
inline const double nan_value = std::numeric_limits<double>::quiet_NaN();

/// What particle and field plans offer instead of a strategy they refuse: those that carry such
/// payloads (TeamShift, listed, would sit between TtlMultiHop and NeighborAlltoall).
inline const std::string offered = "use Shift, SingleHop, TtlMultiHop, NeighborAlltoall or Auto";

/// One bad input.
struct misuse_case {
  std::string name;                 ///< "area/what", unique
  std::vector<std::string> expect;  ///< substrings every rank's message must hold (the argument, its value)
  std::function<void(const world&)> run;
  int min_ranks = 1;   ///< a disagreement needs two ranks; below, the case is skipped
  bool mpich = false;  ///< also in the MPICH subset
};

/// Every registered case, in registration order.
std::vector<misuse_case>& cases();

/// Registers a case (the area files call this from their register_* function).
inline void add(std::string name, std::vector<std::string> expect, std::function<void(const world&)> run,
                int min_ranks = 1, bool mpich = false) {
  cases().push_back({std::move(name), std::move(expect), std::move(run), min_ranks, mpich});
}

// One per area file.
void register_grid_cases();
void register_plan_cases();
void register_exchange_cases();
void register_particle_cases();
void register_migrate_cases();
void register_field_cases();
void register_model_cases();
void register_network_cases();

}  // namespace misuse

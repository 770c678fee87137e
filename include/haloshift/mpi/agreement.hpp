// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file agreement.hpp
/// @brief Collective argument checks: every rank raises the same error, so a
/// mistake on one rank never leaves the others waiting in a later call.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../error.hpp"
#include "check.hpp"

namespace haloshift::mpi {

/// A value that must be equal on all ranks, with the name used in messages.
struct agreed_value {
  const char* name;
  std::int64_t value;
};

/// Runs `local` on every rank, then (one MPI_Allreduce) checks that no rank
/// failed and that all `values` agree. If some rank's `local` threw
/// haloshift::error, every rank throws the message of the lowest such rank;
/// otherwise, if a value differs, every rank throws an error naming it with its
/// smallest and largest value.
template <class Local>
void agree(MPI_Comm comm, Local&& local, const std::vector<agreed_value>& values = {}) {
  int rank = 0, size = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  std::optional<std::string> failure;
  try {
    std::invoke(std::forward<Local>(local));
  } catch (const error& e) {
    failure = std::string(e.what()).substr(std::string("haloshift: ").size());
  }
  // One reduction finds the first failing rank and each value's min and max (as -max).
  std::vector<std::int64_t> packed{failure ? rank : size};
  for (const agreed_value& v : values) packed.push_back(v.value);
  for (const agreed_value& v : values) packed.push_back(-v.value);
  check(MPI_Allreduce(MPI_IN_PLACE, packed.data(), static_cast<int>(packed.size()), MPI_INT64_T, MPI_MIN, comm),
        "MPI_Allreduce");
  const int failed = static_cast<int>(packed[0]);
  if (failed < size) {
    std::string text = failure.value_or(std::string());
    int length = static_cast<int>(text.size());
    check(MPI_Bcast(&length, 1, MPI_INT, failed, comm), "MPI_Bcast");
    text.resize(static_cast<std::size_t>(length));
    check(MPI_Bcast(text.data(), length, MPI_CHAR, failed, comm), "MPI_Bcast");
    throw error(size > 1 ? text + " (on rank " + std::to_string(failed) + ")" : text);
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::int64_t low = packed[1 + i], high = -packed[1 + values.size() + i];
    if (low != high)
      throw error(std::string(values[i].name) + " must be the same on all ranks, got values from " +
                  std::to_string(low) + " to " + std::to_string(high));
  }
}

}  // namespace haloshift::mpi

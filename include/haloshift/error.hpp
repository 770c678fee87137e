// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file error.hpp
/// @brief The one exception type of haloshift.

#include <stdexcept>
#include <string>
#include <utility>

#include <mpi.h>

namespace haloshift {

/// Every failure haloshift reports: bad arguments (the message names the
/// argument and the value), disagreement between ranks, and failed MPI calls
/// (then `mpi_routine()` names the routine and `mpi_code()` holds its code).
class error : public std::runtime_error {
public:
  /// An error with the message `haloshift: <what>`.
  explicit error(const std::string& what) : std::runtime_error("haloshift: " + what) {}
  /// An MPI failure: `routine` returned `code`.
  error(const std::string& what, std::string routine, int code)
      : std::runtime_error("haloshift: " + what), routine_(std::move(routine)), code_(code) {}

  /// The MPI routine that failed, empty for errors that are not MPI failures.
  const std::string& mpi_routine() const noexcept { return routine_; }
  /// The MPI error code, `MPI_SUCCESS` for errors that are not MPI failures.
  int mpi_code() const noexcept { return code_; }

private:
  std::string routine_;
  int code_ = MPI_SUCCESS;
};

}  // namespace haloshift

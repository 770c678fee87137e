// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file error.hpp
/// @brief The one exception type of haloshift.

#include <cmath>
#include <cstdio>
#include <cstdlib>
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

namespace detail {
/// A double as error messages print it: the shortest of "%g" and "%.17g" that
/// reads back as the same value ("0.1", "1e+300", "0.10000000000000002"),
/// "nan", "inf" or "-inf" (std::to_string would print 1e-9 as "0.000000").
inline std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char text[40];
  std::snprintf(text, sizeof text, "%g", v);
  if (std::strtod(text, nullptr) != v) std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}
}  // namespace detail

}  // namespace haloshift

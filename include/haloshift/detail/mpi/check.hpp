// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file check.hpp
/// @brief Checking MPI return codes in every build.

#include <string>

#include <mpi.h>

#include "../../error.hpp"

namespace haloshift::mpi {

/// Throws haloshift::error naming `routine` unless `code` is MPI_SUCCESS.
/// MPI only returns codes when the communicator's error handler is
/// MPI_ERRORS_RETURN, which haloshift sets on the communicators it owns.
inline void check(int code, const char* routine) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw error(std::string(routine) + " failed: " + std::string(text, static_cast<std::size_t>(length)),
              routine, code);
}

}  // namespace haloshift::mpi

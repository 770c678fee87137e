// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file boost_mpi.hpp
/// @brief Interoperation with Boost.MPI communicators. Optional: include it
/// only when Boost.MPI is available and built against the MPI in use (on
/// Debian, libboost-mpi-dev is built against Open MPI).

#include <boost/mpi/communicator.hpp>

#include "grid/cartesian_grid.hpp"

namespace haloshift {

/// A grid over a Boost.MPI communicator (collective; the grid duplicates it).
inline cartesian_grid make_grid(const boost::mpi::communicator& comm, const grid_options& options = {}) {
  return cartesian_grid(static_cast<MPI_Comm>(comm), options);
}

/// The grid's own communicator as a non-owning Boost.MPI communicator, for
/// application messages that should stay apart from the user's communicator.
inline boost::mpi::communicator to_boost(const cartesian_grid& grid) {
  return boost::mpi::communicator(grid.comm(), boost::mpi::comm_attach);
}

}  // namespace haloshift

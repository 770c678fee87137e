// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file communicator.hpp
/// @brief An owned duplicate of a user communicator.

#include <utility>

#include <mpi.h>

#include "../error.hpp"
#include "check.hpp"

namespace haloshift::mpi {

/// Owns a duplicate of a communicator, so haloshift never sends on the user's
/// communicator and its tags cannot collide with the user's messages.
/// Errors on it are returned, not fatal, so they become haloshift::error.
class communicator {
public:
  communicator() = default;

  /// Duplicates `user` (collective over `user`).
  explicit communicator(MPI_Comm user) {
    if (user == MPI_COMM_NULL) throw error("communicator: MPI_COMM_NULL is not a valid communicator");
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) throw error("communicator: MPI is not initialized (call MPI_Init first)");
    check(MPI_Comm_dup(user, &comm_), "MPI_Comm_dup");
    check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }

  communicator(const communicator& other) : communicator(other.comm_ == MPI_COMM_NULL ? throw_null() : other.comm_) {}
  communicator& operator=(const communicator& other) {
    if (this != &other) *this = communicator(other);
    return *this;
  }
  communicator(communicator&& other) noexcept { swap(other); }
  communicator& operator=(communicator&& other) noexcept {
    communicator moved(std::move(other));
    swap(moved);
    return *this;
  }
  ~communicator() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
  }

  MPI_Comm get() const noexcept { return comm_; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }

private:
  static MPI_Comm throw_null() { throw error("communicator: cannot copy a moved-from communicator"); }
  void swap(communicator& other) noexcept {
    std::swap(comm_, other.comm_);
    std::swap(rank_, other.rank_);
    std::swap(size_, other.size_);
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 0;
};

}  // namespace haloshift::mpi

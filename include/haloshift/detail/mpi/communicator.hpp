// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file communicator.hpp
/// @brief An owned communicator (a duplicate of a user communicator, or one
/// haloshift created), and the one way haloshift frees the MPI handles it owns.

#include <type_traits>
#include <utility>

#include <mpi.h>

#include "../../error.hpp"
#include "check.hpp"

namespace haloshift::mpi {

/// Frees an owned MPI handle (`release`: MPI_Comm_free, MPI_Request_free, ...) and
/// sets it to `null`. Owners call it from destructors, which may run after
/// MPI_Finalize (a grid or plan at the end of main): freeing then is an error,
/// and the process is about to end anyway, so the handle is only forgotten.
template <class Handle>
void free_unless_finalized(Handle& handle, std::type_identity_t<Handle> null,
                           int (*release)(std::type_identity_t<Handle>*)) noexcept {
  // Not named `free`: SimGrid's SMPI defines free() as a macro in every file it compiles.
  if (handle == null) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) release(&handle);
  handle = null;
}

/// Owns a communicator: a duplicate of the user's, so haloshift never sends on
/// the user's communicator and its tags cannot collide with the user's
/// messages, or one haloshift created (adopt()). Errors on it are returned,
/// not fatal, so they become haloshift::error. Move-only: a copy would be a
/// hidden collective (MPI_Comm_dup); a moved-from communicator holds
/// MPI_COMM_NULL.
class communicator {
public:
  communicator() = default;

  /// Duplicates `user` (collective over `user`).
  explicit communicator(MPI_Comm user) : communicator(adopt(duplicate(user))) {}

  /// Takes over `created`, a communicator haloshift made (a graph, a split),
  /// which it then frees; errors on it are returned from then on.
  static communicator adopt(MPI_Comm created) {
    communicator c;
    c.comm_ = created;  // owned from here: freed if a call below throws
    check(MPI_Comm_set_errhandler(c.comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_rank(c.comm_, &c.rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(c.comm_, &c.size_), "MPI_Comm_size");
    return c;
  }

  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;
  communicator(communicator&& other) noexcept { swap(other); }
  communicator& operator=(communicator&& other) noexcept {
    communicator moved(std::move(other));
    swap(moved);
    return *this;
  }
  ~communicator() { free_unless_finalized(comm_, MPI_COMM_NULL, MPI_Comm_free); }

  MPI_Comm get() const noexcept { return comm_; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }

private:
  static MPI_Comm duplicate(MPI_Comm user) {
    if (user == MPI_COMM_NULL) throw error("communicator: MPI_COMM_NULL is not a valid communicator");
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) throw error("communicator: MPI is not initialized (call MPI_Init first)");
    MPI_Comm copy = MPI_COMM_NULL;
    check(MPI_Comm_dup(user, &copy), "MPI_Comm_dup");
    return copy;
  }
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

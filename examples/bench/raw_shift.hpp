// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// A hand-written Shift halo exchange in plain MPI, the baseline of bench.cpp.
//
// Periodic 3D grid, range k in every dimension, m bytes per rank. One cube of
// (2k+1)^3 blocks of m bytes, z slowest and x fastest, block (x,y,z) at
// ((z+k)(2k+1) + (y+k))(2k+1) + (x+k). The own block goes to the centre; then
// phase x, y, z, with k steps each. Step s of phase d sends the slab at
// d = -(s-1) to the +d neighbour and the slab at d = +(s-1) to the -d
// neighbour, and receives the slabs at d = -s and d = +s. A slab is a single
// block in phase x, a row of 2k+1 blocks in phase y and a plane of (2k+1)^2
// blocks in phase z, each one contiguous range of the cube, so every message
// goes straight out of and into the cube: no packing, no staging.
//
// When a neighbour is this rank itself (a periodic dimension of size 1) the
// step is one memcpy inside the cube, as production codes do (LAMMPS'
// CommBrick, for instance); `self_mode::mpi` sends it through MPI instead.

#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <vector>

namespace bench {

enum class self_mode { copy, mpi };

class raw_shift {
 public:
  /// `dims`: the grid's dims, x first, as the library's grid reports them.
  /// Ranks are numbered row-major, last dimension fastest, so a Cartesian
  /// communicator made without reordering numbers them the same way.
  raw_shift(MPI_Comm comm, const int (&dims)[3], int k, std::size_t m, self_mode self = self_mode::copy)
      : k_(k), side_(2 * static_cast<std::size_t>(k) + 1), m_(m), self_(self), cube_(side_ * side_ * side_ * m) {
    int periods[3] = {1, 1, 1};
    int d[3] = {dims[0], dims[1], dims[2]};
    MPI_Cart_create(comm, 3, d, periods, /*reorder=*/0, &cart_);
    MPI_Comm_rank(cart_, &me_);
    for (int dim = 0; dim < 3; ++dim) MPI_Cart_shift(cart_, dim, 1, &minus_[dim], &plus_[dim]);
  }
  raw_shift(const raw_shift&) = delete;
  raw_shift& operator=(const raw_shift&) = delete;
  ~raw_shift() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&cart_);
  }

  MPI_Comm comm() const { return cart_; }
  int rank() const { return me_; }
  /// Neighbour ranks one step towards -dim and +dim.
  int minus(int dim) const { return minus_[dim]; }
  int plus(int dim) const { return plus_[dim]; }
  std::byte* cube() { return cube_.data(); }
  const std::byte* cube() const { return cube_.data(); }
  std::size_t cube_bytes() const { return cube_.size(); }
  /// Byte offset of block (x,y,z), each in [-k,k], in the cube.
  std::size_t at(int x, int y, int z) const {
    return ((static_cast<std::size_t>(z + k_) * side_ + static_cast<std::size_t>(y + k_)) * side_ +
            static_cast<std::size_t>(x + k_)) *
           m_;
  }

  void forward(const std::byte* mine) {
    std::memcpy(cube_.data() + at(0, 0, 0), mine, m_);
    // Slab of phase `dim` at coordinate c: one block, one row or one plane.
    const std::size_t slab[3] = {m_, side_ * m_, side_ * side_ * m_};
    auto start = [&](int dim, int c) { return dim == 0 ? at(c, 0, 0) : dim == 1 ? at(-k_, c, 0) : at(-k_, -k_, c); };
    for (int dim = 0; dim < 3; ++dim) {
      const int n = static_cast<int>(slab[dim]);
      for (int s = 1; s <= k_; ++s) {
        std::byte* send_up = cube_.data() + start(dim, -(s - 1));  // to +dim
        std::byte* recv_up = cube_.data() + start(dim, -s);        // from -dim
        std::byte* send_down = cube_.data() + start(dim, s - 1);   // to -dim
        std::byte* recv_down = cube_.data() + start(dim, s);       // from +dim
        if (plus_[dim] == me_ && self_ == self_mode::copy) {
          std::memcpy(recv_up, send_up, slab[dim]);
          std::memcpy(recv_down, send_down, slab[dim]);
          continue;
        }
        MPI_Request req[4];
        MPI_Irecv(recv_up, n, MPI_BYTE, minus_[dim], 0, cart_, &req[0]);
        MPI_Irecv(recv_down, n, MPI_BYTE, plus_[dim], 1, cart_, &req[1]);
        MPI_Isend(send_up, n, MPI_BYTE, plus_[dim], 0, cart_, &req[2]);
        MPI_Isend(send_down, n, MPI_BYTE, minus_[dim], 1, cart_, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
      }
    }
  }

 private:
  int k_;
  std::size_t side_, m_;
  self_mode self_;
  std::vector<std::byte> cube_;
  MPI_Comm cart_ = MPI_COMM_NULL;
  int me_ = 0;
  int minus_[3] = {}, plus_[3] = {};
};

}  // namespace bench

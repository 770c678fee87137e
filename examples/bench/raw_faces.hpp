// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// A face exchange written by hand, as stencil kernels write it (the baseline of
// faces.cpp): on a periodic MPI_Cart_create split, a rank's interior of n cells
// per dimension with w ghost layers on each side, in one padded x-fastest array
// of doubles. For each of the 2 ndims face neighbours it packs the face slab of
// width w (spanning the interior along the other dimensions) into a buffer of
// its own, posts every MPI_Irecv, then every MPI_Isend, waits for all and
// unpacks into the ghost layers. Edges and corners of the ghost layers are
// left as they are (a star stencil does not read them). A face whose neighbour
// is the rank itself (a periodic dimension of one box) goes through MPI like
// the others, or, with `self_copy`, is copied straight from the opposite slab
// into the ghosts, as some codes special-case it.
#include <mpi.h>

#include <array>
#include <cstddef>
#include <vector>

namespace bench {

/// The padded array: `ndims` dimensions of `n` interior cells and `w` ghost layers per side
/// (dimensions beyond `ndims` have one cell, no ghosts), x fastest.
struct padded_mesh {
  int ndims = 3, n = 1, w = 1;
  std::array<int, 3> extent{1, 1, 1};          ///< n + 2w along the mesh's dimensions
  std::array<std::size_t, 3> stride{1, 1, 1};  ///< elements between neighbouring cells

  padded_mesh(int dims, int cells, int width) : ndims(dims), n(cells), w(width) {
    for (int d = 0; d < ndims; ++d) extent[static_cast<std::size_t>(d)] = n + 2 * w;
    stride = {1, static_cast<std::size_t>(extent[0]), static_cast<std::size_t>(extent[0]) * extent[1]};
  }
  std::size_t size() const { return stride[2] * static_cast<std::size_t>(extent[2]); }
  /// Element of padded cell (i, j, k) (ghosts from 0, interior from w along the mesh's dimensions).
  std::size_t at(int i, int j, int k) const {
    return static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * stride[1] +
           static_cast<std::size_t>(k) * stride[2];
  }
};

/// A box of padded cells, [lo, hi) per dimension.
struct cell_box {
  std::array<int, 3> lo{0, 0, 0}, hi{1, 1, 1};
  std::size_t cells() const {
    return static_cast<std::size_t>(hi[0] - lo[0]) * static_cast<std::size_t>(hi[1] - lo[1]) *
           static_cast<std::size_t>(hi[2] - lo[2]);
  }
};

/// The interior of `m` (padded cells [w, w + n) along its dimensions).
inline cell_box interior_of(const padded_mesh& m) {
  cell_box b;
  for (int d = 0; d < m.ndims; ++d)
    b.lo[static_cast<std::size_t>(d)] = m.w, b.hi[static_cast<std::size_t>(d)] = m.w + m.n;
  return b;
}

class raw_faces {
 public:
  /// `cart`: a periodic Cartesian communicator of `m.ndims` dimensions (MPI_Cart_create).
  raw_faces(MPI_Comm cart, const padded_mesh& m, bool self_copy = false) : m_(m) {
    int me = 0;
    MPI_Comm_rank(cart, &me);
    for (int d = 0; d < m.ndims; ++d) {
      int minus = MPI_PROC_NULL, plus = MPI_PROC_NULL;
      MPI_Cart_shift(cart, d, 1, &minus, &plus);
      for (int side = 0; side < 2; ++side) {
        face f;
        f.peer = side == 0 ? minus : plus;
        // The slab the neighbour on `side` needs (the interior's w layers next to it) and the ghost
        // layers it fills on this side; the message travels towards `side`, the tag says which way.
        f.send = f.recv = interior_of(m);
        const std::size_t e = static_cast<std::size_t>(d);
        f.send.lo[e] = side == 0 ? m.w : m.n;
        f.recv.lo[e] = side == 0 ? 0 : m.n + m.w;
        f.send.hi[e] = f.send.lo[e] + m.w;
        f.recv.hi[e] = f.recv.lo[e] + m.w;
        f.send_tag = 2 * d + side;
        f.recv_tag = 2 * d + 1 - side;  // what the neighbour on `side` sent the other way
        f.local = self_copy && f.peer == me;
        if (!f.local) {
          f.out.resize(f.send.cells());
          f.in.resize(f.recv.cells());
        }
        faces_.push_back(std::move(f));
      }
    }
    for (const face& f : faces_) requests_.resize(requests_.size() + (f.local ? 0 : 2));
    cart_ = cart;
  }

  /// Rank of the neighbour on `side` (0 below, 1 above) along `d`.
  int peer(int d, int side) const { return faces_[static_cast<std::size_t>(2 * d + side)].peer; }

  /// Posts the receives, packs and sends every face of `a` (copies the faces to the rank itself).
  void start(double* a) {
    std::size_t r = 0;
    for (face& f : faces_)
      if (!f.local)
        MPI_Irecv(f.in.data(), static_cast<int>(f.in.size()), MPI_DOUBLE, f.peer, f.recv_tag, cart_, &requests_[r++]);
    for (std::size_t i = 0; i < faces_.size(); ++i) {
      face& f = faces_[i];
      if (f.local) {  // the slab sent the other way along this dimension lands in this side's ghosts
        const cell_box& from = faces_[i ^ 1].send;
        for (int k = 0; k < f.recv.hi[2] - f.recv.lo[2]; ++k)
          for (int j = 0; j < f.recv.hi[1] - f.recv.lo[1]; ++j) {
            const double* src = a + m_.at(from.lo[0], from.lo[1] + j, from.lo[2] + k);
            double* dst = a + m_.at(f.recv.lo[0], f.recv.lo[1] + j, f.recv.lo[2] + k);
            for (int i0 = 0; i0 < f.recv.hi[0] - f.recv.lo[0]; ++i0) dst[i0] = src[i0];
          }
        continue;
      }
      copy<true>(a, f.send, f.out.data());
      MPI_Isend(f.out.data(), static_cast<int>(f.out.size()), MPI_DOUBLE, f.peer, f.send_tag, cart_, &requests_[r++]);
    }
  }
  /// Lets MPI move the messages along (between chunks of compute).
  void progress() {
    int done = 0;
    MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE);
  }
  /// Waits for every message and unpacks the ghost layers of `a`.
  void finish(double* a) {
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    for (face& f : faces_)
      if (!f.local) copy<false>(a, f.recv, f.in.data());
  }
  void forward(double* a) {
    start(a);
    finish(a);
  }

 private:
  struct face {
    int peer = MPI_PROC_NULL, send_tag = 0, recv_tag = 0;
    bool local = false;  ///< to the rank itself, copied without MPI
    cell_box send, recv;
    std::vector<double> out, in;
  };

  /// Packs (`pack`) the cells of box `b` of `a` into `buffer`, or unpacks them from it, x fastest.
  template <bool pack>
  void copy(double* a, const cell_box& b, double* buffer) const {
    for (int k = b.lo[2]; k < b.hi[2]; ++k)
      for (int j = b.lo[1]; j < b.hi[1]; ++j) {
        double* row = a + m_.at(0, j, k);
        for (int i = b.lo[0]; i < b.hi[0]; ++i) {
          if constexpr (pack)
            *buffer++ = row[i];
          else
            row[i] = *buffer++;
        }
      }
  }

  padded_mesh m_;
  MPI_Comm cart_ = MPI_COMM_NULL;
  std::vector<face> faces_;
  std::vector<MPI_Request> requests_;
};

}  // namespace bench

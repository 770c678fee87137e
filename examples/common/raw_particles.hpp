// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// A hand-written particle exchange in plain MPI, written the way LAMMPS's
// CommBrick and miniMD's Comm do it: the baseline of particles.cpp.
//
//   borders   6 swaps (2 * need[d] per dimension when the cutoff spans more than
//             a box: multi-hop), each with a send list built by one scan of the
//             atoms (owned and the ghosts of earlier dimensions; in later hops,
//             the ghosts the previous hop of that direction brought), a count
//             message and the positions, shifted across periodic borders, with
//             any companion arrays (ids, types) in the same message (LAMMPS's
//             pack_border);
//   forward   the send lists again: pack, MPI_Sendrecv into the ghost range;
//   reverse   the swaps backwards: ghost values go home and are summed;
//   exchange  leavers with their companion arrays (velocities, ids) packed in
//             one message, dimension by dimension, to both neighbours, each
//             keeping what lies in its box (LAMMPS's exchange).
//
// Boxes are hs::domain's (the same floating-point edges), and an atom is sent
// when it lies within the cutoff of the receiving box, closed, computed as the
// library does (shifted coordinate against the receiver's edges), so both
// select the same ghosts. A self-swap (one box along a dimension) is a copy.
// The benchmark (examples/bench/particles.cpp) and haloshift-md --hand-written
// use it; its buffers are kept from call to call, as a code keeps them.
#include <mpi.h>

#include <haloshift/haloshift.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace bench {

namespace hs = haloshift;

class raw_particles {
 public:
  raw_particles(MPI_Comm comm, const hs::cartesian_grid& grid, const hs::domain& dom, double cutoff)
      : comm_(comm), shape_(grid.shape()), dom_(dom), cutoff_(cutoff), me_(grid.rank()) {
    for (int d = 0; d < 3; ++d) {
      coord_[d] = grid.coords()[d];
      need_[d] = d < shape_.ndims() ? dom.cutoff_reach(shape_, d, cutoff) : 0;
      hs::offset down{0, 0, 0}, up{0, 0, 0};
      down[d] = -1;
      up[d] = 1;
      neighbor_[d][0] = grid.neighbor_at(down)->rank;
      neighbor_[d][1] = grid.neighbor_at(up)->rank;
    }
  }

  std::size_t ghosts() const { return ghosts_; }

  /// Builds the swaps for the owned atoms x[0, nlocal) and appends the ghosts to x, and to each
  /// companion array (ids, types: their ghost entries travel with the positions, unshifted).
  template <class... Companions>
  void borders(std::vector<hs::position>& x, std::size_t nlocal, std::vector<Companions>&... more) {
    x.resize(nlocal);
    (more.resize(nlocal), ...);
    used_ = 0;
    for (int d = 0; d < shape_.ndims(); ++d) {
      std::size_t scan_first[2] = {0, 0}, scan_last[2] = {x.size(), x.size()};
      for (int hop = 0; hop < need_[d]; ++hop)
        for (int dir = 0; dir < 2; ++dir) {
          swap& s = next_swap();
          s.dim = d;
          s.send_to = neighbor_[d][dir];
          s.recv_from = neighbor_[d][1 - dir];
          // The receiver's box, in its own frame, and the shift into that frame.
          const int n = shape_.dim(d), c = coord_[d] + (dir == 0 ? -1 : 1);
          const int inside = (c % n + n) % n;
          s.shift = c < 0 ? dom_.length(d) : c >= n ? -dom_.length(d) : 0.0;
          s.image = c < 0 ? 1 : c >= n ? -1 : 0;
          const double lo = dom_.edge(shape_, d, inside), hi = dom_.edge(shape_, d, inside + 1);
          s.list.clear();
          for (std::size_t i = scan_first[dir]; i < scan_last[dir]; ++i) {
            const double g = x[i][d] + s.shift;
            if (!(lo - g > cutoff_ || g - hi > cutoff_)) s.list.push_back(i);
          }
          std::size_t arriving = 0;
          s.send_count = s.list.size();
          sendrecv(&s.send_count, sizeof arriving, &arriving, sizeof arriving, s);
          s.recv_first = x.size();
          s.recv_count = arriving;
          x.resize(x.size() + s.recv_count);
          if constexpr (sizeof...(Companions) == 0) {
            send_positions(x, s);
          } else {
            (more.resize(x.size()), ...);
            send_packed(x, s, more...);
          }
          // The next hop in this direction forwards what this one brought.
          scan_first[dir] = s.recv_first;
          scan_last[dir] = s.recv_first + s.recv_count;
        }
    }
    ghosts_ = x.size() - nlocal;
  }

  /// Positions to the ghosts, shifted across periodic borders.
  void forward(std::vector<hs::position>& x) {
    for (std::size_t i = 0; i < used_; ++i) send_positions(x, swaps_[i]);
  }

  /// Any per-atom value to the ghosts, unshifted.
  template <class T>
  void forward_values(std::vector<T>& v) {
    forward_adjusted(v, [](T&, const swap&) {});
  }

  /// Periodic images (in boxes of the domain) of the ghosts: what each swap's shift adds up to.
  void forward_images(std::vector<hs::offset>& images) {
    forward_adjusted(images, [](hs::offset& o, const swap& s) { o[s.dim] += s.image; });
  }

  /// Ghost forces summed back onto their owners (swaps in reverse order).
  void reverse(std::vector<hs::position>& f) {
    for (std::size_t k = used_; k-- > 0;) {
      swap& s = swaps_[k];
      buffer_.resize(s.send_count);
      sendrecv_back(f.data() + s.recv_first, s.recv_count * sizeof(hs::position), buffer_.data(),
                    s.send_count * sizeof(hs::position), s);
      for (std::size_t j = 0; j < s.send_count; ++j)
        for (int d = 0; d < 3; ++d) f[s.list[j]][d] += buffer_[j][d];
    }
  }

  /// Leavers to their new boxes (positions wrapped into the domain first) with their companion
  /// arrays (velocities, ids) in the same message, dimension by dimension: sent to both
  /// neighbours (once when they are the same rank), each keeping what lies in its box. Atoms move
  /// at most one box per call, as between two re-neighbourings. Order: stayers (the last one
  /// filling each hole), then arrivals.
  template <class... Companions>
  void exchange(std::vector<hs::position>& x, std::vector<Companions>&... more) {
    constexpr std::size_t bytes = (sizeof(hs::position) + ... + sizeof(Companions));
    for (auto& p : x)
      for (int d = 0; d < shape_.ndims(); ++d)
        if (shape_.periodic(d)) p[d] = dom_.wrap(d, p[d]);
    for (int d = 0; d < shape_.ndims(); ++d) {
      if (shape_.dim(d) == 1) continue;
      const double lo = dom_.edge(shape_, d, coord_[d]), hi = dom_.edge(shape_, d, coord_[d] + 1);
      leaving_.clear();
      for (std::size_t i = 0; i < x.size();) {
        if (x[i][d] >= lo && x[i][d] < hi) {
          ++i;
          continue;
        }
        const std::size_t at = leaving_.size();
        leaving_.resize(at + bytes);
        pack_one(leaving_.data() + at, x[i], more[i]...);
        x[i] = x.back();
        x.pop_back();
        ((more[i] = more.back(), more.pop_back()), ...);
      }
      const int sides = neighbor_[d][0] == neighbor_[d][1] ? 1 : 2;
      for (int side = 0; side < sides; ++side) {
        swap s;
        s.send_to = neighbor_[d][side];
        s.recv_from = neighbor_[d][1 - side];
        const std::size_t count = leaving_.size();
        std::size_t arriving = 0;
        sendrecv(&count, sizeof count, &arriving, sizeof arriving, s);
        arriving_.resize(arriving);
        sendrecv(leaving_.data(), count, arriving_.data(), arriving, s);
        for (std::size_t at = 0; at < arriving; at += bytes) {
          hs::position p;
          std::memcpy(&p, arriving_.data() + at, sizeof p);
          if (p[d] >= lo && p[d] < hi) {
            x.push_back(p);
            (more.emplace_back(), ...);
            unpack_one(arriving_.data() + at + sizeof p, more.back()...);
          }
        }
      }
    }
  }

 private:
  struct swap {
    int dim = 0, send_to = 0, recv_from = 0, image = 0;
    double shift = 0;
    std::vector<std::size_t> list;
    std::size_t send_count = 0, recv_first = 0, recv_count = 0;
  };

  /// The swaps keep their list capacity from one borders() to the next.
  swap& next_swap() {
    if (used_ == swaps_.size()) swaps_.emplace_back();
    return swaps_[used_++];
  }

  /// Bytes to the swap's destination, bytes from its source (a copy when both are this rank).
  void sendrecv(const void* out, std::size_t out_bytes, void* in, std::size_t in_bytes, const swap& s) {
    if (s.send_to == me_ && s.recv_from == me_) {
      std::copy_n(static_cast<const char*>(out), out_bytes, static_cast<char*>(in));
      return;
    }
    MPI_Sendrecv(out, static_cast<int>(out_bytes), MPI_BYTE, s.send_to, 0, in, static_cast<int>(in_bytes), MPI_BYTE,
                 s.recv_from, 0, comm_, MPI_STATUS_IGNORE);
  }

  /// The reverse direction: to the swap's source, from its destination.
  void sendrecv_back(const void* out, std::size_t out_bytes, void* in, std::size_t in_bytes, const swap& s) {
    swap back;
    back.send_to = s.recv_from;
    back.recv_from = s.send_to;
    sendrecv(out, out_bytes, in, in_bytes, back);
  }

  void send_positions(std::vector<hs::position>& x, const swap& s) {
    buffer_.resize(s.send_count);
    for (std::size_t j = 0; j < s.send_count; ++j) {
      buffer_[j] = x[s.list[j]];
      buffer_[j][s.dim] += s.shift;
    }
    exchange_buffer(buffer_.data(), x.data() + s.recv_first, s);
  }

  /// Values packed one after another into `out` (trivially copyable: bytes).
  template <class... Ts>
  static void pack_one(char* out, const Ts&... values) {
    ((std::memcpy(out, &values, sizeof(Ts)), out += sizeof(Ts)), ...);
  }

  template <class... Ts>
  static void unpack_one(const char* in, Ts&... values) {
    ((std::memcpy(&values, in, sizeof(Ts)), in += sizeof(Ts)), ...);
  }

  /// Positions (shifted) and companion values of the swap's list in one message, unpacked into the
  /// swap's receive range.
  template <class... Companions>
  void send_packed(std::vector<hs::position>& x, const swap& s, std::vector<Companions>&... more) {
    constexpr std::size_t bytes = (sizeof(hs::position) + ... + sizeof(Companions));
    leaving_.resize(s.send_count * bytes);
    for (std::size_t j = 0; j < s.send_count; ++j) {
      const std::size_t i = s.list[j];
      hs::position p = x[i];
      p[s.dim] += s.shift;
      pack_one(leaving_.data() + j * bytes, p, more[i]...);
    }
    arriving_.resize(s.recv_count * bytes);
    sendrecv(leaving_.data(), leaving_.size(), arriving_.data(), arriving_.size(), s);
    for (std::size_t j = 0; j < s.recv_count; ++j)
      unpack_one(arriving_.data() + j * bytes, x[s.recv_first + j], more[s.recv_first + j]...);
  }

  template <class T, class Adjust>
  void forward_adjusted(std::vector<T>& v, Adjust adjust) {
    std::vector<T> out;  // only the benchmark's checks use this path
    for (std::size_t k = 0; k < used_; ++k) {
      const swap& s = swaps_[k];
      out.resize(s.send_count);
      for (std::size_t j = 0; j < s.send_count; ++j) {
        out[j] = v[s.list[j]];
        adjust(out[j], s);
      }
      exchange_buffer(out.data(), v.data() + s.recv_first, s);
    }
  }

  template <class T>
  void exchange_buffer(const T* out, T* in, const swap& s) {
    sendrecv(out, s.send_count * sizeof(T), in, s.recv_count * sizeof(T), s);
  }

  MPI_Comm comm_;
  hs::grid_shape shape_;
  hs::domain dom_;
  double cutoff_;
  int me_;
  int coord_[3] = {0, 0, 0}, need_[3] = {0, 0, 0};
  int neighbor_[3][2] = {};
  std::vector<swap> swaps_;
  std::size_t used_ = 0, ghosts_ = 0;
  std::vector<hs::position> buffer_;
  std::vector<char> leaving_, arriving_;  // packed atoms: exchange(), borders() with companions
};

}  // namespace bench

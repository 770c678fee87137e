// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file msn_topology.hpp
/// @brief The n-dimensional Manhattan Street Network (MSN) of NAStJA's global
/// announcement network (msn-global-network, Sec. II-A): dimension sizes,
/// directed edges, the non-regular case. Pure arithmetic, no MPI.

#include <cstdint>
#include <string>
#include <vector>

#include "../detail/arithmetic.hpp"
#include "../error.hpp"

namespace haloshift {

/// An MSN over `size()` vertices (one per rank) with `degree()` dimensions.
///
/// Vertices are the first P positions, in row-major order (dimension 0
/// slowest), of the box N_0 x ... x N_{n-1}. When P fills the box the network
/// is *regular*; otherwise it is a full cuboid (the complete layers along
/// dimension 0) plus one incomplete hyperplane, which is itself filled
/// row-major, so the same holds recursively.
///
/// Edges: along dimension i a vertex steps +1 when the sum of its *other*
/// coordinates is even, else -1 (wrapping around). That direction is the same
/// for every vertex of a line along i, so each line is a directed cycle. Where
/// the step lands on a missing position (outside the first P) it keeps going
/// in the same direction to the next vertex that exists. Hence:
/// * out- and in-degree are exactly n (the incomplete hyperplane adds no
///   link; some links may be self-loops or repeat a neighbour on tiny P);
/// * a hyperplane vertex (layer c along dimension 0) is one hop from the
///   cuboid (its dimension-0 successor is in layer 0 or c-1) and one hop to
///   it (its dimension-0 predecessor likewise);
/// * the network is strongly connected for every P: every line is a cycle
///   through layer 0's vertex of that line, and layer 0 is again such a
///   network one dimension lower.
class msn_topology {
public:
  /// The paper's sizes for `processes` vertices and `degree` dimensions.
  msn_topology(int processes, int degree) : msn_topology(processes, sizes_for(processes, degree), 0) {}

  /// Explicit sizes (for regular networks of any shape); `processes` must fit
  /// the box and leave no whole layer along dimension 0 empty.
  msn_topology(int processes, std::vector<int> sizes) : msn_topology(processes, std::move(sizes), 0) {}

  /// N_i = ceil(K_i^(1/(n-i))), K_0 = P, K_{i+1} = ceil(K_i / N_i): as close
  /// to a cube as possible (msn-global-network, Sec. II-A).
  static std::vector<int> sizes_for(int processes, int degree) {
    check_arguments(processes, degree);
    std::vector<int> out;
    std::int64_t remaining = processes;
    for (int i = 0; i < degree; ++i) {
      const std::int64_t n = root_ceil(remaining, degree - i);
      out.push_back(static_cast<int>(n));
      remaining = (remaining + n - 1) / n;
    }
    return out;
  }

  /// Number of vertices (processes).
  int size() const noexcept { return size_; }
  /// Number of dimensions: each vertex's out-degree.
  int degree() const noexcept { return static_cast<int>(sizes_.size()); }
  /// The box's size along each dimension.
  const std::vector<int>& sizes() const noexcept { return sizes_; }
  /// Whether the vertices fill the whole box.
  bool regular() const noexcept { return box_ == size_; }

  /// Coordinates of `vertex` in the box.
  std::vector<int> coords_of(int vertex) const {
    std::vector<int> c(sizes_.size());
    decompose(vertex, c.data());
    return c;
  }

  /// +1 or -1: the direction of the line along `dim` through `coords`.
  static int direction(const std::vector<int>& coords, int dim) noexcept {
    int others = 0;
    for (std::size_t i = 0; i < coords.size(); ++i)
      if (static_cast<int>(i) != dim) others += coords[i];
    return others % 2 == 0 ? 1 : -1;
  }

  /// The vertex `vertex` sends to along `dim`.
  int successor(int vertex, int dim) const { return walk(vertex, dim, 1); }
  /// The vertex that sends to `vertex` along `dim`.
  int predecessor(int vertex, int dim) const { return walk(vertex, dim, -1); }

  /// The paper's formula (1), d = sum N_i / 2 + v, as Table III evaluates it
  /// for any sizes: the half-sum rounded up, and v = 1 iff the network is
  /// regular and every N_i is a multiple of 4. Equal to the true diameter
  /// (msn_distances.hpp) for regular networks whose sizes are all even
  /// (n >= 2); otherwise an estimate, see docs/networks.md.
  int formula_diameter() const noexcept {
    std::int64_t sum = 0;
    bool all_multiples_of_4 = true;
    for (int n : sizes_) {
      sum += n;
      all_multiples_of_4 = all_multiples_of_4 && n % 4 == 0;
    }
    return static_cast<int>((sum + 1) / 2) + (regular() && all_multiples_of_4 ? 1 : 0);
  }

private:
  msn_topology(int processes, std::vector<int> sizes, int) : size_(processes), sizes_(std::move(sizes)) {
    check_arguments(processes, static_cast<int>(sizes_.size()));
    stride_.assign(sizes_.size(), 1);
    box_ = 1;
    for (int i = degree() - 1; i >= 0; --i) {
      if (sizes_[i] < 1)
        throw error("msn: sizes[" + std::to_string(i) + "] must be >= 1, got " + std::to_string(sizes_[i]));
      stride_[i] = box_;
      box_ *= sizes_[i];
      if (box_ > (std::int64_t{1} << 40)) throw error("msn: the box of the sizes is too large");
    }
    if (box_ < processes)
      throw error("msn: sizes hold " + std::to_string(box_) + " vertices, fewer than " + std::to_string(processes));
    if (box_ - stride_[0] >= processes)
      throw error("msn: sizes leave the last layer along dimension 0 empty for " + std::to_string(processes) +
                  " vertices");
  }

  static void check_arguments(int processes, int degree) {
    if (processes < 1) throw error("msn: processes must be >= 1, got " + std::to_string(processes));
    if (degree < 1 || degree > 30) throw error("msn: degree must be from 1 to 30, got " + std::to_string(degree));
  }

  /// Smallest n >= 1 with n^r >= k, in exact integer arithmetic.
  static std::int64_t root_ceil(std::int64_t k, int r) {
    auto reaches = [k, r](std::int64_t n) {
      std::int64_t p = 1;
      for (int j = 0; j < r; ++j)
        if ((p *= n) >= k) return true;
      return p >= k;
    };
    std::int64_t low = 1, high = k;  // reaches(high) holds
    while (low < high) {
      const std::int64_t mid = low + (high - low) / 2;
      if (reaches(mid)) high = mid;
      else low = mid + 1;
    }
    return low;
  }

  void decompose(std::int64_t vertex, int* c) const noexcept {
    for (std::size_t i = 0; i < sizes_.size(); ++i) {
      c[i] = static_cast<int>(vertex / stride_[i]);
      vertex %= stride_[i];
    }
  }

  /// Next existing vertex along the line through `vertex` on `dim`, forwards
  /// (`sense` = 1) or backwards (-1). The line always holds `vertex`, so it ends.
  int walk(int vertex, int dim, int sense) const {
    if (vertex < 0 || vertex >= size_)
      throw error("msn: vertex must be from 0 to " + std::to_string(size_ - 1) + ", got " + std::to_string(vertex));
    if (dim < 0 || dim >= degree())
      throw error("msn: dim must be from 0 to " + std::to_string(degree() - 1) + ", got " + std::to_string(dim));
    std::int64_t rest = vertex, others = 0;
    int x = 0;
    for (int i = 0; i < degree(); ++i) {
      const int c = static_cast<int>(rest / stride_[i]);
      rest %= stride_[i];
      if (i == dim) x = c;
      else others += c;
    }
    const int step = sense * (others % 2 == 0 ? 1 : -1), n = sizes_[dim];
    const std::int64_t base = vertex - std::int64_t{x} * stride_[dim];
    std::int64_t next = 0;
    do {
      x = detail::positive_mod(x + step, n);
      next = base + std::int64_t{x} * stride_[dim];
    } while (next >= size_);
    return static_cast<int>(next);
  }

  int size_ = 1;
  std::vector<int> sizes_;
  std::vector<std::int64_t> stride_;
  std::int64_t box_ = 1;
};

}  // namespace haloshift

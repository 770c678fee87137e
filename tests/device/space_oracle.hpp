// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What the space sweeps (space_sweeps.hpp) check against, without a test
// framework: a memory space's arrays (allocated there, filled and read back
// through its copies), the caller's array around a rank's box as the oracle
// of tests/grids/box_oracle.hpp lays it out, the values from global
// coordinates, and the interior a reverse must leave, folded from every
// holder's padded box.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <haloshift/haloshift.hpp>
#include <memory>
#include <string>
#include <vector>

#include "../grids/box_oracle.hpp"

namespace space_sweeps {

namespace hs = haloshift;
using coords = std::array<int, 3>;

/// What a sweep found on this rank: what it ran, and the first failures (one a line).
struct result {
  std::size_t configurations = 0, cells = 0, mismatches = 0;
  std::string failures;
  void fail(const std::string& what) {
    ++mismatches;
    if (failures.size() < 3000) failures += what + "\n";
  }
};

/// `o` on the shared-memory path.
inline hs::plan_options with_shared_memory(hs::plan_options o) {
  o.shared_memory = true;
  return o;
}

/// Plan options that stage a device space's messages through host memory, and that hand them to
/// MPI directly: the two ways a sweep runs, each also on the shared-memory path (messages inside
/// the node through its window, staged on the host either way).
inline std::vector<hs::plan_options> staged_and_direct() {
  hs::plan_options staged, direct;
  staged.device_mpi = hs::memory::mpi_path::staged;
  direct.device_mpi = hs::memory::mpi_path::direct;
  return {staged, direct, with_shared_memory(staged), with_shared_memory(direct)};
}

/// One array of `Space`, freed with it.
template <class Space, class T>
class space_array {
 public:
  explicit space_array(const std::vector<T>& host) : n_(host.size()), p_(Space::template allocate<T>(n_)) {
    Space::copy_to_device(p_, host.data(), n_ * sizeof(T));
  }
  space_array(const space_array&) = delete;
  space_array& operator=(const space_array&) = delete;
  ~space_array() { Space::deallocate(p_); }
  T* get() const { return p_; }
  std::vector<T> read() const {
    std::vector<T> out(n_);
    Space::copy_to_host(out.data(), p_, n_ * sizeof(T));
    return out;
  }

 private:
  std::size_t n_;
  T* p_;
};

/// Plain host memory as a space of the sweeps (the threaded host executor's arrays).
struct host_memory {
  template <class T>
  static T* allocate(std::size_t n) {
    return std::allocator<T>().allocate(n == 0 ? 1 : n);
  }
  static void deallocate(void* p) { ::operator delete(p); }
  static void copy_to_device(void* to, const void* from, std::size_t bytes) { copy(to, from, bytes); }
  static void copy_to_host(void* to, const void* from, std::size_t bytes) { copy(to, from, bytes); }

 private:
  static void copy(void* to, const void* from, std::size_t bytes) {
    if (bytes != 0) std::memcpy(to, from, bytes);
  }
};

/// The caller's array around this rank's box, worked out by the oracle alone: the plan's ghost
/// widths plus `extra` layers (which the exchange must leave alone), padded rows and planes, x or
/// z fastest.
struct view_layout {
  coords low{}, high{}, padding{}, interior{}, origin{};
  hs::storage_order order = hs::storage_order::x_fastest;
  std::array<std::size_t, 3> stride{};
  std::size_t size = 1;

  view_layout(const box_oracle::boxes& w, int rank, bool x_fastest, int extra) {
    const coords c = w.g.coords_of(rank);
    order = x_fastest ? hs::storage_order::x_fastest : hs::storage_order::z_fastest;
    std::array<std::size_t, 3> e{};
    for (int d = 0; d < 3; ++d) {
      const bool used = d < w.ndims;
      low[d] = w.ghost[d] + (used ? extra : 0);
      high[d] = w.ghost_high[d] + (used ? extra : 0);
      padding[d] = used ? (d + rank) % 3 : 0;
      origin[d] = w.bounds[d][c[d]];
      interior[d] = w.bounds[d][c[d] + 1] - origin[d];
      e[d] = static_cast<std::size_t>(low[d] + interior[d] + high[d] + padding[d]);
      size *= e[d];
    }
    stride =
        x_fastest ? std::array<std::size_t, 3>{1, e[0], e[0] * e[1]} : std::array<std::size_t, 3>{e[2] * e[1], e[2], 1};
  }
  /// Calls f(index, unwrapped global coordinates) for every cell of the view.
  template <class F>
  void for_each(F&& f) const {
    for (int k = -low[2]; k < interior[2] + high[2]; ++k)
      for (int j = -low[1]; j < interior[1] + high[1]; ++j)
        for (int i = -low[0]; i < interior[0] + high[0]; ++i)
          f(static_cast<std::size_t>(i + low[0]) * stride[0] + static_cast<std::size_t>(j + low[1]) * stride[1] +
                static_cast<std::size_t>(k + low[2]) * stride[2],
            coords{origin[0] + i, origin[1] + j, origin[2] + k});
  }
  template <class T>
  auto view(T* p, const hs::offset& interior_cells) const {
    return hs::make_field_view(p, interior_cells, to_offset(low), to_offset(high), order, to_offset(padding));
  }
  template <class Space, class T>
  auto view_in(T* p, const hs::offset& interior_cells) const {
    if constexpr (hs::detail::device_space<Space>)
      return hs::make_field_view(Space{}, p, interior_cells, to_offset(low), to_offset(high), order,
                                 to_offset(padding));
    else
      return view(p, interior_cells);
  }
  static hs::offset to_offset(const coords& c) { return {c[0], c[1], c[2]}; }
};

/// Values from global coordinates (forward) and a holder's contributions (reverse): small
/// integers plus a quarter where exact, so that every sum is exact in float, double and int64
/// whatever the order of its terms.
inline double value_at(const coords& p) { return p[0] + 64.0 * p[1] + 4096.0 * p[2] + 0.25; }
inline std::int64_t own_value(const coords& p) { return (p[0] * 7 + p[1] * 131 + p[2] * 977) % 3001; }
inline std::int64_t contribution(int holder, const coords& p) {
  return ((holder + 1) * 7919 + (p[0] + 50) * 31 + (p[1] + 50) * 997 + (p[2] + 50) * 3) % 4001 - 2000;
}
constexpr double sentinel = -7.5;

/// Whether cell u (unwrapped) of rank r's view lies inside the plan's padded box.
inline bool in_plan_box(const box_oracle::boxes& w, int r, const coords& u) {
  const coords lo = w.lo(r), e = w.extent(r);
  for (int d = 0; d < 3; ++d)
    if (u[d] < lo[d] || u[d] >= lo[d] + e[d]) return false;
  return true;
}

/// The three element types of every exchange, as one tuple of per-type things.
template <template <class> class F>
struct per_type {
  F<double> f64;
  F<float> f32;
  F<std::int64_t> i64;
};
template <class T>
using host_vector = std::vector<T>;

/// Fills one array per type: every view cell from `cell(index, u)` (a double), the padding with
/// the sentinel.
template <class Cell>
per_type<host_vector> fill(const view_layout& l, Cell&& cell) {
  per_type<host_vector> a{std::vector<double>(l.size, sentinel), std::vector<float>(l.size, sentinel),
                          std::vector<std::int64_t>(l.size, -8)};
  l.for_each([&](std::size_t i, const coords& u) {
    const double v = cell(i, u);
    a.f64[i] = v;
    a.f32[i] = static_cast<float>(v);
    a.i64[i] = static_cast<std::int64_t>(v);
  });
  return a;
}

/// Compares an array read back from the space with `want`, bit for bit; `what` names it.
template <class T>
void compare(const std::vector<T>& got, const std::vector<T>& want, const std::string& what, result& r) {
  r.cells += got.size();
  if (got.size() == want.size() && std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0) return;
  std::size_t i = 0;
  while (i < got.size() && i < want.size() && std::memcmp(&got[i], &want[i], sizeof(T)) == 0) ++i;
  r.fail(what + ": element " + std::to_string(i) + " of " + std::to_string(got.size()) +
         (i < got.size() && i < want.size()
              ? ": got " + std::to_string(got[i]) + ", expected " + std::to_string(want[i])
              : std::string(": sizes differ")));
}

/// The interior of rank `rank` after a reverse, from every holder's padded box: the owner's value
/// folded with every ghost copy of the cell in the pattern (sum, min, max).
struct folded {
  std::vector<std::int64_t> sum, low, high;
};
inline folded fold(const box_oracle::boxes& w, int rank, int size, const view_layout& l) {
  const std::size_t n = static_cast<std::size_t>(l.interior[0]) * l.interior[1] * l.interior[2];
  folded f{std::vector<std::int64_t>(n), std::vector<std::int64_t>(n), std::vector<std::int64_t>(n)};
  auto at = [&](const coords& q) {
    return (static_cast<std::size_t>(q[2] - l.origin[2]) * l.interior[1] + (q[1] - l.origin[1])) * l.interior[0] +
           (q[0] - l.origin[0]);
  };
  w.for_each_cell(rank, [&](std::size_t, const coords& p) {
    if (w.interior(rank, p)) f.sum[at(p)] = f.low[at(p)] = f.high[at(p)] = own_value(p);
  });
  for (int h = 0; h < size; ++h)
    w.for_each_cell(h, [&](std::size_t, const coords& p) {
      coords q = p;
      if (w.interior(h, p) || !w.in_pattern(h, p) || !w.wrap(q) || !w.interior(rank, q)) return;
      const std::int64_t v = contribution(h, p);
      f.sum[at(q)] += v;
      f.low[at(q)] = std::min(f.low[at(q)], v);
      f.high[at(q)] = std::max(f.high[at(q)], v);
    });
  return f;
}

}  // namespace space_sweeps

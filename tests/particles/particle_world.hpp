// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Test particles of a whole sweep configuration, known to every rank: each
// rank generates its own from a seed, and all of them are gathered, so the
// oracle can compute from positions alone what every rank must import.

#include <mpi.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace particle_world {

struct particle {
  std::array<double, 3> x;
  std::int64_t id;
  double charge;
};

/// Lengths differ per dimension so that a mixed-up dimension shows.
inline std::array<double, 3> lo() { return {-1.0, 0.5, 2.0}; }
inline std::array<double, 3> length() { return {4.0, 3.0, 5.0}; }

/// Particles of one rank: uneven counts (zero on some ranks), uniform in the box `[blo, bhi)`.
inline std::vector<particle> make(int rank, const std::array<double, 3>& blo, const std::array<double, 3>& bhi,
                                  int ndims, unsigned seed) {
  std::mt19937_64 gen(seed * 7919u + static_cast<unsigned>(rank));
  const int n = ((rank * 5 + 2) % 7) * 4;
  std::vector<particle> out;
  for (int i = 0; i < n; ++i) {
    particle p{{0, 0, 0}, rank * 100000 + i, 0.5 + rank + i * 0.125};
    for (int d = 0; d < 3; ++d) {
      std::uniform_real_distribution<double> u(blo[d], bhi[d]);
      p.x[d] = d < ndims ? u(gen) : 0.0;
      if (p.x[d] >= bhi[d]) p.x[d] = blo[d];
    }
    out.push_back(p);
  }
  return out;
}

/// Every rank's elements (of a trivially copyable type), indexed by rank.
template <class T>
std::vector<std::vector<T>> gather_by_rank(const std::vector<T>& mine, MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  int n = static_cast<int>(mine.size() * sizeof(T));
  std::vector<int> counts(size), displs(size);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int r = 0; r < size; ++r) displs[r] = total, total += counts[r];
  std::vector<T> all(static_cast<std::size_t>(total) / sizeof(T));
  MPI_Allgatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, comm);
  std::vector<std::vector<T>> out(size);
  for (int r = 0; r < size; ++r) {
    const auto* first = all.data() + displs[r] / static_cast<int>(sizeof(T));
    out[r].assign(first, first + counts[r] / static_cast<int>(sizeof(T)));
  }
  return out;
}

/// Every rank's particles, indexed by rank.
inline std::vector<std::vector<particle>> gather(const std::vector<particle>& mine, MPI_Comm comm) {
  return gather_by_rank(mine, comm);
}

}  // namespace particle_world

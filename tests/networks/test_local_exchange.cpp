// SPDX-License-Identifier: BSD-3-Clause
// The local networks under the rank sweep, against the halo oracle (an
// independent computation from coordinates): single-hop packages from every
// neighbour offset, multi-hop messages from every box within `hops` boxes,
// each exactly once per offset, after as many steps as boxes away.

#include "../support/catch.hpp"
#include <haloshift/network/local_exchange.hpp>
#include <haloshift/network/ttl_local_exchange.hpp>

#include <algorithm>
#include <tuple>

#include "../support/oracle.hpp"
#include "../support/sweep.hpp"

namespace hs = haloshift;

namespace {

oracle::grid oracle_grid(const sweep::shape& s) {
  oracle::grid g;
  for (std::size_t d = 0; d < s.dims.size(); ++d) g.dims[d] = s.dims[d], g.periodic[d] = s.periodic[d];
  return g;
}

oracle::coords reach(const sweep::shape& s, int k) {
  oracle::coords r{0, 0, 0};
  for (std::size_t d = 0; d < s.dims.size(); ++d) r[d] = k;
  return r;
}

oracle::coords as_coords(const hs::offset& o) { return {o[0], o[1], o[2]}; }

std::vector<long> package_of(int rank, int step) {
  std::vector<long> p(static_cast<std::size_t>((rank * 7 + step) % 4));  // empty ones included
  for (std::size_t e = 0; e < p.size(); ++e) p[e] = rank * 1000L + step * 10L + static_cast<long>(e);
  return p;
}

struct posted {
  int origin, step, index;
};

/// Rank `r` posts before step `s` (s < 3): 0, 1 or 2 messages.
int posts(int r, int s) { return s < 3 ? (r + 2 * s) % 3 : 0; }

}  // namespace

TEST_CASE("local single-hop exchange: every neighbour's package once per offset", "[local][mpi]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (const auto& shape : sweep::shapes(size)) {
    INFO("grid " << shape.name() << ", rank " << rank);
    hs::cartesian_grid grid(MPI_COMM_WORLD, {shape.dims, shape.periodic});
    hs::local_exchange<long> net(grid);
    const auto want = oracle::halo_of(oracle_grid(shape), rank, reach(shape, 1), false);
    for (int step = 0; step < 3; ++step) {
      const auto mine = package_of(rank, step);
      net.step(mine);
      const auto& got = net.received();
      REQUIRE(got.size() == want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        CHECK(as_coords(got[i].from) == want[i].offset);
        CHECK(got[i].source == want[i].source);
        CHECK(as_coords(got[i].image) == want[i].image);
        CHECK(got[i].data == package_of(want[i].source, step));
      }
    }
  }
}

TEST_CASE("TTL multi-hop exchange: every box within the hops, once per offset, one hop per step", "[local][ttl][mpi]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (const auto& shape : sweep::shapes(size)) {
    // 2 hops include the 1-hop deliveries; beyond the grid, images everywhere. Reduced (MPICH): 2 only.
    std::vector<int> hop_counts{2};
    if (!sweep::reduced()) hop_counts = {1, 2, shape.largest() + 1};
    for (int hops : hop_counts) {
      INFO("grid " << shape.name() << ", hops " << hops << ", rank " << rank);
      hs::cartesian_grid grid(MPI_COMM_WORLD, {shape.dims, shape.periodic});
      hs::ttl_local_exchange<posted> net(grid, hops);
      // (origin, step, index, from offset, image, hops, step delivered)
      using delivery = std::tuple<int, int, int, oracle::coords, oracle::coords, int, long>;
      std::vector<delivery> got, want;
      for (const auto& b : oracle::halo_of(oracle_grid(shape), rank, reach(shape, hops), false)) {
        const int distance = std::max({std::abs(b.offset[0]), std::abs(b.offset[1]), std::abs(b.offset[2])});
        for (int s = 0; s < 3; ++s)
          for (int i = 0; i < posts(b.source, s); ++i)
            want.emplace_back(b.source, s, i, b.offset, b.image, distance, s + distance - 1);
      }
      for (int s = 0; s < 3 + hops; ++s) {
        for (int i = 0; i < posts(rank, s); ++i) net.post({rank, s, i});
        net.step();
        for (const auto& m : net.delivered()) {
          CHECK(m.source == m.value.origin);
          CHECK(m.posted_step == m.value.step);
          got.emplace_back(m.value.origin, m.value.step, m.value.index, as_coords(m.from), as_coords(m.image), m.hops,
                           s);
        }
      }
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      CHECK(got == want);
    }
  }
}

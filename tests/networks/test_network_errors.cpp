// SPDX-License-Identifier: BSD-3-Clause
// Bad arguments: named with their value, and, where ranks must agree, the
// same error on every rank (checked collectively at construction).

#include "../support/catch.hpp"
#include <haloshift/network/local_exchange.hpp>
#include <haloshift/network/msn_announce.hpp>
#include <haloshift/network/ttl_local_exchange.hpp>

#include <climits>

namespace hs = haloshift;

TEST_CASE("MsnAnnounce: bad or disagreeing arguments throw on every rank", "[msn][errors][mpi]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CHECK_THROWS_WITH(hs::msn_announce<int>(MPI_COMM_WORLD, 0), Catch::Contains("degree must be from 1 to 30, got 0"));
  CHECK_THROWS_WITH(hs::msn_announce<int>(MPI_COMM_WORLD, 2, {.ttl = -1}),
                    Catch::Contains("ttl must be >= 0 (0: the diameter), got -1"));
  // A bad value on one rank only: every rank reports it.
  CHECK_THROWS_WITH(hs::msn_announce<int>(MPI_COMM_WORLD, rank == size - 1 ? 0 : 2),
                    Catch::Contains("degree must be from 1 to 30, got 0"));
  if (size > 1) {
    CHECK_THROWS_WITH(hs::msn_announce<int>(MPI_COMM_WORLD, rank == 0 ? 2 : 3),
                      Catch::Contains("msn_announce degree must be the same on all ranks, got values from 2 to 3"));
    const int d = hs::msn_announce<int>(MPI_COMM_WORLD, 1).diameter();  // a ring: size - 1
    CHECK(d == size - 1);
    if (d > 1)
      CHECK_THROWS_WITH(hs::msn_announce<int>(MPI_COMM_WORLD, 1, {.ttl = 1}),
                        Catch::Contains("ttl 1 is below the network's diameter"));
  }
}

TEST_CASE("local networks: bad or disagreeing hops throw on every rank", "[local][errors][mpi]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {{0}, {true}});
  CHECK_THROWS_WITH(hs::ttl_local_exchange<int>(grid, -2), Catch::Contains("hops must be >= 1, got -2"));
  CHECK_THROWS_WITH(hs::ttl_local_exchange<int>(grid, rank == 0 ? 0 : 1), Catch::Contains("hops must be >= 1, got 0"));
  if (size > 1)
    CHECK_THROWS_WITH(hs::ttl_local_exchange<int>(grid, rank == 0 ? 1 : 2),
                      Catch::Contains("ttl_local_exchange hops must be the same on all ranks, got values from 1 to 2"));
}

TEST_CASE("a package beyond MPI's int count throws before anything is sent", "[local][errors][mpi]") {
  // Only the size is looked at: the span is never read.
  static const std::byte one{};
  const std::size_t too_many = static_cast<std::size_t>(INT_MAX) + 1;
  const std::vector<std::span<const std::byte>> out{std::span<const std::byte>(&one, too_many)};
  std::vector<hs::byte_buffer> in;
  CHECK_THROWS_WITH(hs::detail::exchange_packages(MPI_COMM_SELF, {{0, 0}}, out, {}, in),
                    Catch::Contains("a package of 2147483648 bytes to rank 0 exceeds MPI's int count"));
}

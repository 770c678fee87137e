// SPDX-License-Identifier: BSD-3-Clause
#include "../support/catch.hpp"
#include "../support/world.hpp"
#include <haloshift/haloshift.hpp>

namespace hs = haloshift;

TEST_CASE("cartesian_grid chooses dims with MPI_Dims_create and maps ranks like MPI_Cart_create", "[grid][mpi]") {
  for (int nd = 1; nd <= 3; ++nd) {
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = std::vector<int>(nd, 0), .periodic = std::vector<bool>(nd, true)});
    CHECK(grid.ndims() == nd);
    CHECK(grid.size() == world_size());
    CHECK(grid.rank() == world_rank());
    // Same coordinates as an MPI Cartesian communicator without reordering.
    std::vector<int> dims(nd), periods(nd, 1), coords(nd);
    for (int d = 0; d < nd; ++d) dims[d] = grid.dim(d);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, nd, dims.data(), periods.data(), 0, &cart);
    MPI_Cart_coords(cart, world_rank(), nd, coords.data());
    for (int d = 0; d < nd; ++d) CHECK(grid.coords()[d] == coords[d]);
    MPI_Comm_free(&cart);
  }
}

TEST_CASE("cartesian_grid works on its own duplicate communicator", "[grid][mpi]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {false}});
  int same = 0;
  MPI_Comm_compare(grid.comm(), MPI_COMM_WORLD, &same);
  CHECK(same == MPI_CONGRUENT);
  hs::cartesian_grid copy = grid;  // copies duplicate again
  MPI_Comm_compare(copy.comm(), grid.comm(), &same);
  CHECK(same == MPI_CONGRUENT);
}

TEST_CASE("cartesian_grid rejects bad input on every rank with the argument and value", "[grid][mpi][errors]") {
  const int n = world_size();
  CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_NULL), Catch::Contains("MPI_COMM_NULL"));
  CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {n + 1}, .periodic = {true}}),
                    Catch::Contains("dims multiply to " + std::to_string(n + 1)) &&
                        Catch::Contains("has " + std::to_string(n) + " ranks"));
  CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {n, -1}, .periodic = {true, true}}),
                    Catch::Contains("dims[1] must be >= 1 (or 0 to choose), got -1"));
  CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {0, 0, 0, 0}, .periodic = {true, true, true, true}}),
                    Catch::Contains("dims must have 1, 2 or 3 entries, got 4"));
  CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {}, .periodic = {}}),
                    Catch::Contains("dims must have 1, 2 or 3 entries, got 0"));
  CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true}}),
                    Catch::Contains("periodic must have one entry per dimension (2), got 1"));
  if (n > 1)
    CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {0, n + 1}, .periodic = {true, true}}),
                      Catch::Contains("does not divide the communicator size"));
}

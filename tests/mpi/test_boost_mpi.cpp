// SPDX-License-Identifier: BSD-3-Clause
// Boost.MPI interop: a grid over a boost::mpi::communicator exchanges like one
// over the raw MPI_Comm, and its communicator can be viewed through Boost.MPI.

#include "../support/catch.hpp"
#include <haloshift/boost_mpi.hpp>
#include <haloshift/haloshift.hpp>

#include <boost/mpi/collectives.hpp>

namespace hs = haloshift;

TEST_CASE("a grid over a Boost.MPI communicator", "[boost][mpi]") {
  boost::mpi::communicator world;
  hs::cartesian_grid grid = hs::make_grid(world, {.dims = {0, 0}, .periodic = {true, true}});
  CHECK(grid.rank() == world.rank());
  CHECK(grid.size() == world.size());
  std::vector<int> mine{world.rank()};
  const auto halo = hs::exchange<hs::Shift>(grid, 1, mine);
  CHECK(halo.size() == 8);
  for (const auto& b : halo) CHECK(b.data[0] == b.source);

  boost::mpi::communicator view = hs::to_boost(grid);
  CHECK(view.size() == world.size());
  CHECK(boost::mpi::all_reduce(view, 1, std::plus<int>()) == world.size());
  CHECK_THROWS_WITH(hs::make_grid(world, {.dims = {world.size() + 1}, .periodic = {true}}),
                    Catch::Contains("dims multiply to"));
}

// SPDX-License-Identifier: BSD-3-Clause
// A minimal program using haloshift's model layer (haloshift::auto) as an
// installed package: Auto picks the strategy from the cost model.
#include <haloshift/auto.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    haloshift::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}});
    std::vector<double> mine{1.0 * grid.rank()};
    auto plan = haloshift::make_plan<haloshift::Auto, double>(grid, 1, mine.size());
    auto halo = plan.make_halo();
    plan.forward(mine, halo);
    status = halo.size() == 26 ? 0 : 1;
    std::printf("consumer_auto: %zu blocks\n", halo.size());
  }
  MPI_Finalize();
  return status;
}

// SPDX-License-Identifier: BSD-3-Clause
// A minimal program using haloshift as an installed or embedded package.
#include <haloshift/haloshift.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    haloshift::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}});
    std::vector<double> mine{1.0 * grid.rank()};
    const auto halo = haloshift::exchange<haloshift::Shift>(grid, 1, mine);
    status = halo.size() == 26 ? 0 : 1;
    std::printf("consumer: %zu blocks\n", halo.size());
  }
  MPI_Finalize();
  return status;
}

// SPDX-License-Identifier: BSD-3-Clause
// One translation unit that builds one field plan and runs it both ways: what scripts/compile_cost times
// (issue #33, item 4: g++ -O2 CPU seconds and text bytes, on the headers alone and with libhaloshift).
// It runs too: mpiexec -n 4 ./field
#include <mpi.h>

#include <haloshift/haloshift.hpp>

namespace hs = haloshift;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, false}});
    hs::grid_field<double> u(grid, {100, 80, 60}, 2);
    auto plan = hs::make_field_plan<hs::Shift>(u);
    for (int step = 0; step < 10; ++step) plan.forward(u);
    plan.reverse(u);
  }
  MPI_Finalize();
}

// SPDX-License-Identifier: BSD-3-Clause
// One translation unit that migrates particles and builds particle plans by a strategy named at run time
// (every strategy reachable), then forwards positions and ids, reverses forces and rebuilds: what
// scripts/compile_cost times (issue #33, item 4). It runs too: mpiexec -n 4 ./particles [strategy]
#include <mpi.h>

#include <array>
#include <haloshift/haloshift.hpp>
#include <span>
#include <vector>

namespace hs = haloshift;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}});
    const hs::domain dom{{0, 0, 0}, {10, 10, 10}};
    std::vector<hs::position> x;
    std::vector<std::array<double, 3>> v;
    std::vector<long> id;
    if (grid.rank() == 0)
      for (int i = 0; i < 1000; ++i) {
        x.push_back({0.01 * i, 0.0093 * i, 0.0071 * i});
        v.push_back({1, 2, 3});
        id.push_back(i);
      }
    hs::migrate(grid, dom, x, v, id);
    auto plan = hs::make_particle_plan(grid, argc > 1 ? argv[1] : "Shift", dom, 1.5, std::span<const hs::position>(x));
    x.resize(plan.size());
    id.resize(plan.size());
    plan.forward_positions(std::span<hs::position>(x));
    std::vector<hs::position> f(plan.size(), hs::position{1, 1, 1});
    plan.reverse(f, [](auto a, const auto& b) {
      for (int d = 0; d < 3; ++d) a[d] += b[d];
      return a;
    });
    plan.forward(std::span<long>(id));
    x.resize(plan.owned());
    plan.rebuild(std::span<const hs::position>(x));
  }
  MPI_Finalize();
}

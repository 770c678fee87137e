// SPDX-License-Identifier: BSD-3-Clause
// The balancer on a grid field's split (docs/balance.md): from each rank's
// measured work, whole-cell cuts that even out a slab of work over the rank
// sweep, the same on every rank, and fields built on them (Auto's ghosts
// equal Shift's there).

#include "../support/catch.hpp"
#include <haloshift/auto.hpp>
#include <haloshift/haloshift.hpp>

#include <algorithm>
#include <mpi.h>

#include "../support/sweep.hpp"

namespace hs = haloshift;

TEST_CASE("the balancer evens out a slab of work on a grid field's split", "[grids][balance]") {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (const sweep::shape& s : sweep::shapes(size)) {
    if (!s.periodic[0]) continue;  // the cuts do not depend on the boundary conditions
    INFO(s.name());
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic});
    const int nd = grid.ndims(), slab = s.widest();
    hs::offset global{1, 1, 1};
    for (int d = 0; d < nd; ++d) global[d] = d == slab ? 480 : 12;
    hs::cell_cuts cuts{};  // the even split to start with
    // The work of a box: its cells in the lower half along `slab` (the upper half costs nothing).
    auto work = [&] {
      const hs::field_shape shape(grid.shape(), grid.coords(), global, cuts, hs::offset{0, 0, 0});
      double w = 1;
      for (int d = 0; d < nd; ++d)
        w *= d == slab ? std::max(0, std::min(shape.lo[d] + shape.interior[d], global[d] / 2) - shape.lo[d])
                       : shape.interior[d];
      return w;
    };
    double first = 0, last = 0;
    int calls = 0;
    for (; calls < 8; ++calls) {
      const hs::balance_report r = hs::rebalance(grid, cuts, global, work(), {.max_move = 0.5});
      if (calls == 0) first = r.imbalance_before;
      double mine = work(), most = 0, total = 0;
      MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      last = most * size / total;
      if (last <= 1.05) break;
    }
    if (grid.dim(slab) > 1) CHECK(first > 1.5);
    CHECK(last <= 1.05);
    // Whole cells from 0 to N, nondecreasing, the same on every rank; a field takes them.
    for (int d = 0; d < nd; ++d) {
      if (grid.dim(d) == 1) continue;
      const std::vector<int>& c = cuts[static_cast<std::size_t>(d)];
      REQUIRE(c.size() == static_cast<std::size_t>(grid.dim(d)) + 1);
      CHECK(c.front() == 0);
      CHECK(c.back() == global[d]);
      CHECK(std::is_sorted(c.begin(), c.end()));
      std::vector<int> root = c;
      MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_INT, 0, MPI_COMM_WORLD);
      CHECK(root == c);
    }
    hs::offset ghost{0, 0, 0};
    for (int d = 0; d < nd; ++d) ghost[d] = 1;
    const hs::field_shape shape(grid.shape(), grid.coords(), global, cuts, ghost);
    // Auto on the balanced (uneven) split fills the same ghosts as Shift: each interior cell holds a
    // number made of its global coordinates.
    hs::grid_field<double> by_auto(grid, shape, -1.0), by_shift(grid, shape, -1.0);
    CHECK(by_auto.shape().cuts == cuts);
    for (int k = 0; k < shape.interior[2]; ++k)
      for (int j = 0; j < shape.interior[1]; ++j)
        for (int i = 0; i < shape.interior[0]; ++i)
          by_auto(i, j, k) = by_shift(i, j, k) =
              ((shape.lo[2] + k) * 1000.0 + shape.lo[1] + j) * 1000.0 + shape.lo[0] + i;
    hs::make_field_plan<hs::Auto>(by_auto).forward(by_auto);
    hs::make_field_plan<hs::Shift>(by_shift).forward(by_shift);
    CHECK(std::equal(by_auto.storage().begin(), by_auto.storage().end(), by_shift.storage().begin()));
  }
}

TEST_CASE("the field balancer checks its arguments on every rank", "[grids][balance][errors]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  hs::cell_cuts cuts{};
  CHECK_THROWS_WITH(hs::rebalance(grid, cuts, hs::offset{64, 1, 1}, rank == 0 ? -1.0 : 1.0),
                    Catch::Contains("work must be finite and >= 0"));
  if (size > 1)
    CHECK_THROWS_WITH(hs::rebalance(grid, cuts, hs::offset{rank == 0 ? 64 : 65, 1, 1}, 1.0),
                      Catch::Contains("global[0] must be the same on all ranks"));
  cuts[0] = {0, 64};  // one cut too few for more than one box
  if (size > 1) CHECK_THROWS(hs::rebalance(grid, cuts, hs::offset{64, 1, 1}, 1.0));
}

// SPDX-License-Identifier: BSD-3-Clause
#include "../support/catch.hpp"
#include "../support/world.hpp"
#include <haloshift/haloshift.hpp>
#include <optional>
#include <span>
#include <vector>

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

TEST_CASE("grid_options without periodic: every dimension of a 1D, 2D or 3D grid wraps", "[grid][mpi]") {
  for (int nd = 1; nd <= 3; ++nd) {
    hs::grid_options options;
    options.dims.assign(static_cast<std::size_t>(nd), 0);
    const hs::cartesian_grid grid(MPI_COMM_WORLD, options);
    CHECK(grid.ndims() == nd);
    for (int d = 0; d < nd; ++d) CHECK(grid.periodic(d));
  }
  const hs::cartesian_grid flat(MPI_COMM_WORLD, {.dims = {0, 0}});  // the spelling of issue 32
  CHECK(flat.ndims() == 2);
  CHECK(flat.size() == world_size());
  const hs::cartesian_grid walls(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, false}});
  CHECK(walls.periodic(0));
  CHECK_FALSE(walls.periodic(1));
}

TEST_CASE("cartesian_grid works on its own duplicate communicator", "[grid][mpi]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {false}});
  int same = 0;
  MPI_Comm_compare(grid.comm(), MPI_COMM_WORLD, &same);
  CHECK(same == MPI_CONGRUENT);
  hs::cartesian_grid copy = grid;  // copies share the grid's duplicate (one per constructed grid)
  MPI_Comm_compare(copy.comm(), grid.comm(), &same);
  CHECK(same == MPI_IDENT);
  hs::cartesian_grid other(MPI_COMM_WORLD, {.dims = {0}, .periodic = {false}});
  MPI_Comm_compare(other.comm(), grid.comm(), &same);
  CHECK(same == MPI_CONGRUENT);
}

TEST_CASE("plans share their grid's communicator and outlive the grid", "[grid][mpi]") {
  std::optional<hs::plan<double>> plan;
  std::vector<double> mine{1.0 + world_rank(), 2.0};
  {
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
    plan.emplace(hs::make_plan<hs::Shift, double>(grid, 1, mine.size()));
    auto first = plan->forward(std::span<const double>(mine));
    REQUIRE(first.size() == 2);  // offsets -1 and +1
  }  // the grid is gone; the plan holds the communicator
  const auto halo = plan->forward(std::span<const double>(mine));
  const int n = world_size(), left = (world_rank() + n - 1) % n;
  for (const auto& b : halo)
    if (b.offset == hs::offset{-1, 0, 0}) {
      REQUIRE(b.data.size() == 2);
      CHECK(b.data[0] == 1.0 + left);
    }
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
                    Catch::Contains("periodic must have one entry per dimension (2), got 1; or none: every dimension periodic"));
  if (n > 1)
    CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {0, n + 1}, .periodic = {true, true}}),
                      Catch::Contains("does not divide the communicator size"));
}

TEST_CASE("cartesian_grid numbers ranks with the first dimension fastest when asked (PETSc DMDA, LAMMPS map xyz)",
          "[grid][mpi]") {
  const int n = world_size(), me = world_rank();
  using order = hs::grid_options::rank_order;
  for (int nd = 1; nd <= 3; ++nd) {
    // Both orders over MPI_Dims_create's dims, and over one dimension holding every rank.
    for (const bool all_in_first : {false, true}) {
      std::vector<int> dims(static_cast<std::size_t>(nd), all_in_first ? 1 : 0);
      dims[0] = all_in_first ? n : 0;
      for (const order o : {order::last_fastest, order::first_fastest}) {
        const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = dims, .order = o});
        REQUIRE(grid.shape().order() == o);
        const int p[3] = {grid.dim(0), grid.dim(1), grid.dim(2)};
        // Brute force: the rank of (x, y, z) counted box by box, the fastest dimension innermost.
        int r = 0;
        for (int slow = 0; slow < p[o == order::first_fastest ? 2 : 0]; ++slow)
          for (int y = 0; y < p[1]; ++y)
            for (int fast = 0; fast < p[o == order::first_fastest ? 0 : 2]; ++fast, ++r) {
              const hs::offset c = o == order::first_fastest ? hs::offset{fast, y, slow} : hs::offset{slow, y, fast};
              INFO(nd << "D " << hs::to_string(grid.shape()) << (o == order::first_fastest ? " x" : " z")
                      << " fastest, rank " << r);
              CHECK(grid.rank_of(c) == r);
              CHECK(grid.coords_of(r) == c);
              if (r == me) CHECK(grid.coords() == c);
            }
        CHECK(r == n);
      }
    }
  }
}

TEST_CASE("cartesian_grid agrees the rank order and the remainder rule on every rank", "[grid][mpi][errors]") {
  const int n = world_size(), me = world_rank();
  using order = hs::grid_options::rank_order;
  using rule = hs::grid_options::remainder_cells;
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .remainder = rule::last});
  CHECK(grid.shape().remainder() == rule::last);
  CHECK(grid.shape().order() == order::last_fastest);
  CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {0}, .order = static_cast<order>(me == n - 1 ? 5 : 0)}),
                    Catch::Contains("order must be rank_order::last_fastest (0) or rank_order::first_fastest (1), got 5"));
  CHECK_THROWS_WITH(
      hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {0}, .remainder = static_cast<rule>(me == n - 1 ? -3 : 1)}),
      Catch::Contains("remainder must be remainder_cells::spread (0), first (1) or last (2), got -3"));
  if (n > 1) {
    CHECK_THROWS_WITH(
        hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {0, 0}, .order = me == 0 ? order::first_fastest : order::last_fastest}),
        Catch::Contains("grid_options.order must be the same on all ranks, got first_fastest on rank 0 and "
                        "last_fastest on rank 1"));
    CHECK_THROWS_WITH(
        hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {0}, .remainder = me == n - 1 ? rule::first : rule::spread}),
        Catch::Contains("grid_options.remainder must be the same on all ranks, got spread on rank 0 and first on rank " +
                        std::to_string(n - 1)));
  }
}

namespace {
/// The pretend node of each rank when every rank shares one real node: groups of `sizes`
/// consecutive ranks (the list repeated), numbered in rank order.
std::vector<int> expected_nodes(const std::vector<int>& sizes, int ranks) {
  std::vector<int> node_of;
  for (std::size_t group = 0; static_cast<int>(node_of.size()) < ranks; ++group)
    for (int i = 0; i < (sizes.empty() ? ranks : sizes[group % sizes.size()]) && static_cast<int>(node_of.size()) < ranks; ++i)
      node_of.push_back(static_cast<int>(group));
  return node_of;
}
bool one_real_node() {
  MPI_Comm shared;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
  int size = 0;
  MPI_Comm_size(shared, &size);
  MPI_Comm_free(&shared);
  return size == world_size();
}
}  // namespace

TEST_CASE("the node layout splits a node's ranks into pretend nodes of the sizes asked for", "[grid][mpi][nodes]") {
  if (!one_real_node()) return;  // the oracle below assumes one real node (every test run on one machine)
  const int n = world_size();
  for (const std::vector<int>& sizes : {std::vector<int>{}, {1}, {2}, {3}, {3, 2}, {1, 2}}) {
    const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .node_sizes = sizes});
    const hs::detail::node_layout& nodes = hs::detail::nodes_of(grid);
    const std::vector<int> expected = expected_nodes(sizes, n);
    CHECK(*nodes.node_of == expected);
    CHECK(nodes.count == expected.back() + 1);
    CHECK(nodes.node == expected[static_cast<std::size_t>(world_rank())]);
    int members = 0;
    for (int r = 0; r < n; ++r) members += nodes.same_node(r);
    CHECK(nodes.comm.size() == members);
    CHECK(&hs::detail::nodes_of(grid) == &nodes);  // computed once per grid
  }
  setenv("HALOSHIFT_NODE_SIZE", "2,1", 1);
  const hs::cartesian_grid from_environment(MPI_COMM_WORLD, {.dims = {0}});
  CHECK(*hs::detail::nodes_of(from_environment).node_of == expected_nodes({2, 1}, n));
  unsetenv("HALOSHIFT_NODE_SIZE");
}

TEST_CASE("node sizes that differ across ranks or are malformed raise on every rank", "[grid][mpi][nodes][errors]") {
  const hs::cartesian_grid bad(MPI_COMM_WORLD, {.dims = {0}, .node_sizes = {0}});
  CHECK_THROWS_WITH(hs::detail::nodes_of(bad), Catch::Contains("grid_options.node_sizes[0] must be >= 1, got 0"));
  setenv("HALOSHIFT_NODE_SIZE", "2;x", 1);
  const hs::cartesian_grid malformed(MPI_COMM_WORLD, {.dims = {0}});
  CHECK_THROWS_WITH(hs::detail::nodes_of(malformed), Catch::Contains("HALOSHIFT_NODE_SIZE = \"2;x\""));
  unsetenv("HALOSHIFT_NODE_SIZE");
  if (world_size() < 2) return;
  const hs::cartesian_grid differ(MPI_COMM_WORLD, {.dims = {0}, .node_sizes = {world_rank() == 0 ? 1 : 2}});
  CHECK_THROWS_WITH(hs::detail::nodes_of(differ), Catch::Contains("node sizes (grid_options.node_sizes or HALOSHIFT_NODE_SIZE): the first must be the same on "
                                    "all ranks, got values from 1 to 2"));
}

// SPDX-License-Identifier: BSD-3-Clause
// Payload types and the halo API: structs, bytes, one-shot exchange,
// per-dimension k, lookup by offset, periodic images of a single box.

#include "../support/catch.hpp"
#include "../support/world.hpp"
#include <haloshift/haloshift.hpp>

#include <cstdint>
#include <cstring>

#include "../support/oracle.hpp"

namespace hs = haloshift;

namespace {
struct particle {
  double x, y, z;
  std::int32_t id;
  std::int32_t type;
};
static_assert(hs::transferable<particle>);
static_assert(!hs::transferable<std::string>);
static_assert(!hs::transferable<const int>);
}  // namespace

TEST_CASE("struct payloads arrive bit for bit, uneven counts per rank", "[payload][mpi]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, false}});
  const int me = world_rank();
  auto make = [](int r) {
    std::vector<particle> v(static_cast<std::size_t>(r % 3 + 1));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = {r + 0.1 * i, -1.0 * r, 1e-300 * i, r, static_cast<int>(i)};
    return v;
  };
  const std::vector<particle> mine = make(me);
  hs::halo<particle> halo = hs::exchange<hs::Shift>(grid, 2, mine);
  oracle::grid og;
  og.dims = {grid.dim(0), grid.dim(1), 1};
  og.periodic = {true, false, false};
  const auto want = oracle::halo_of(og, me, {2, 2, 0}, false);
  REQUIRE(halo.size() == want.size());
  for (const auto& w : want) {
    auto b = halo.find({w.offset[0], w.offset[1], w.offset[2]});
    REQUIRE(b);
    const auto expected = make(w.source);
    REQUIRE(b->data.size() == expected.size());
    CHECK(std::memcmp(b->data.data(), expected.data(), expected.size() * sizeof(particle)) == 0);
  }
}

TEST_CASE("byte payloads of odd sizes and per-dimension k", "[payload][mpi]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, false}});
  const int me = world_rank();
  std::vector<std::uint8_t> mine(static_cast<std::size_t>(me % 4 * 3 + 1), static_cast<std::uint8_t>(me));
  auto plan = hs::make_plan<hs::Shift, std::uint8_t>(grid, hs::offset{2, 1, 0}, mine.size());
  auto halo = plan.forward(mine);
  oracle::grid og;
  og.dims = {grid.dim(0), grid.dim(1), grid.dim(2)};
  og.periodic = {true, true, false};
  const auto want = oracle::halo_of(og, me, {2, 1, 0}, false);
  REQUIRE(halo.size() == want.size());
  std::size_t i = 0;
  for (const auto& b : halo) {
    CHECK(b.offset == want[i].offset);
    CHECK(b.source == want[i].source);
    CHECK(b.data.size() == static_cast<std::size_t>(want[i].source % 4 * 3 + 1));
    for (auto v : b.data) CHECK(v == static_cast<std::uint8_t>(want[i].source));
    ++i;
  }
}

TEST_CASE("a periodic grid of one box in a dimension sees its own images", "[payload][mpi]") {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {1, size}, .periodic = {true, true}});
  std::vector<int> mine{world_rank()};
  const auto halo = hs::exchange<hs::Shift>(grid, 2, mine);
  CHECK(halo.size() == 24);
  const auto left2 = halo.at({-2, 0, 0});
  CHECK(left2.source == world_rank());
  CHECK(left2.image == hs::offset{-2, 0, 0});
  CHECK(left2.data[0] == world_rank());
  CHECK_THROWS_WITH(halo.at({3, 0, 0}), Catch::Contains("no block at offset (3,0,0)"));
  CHECK_FALSE(halo.find({0, 0, 1}));
}

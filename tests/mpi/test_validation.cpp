// SPDX-License-Identifier: BSD-3-Clause
// Validation is collective and clear: arguments that must agree are agreed in
// the first collective of the call, doubles are reported as numbers, enums are
// checked and sizes are overflow-checked. Auto is asked for by name: its
// arguments are agreed before the model layer is reached. Every error is asserted with the same
// text on every rank, at any rank count.

#include "../support/catch.hpp"
#include "../support/counting_mpi.hpp"
#include <haloshift/haloshift.hpp>

#include <climits>
#include <functional>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace hs = haloshift;

namespace {
int validation_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int validation_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}
}  // namespace

TEST_CASE("agree reports doubles as numbers, integers as integers", "[validation][errors]") {
  const bool first = validation_rank() == 0;
  const double x = first ? 0.1 : 0.25;
  const std::int64_t n = first ? -3 : 7;
  if (validation_size() == 1) {
    CHECK_NOTHROW(hs::mpi::agree(MPI_COMM_WORLD, [] {}, {hs::mpi::real_value("x", x), {"n", n}}));
    return;
  }
  CHECK_THROWS_WITH(hs::mpi::agree(MPI_COMM_WORLD, [] {}, {hs::mpi::real_value("x", x)}),
                    Catch::Contains("x must be the same on all ranks, got values from 0.1 to 0.25"));
  CHECK_THROWS_WITH(hs::mpi::agree(MPI_COMM_WORLD, [] {}, {{"n", n}}),
                    Catch::Contains("n must be the same on all ranks, got values from -3 to 7"));
  const double neg = first ? -2.5 : 1e300;
  CHECK_THROWS_WITH(hs::mpi::agree(MPI_COMM_WORLD, [] {}, {hs::mpi::real_value("y", neg)}),
                    Catch::Contains("y must be the same on all ranks, got values from -2.5 to 1e+300"));
  const std::int64_t extreme = first ? INT64_MIN : INT64_MAX;
  CHECK_THROWS_WITH(hs::mpi::agree(MPI_COMM_WORLD, [] {}, {{"e", extreme}}),
                    Catch::Contains("e must be the same on all ranks, got values from -9223372036854775808 to "
                                    "9223372036854775807"));
}

TEST_CASE("agree reports texts as themselves and agrees each array's element size and their number",
          "[validation][errors]") {
  const int rank = validation_rank(), size = validation_size();
  // Ranks 0 and 2 say "beta", the others "alpha": the lowest rank of each, the lower one first.
  const std::string_view text = rank % 2 == 0 ? "beta" : "alpha";
  const auto texts = [&] {
    hs::mpi::agree(MPI_COMM_WORLD, [] {}, {hs::mpi::text_value("t", text, static_cast<std::int64_t>(text.size()))});
  };
  if (size == 1) CHECK_NOTHROW(texts());
  else CHECK_THROWS_WITH(texts(), Catch::Equals("haloshift: t must be the same on all ranks, got beta on rank 0 and alpha on rank 1"));
  const hs::mpi::array_names names{"count", "size", "size of array"};
  const auto sizes = [&](std::vector<std::size_t> mine) {
    std::vector<hs::mpi::agreed_value> values;
    hs::mpi::append_element_sizes(mine, values, names);
    hs::mpi::agree(MPI_COMM_WORLD, [] {}, values);
  };
  const bool last = rank == size - 1;
  CHECK_NOTHROW(sizes({8, 4, 4}));
  if (size == 1) return;
  // Equal sums, permuted or split: each size and the count are compared.
  CHECK_THROWS_WITH(sizes(last ? std::vector<std::size_t>{4, 8} : std::vector<std::size_t>{8, 4}),
                    Catch::Equals("haloshift: size of array 0 must be the same on all ranks, got values from 4 to 8"));
  CHECK_THROWS_WITH(sizes(last ? std::vector<std::size_t>{8, 4, 4} : std::vector<std::size_t>{8, 8}),
                    Catch::Equals("haloshift: count must be the same on all ranks, got values from 2 to 3"));
  CHECK_THROWS_WITH(sizes(last ? std::vector<std::size_t>{2} : std::vector<std::size_t>{4}),
                    Catch::Equals("haloshift: size must be the same on all ranks, got values from 2 to 4"));
  // Beyond the slots of their own: a hash of the rest.
  std::vector<std::size_t> many(12, 4);
  if (last) many[10] = 8, many[11] = 2;
  CHECK_THROWS_WITH(sizes(many), Catch::Contains("the element sizes of the arrays after the first 8 (a hash) must be"));
}

TEST_CASE("a particle cutoff that differs across ranks is reported as numbers", "[validation][errors]") {
  if (validation_size() == 1) return;
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  const hs::domain dom{{0.0, 0.0, 0.0}, {1.0, 1.0, 1.0}};
  const hs::position cutoff{validation_rank() == 0 ? 0.1 : 0.125, 0.0, 0.0};
  std::vector<hs::position> none;
  CHECK_THROWS_WITH((hs::make_particle_plan<hs::Shift>(grid, dom, cutoff, std::span<const hs::position>(none))),
                    Catch::Contains("cutoff[0] must be the same on all ranks, got values from 0.1 to "
                                    "0.125"));
}

TEST_CASE("grid dims and periodic that differ across ranks raise on every rank", "[validation][errors][grid]") {
  const int n = validation_size(), r = validation_rank();
  // Both layouts fit the communicator, so only the disagreement can fail.
  const std::vector<int> dims = r == 0 ? std::vector<int>{n, 1} : std::vector<int>{1, n};
  if (n == 1) {
    CHECK_NOTHROW(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = dims, .periodic = {true, true}}));
  } else {
    CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = dims, .periodic = {true, true}}),
                      Catch::Contains("grid_options.dims[0] must be the same on all ranks, got values from 1 to " +
                                      std::to_string(n)));
    CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {r % 2 == 0}}),
                      Catch::Contains("grid_options.periodic[0] must be the same on all ranks, got values from 0 to 1"));
    CHECK_THROWS_WITH(
        hs::cartesian_grid(MPI_COMM_WORLD, {.dims = r == 0 ? std::vector<int>{0} : std::vector<int>{0, 0},
                                            .periodic = r == 0 ? std::vector<bool>{true} : std::vector<bool>{true, true}}),
        Catch::Contains("grid_options.dims.size() must be the same on all ranks, got values from 1 to 2"));
  }
  // A local mistake on the last rank only: the same message everywhere.
  const bool last = r == n - 1;
  CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = last ? std::vector<bool>{true}
                                                                                          : std::vector<bool>{true, true}}),
                    Catch::Contains("grid: periodic must have one entry per dimension (2), got 1"));
  CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {last ? -2 : 0}, .periodic = {true}}),
                    Catch::Contains("grid: dims[0] must be >= 1 (or 0 to choose), got -2"));
  CHECK_THROWS_WITH(hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {INT_MAX, INT_MAX, INT_MAX}}),
                    Catch::Contains("grid: dims multiply to more than 2147483647 (dims[1] = 2147483647)"));
  // The grid still works after the failures.
  hs::cartesian_grid ok(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  CHECK(ok.size() == n);
}

TEST_CASE("invalid protocol and shell values raise naming the option", "[validation][errors][plan]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  const bool last = validation_rank() == validation_size() - 1;
  hs::plan_options bad_mode;
  bad_mode.mode = static_cast<hs::protocol>(last ? 7 : 0);
  CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, 1, 4, bad_mode)),
                    Catch::Contains("plan_options.mode: invalid protocol value 7"));
  CHECK_THROWS_WITH((hs::make_plan<double>(grid, "SingleHop", 1, 4, bad_mode)),
                    Catch::Contains("plan_options.mode: invalid protocol value 7"));
  CHECK_THROWS_WITH((hs::make_plan<double>(grid, "Auto", 1, 4, bad_mode)),
                    Catch::Contains("plan_options.mode: invalid protocol value 7"));
  hs::plan_options bad_shell;
  bad_shell.kind = static_cast<hs::shell>(last ? -1 : 0);
  CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, 1, 4, bad_shell)),
                    Catch::Contains("plan_options.kind: invalid shell value -1"));
  CHECK_THROWS_WITH((hs::make_plan<double>(grid, "auto", 1, 4, bad_shell)),
                    Catch::Contains("plan_options.kind: invalid shell value -1"));
}

TEST_CASE("a huge k raises naming k and the size it would need", "[validation][errors][plan]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}});
  CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, INT_MAX, 4)),
                    Catch::Contains("k = (2147483647,2147483647,2147483647) is too large: the range would hold"));
  CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, 1000000, 4)),
                    Catch::Contains("k = (1000000,1000000,1000000) is too large: the range would hold "
                                    "8000012000006000000 offsets"));
  CHECK_THROWS_WITH((hs::make_plan<double>(grid, "SingleHop", hs::offset{1000000, 1, 1}, 4)),
                    Catch::Contains("k = (1000000,1,1) is too large"));
  CHECK_THROWS_WITH((hs::make_plan<double>(grid, "Auto", INT_MAX, 4)), Catch::Contains("is too large"));
  // Only the last rank asks for the huge k: the same error on every rank.
  const int k = validation_rank() == validation_size() - 1 ? INT_MAX : 1;
  CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, k, 4)),
                    Catch::Contains("k = (2147483647,2147483647,2147483647) is too large"));
}

TEST_CASE("a field whose cell count overflows raises", "[validation][errors][field]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}});
  CHECK_THROWS_WITH((hs::grid_field<double>(grid, hs::offset{INT_MAX, INT_MAX, INT_MAX}, hs::offset{0, 0, 0})),
                    Catch::Contains("overflows size_t"));
  CHECK_THROWS_WITH((hs::grid_field<double>(grid, hs::offset{64, 64, 64}, hs::offset{INT_MAX / 2, 1, 1})),
                    Catch::Contains("more than INT_MAX"));
}

TEST_CASE("a plan that was moved from raises instead of crashing", "[validation][errors][plan]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  auto p = hs::make_plan<hs::Shift, double>(grid, 1, 2);
  auto q = std::move(p);
  std::vector<double> mine{1.0, 2.0};
  CHECK_THROWS_WITH(p.forward(std::span<const double>(mine)), Catch::Contains("forward: the plan was moved from"));
  hs::halo<double> h = q.make_halo();
  CHECK_THROWS_WITH(p.reverse(h, std::span<double>(mine)), Catch::Contains("reverse: the plan was moved from"));
  CHECK_THROWS_WITH(p.make_halo(), Catch::Contains("make_halo: the plan was moved from"));
  q.forward(std::span<const double>(mine), h);  // the plan moved to still works
  CHECK(q.local_count() == 2);
}

TEST_CASE("every member of a moved-from grid or plan of any kind raises or is well defined",
          "[validation][errors][plan][moved]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}});
  const auto moved = Catch::Contains("the plan was moved from");
  // Block plan: the count is 0, the program raises (both read freed memory).
  auto block = hs::make_plan<hs::Shift, double>(grid, 1, 2);
  auto block_to = std::move(block);
  CHECK(block.local_count() == 0);  // NOLINT(bugprone-use-after-move): the misuse under test
  CHECK_THROWS_WITH(block.details(), Catch::Contains("details: the plan was moved from"));
  CHECK(block_to.local_count() == 2);
  // Selective plan: the sizes are 0 (size() was the old one), everything that needs the program or
  // the communicator raises.
  const std::vector<int> keys{1, 2, 3};
  auto [selective, all] = hs::make_selective_plan<hs::Shift>(grid, hs::offset{1, 1, 1}, std::span<const int>(keys),
                                                             [](const hs::offset&, const hs::offset&, const int&) {
                                                               return true;
                                                             });
  auto selective_to = std::move(selective);
  CHECK(selective.size() == 0);  // NOLINT(bugprone-use-after-move)
  CHECK(selective.owned() == 0);
  CHECK(selective.ghosts() == 0);
  CHECK(selective.blocks().empty());
  CHECK_FALSE(selective.busy());
  CHECK_THROWS_WITH(selective.details(), Catch::Contains("details: the plan was moved from"));
  CHECK_THROWS_WITH(selective.comm(), Catch::Contains("comm: the plan was moved from"));
  CHECK_THROWS_WITH(selective.reserve(8), Catch::Contains("reserve: the plan was moved from"));
  CHECK_THROWS_WITH(selective.reserve_arrays(8), Catch::Contains("reserve_arrays: the plan was moved from"));
  const std::vector<std::size_t> place;
  CHECK_THROWS_WITH(selective.relocate(place, 0), Catch::Contains("relocate: the plan was moved from"));
  std::vector<int> data(all.size());
  CHECK_THROWS_WITH(selective.forward(std::span<int>(data)), moved);
  CHECK_NOTHROW(selective_to.forward(std::span<int>(data)));
  // Particle plan: send_lists() segfaulted.
  const hs::domain dom{{0, 0, 0}, {1, 1, 1}};
  const auto [lo, hi] = hs::box_of(grid, dom);
  const std::vector<hs::position> x{{(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2}};
  auto particles = hs::make_particle_plan<hs::Shift>(grid, dom, 0.2, std::span<const hs::position>(x));
  auto particles_to = std::move(particles);
  CHECK(particles.size() == 0);  // NOLINT(bugprone-use-after-move)
  CHECK(particles.blocks().empty());
  CHECK_THROWS_WITH(particles.send_lists(), Catch::Contains("send_lists: the plan was moved from"));
  CHECK_THROWS_WITH(particles.ghost_origins(), Catch::Contains("ghost_origins: the plan was moved from"));
  CHECK_THROWS_WITH(particles.rebuild(std::span<const hs::position>(x)), Catch::Contains("rebuild: the plan was moved from"));
  CHECK_NOTHROW(particles_to.send_lists());
  // Field plan.
  hs::grid_field<double> f(grid, hs::offset{8, 8, 8}, 1);
  auto field = hs::make_field_plan<hs::Shift>(f);
  auto field_to = std::move(field);
  CHECK_FALSE(field.busy());  // NOLINT(bugprone-use-after-move)
  CHECK_THROWS_WITH(field.details(), Catch::Contains("details: the plan was moved from"));
  CHECK_THROWS_WITH(field.forward(f), Catch::Contains("start_forward: the plan was moved from"));
  CHECK_THROWS_WITH(field.reverse(f, hs::take_ghost_value{}), Catch::Contains("reverse: the plan was moved from"));
  CHECK_NOTHROW(field_to.forward(f));
  // The grid: what needs its communicator raises, its shape stays.
  hs::cartesian_grid grid_to = std::move(grid);
  const auto no_comm = Catch::Contains("grid: the cartesian_grid was moved from and has no communicator left");
  CHECK_THROWS_WITH(grid.rank(), no_comm);  // NOLINT(bugprone-use-after-move)
  CHECK_THROWS_WITH(grid.comm(), no_comm);
  CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, 1, 2)), no_comm);
  CHECK_THROWS_WITH((hs::grid_field<double>(grid, hs::offset{8, 8, 8}, 1)), no_comm);
  CHECK(grid.size() == grid_to.size());
  CHECK(grid.coords() == grid_to.coords());
  CHECK_NOTHROW(hs::make_plan<hs::Shift, double>(grid_to, 1, 2));
}

TEST_CASE("a strategy differing across ranks with Auto or NeighborAlltoall raises on every rank",
          "[validation][errors][plan]") {
  if (validation_size() == 1) return;
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  const bool first = validation_rank() == 0;
  const auto mismatch = Catch::Contains("strategy must be the same on all ranks");
  auto by_type_auto = [&] {
    if (first) return hs::make_plan<double>(grid, "Auto", 1, 4);
    return hs::make_plan<hs::Shift, double>(grid, 1, 4);
  };
  CHECK_THROWS_WITH(by_type_auto(), mismatch);
  auto by_type_nbr = [&] {
    if (first) return hs::make_plan<hs::NeighborAlltoall, double>(grid, 1, 4);
    return hs::make_plan<hs::SingleHop, double>(grid, 1, 4);
  };
  CHECK_THROWS_WITH(by_type_nbr(), mismatch);
  // The strategies are named (they were two hashes), the lower rank first, as each rank asked.
  CHECK_THROWS_WITH((hs::make_plan<double>(grid, first ? "Auto" : "NeighborAlltoall", 1, 4)),
                    Catch::Contains("strategy must be the same on all ranks, got Auto on rank 0 and "
                                    "NeighborAlltoall on rank 1"));
  CHECK_THROWS_WITH((hs::make_plan<double>(grid, first ? "neighboralltoall" : "Shift", hs::offset{1, 0, 0}, 4)),
                    Catch::Contains("got neighboralltoall on rank 0 and Shift on rank 1"));
  // Case does not matter: the same strategy.
  CHECK_NOTHROW(hs::make_plan<double>(grid, first ? "shift" : "Shift", 1, 4));
  auto auto_vs_neighbor = [&] {
    if (first) return hs::make_plan<double>(grid, "Auto", hs::offset{1, 0, 0}, 4);
    return hs::make_plan<hs::NeighborAlltoall, double>(grid, hs::offset{1, 0, 0}, 4);
  };
  CHECK_THROWS_WITH(auto_vs_neighbor(), mismatch);
  // NeighborAlltoall with the rendezvous protocol on one rank only: a local failure, raised everywhere.
  hs::plan_options rendezvous;
  rendezvous.mode = first ? hs::protocol::rendezvous : hs::protocol::overlapping;
  CHECK_THROWS((hs::make_plan<double>(grid, "NeighborAlltoall", 1, 4, rendezvous)));
  // Afterwards, plans still build and run.
  auto p = hs::make_plan<double>(grid, "NeighborAlltoall", 1, 4);
  std::vector<double> mine(4, 1.0);
  CHECK(p.forward(std::span<const double>(mine)).buffer().size() >= 4);
}

TEST_CASE("a selector that is not geometric raises the same error on every rank", "[validation][errors][selective]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  const std::vector<int> keys{1, 2, 3};
  // Wanted two boxes away but not one: Shift's blocks pass the box one away, which may not
  // forward what it was never sent. The build finds out in the second hop and reports it on all
  // ranks at its end (no rank stops while others still exchange).
  auto skips_a_box = [](const hs::offset&, const hs::offset& rel, const int&) { return rel[0] % 2 == 0; };
  CHECK_THROWS_WITH((hs::make_selective_plan<hs::Shift>(grid, hs::offset{2, 0, 0}, std::span<const int>(keys),
                                                        skips_a_box)),
                    Catch::Contains("the selector is not geometric"));
  // The counts fit (the box two away wants fewer than the box one away holds) but not the keys: the
  // box one away holds keys 1 and 2, the box two away wants key 3. Found as the keys travel, and
  // reported by the build's final agreement.
  auto other_keys = [](const hs::offset&, const hs::offset& rel, const int& key) {
    const int away = rel[0] < 0 ? -rel[0] : rel[0];
    return away == 0 || (away == 1 && key <= 2) || (away == 2 && key == 3);
  };
  CHECK_THROWS_WITH((hs::make_selective_plan<hs::Shift>(grid, hs::offset{2, 0, 0}, std::span<const int>(keys),
                                                        other_keys)),
                    Catch::Contains("the selector is not geometric"));
  // Afterwards, plans still build and run on the grid.
  auto every_key = [](const hs::offset&, const hs::offset&, const int&) { return true; };
  auto [plan, all] = hs::make_selective_plan<hs::Shift>(grid, hs::offset{2, 0, 0}, std::span<const int>(keys), every_key);
  CHECK(all.size() == 5 * keys.size());
}

TEST_CASE("-0.0 agrees with 0.0, and collective argument checks change no result", "[validation][plan]") {
  const bool first = validation_rank() == 0;
  CHECK_NOTHROW(hs::mpi::agree(MPI_COMM_WORLD, [] {}, {hs::mpi::real_value("x", first ? -0.0 : 0.0)}));
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  // A domain whose lower bound is -0.0 on one rank and 0.0 on the others is one domain.
  const hs::domain dom{{first ? -0.0 : 0.0, 0.0, 0.0}, {1.0, 1.0, 1.0}};
  std::vector<hs::position> none;
  CHECK_NOTHROW(hs::make_particle_plan<hs::Shift>(grid, dom, 0.1, std::span<const hs::position>(none)));
  // The same halo with local and with collective checks, for a block plan and a particle plan.
  hs::plan_options collective;
  collective.checks = hs::argument_checks::collective;
  std::vector<double> mine{1.0 + validation_rank(), 2.0, 3.0};
  auto local_plan = hs::make_plan<hs::SingleHop, double>(grid, 2, 3);
  auto checked_plan = hs::make_plan<hs::SingleHop, double>(grid, 2, 3, collective);
  const auto a = local_plan.forward(std::span<const double>(mine)), b = checked_plan.forward(std::span<const double>(mine));
  CHECK(std::vector<double>(a.buffer().begin(), a.buffer().end()) ==
        std::vector<double>(b.buffer().begin(), b.buffer().end()));
  const std::vector<hs::position> x{{(validation_rank() + 0.5) / validation_size(), 0.5, 0.5}};
  auto p = hs::make_particle_plan<hs::Shift>(grid, hs::domain{}, 0.3, std::span<const hs::position>(x), collective);
  auto q = hs::make_particle_plan<hs::Shift>(grid, hs::domain{}, 0.3, std::span<const hs::position>(x));
  std::vector<double> u(p.size(), 0.0), v(q.size(), 0.0);
  u[0] = v[0] = validation_rank();
  p.forward(u);
  q.forward(v);
  CHECK(u == v);
}

TEST_CASE("a call with collective argument checks agrees in one collective, each array's element size too",
          "[validation][field][particles]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}});
  hs::plan_options collective, local;
  collective.checks = hs::argument_checks::collective;
  local.checks = hs::argument_checks::local;
  const auto collectives_of = [](const std::function<void()>& call) {
    const long before = collectives::allreduces();
    call();
    return collectives::allreduces() - before;
  };
  // Field plans: every form of forward and reverse (a field-view forward agreed twice).
  hs::grid_field<double> f(grid, hs::offset{12, 12, 12}, 1);
  hs::field_bundle<double, float> b(grid, hs::offset{12, 12, 12}, 1);
  auto p = hs::make_field_plan<hs::Shift>(f, collective);
  const hs::offset in = f.shape().interior;
  std::vector<double> u(f.storage().size());
  std::vector<float> v(f.storage().size());
  const auto du = hs::make_field_view(u.data(), in, hs::offset{1, 1, 1});
  const auto fv = hs::make_field_view(v.data(), in, hs::offset{1, 1, 1});
  CHECK(collectives_of([&] { p.forward(du); }) == 1);
  CHECK(collectives_of([&] { p.forward(du, fv); }) == 1);
  CHECK(collectives_of([&] { p.reverse(du); }) == 1);
  CHECK(collectives_of([&] { p.reverse(du, fv, std::plus<>{}); }) == 1);
  CHECK(collectives_of([&] { p.forward(f); }) == 1);
  CHECK(collectives_of([&] { p.reverse(f); }) == 1);
  CHECK(collectives_of([&] { p.reverse(f, hs::take_ghost_value{}); }) == 1);
  CHECK(collectives_of([&] { p.forward(b); }) == 1);
  CHECK(collectives_of([&] { p.start_forward(du).wait(); }) == 1);
  // Local checks: none.
  auto q = hs::make_field_plan<hs::Shift>(f, local);
  CHECK(collectives_of([&] { q.forward(du, fv); }) == 0);
  CHECK(collectives_of([&] { q.reverse(f, hs::take_ghost_value{}); }) == 0);
  // Particle plans: one array or several.
  const hs::domain dom{{0, 0, 0}, {1, 1, 1}};
  const auto [lo, hi] = hs::box_of(grid, dom);
  const std::vector<hs::position> x{{(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2}};
  auto particles = hs::make_particle_plan<hs::Shift>(grid, dom, 0.2, std::span<const hs::position>(x), collective);
  std::vector<double> d(particles.size());
  std::vector<int> i(particles.size());
  CHECK(collectives_of([&] { particles.forward(d); }) == 1);
  CHECK(collectives_of([&] { particles.forward(d, i); }) == 1);
  CHECK(collectives_of([&] { particles.reverse(d, i, std::plus<>{}); }) == 1);
}

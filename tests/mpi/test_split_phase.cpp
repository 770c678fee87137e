// SPDX-License-Identifier: BSD-3-Clause
// Split-phase exchanges: the handle's rules (one exchange per plan at a time,
// a handle destroyed early, plans moved in flight), several plans in flight at
// once on one grid, no allocation per call once a plan is built, and exchanges
// on a plan's own thread (plan_options::background). (That
// results equal the blocking ones bit for bit is checked in the oracle sweeps
// of every payload: test_halo_oracle.cpp, test_particles.cpp, test_grid_fields.cpp.)

#include <algorithm>
#include <atomic>
#include <haloshift/haloshift.hpp>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include "../support/catch.hpp"
#include "../support/counting_mpi.hpp"
#include "../support/counting_new.hpp"
#include "../support/sweep.hpp"
#include "../support/world.hpp"

namespace hs = haloshift;

namespace {

/// Allocations made by `calls` (all ranks agree on the largest, so every rank checks the same number).
template <class Calls>
long allocations_in(Calls&& calls) {
  MPI_Barrier(MPI_COMM_WORLD);
  allocations::count = 0;
  allocations::counting = true;
  calls();
  allocations::counting = false;
  long n = allocations::count;
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  return n;
}

/// Iterations of the allocation tests: each makes 4 calls per plan (100 in all; fewer on busy-polling MPICH).
int iterations() { return sweep::reduced() ? 5 : 25; }

/// 3D when the rank count allows, periodic along x and z only (mixed).
hs::cartesian_grid mixed_grid() {
  return hs::cartesian_grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, false, true}});
}

std::vector<double> values_of(int rank, std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = rank * 1000.0 + static_cast<double>(i);
  return v;
}

}  // namespace

using block_strategies =
    std::tuple<hs::Shift, hs::TeamShift, hs::SingleHop, hs::TtlMultiHop, hs::NeighborAlltoall, hs::NodeAggregate>;

TEMPLATE_LIST_TEST_CASE("block plans allocate nothing per exchange", "[split][allocation]", block_strategies) {
  hs::cartesian_grid grid = mixed_grid();
  for (int k : {1, 2})
    for (bool background : {false, true}) {  // the background thread allocates nothing either
      INFO(TestType::name << " k=" << k << (background ? " background" : ""));
      // Uneven counts, and an empty rank: the plans' sizes differ per rank.
      const std::size_t n = world_rank() == 1 ? 0 : 5 + static_cast<std::size_t>(world_rank());
      std::vector<double> mine = values_of(world_rank(), n), own(n);
      auto plan = hs::make_plan<TestType, double>(grid, k, n, {.background = background});
      hs::halo<double> halo = plan.make_halo();
      hs::halo<double> blocking = plan.forward(mine);
      plan.forward(mine, halo);  // the first exchange, like every other, is sized at build
      const long made = allocations_in([&] {
        for (int i = 0; i < iterations(); ++i) {
          plan.forward(mine, halo);
          auto pending = plan.start_forward(mine, halo);
          pending.progress();
          pending.wait();
          plan.reverse(halo, std::span<double>(own));
          auto back = plan.start_reverse(halo, std::span<double>(own));
          while (!back.test()) {
          }
        }
      });
      CHECK(made == 0);
      // The counter sees allocations: a forward into a new halo makes one.
      CHECK(allocations_in([&] { hs::halo<double> fresh = plan.forward(mine); }) > 0);
      plan.forward(mine, halo);
      CHECK(std::equal(halo.buffer().begin(), halo.buffer().end(), blocking.buffer().begin()));
    }
}

using selecting_strategies = std::tuple<hs::Shift, hs::SingleHop, hs::TtlMultiHop, hs::NeighborAlltoall>;

TEMPLATE_LIST_TEST_CASE("particle and field plans allocate nothing per exchange", "[split][allocation]",
                        selecting_strategies) {
  hs::cartesian_grid grid = mixed_grid();
  const hs::domain dom{{0, 0, 0}, {4, 4, 4}};
  // A lattice of points in this rank's box, one fewer per rank (rank 0's box may hold many).
  const auto [lo, hi] = hs::box_of(grid, dom);
  std::vector<hs::position> x;
  for (int i = 0; i < 40 - world_rank(); ++i) {
    hs::position p;
    for (int d = 0; d < 3; ++d) p[d] = lo[d] + (hi[d] - lo[d]) * ((i * (d + 3) + d) % 17) / 17.0;
    x.push_back(p);
  }
  auto particles = hs::make_particle_plan<TestType>(grid, dom, 1.3, x);
  std::vector<hs::position> xs(particles.size()), f(particles.size());
  std::copy(x.begin(), x.end(), xs.begin());
  std::vector<double> ids(particles.size());

  hs::grid_field<double> u(grid, {12, 10, 8}, 2), v(grid, {12, 10, 8}, 2);
  std::iota(u.storage().begin(), u.storage().end(), 0.0);
  auto fields = hs::make_field_plan<TestType>(u);
  fields.forward(u);
  // Two of the caller's arrays in another layout (z fastest, padded): the first calls build their program.
  const hs::field_shape& s = fields.shape();
  const hs::offset padding{1, 0, 2};
  std::size_t elements = 1;
  for (int d = 0; d < 3; ++d) elements *= static_cast<std::size_t>(s.interior[d] + s.ghost[d] + s.ghost_high[d] + padding[d]);
  std::vector<double> mine(elements, 1.0), other(elements, 2.0);
  const auto a = hs::make_field_view(mine.data(), s, hs::storage_order::z_fastest, padding);
  const auto b = hs::make_field_view(other.data(), s, hs::storage_order::z_fastest, padding);
  fields.forward(a);
  fields.forward(a, b);

  particles.reserve_arrays(sizeof(double) + sizeof(hs::position));  // the structure of arrays below
  std::vector<double> flat(4 * particles.size());  // x[i*4 + d], written in place through a view
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t d = 0; d < 3; ++d) flat[4 * i + d] = x[i][d];
  const long made = allocations_in([&] {
    for (int i = 0; i < iterations(); ++i) {
      particles.forward(std::span<double>(ids), std::span<hs::position>(f));
      particles.forward_positions(xs);
      particles.forward_positions(hs::strided_positions<double>(flat.data(), particles.size(), 4), ids);
      particles.reverse(hs::strided_positions<double>(flat.data(), particles.size(), 4));
      auto pending = particles.start_forward_positions(std::span<hs::position>(xs));
      pending.progress();
      pending.wait();
      particles.forward(ids);
      particles.reverse(ids);
      auto back = particles.start_reverse(std::span<hs::position>(f), [](const hs::position& a, const hs::position& b) {
        return hs::position{a[0] + b[0], a[1] + b[1], a[2] + b[2]};
      });
      back.wait();
      fields.forward(u);
      auto ghosts = fields.start_forward(u);
      ghosts.progress();
      ghosts.wait();
      fields.reverse(v);
      auto sums = fields.start_reverse(v, hs::take_max{});
      while (!sums.test()) {
      }
      fields.forward(a);
      fields.start_forward(a, b).wait();
      fields.reverse(a, b, hs::take_min{});
    }
  });
  CHECK(made == 0);
}

using point_to_point_selecting = std::tuple<hs::Shift, hs::SingleHop, hs::TtlMultiHop>;

TEMPLATE_LIST_TEST_CASE("one message per field: as many messages as fields, none allocated per exchange",
                        "[split][allocation][per_field]", point_to_point_selecting) {
  hs::cartesian_grid grid = mixed_grid();
  hs::field_bundle<double, float, double> bundle(grid, {12, 10, 8}, 2);
  hs::grid_field<double> u(grid, {12, 10, 8}, 2);
  std::vector<double> a(u.shape().size(), 1.0);
  std::vector<float> b(u.shape().size(), 2.0f);
  const auto va = hs::make_field_view(a.data(), u.shape());
  const auto vb = hs::make_field_view(b.data(), u.shape());
  auto together = hs::make_field_plan<TestType>(u, {.messages = hs::field_messages::per_neighbor});
  auto apart = hs::make_field_plan<TestType>(u, {.messages = hs::field_messages::per_field});
  CHECK(apart.messages() == hs::field_messages::per_field);
  CHECK(together.messages() == hs::field_messages::per_neighbor);
  // MPI_Isend calls of `calls` on this rank (the plans' programs built before).
  const auto sends_of = [](auto&& calls) {
    const long before = collectives::sends();
    calls();
    return collectives::sends() - before;
  };
  for (auto* plan : {&together, &apart}) {  // the first calls build each layout's program
    plan->forward(bundle);
    plan->forward(va, vb);
    plan->reverse(va, vb);
  }
  const long one = sends_of([&] { together.forward(u); });
  CHECK(sends_of([&] { together.forward(bundle); }) == one);
  CHECK(sends_of([&] { together.forward(va, vb); }) == one);
  CHECK(sends_of([&] { apart.forward(u); }) == one);
  CHECK(sends_of([&] { apart.forward(bundle); }) == 3 * one);
  CHECK(sends_of([&] { apart.forward(va, vb); }) == 2 * one);
  // Reverse sends what forward received (on a non-periodic dimension not as many): twice per neighbour's.
  const long back = sends_of([&] { together.reverse(va, vb, hs::take_max{}); });
  CHECK(sends_of([&] { apart.reverse(va, vb, hs::take_max{}); }) == 2 * back);
  // Host threads (pack_threads) leave one message per field to the serial path: the same messages and ghosts.
  auto threaded = hs::make_field_plan<TestType>(u, {.pack_threads = 2, .messages = hs::field_messages::per_field});
  hs::field_bundle<double, float, double> again(grid, {12, 10, 8}, 2);
  for (std::size_t i = 0; i < u.shape().size(); ++i) {
    bundle.get<0>().storage()[i] = again.get<0>().storage()[i] = grid.rank() * 1e5 + static_cast<double>(i);
    bundle.get<1>().storage()[i] = again.get<1>().storage()[i] = static_cast<float>(i % 1000) - grid.rank();
    bundle.get<2>().storage()[i] = again.get<2>().storage()[i] = -static_cast<double>(i);
  }
  apart.forward(bundle);
  CHECK(sends_of([&] { threaded.forward(again); }) == 3 * one);
  CHECK(std::ranges::equal(bundle.get<0>().storage(), again.get<0>().storage()));
  CHECK(std::ranges::equal(bundle.get<1>().storage(), again.get<1>().storage()));
  CHECK(std::ranges::equal(bundle.get<2>().storage(), again.get<2>().storage()));
  const long made = allocations_in([&] {
    for (int i = 0; i < iterations(); ++i) {
      apart.forward(bundle);
      auto pending = apart.start_forward(va, vb);
      pending.progress();
      pending.wait();
      apart.reverse(va, vb, hs::take_min{});
    }
  });
  CHECK(made == 0);
}

TEST_CASE("one exchange per plan at a time; a handle destroyed early raises after finishing", "[split][errors]") {
  hs::cartesian_grid grid = mixed_grid();
  const std::size_t n = 4;
  std::vector<double> mine = values_of(world_rank(), n), own(n);
  auto plan = hs::make_plan<hs::Shift, double>(grid, 1, n);
  hs::halo<double> want = plan.forward(mine), halo = plan.make_halo();

  {
    auto pending = plan.start_forward(mine, halo);
    CHECK_THROWS_WITH(plan.start_forward(mine, halo), Catch::Contains("already has an exchange in flight"));
    CHECK_THROWS_WITH(plan.forward(mine, halo), Catch::Contains("already has an exchange in flight"));
    CHECK_THROWS_WITH(plan.start_reverse(halo, std::span<double>(own)), Catch::Contains("already has an exchange"));
    pending.wait();
    CHECK(pending.done());
    pending.wait();  // a second wait is harmless
    CHECK(pending.test());
  }
  CHECK(std::equal(halo.buffer().begin(), halo.buffer().end(), want.buffer().begin()));

  hs::halo<double> early = plan.make_halo();
  auto destroy_early = [&] { auto pending = plan.start_forward(mine, early); };
  CHECK_THROWS_WITH(destroy_early(), Catch::Contains("destroyed before its exchange completed"));
  CHECK(std::equal(early.buffer().begin(), early.buffer().end(), want.buffer().begin()));  // it did finish
  plan.forward(mine, halo);  // and the plan is free again

  // A plan moved while its exchange is in flight: the handle keeps working.
  hs::halo<double> moved_halo = plan.make_halo();
  auto pending = plan.start_forward(mine, moved_halo);
  auto moved = std::move(plan);
  pending.wait();
  CHECK(std::equal(moved_halo.buffer().begin(), moved_halo.buffer().end(), want.buffer().begin()));
  CHECK_THROWS_WITH(plan.start_forward(mine, halo), Catch::Contains("moved from"));
}

TEST_CASE("exchanges of several plans in flight at once on one grid", "[split][tags][background]") {
  hs::cartesian_grid grid = mixed_grid();
  // Different strategies, ranges and sizes, started in one order and completed in the opposite one,
  // with progress() in between: no plan takes another's messages. Then the same with two of them
  // on their plans' threads, three threads in MPI at once.
  int provided = MPI_THREAD_SINGLE;  // tests/support/mpi_main.cpp asks for MPI_THREAD_MULTIPLE
  MPI_Query_thread(&provided);
  REQUIRE(provided == MPI_THREAD_MULTIPLE);
  for (bool background : {false, true}) {
    INFO((background ? "Shift and SingleHop in the background" : "all on the calling thread"));
    const std::size_t n = 3 + static_cast<std::size_t>(world_rank() % 3);
    std::vector<double> a = values_of(world_rank(), n), b = values_of(world_rank() + 50, 2 * n);
    auto shift = hs::make_plan<hs::Shift, double>(grid, 2, a.size(), {.background = background});
    auto single = hs::make_plan<hs::SingleHop, double>(grid, 1, b.size(), {.background = background});
    auto ttl = hs::make_plan<hs::TtlMultiHop, double>(grid, 1, a.size());
    const hs::halo<double> want_shift = shift.forward(a), want_single = single.forward(b), want_ttl = ttl.forward(a);
    hs::halo<double> got_shift = shift.make_halo(), got_single = single.make_halo(), got_ttl = ttl.make_halo();
    auto first = shift.start_forward(a, got_shift);
    auto second = single.start_forward(b, got_single);
    auto third = ttl.start_forward(a, got_ttl);
    first.progress();
    third.wait();
    second.progress();
    second.wait();
    first.wait();
    auto same = [](const hs::halo<double>& x, const hs::halo<double>& y) {
      return std::equal(x.buffer().begin(), x.buffer().end(), y.buffer().begin(), y.buffer().end());
    };
    CHECK(same(got_shift, want_shift));
    CHECK(same(got_single, want_single));
    CHECK(same(got_ttl, want_ttl));
  }
}

namespace {

/// A sum that notes whether a thread other than `caller` combined: a background exchange combines on
/// its plan's thread.
struct noting_sum {
  std::thread::id caller;
  std::atomic<int>* elsewhere;
  double operator()(double a, double b) const {
    if (std::this_thread::get_id() != caller) elsewhere->fetch_add(1, std::memory_order_relaxed);
    return a + b;
  }
};

/// A sum that fails where `failing` is set, counting its calls: its error must reach wait() or
/// test() on the calling thread of a rank that called it, once the exchange's messages are complete.
struct failing_sum {
  bool failing;
  int* calls;
  double operator()(double a, double b) const {
    ++*calls;
    if (failing) throw std::runtime_error("failing_sum: refused to combine");
    return a + b;
  }
};

bool same(const hs::halo<double>& x, const hs::halo<double>& y) {
  return std::equal(x.buffer().begin(), x.buffer().end(), y.buffer().begin(), y.buffer().end());
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("background exchanges run on the plan's thread and give the blocking results",
                        "[split][background]", block_strategies) {
  hs::cartesian_grid grid = mixed_grid();  // periodic along x: every rank has ghosts, at 1 rank its own
  for (int k : {1, 2}) {
    INFO(TestType::name << " k=" << k);
    const std::size_t n = world_rank() == 1 ? 0 : 3 + static_cast<std::size_t>(world_rank() % 4);
    const std::vector<double> mine = values_of(world_rank(), n);
    auto plain = hs::make_plan<TestType, double>(grid, k, n);
    auto plan = hs::make_plan<TestType, double>(grid, k, n, {.background = true});
    const hs::halo<double> want = plain.forward(mine);

    // test() never runs the exchange itself: it completes only once the plan's thread has.
    hs::halo<double> got = plan.make_halo();
    auto pending = plan.start_forward(mine, got);
    while (!pending.test()) {
    }
    CHECK(same(got, want));
    // Blocking, and split phase with progress() (which leaves everything to the thread).
    hs::halo<double> blocking = plan.forward(mine), split = plan.make_halo();
    {
      auto handle = plan.start_forward(mine, split);
      handle.progress();
      handle.wait();
    }
    CHECK(same(blocking, want));
    CHECK(same(split, want));

    // A handle moved while its exchange is queued or running, twice: the exchange finishes once.
    hs::halo<double> moved_into = plan.make_halo();
    {
      auto first = plan.start_forward(mine, moved_into);
      auto second = std::move(first);
      std::vector<decltype(second)> kept;
      kept.push_back(std::move(second));
      CHECK(first.done());
      kept.front().wait();
    }
    CHECK(same(moved_into, want));

    // Reverse: the same sums as the blocking plan's, combined on the plan's thread.
    std::vector<double> want_own = mine, own = mine;
    hs::halo<double> contributions = plain.forward(mine);
    plain.reverse(contributions, std::span<double>(want_own));
    std::atomic<int> elsewhere{0};
    auto back = plan.start_reverse(got, std::span<double>(own), noting_sum{std::this_thread::get_id(), &elsewhere});
    while (!back.test()) {
    }
    CHECK(own == want_own);
    CHECK((n == 0 || elsewhere.load() > 0));

    // Destroyed before its exchange completed: it finishes, raises, and the plan is free again.
    hs::halo<double> early = plan.make_halo();
    auto destroy_early = [&] { auto handle = plan.start_forward(mine, early); };
    CHECK_THROWS_WITH(destroy_early(), Catch::Contains("destroyed before its exchange completed"));
    CHECK(same(early, want));
  }
}

using one_and_several_rounds = std::tuple<hs::SingleHop, hs::Shift>;

TEMPLATE_LIST_TEST_CASE("a reduction that throws raises where it threw, once the exchange is complete",
                        "[split][background]", one_and_several_rounds) {
  // Periodic: every rank with cells combines (at 1 rank its own ghosts; at 7 ranks one box of the 6
  // cells along x is empty). The ranks whose sum fails still send and receive every message, so that
  // the others complete (SingleHop: with the right sums, as their ghosts' values come straight from
  // the owners) and no message is left over: the same plan, used again, gives a plain plan's result.
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}});
  hs::grid_field<double> u(grid, hs::offset{6, 5, 4}, hs::offset{1, 1, 1});
  const auto fill = [&] {
    for (std::size_t i = 0; i < u.storage().size(); ++i) u.storage()[i] = world_rank() * 1e4 + static_cast<double>(i);
  };
  fill();
  auto plain = hs::make_field_plan<TestType>(u);
  plain.reverse(u);
  const std::vector<double> want(u.storage().begin(), u.storage().end());
  const auto right = [&] { return std::equal(u.storage().begin(), u.storage().end(), want.begin(), want.end()); };
  for (bool background : {false, true})
    for (bool every_rank : {true, false})
      for (bool polled : {false, true}) {  // found by test(), or raised by wait()
        INFO(TestType::name << (background ? " background" : "") << (every_rank ? ", every rank" : ", rank 0")
                            << (polled ? ", test()" : ", wait()"));
        const bool failing = every_rank || world_rank() == 0;
        auto plan = hs::make_field_plan<TestType>(u, {.background = background});
        fill();
        int calls = 0;
        auto back = plan.start_reverse(u, failing_sum{failing, &calls});
        bool raised = false;
        try {
          if (polled)
            while (!back.test()) {
            }
          else
            back.wait();
        } catch (const std::runtime_error& e) {
          CHECK_THAT(e.what(), Catch::Contains("failing_sum: refused to combine"));
          raised = true;
        }
        CHECK(back.done());                       // nothing left for its destructor to wait for
        CHECK(raised == (failing && calls > 0));  // an empty box (7 ranks) may combine nothing
        if (!failing && std::is_same_v<TestType, hs::SingleHop>) CHECK(right());
        int anyone = raised ? 1 : 0;
        MPI_Allreduce(MPI_IN_PLACE, &anyone, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        CHECK((anyone == 1 || !every_rank));
        fill();
        plan.reverse(u);
        CHECK(right());
      }
}

// SPDX-License-Identifier: BSD-3-Clause
// Particle plans over arrays in the emulated device space (memory/emulated_device.hpp: memory the
// host faults on): the particle sweeps (particle_sweeps.hpp) staged and "GPU-aware", and ordered
// on an emulated stream, bit for bit against the particle oracle and host memory; the executor's
// periodic-shift launch against a naive loop; and the calls' errors. The same sweeps over host
// arrays packed by two threads (plan_options::pack_threads) against one. Hidden Catch2 tags: the
// ctest tests particle_device_emulate.np<n> (label device-emulate) and particle_threads.np<n>
// (label threads) select them.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <haloshift/haloshift.hpp>
#include <haloshift/memory/emulated_device.hpp>
#include <vector>

#include "../support/catch.hpp"
#include "particle_sweeps.hpp"

namespace {

namespace hs = haloshift;
namespace batch = hs::detail::batch;
using emulated = hs::memory::emulated_device;

/// Checks a sweep's result on this rank.
void check_particle_sweep(const space_sweeps::result& r) {
  INFO(r.failures);
  CHECK(r.mismatches == 0);
  CHECK(r.configurations > 0);
  CHECK(r.cells > 0);
}

TEST_CASE("particle sweeps in emulated device memory match the oracle and host memory, staged and direct",
          "[.device-emulate][emulated][particles]") {
  check_particle_sweep(particle_sweeps::run<emulated>(MPI_COMM_WORLD, space_sweeps::staged_and_direct()));
}

TEST_CASE("particle sweeps packed by two host threads match the oracle and one thread", "[.threads][particles]") {
  hs::plan_options two, one;  // every other configuration on one thread: memory::host named, no executor
  two.pack_threads = 2;
  check_particle_sweep(particle_sweeps::run<space_sweeps::host_memory, hs::memory::host>(MPI_COMM_WORLD, {two, one},
                                                                                         hs::memory::host{}));
}

TEST_CASE("particle sweeps ordered on an emulated stream: the shift runs after the unpacking",
          "[.device-emulate][emulated][particles][stream]") {
  emulated::queue q;
  std::size_t pending = 0;  // settles that found work left on the stream by wait() (the unpacking, the shift)
  check_particle_sweep(
      particle_sweeps::run<emulated>(MPI_COMM_WORLD, space_sweeps::staged_and_direct(), emulated{&q}, [&] {
        pending += q.done() < q.enqueued();
        q.synchronize();
      }));
  CHECK(pending > 0);
}

/// A shift launch (batch_op::shift) over `x`, rows of one element reading a double each, run by
/// the emulated executor: x[i] = F(double(x[i]) + by[i % 3]), as shift_by_image computes it.
template <class F>
void check_shift_launch(hs::memory::mpi_path path) {
  // 2^-24 + 2^-50 onto 1.0: one rounding of the exact sum gives the float above 1; adding it as a
  // float (2^-24, a tie) would give 1. A shift in F instead of double fails here.
  const std::vector<double> by = {-4.0, std::ldexp(1.0, -24) + std::ldexp(1.0, -50), 1e-3};
  std::vector<F> x(12);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = i % 3 == 1 ? F(1) : static_cast<F>(0.1 * static_cast<double>(i) - 0.35);
  std::vector<batch::segment> table;
  batch::launch l{0, 0, 0, sizeof(F), batch::batch_op::shift, batch::scalar_kind_of<F>()};
  for (std::size_t k = 0; k < 3; ++k) {  // coordinate k of 4 particles of 3 coordinates
    batch::segment s;
    s.to = static_cast<std::int64_t>(k * sizeof(F));
    s.to_stride = 3 * sizeof(F);
    s.from = static_cast<std::int64_t>(k * sizeof(double));
    s.row_bytes = sizeof(F);
    s.repeat = 4;
    s.to_base = 0;
    s.from_base = 1;
    s.first_word = l.words;
    l.words += 4;
    table.push_back(s);
  }
  l.count = table.size();
  auto ex = emulated::make_executor(path);
  F* d = emulated::allocate<F>(x.size());
  emulated::copy_to_device(d, x.data(), x.size() * sizeof(F));
  void* t = ex->allocate(table.size() * sizeof(batch::segment));
  void* b = ex->allocate(by.size() * sizeof(double));
  ex->upload(t, table.data(), table.size() * sizeof(batch::segment));
  ex->upload(b, by.data(), by.size() * sizeof(double));
  batch::bases at;
  at.at[0] = reinterpret_cast<std::byte*>(d);
  at.at[1] = static_cast<std::byte*>(b);
  ex->run(static_cast<const batch::segment*>(t), l, at);
  ex->synchronize();
  std::vector<F> got(x.size());
  emulated::copy_to_host(got.data(), d, got.size() * sizeof(F));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<F>(static_cast<double>(x[i]) + by[i % 3]);
  CHECK(std::memcmp(got.data(), x.data(), x.size() * sizeof(F)) == 0);
  ex->deallocate(t, table.size() * sizeof(batch::segment));
  ex->deallocate(b, by.size() * sizeof(double));
  emulated::deallocate(d);
}

TEST_CASE("the emulated executor's shift launch adds a double and rounds once",
          "[.device-emulate][emulated][executor]") {
  for (const auto path : {hs::memory::mpi_path::staged, hs::memory::mpi_path::direct}) {
    check_shift_launch<float>(path);
    check_shift_launch<double>(path);
  }
}

TEST_CASE("particle calls in a device space name the argument and value", "[.device-emulate][emulated][errors]") {
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 1}, .periodic = {true, true}});
  const hs::domain dom{{0, 0, 0}, {4, 1, 1}};
  const std::vector<hs::position> x = {
      {static_cast<double>(grid.coords()[0]) * 4.0 / grid.shape().dims()[0] + 0.01, 0.5, 0.5}};
  hs::particle_plan plan = hs::make_particle_plan<hs::Shift>(grid, dom, 0.5, x);
  const std::size_t n = plan.size();
  double* d = emulated::allocate<double>(n + 1);
  CHECK_THROWS_WITH(plan.forward(emulated{}, std::span<double>(d, n + 1)),
                    Catch::Contains("start_forward: the array has " + std::to_string(n + 1) +
                                    " elements but the plan needs " + std::to_string(n) + " (owned and ghosts)"));
  CHECK_THROWS_WITH(plan.reverse(emulated{}, std::span<double>(d, n), std::span<double>(d, n + 1)),
                    Catch::Contains("start_reverse: the array has " + std::to_string(n + 1)) &&
                        Catch::Contains("; array 1 of the call"));
  CHECK_THROWS_WITH(plan.forward_positions(
                        emulated{}, std::span<std::array<double, 1>>(reinterpret_cast<std::array<double, 1>*>(d), n)),
                    Catch::Contains("positions: 1 coordinates per particle, the grid has"));
  {
    auto pending = plan.start_forward(emulated{}, std::span<double>(d, n));
    CHECK_THROWS_WITH(plan.forward(emulated{}, std::span<double>(d, n)),
                      Catch::Contains("start_forward: this plan already has an exchange in flight"));
    pending.wait();
  }
  emulated::deallocate(d);
}

}  // namespace

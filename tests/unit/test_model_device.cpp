// SPDX-License-Identifier: BSD-3-Clause
// Device data in the cost model (hockney::device_terms, docs/model.md "Device
// data"): the simulator's device charges against times worked out here by hand
// from the batched exchange's steps (pack launch, copy to the host, messages,
// copy back, unpack launch), explain() picking staging and strategy together,
// the calibration file with and without device terms, and the measurement of
// the emulated device through the executor interface.

#include "../support/catch.hpp"
#include "../support/model_oracles/every_rank.hpp"
#include "../support/scoped_env.hpp"
#include <haloshift/auto.hpp>
#include <haloshift/memory/emulated_device.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace hs = haloshift;

namespace model_device_test {
using hs::memory::mpi_path;

bool close_to(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)); }

/// The model of the hand computations: alpha, beta, gamma = alpha, and device terms.
const double alpha = 2e-6, beta = 1e-9, m = 1000;
const hs::hockney::device_terms terms{5e-6, 2e-10, 3e-6, 4e-10};
hs::hockney model() { return hs::hockney(alpha, beta).with_device(terms); }

/// The prediction of strategy `name` alone for blocks in device memory.
hs::prediction only(const hs::grid_shape& g, const hs::range& r, const hs::hockney& h, const std::string& name,
                    mpi_path path) {
  const auto ranked = hs::explain(g, r, m, h, hs::protocol::overlapping, {name}, path);
  REQUIRE(ranked.size() == 1);
  return ranked.front();
}

/// A unique path for a calibration file, removed by the caller.
std::string scratch_file(const char* what) {
  return (std::filesystem::temp_directory_path() /
          ("haloshift_model_device_" + std::string(what) + "_" + std::to_string(::getpid()) + ".json"))
      .string();
}
}  // namespace model_device_test

TEST_CASE("the simulator charges device data its launches, device packing and staging copies", "[model][device]") {
  using namespace model_device_test;
  const auto& d = terms;
  // SingleHop on a ring of 3 with k = 1: one round, each rank sends m to both neighbours and
  // receives m from both. Host part: the second send leaves gamma + beta m after the first and
  // takes alpha + beta m; the arrivals are symmetric. One pack launch (no copy to the rank itself
  // overlaps another), one unpack launch.
  const hs::grid_shape ring({3, 1, 1}, {true, true, true});
  const hs::range r{{1, 0, 0}, hs::shell::full};
  const double messages = alpha + alpha + 2 * beta * m;
  const double direct_device = 2 * (d.launch + d.pack_beta * 2 * m);  // pack 2m before, unpack 2m after
  const double copies = 2 * (d.copy_alpha + d.copy_beta * 2 * m);      // departures out, arrivals back
  const hs::prediction staged = only(ring, r, model(), "SingleHop", mpi_path::staged);
  CHECK(close_to(staged.seconds, messages + direct_device + copies));
  CHECK(close_to(staged.device_seconds, direct_device + copies));
  CHECK(staged.staging == "staged");
  const hs::prediction direct = only(ring, r, model(), "SingleHop", mpi_path::direct);
  CHECK(close_to(direct.seconds, messages + direct_device));
  CHECK(close_to(direct.device_seconds, direct_device));
  CHECK(direct.staging == "direct");
  // The rendezvous protocol does not change a batched exchange: it never blocks in a send.
  const auto rendezvous = hs::explain(ring, r, m, model(), hs::protocol::rendezvous, {"SingleHop"}, mpi_path::staged);
  CHECK(close_to(rendezvous.front().seconds, staged.seconds));
  // One box, periodic: both faces are copies to the box itself, packed in one launch; nothing is
  // sent, so nothing is copied to the host, staged or not, and nothing is unpacked.
  const hs::grid_shape alone({1, 1, 1}, {true, true, true});
  for (mpi_path path : {mpi_path::staged, mpi_path::direct}) {
    const hs::prediction p = only(alone, r, model(), "Shift", path);
    CHECK(close_to(p.seconds, d.launch + d.pack_beta * 2 * m));
    CHECK(close_to(p.device_seconds, p.seconds));
  }
  // Without device terms device data costs what the messages cost.
  CHECK(close_to(only(ring, r, hs::hockney(alpha, beta), "SingleHop", mpi_path::staged).seconds, messages));
}

TEST_CASE("device charges on classes of ranks equal those of every rank simulated alone", "[model][device]") {
  using namespace model_device_test;
  // Borders of non-periodic grids and periodic dimensions shorter than the reach (copies to the
  // rank itself, in later waves): the launches and bytes differ from rank to rank.
  for (const hs::grid_shape& g : {hs::grid_shape({5, 4, 3}, {false, false, false}),
                                  hs::grid_shape({4, 2, 1}, {true, true, false})}) {
    const hs::range r{{2, 2, 2}, hs::shell::full};
    for (const std::string name : {"Shift", "SingleHop", "TtlMultiHop"}) {
      const auto& e = hs::detail::strategy_registry::instance().find(name);
      const hs::schedule s = e.make_schedule(g, r, hs::strategy_parameters{});
      for (const bool staged : {false, true})
        for (const hs::protocol mode : {hs::protocol::overlapping, hs::protocol::rendezvous}) {
          hs::detail::simulation_setup setup;
          setup.cost = model();
          setup.mode = mode;
          setup.block_bytes = [](int) { return m; };
          setup.launches = hs::detail::launches_of(g, s, r, name);
          setup.staged = staged;
          const auto classes = hs::detail::simulate(g, s, setup);
          setup.mode = hs::protocol::overlapping;  // what a batched exchange runs
          const auto every = hs::detail::simulate_every_rank(g, s, setup);
          CAPTURE(name, staged, static_cast<int>(mode), hs::to_string(g));
          REQUIRE(classes.finish.size() == every.finish.size());
          for (std::size_t i = 0; i < every.finish.size(); ++i) CHECK(classes.finish[i] == every.finish[i]);
          hs::detail::simulation_setup host = setup;
          host.launches = {};
          CHECK(classes.makespan > hs::detail::simulate(g, s, host).makespan);  // launches cost something
        }
    }
  }
}

TEST_CASE("explain picks staging and strategy together for device data", "[model][device]") {
  using namespace model_device_test;
  const hs::grid_shape cube({4, 4, 4}, {true, true, true});
  const hs::range r{{1, 1, 1}, hs::shell::full};
  const hs::hockney host_model(1e-5, 1e-9);
  const auto rounds = [&](const hs::prediction& p) {
    const auto& e = hs::detail::strategy_registry::instance().find(p.strategy);
    return e.make_schedule(cube, r, hs::strategy_parameters{p.team}).rounds.size();
  };
  const auto host = hs::explain(cube, r, m, host_model);
  std::size_t fewest = rounds(host.front());
  for (const hs::prediction& p : host) fewest = std::min(fewest, rounds(p));
  REQUIRE(rounds(host.front()) > fewest);  // on the host, more rounds of fewer messages win here
  // Launches dear: the strategy with the fewest rounds wins, whichever way the messages go.
  for (mpi_path path : {mpi_path::staged, mpi_path::direct}) {
    const auto dear = hs::explain(cube, r, m, host_model.with_device({1e-2, 0, 0, 0}), hs::protocol::overlapping, {}, path);
    CHECK(rounds(dear.front()) == fewest);
  }
  // Staging copies dear: staged, the fewest rounds win; where MPI reaches device memory the
  // model goes direct, and the host's winner wins again.
  const hs::hockney copies = host_model.with_device({0, 0, 1e-2, 0});
  {
    const scoped::env env("HALOSHIFT_GPU_AWARE", "1");
    const auto ranked = hs::explain(cube, r, m, copies, hs::protocol::overlapping, {}, mpi_path::detect);
    CHECK(ranked.front().staging == "direct");
    CHECK(ranked.front().strategy == host.front().strategy);
    CHECK(close_to(ranked.front().seconds, host.front().seconds));
    CHECK_THAT(ranked.front().staging_why,
               Catch::Contains("model: direct") && Catch::Contains("HALOSHIFT_GPU_AWARE=1"));
  }
  {
    const scoped::env env("HALOSHIFT_GPU_AWARE", "0");
    const auto ranked = hs::explain(cube, r, m, copies, hs::protocol::overlapping, {}, mpi_path::detect);
    CHECK(ranked.front().staging == "staged");
    CHECK(rounds(ranked.front()) == fewest);
    CHECK(ranked.front().staging_why == "environment: HALOSHIFT_GPU_AWARE=0");
  }
  const auto forced = hs::explain(cube, r, m, copies, hs::protocol::overlapping, {}, mpi_path::staged);
  CHECK(forced.front().staging_why == "plan_options::device_mpi = mpi_path::staged");
  CHECK_THROWS_WITH(hs::explain(cube, r, m, copies, hs::protocol::overlapping, {}, static_cast<mpi_path>(9)),
                    Catch::Contains("plan_options.device_mpi: invalid value 9"));
  // Host data: no staging reported.
  CHECK(host.front().staging.empty());
  CHECK(host.front().device_seconds == 0);
}

TEST_CASE("device terms: checked, and in the calibration file only where measured", "[model][device][calibration]") {
  using namespace model_device_test;
  CHECK_THROWS_WITH(model().with_device({-1, 0, 0, 0}), Catch::Contains("device term launch must be >= 0"));
  CHECK_THROWS_WITH(model().with_device({0, 0, 0, std::nan("")}), Catch::Contains("device term copy_beta"));
  hs::calibration c;
  c.cost = model();
  const std::string with = scratch_file("with"), without = scratch_file("without");
  hs::save_calibration(c, with);
  const hs::hockney::device_terms back = hs::load_calibration(with).cost.device();
  CHECK(back.launch == terms.launch);
  CHECK(back.pack_beta == terms.pack_beta);
  CHECK(back.copy_alpha == terms.copy_alpha);
  CHECK(back.copy_beta == terms.copy_beta);
  c.cost = hs::hockney(alpha, beta);
  hs::save_calibration(c, without);
  std::ifstream in(without);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("device") == std::string::npos);  // a host calibration says nothing of devices
  const hs::hockney::device_terms none = hs::load_calibration(without).cost.device();
  CHECK((none.launch == 0 && none.pack_beta == 0 && none.copy_alpha == 0 && none.copy_beta == 0));
  std::filesystem::remove(with);
  std::filesystem::remove(without);
  // Every rank decides with rank 0's device terms too (one rank: the encoding round trip).
  const hs::hockney::device_terms sent = hs::detail::broadcast_model(MPI_COMM_SELF, model()).device();
  CHECK((sent.launch == terms.launch && sent.pack_beta == terms.pack_beta && sent.copy_alpha == terms.copy_alpha &&
         sent.copy_beta == terms.copy_beta));
  const std::string head = R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s_per_byte": 1e-10, "gamma_s": 0, )";
  CHECK_THROWS_WITH(hs::detail::parse_calibration(head + R"("device": {"launch_s": 1e-6}})", "d.json"),
                    Catch::Contains("field 'device.pack_s_per_byte' is missing"));
  CHECK_THROWS_WITH(
      hs::detail::parse_calibration(
          head + R"("device": {"launch_s": -1, "pack_s_per_byte": 0, "copy_alpha_s": 0, "copy_s_per_byte": 0}})", "d.json"),
      Catch::Contains("field 'device.launch_s' = -1"));
  CHECK_THROWS_WITH(hs::detail::parse_calibration(head + R"("device": 3})", "d.json"),
                    Catch::Contains("field 'device' must be an object"));
}

TEST_CASE("calibration measures the emulated device through the executor", "[model][device][calibration]") {
  for (hs::memory::mpi_path path : {hs::memory::mpi_path::staged, hs::memory::mpi_path::direct}) {
    const auto x = hs::memory::emulated_device::make_executor(path);
    const hs::hockney::device_terms d = hs::detail::measure_device_terms(*x, 1 << 16, 3);
    for (double v : {d.launch, d.pack_beta, d.copy_alpha, d.copy_beta}) {
      CHECK(std::isfinite(v));
      CHECK(v > 0);
    }
    CHECK_THROWS_WITH(hs::detail::measure_device_terms(*x, 1000), Catch::Contains("measure_device_terms: bytes"));
  }
}

// SPDX-License-Identifier: BSD-3-Clause
// Auto: every rank makes the same choice, the choice follows the calibration,
// and its halo is Shift's halo bit for bit; bad calibration files fail alike
// on every rank.

#include <catch2/catch.hpp>
#include <haloshift/haloshift.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace hs = haloshift;

namespace {
int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
/// A calibration file path shared by all ranks, written by rank 0.
std::string use_calibration(const std::string& json) {
  int tag = world_rank() == 0 ? static_cast<int>(::getpid()) : 0;
  MPI_Bcast(&tag, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const std::string path = "haloshift-auto-test-" + std::to_string(tag) + ".json";
  if (world_rank() == 0) std::ofstream(path) << json;
  MPI_Barrier(MPI_COMM_WORLD);
  setenv("HALOSHIFT_CALIBRATION", path.c_str(), 1);
  return path;
}
void done_with(const std::string& path) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::remove(path.c_str());
  unsetenv("HALOSHIFT_CALIBRATION");
}
bool same_everywhere(const std::string& s) {
  const std::int64_t h = hs::detail::name_hash(s);
  std::int64_t lo = h, hi = h;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}
std::string model_json(double alpha, double beta, double gamma) {
  return R"({"haloshift_calibration": 1, "alpha_s": )" + std::to_string(alpha) + R"(, "beta_s_per_byte": )" +
         std::to_string(beta) + R"(, "gamma_s": )" + std::to_string(gamma) + "}";
}
}  // namespace

TEST_CASE("Auto follows the calibration, agrees on all ranks and gives Shift's halo", "[auto][mpi]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, false, true}});
  std::vector<double> mine(static_cast<std::size_t>(world_rank() % 3 + 1), world_rank() + 0.5);
  struct expectation {
    double alpha, beta, gamma;
    const char* strategy;
  };
  // Overlapped latency (gamma = 0, high alpha): one round of direct messages. Every message paid: Shift.
  for (const expectation& e : {expectation{50e-6, 1e-11, 0.0, "SingleHop"}, expectation{2e-6, 1e-9, 2e-6, "Shift"}}) {
    const std::string path = use_calibration(model_json(e.alpha, e.beta, e.gamma));
    auto plan = hs::make_plan<hs::Auto, double>(grid, 1, mine.size());
    const std::string chosen(plan.strategy());
    CHECK(same_everywhere(chosen));
    // Auto runs the model's cheapest candidate for the largest block...
    std::uint64_t largest = mine.size();
    MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    const auto ranking = hs::explain(grid.shape(), hs::make_range(grid.shape(), 1), largest * sizeof(double),
                                     hs::load_calibration(path).cost);
    CHECK(chosen == ranking.front().strategy);
    // ... which on a grid of two dimensions with 2 or more ranks each is the expected one.
    if (grid.dim(0) > 1 && grid.dim(2) > 1) CHECK(chosen == e.strategy);
    auto reference = hs::make_plan<hs::Shift, double>(grid, 1, mine.size());
    const auto a = plan.forward(mine);
    const auto b = reference.forward(mine);
    REQUIRE(a.buffer().size() == b.buffer().size());
    CHECK(std::memcmp(a.buffer().data(), b.buffer().data(), a.buffer().size_bytes()) == 0);
    const auto one_shot = hs::exchange<hs::Auto>(grid, 1, mine);
    CHECK(one_shot.size() == b.size());
    done_with(path);
  }
}

TEST_CASE("Auto measures once when there is no calibration file", "[auto][mpi]") {
  setenv("HALOSHIFT_CALIBRATION", "haloshift-no-such-calibration.json", 1);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  std::vector<int> mine{world_rank()};
  auto plan = hs::make_plan<hs::Auto, int>(grid, 2, 1);
  CHECK(same_everywhere(std::string(plan.strategy())));
  const auto halo = plan.forward(mine);
  for (const auto& b : halo) CHECK(b.data[0] == b.source);
  unsetenv("HALOSHIFT_CALIBRATION");
}

TEST_CASE("a bad calibration file raises the same error on every rank", "[auto][mpi][errors]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  const std::string path = use_calibration(R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "gamma_s": 0})");
  CHECK_THROWS_WITH((hs::make_plan<hs::Auto, double>(grid, 1, 4)),
                    Catch::Contains(path) && Catch::Contains("field 'beta_s_per_byte' is missing"));
  done_with(path);
  CHECK_THROWS_WITH((hs::make_plan<hs::Auto, double>(grid, 0, 4)), Catch::Contains("k must be >= 1, got 0"));
}

TEST_CASE("the round table measures the same on every rank and builds a model", "[calibration][mpi]") {
  const auto table = hs::measure_round_table(MPI_COMM_WORLD, {64, 1 << 20}, 3);
  REQUIRE(table.size() == 2);
  CHECK(table[0].burst == 32);  // short messages: the longest burst
  CHECK(table[1].burst == 32);  // 32 MiB per rank in the burst is the default cap
  for (const auto& p : table) {
    CHECK(std::isfinite(p.per_round));
    CHECK(p.per_round >= 0);
    CHECK(std::isfinite(p.gap));
    CHECK(p.gap >= 0);
    char text[96];
    std::snprintf(text, sizeof text, "%a %a %d", p.per_round, p.gap, p.burst);
    CHECK(same_everywhere(text));  // every time is the max over ranks: all ranks decide alike
  }
  const auto capped = hs::measure_round_point(MPI_COMM_WORLD, 1 << 20, 3, 2, 3 << 20);
  CHECK(capped.burst == 3);
  const hs::hockney model = hs::round_table_model(table);
  CHECK(model.burst(2, 64) >= 0);
  CHECK(model.burst(26, 1 << 20) >= model.burst(26, 64));
  CHECK_THROWS_WITH(hs::measure_round_point(MPI_COMM_WORLD, 0), Catch::Contains("bytes must be >= 1, got 0"));
  CHECK_THROWS_WITH(hs::measure_round_point(MPI_COMM_WORLD, 8, 3, 1), Catch::Contains("chain must be >= 2, got 1"));
  CHECK_THROWS_WITH(hs::measure_round_point(MPI_COMM_WORLD, 8, 0), Catch::Contains("repetitions must be >= 1, got 0"));
  CHECK_THROWS_WITH(hs::measure_round_point(MPI_COMM_WORLD, std::size_t{1} << 31),
                    Catch::Contains("bytes must fit an MPI count"));
}

TEST_CASE("the loaded copy speed is one number for all ranks", "[calibration][mpi]") {
  // Small copies keep the sweep fast; what is checked is the agreement (a node-wide span, then the
  // slowest node) and that it is a speed at all, not its value, which depends on the machine.
  const double loaded = hs::measure_copy_beta_loaded(MPI_COMM_WORLD, 1 << 20, 2, 3);
  CHECK(std::isfinite(loaded));
  CHECK(loaded > 0);
  char text[32];
  std::snprintf(text, sizeof text, "%a", loaded);
  CHECK(same_everywhere(text));
  CHECK_THROWS_WITH(hs::measure_copy_beta_loaded(MPI_COMM_WORLD, 0), Catch::Contains("got 0, 4 and 5"));
  CHECK_THROWS_WITH(hs::measure_copy_beta(1024, 0), Catch::Contains("got 1024 and 0"));
}

// SPDX-License-Identifier: BSD-3-Clause
// Auto: every rank makes the same choice, the choice follows the calibration,
// and its halo is Shift's halo bit for bit; bad calibration files fail alike
// on every rank.

#include "../support/block_oracle.hpp"
#include "../support/catch.hpp"
#include "../support/counting_mpi.hpp"
#include "../support/world.hpp"
#include <haloshift/auto.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hs = haloshift;

namespace {
/// A calibration file path shared by all ranks, written by rank 0.
std::string use_calibration(const std::string& json) {
  int tag = world_rank() == 0 ? static_cast<int>(::getpid()) : 0;
  MPI_Bcast(&tag, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const std::string path = "haloshift-auto-test-" + std::to_string(tag) + ".json";
  if (world_rank() == 0) std::ofstream(path) << json;
  MPI_Barrier(MPI_COMM_WORLD);
  setenv("HALOSHIFT_CALIBRATION", path.c_str(), 1);
  hs::detail::forget_agreed_models();  // the next Auto plan reads this file
  return path;
}
void done_with(const std::string& path) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::remove(path.c_str());
  unsetenv("HALOSHIFT_CALIBRATION");
  hs::detail::forget_agreed_models();
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

namespace {
int duplicates_freed = 0;  // counted by count_free, the delete callback of the test's attribute
int count_free(MPI_Comm, int, void*, void*) {
  ++duplicates_freed;
  return MPI_SUCCESS;
}
}  // namespace

TEST_CASE("forget_agreed_models frees the communicators it duplicated", "[auto][mpi]") {
  const std::string path = use_calibration(model_json(1e-6, 1e-9, 1e-6));
  // An attribute that every duplicate of `user` inherits (MPI_COMM_DUP_FN) and whose delete callback
  // counts the communicators freed: the model's cached duplicate is one of them.
  int key = MPI_KEYVAL_INVALID;
  REQUIRE(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_free, &key, nullptr) == MPI_SUCCESS);
  MPI_Comm user = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &user);
  MPI_Comm_set_attr(user, key, nullptr);
  const hs::hockney first = hs::agreed_model(user);
  CHECK(hs::agreed_model(user).alpha() == first.alpha());  // cached: no second duplicate
  const int before = duplicates_freed;
  hs::detail::forget_agreed_models();
  CHECK(duplicates_freed == before + 1);
  MPI_Comm_free(&user);
  CHECK(duplicates_freed == before + 2);
  MPI_Comm_free_keyval(&key);
  done_with(path);
}

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

TEST_CASE("a log sink that throws is removed and cannot stop a collective; a null stream is refused",
          "[auto][mpi][log]") {
  // Rank 0 logs Auto's choice in the middle of the build, its peers waiting: an exception escaping
  // there left them waiting forever.
  int calls = 0;
  const auto previous = hs::set_log_sink([&](hs::log_level, std::string_view) {
    ++calls;
    throw std::runtime_error("the sink failed");
  });
  hs::set_verbose(true);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  auto plan = hs::make_plan<hs::Auto, int>(grid, 1, 1);
  CHECK(same_everywhere(std::string(plan.strategy())));
  auto again = hs::make_plan<hs::Auto, int>(grid, 1, 1);  // the sink is gone: called once, on rank 0
  CHECK(calls == (world_rank() == 0 ? 1 : 0));
  const hs::log_sink left = hs::set_log_sink(previous);
  CHECK(static_cast<bool>(left) == (world_rank() != 0));  // removed where it threw
  // A sink set after one threw is kept: only the one that threw is removed.
  std::vector<std::string> lines;
  hs::set_log_sink([&](hs::log_level, std::string_view text) { lines.emplace_back(text); });
  hs::detail::log_message(hs::log_level::warning, "kept");
  CHECK(lines == std::vector<std::string>{"kept"});
  hs::set_log_sink(previous);
  hs::set_verbose(false);
  CHECK_THROWS_WITH(hs::set_log_sink(static_cast<std::FILE*>(nullptr)),
                    Catch::Contains("set_log_sink: stream is a null FILE*"));
}

TEST_CASE("Auto measures once per process and grid when there is no calibration file", "[auto][mpi]") {
  setenv("HALOSHIFT_CALIBRATION", "haloshift-no-such-calibration.json", 1);
  hs::detail::forget_agreed_models();
  std::vector<std::string> lines;
  const auto previous = hs::set_log_sink([&](hs::log_level, std::string_view text) { lines.emplace_back(text); });
  hs::set_verbose(true);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  std::vector<int> mine{world_rank()};
  auto plan = hs::make_plan<hs::Auto, int>(grid, 2, 1);
  CHECK(same_everywhere(std::string(plan.strategy())));
  const auto halo = plan.forward(mine);
  for (const auto& b : halo) CHECK(b.data[0] == b.source);
  auto measured = [&] {
    return std::count_if(lines.begin(), lines.end(),
                         [](const std::string& l) { return l.find("no calibration at") != std::string::npos; });
  };
  // Rank 0 says it measured, once; a second plan on the same grid, and one on another grid over
  // the same ranks, reuse that model: the choice cannot drift between re-neighbourings.
  CHECK(measured() == (world_rank() == 0 ? 1 : 0));
  for (int again = 0; again < 3; ++again) {
    auto next = hs::make_plan<hs::Auto, int>(grid, 2, 1);
    CHECK(next.strategy() == plan.strategy());
  }
  hs::cartesian_grid other(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  auto on_other = hs::make_plan<hs::Auto, int>(other, 2, 1);
  CHECK(on_other.strategy() == plan.strategy());
  CHECK(measured() == (world_rank() == 0 ? 1 : 0));
  if (world_rank() == 0) CHECK(std::count_if(lines.begin(), lines.end(), [](const std::string& l) {
                                 return l.rfind("Auto chose ", 0) == 0;
                               }) == 5);
  hs::set_verbose(false);
  hs::set_log_sink(previous);
  unsetenv("HALOSHIFT_CALIBRATION");
  hs::detail::forget_agreed_models();
}

TEST_CASE("Auto writes nothing to stdout or stderr unless a sink is set", "[auto][mpi]") {
  setenv("HALOSHIFT_CALIBRATION", "haloshift-no-such-calibration.json", 1);
  setenv("HALOSHIFT_VERBOSE", "1", 1);
  hs::detail::forget_agreed_models();
  std::fflush(stdout);
  std::fflush(stderr);
  char name[] = "/tmp/haloshift-quiet-XXXXXX";
  const int capture = ::mkstemp(name);
  REQUIRE(capture >= 0);
  const int saved_out = ::dup(1), saved_err = ::dup(2);
  ::dup2(capture, 1);
  ::dup2(capture, 2);
  {
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, false}});
    std::vector<float> mine(3, 1.0f);
    auto plan = hs::make_plan<hs::Auto, float>(grid, 1, mine.size());
    plan.forward(mine);
    hs::set_verbose(true);  // verbose, but no sink: still silent
    auto again = hs::make_plan<hs::Auto, float>(grid, 1, mine.size());
    hs::set_verbose(false);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  ::dup2(saved_out, 1);
  ::dup2(saved_err, 2);
  ::close(saved_out);
  ::close(saved_err);
  const off_t written = ::lseek(capture, 0, SEEK_END);
  ::close(capture);
  std::remove(name);
  CHECK(written == 0);
  unsetenv("HALOSHIFT_VERBOSE");
  unsetenv("HALOSHIFT_CALIBRATION");
  hs::detail::forget_agreed_models();
}

TEST_CASE("a calibration file from another job warns, or fails under strict_calibration", "[auto][mpi]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  std::vector<std::string> warnings;
  const auto previous = hs::set_log_sink([&](hs::log_level level, std::string_view text) {
    if (level == hs::log_level::warning) warnings.emplace_back(text);
  });
  const std::string foreign = R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s_per_byte": 1e-10,
    "gamma_s": 1e-7, "host": "some-other-host", "mpi_library": "Some MPI 0.1", "ranks": 100000})";
  std::string path = use_calibration(foreign);
  auto plan = hs::make_plan<hs::Auto, double>(grid, 1, 4);
  if (world_rank() == 0) {
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find(path) != std::string::npos);
    CHECK(warnings[0].find("host 'some-other-host'") != std::string::npos);
    CHECK(warnings[0].find("MPI library 'Some MPI 0.1'") != std::string::npos);
    CHECK(warnings[0].find("ranks 100000") != std::string::npos);
  } else {
    CHECK(warnings.empty());  // one line per job, from rank 0
  }
  done_with(path);
  path = use_calibration(foreign);
  hs::auto_configuration().strict_calibration = true;
  CHECK_THROWS_WITH((hs::make_plan<hs::Auto, double>(grid, 1, 4)),
                    Catch::Contains("was made for another job") && Catch::Contains("strict_calibration"));
  hs::auto_configuration().strict_calibration = false;
  done_with(path);
  // A file made by this job is taken silently.
  hs::calibration own;
  own.cost = hs::hockney(1e-6, 1e-10, 1e-7);
  own.host = hs::detail::host_name();
  own.mpi_library = hs::detail::mpi_library_version();
  MPI_Comm_size(MPI_COMM_WORLD, &own.ranks);
  path = use_calibration("");
  if (world_rank() == 0) hs::save_calibration(own, path);
  MPI_Barrier(MPI_COMM_WORLD);
  warnings.clear();
  auto quiet = hs::make_plan<hs::Auto, double>(grid, 1, 4);
  CHECK(warnings.empty());
  done_with(path);
  hs::set_log_sink(previous);
}

TEST_CASE("explain is deterministic for a given calibration", "[auto]") {
  const hs::grid_shape shape({4, 3, 5}, {true, false, true});
  const hs::hockney cost = hs::hockney(1.3e-6, 2.1e-10, 0.4e-6).with_copy_beta(0.05e-9).with_round_delta(0.2e-6);
  for (int k : {1, 2, 3}) {
    const auto r = hs::make_range(shape, k);
    const auto a = hs::explain(shape, r, 4096, cost);
    const auto b = hs::explain(shape, r, 4096, cost);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].strategy == b[i].strategy);
      CHECK(a[i].team == b[i].team);
      CHECK(a[i].seconds == b[i].seconds);  // bit for bit
    }
  }
}

TEST_CASE("a bad calibration file raises the same error on every rank", "[auto][mpi][errors]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  const std::string path = use_calibration(R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "gamma_s": 0})");
  CHECK_THROWS_WITH((hs::make_plan<hs::Auto, double>(grid, 1, 4)),
                    Catch::Contains(path) && Catch::Contains("field 'beta_s_per_byte' is missing"));
  done_with(path);
  CHECK_THROWS_WITH((hs::make_plan<hs::Auto, double>(grid, 0, 4)), Catch::Contains("k must be >= 1, got 0"));
}

namespace {
/// The message make_plan<Auto> raises on this rank ("" if none); REQUIREs it is a haloshift::error.
std::string auto_error(const hs::cartesian_grid& grid) {
  try {
    (void)hs::make_plan<hs::Auto, double>(grid, 1, 4);
  } catch (const hs::error& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("foreign exception: " << e.what());
  }
  return "";
}
}  // namespace

TEST_CASE("calibration files with wrong types, or a directory, fail alike on every rank, read on rank 0 only",
          "[auto][mpi][errors]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  const std::vector<std::pair<std::string, std::string>> cases{
      {R"({"haloshift_calibration": 1, "alpha_s": "fast", "beta_s_per_byte": 1e-10, "gamma_s": 0})",
       "field 'alpha_s' is not a number, got the string \"fast\""},
      {R"({"haloshift_calibration": 1, "gamma_s": 0, "pieces": {"from_bytes": 0}})",
       "field 'pieces' must be a non-empty array"},
      {R"({"haloshift_calibration": 1, "gamma_s": 0, "pieces": [[1, 2]]})", "field 'pieces[0]' must be an object"},
      {R"({"haloshift_calibration": 1, "alpha_s": -2e-6, "beta_s_per_byte": 1e-10, "gamma_s": 0})",
       "field 'alpha_s' = -2e-06 is out of range"},
      {R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s)", "not valid JSON"},
      {R"([{"haloshift_calibration": 1}])", "the top level must be a JSON object"},
  };
  for (const auto& [json, expected] : cases) {
    const std::string path = use_calibration(json);
    const std::string what = auto_error(grid);
    INFO("rank " << world_rank() << ": " << what);
    CHECK(what.find(path) != std::string::npos);
    CHECK(what.find(expected) != std::string::npos);
    CHECK(same_everywhere(what));
    done_with(path);
  }
  // A directory where the file should be.
  int tag = world_rank() == 0 ? static_cast<int>(::getpid()) : 0;
  MPI_Bcast(&tag, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const std::string dir = "haloshift-auto-dir-" + std::to_string(tag);
  if (world_rank() == 0) std::filesystem::create_directory(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  setenv("HALOSHIFT_CALIBRATION", dir.c_str(), 1);
  hs::detail::forget_agreed_models();
  {
    const std::string what = auto_error(grid);
    CHECK(what.find(dir + ": is a directory") != std::string::npos);
    CHECK(same_everywhere(what));
  }
  // Rank 0's view is the only one that counts: a file readable on the other ranks changes nothing
  // (they neither read it nor wait for it), and a path missing elsewhere does not stop rank 0's good file.
  const std::string good = use_calibration(model_json(1e-6, 1e-10, 0.5e-6));
  if (world_rank() == 0) setenv("HALOSHIFT_CALIBRATION", dir.c_str(), 1);
  {
    const std::string what = auto_error(grid);
    CHECK(what.find("is a directory") != std::string::npos);
    CHECK(same_everywhere(what));
  }
  hs::detail::forget_agreed_models();
  setenv("HALOSHIFT_CALIBRATION", world_rank() == 0 ? good.c_str() : dir.c_str(), 1);
  CHECK(auto_error(grid).empty());
  const hs::hockney model = hs::agreed_model(grid.comm());
  CHECK(model.alpha() == Approx(1e-6));
  CHECK(same_everywhere(std::to_string(model.alpha()) + " " + std::to_string(model.gamma())));
  done_with(good);
  if (world_rank() == 0) std::filesystem::remove(dir);
}

TEST_CASE("the round table measures the same on every rank and builds a model", "[calibration][mpi]") {
  const auto table = hs::detail::measure_round_table(MPI_COMM_WORLD, {64, 1 << 20}, 3);
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
  const auto capped = hs::detail::measure_round_point(MPI_COMM_WORLD, 1 << 20, 3, 2, 3 << 20);
  CHECK(capped.burst == 3);
  const hs::hockney model = hs::detail::round_table_model(table);
  CHECK(model.burst(2, 64) >= 0);
  CHECK(model.burst(26, 1 << 20) >= model.burst(26, 64));
  CHECK_THROWS_WITH(hs::detail::measure_round_point(MPI_COMM_WORLD, 0), Catch::Contains("bytes must be >= 1, got 0"));
  CHECK_THROWS_WITH(hs::detail::measure_round_point(MPI_COMM_WORLD, 8, 3, 1),
                    Catch::Contains("chain must be >= 2, got 1"));
  CHECK_THROWS_WITH(hs::detail::measure_round_point(MPI_COMM_WORLD, 8, 0),
                    Catch::Contains("repetitions must be >= 1, got 0"));
  CHECK_THROWS_WITH(hs::detail::measure_round_point(MPI_COMM_WORLD, std::size_t{1} << 31),
                    Catch::Contains("bytes must fit an MPI count"));
}

TEST_CASE("the loaded copy speed is one number for all ranks", "[calibration][mpi]") {
  // Small copies keep the sweep fast; what is checked is the agreement (a node-wide span, then the
  // slowest node) and that it is a speed at all, not its value, which depends on the machine.
  const double loaded = hs::detail::measure_copy_beta_loaded(MPI_COMM_WORLD, 1 << 20, 2, 3);
  CHECK(std::isfinite(loaded));
  CHECK(loaded > 0);
  char text[32];
  std::snprintf(text, sizeof text, "%a", loaded);
  CHECK(same_everywhere(text));
  CHECK_THROWS_WITH(hs::detail::measure_copy_beta_loaded(MPI_COMM_WORLD, 0), Catch::Contains("got 0, 4 and 5"));
  CHECK_THROWS_WITH(hs::detail::measure_copy_beta(1024, 0), Catch::Contains("got 1024 and 0"));
}

namespace {
/// A custom strategy for the registry tests: Shift's schedule under another name.
struct ShiftAgain {
  static constexpr std::string_view name = "ShiftAgain";
  static hs::schedule make_schedule(const hs::grid_shape& g, const hs::range& r) { return hs::Shift::make_schedule(g, r); }
};

template <class T>
bool same_bytes(const hs::halo<T>& a, const hs::halo<T>& b) {
  return a.buffer().size() == b.buffer().size() &&
         std::memcmp(a.buffer().data(), b.buffer().data(), a.buffer().size_bytes()) == 0;
}
}  // namespace

TEST_CASE("a strategy named at run time builds the same plan as its type", "[registry][mpi]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, false, true}});
  std::vector<double> mine(static_cast<std::size_t>(world_rank() % 3 + 1), world_rank() + 0.25);
  const auto shift = hs::make_plan<hs::Shift, double>(grid, 2, mine.size()).forward(mine);
  const auto single = hs::make_plan<hs::SingleHop, double>(grid, 2, mine.size()).forward(mine);
  for (const char* name : {"shift", "SINGLEHOP", "TtlMultiHop", "teamshift", "NeighborAlltoall"}) {
    auto plan = hs::make_plan<double>(grid, name, 2, mine.size());
    CHECK(hs::detail::strategy_registry::same_name(plan.strategy(), name));
    CHECK(same_bytes(plan.forward(mine), shift));
  }
  CHECK(same_bytes(hs::make_plan<double>(grid, "singlehop", hs::offset{2, 2, 2}, mine.size()).forward(mine), single));
  CHECK_THROWS_WITH(hs::make_plan<double>(grid, "Shfit", 1, mine.size()),
                    Catch::Contains("strategy \"Shfit\" is not known") &&
                        Catch::Contains("known strategies: Shift, SingleHop, TtlMultiHop, TeamShift, NeighborAlltoall"));

  // Particles and fields take names too, and give the typed plans' results.
  const hs::domain dom{{0, 0, 0}, {6.5, 5.25, 7.0}};
  const auto [lo, hi] = hs::box_of(grid, dom);
  std::mt19937 random(static_cast<unsigned>(world_rank() + 7));
  std::vector<hs::position> x(40);
  for (auto& p : x)
    for (int d = 0; d < 3; ++d) p[d] = std::uniform_real_distribution<double>(lo[d], hi[d])(random);
  const auto typed = hs::make_particle_plan<hs::TtlMultiHop>(grid, dom, 1.9, x);
  const auto named = hs::make_particle_plan(grid, "ttlmultihop", dom, 1.9, x);
  CHECK(named.strategy() == "TtlMultiHop");
  CHECK(named.positions() == typed.positions());

  hs::grid_field<int> a(grid, {9, 7, 8}, 2), b(grid, {9, 7, 8}, 2);
  for (std::size_t i = 0; i < a.shape().size(); ++i) a.data()[i] = b.data()[i] = world_rank() * 1000 + static_cast<int>(i);
  hs::make_field_plan<hs::Shift>(a).forward(a);
  hs::make_field_plan(grid, "SingleHop", b.shape()).forward(b);
  CHECK(std::memcmp(a.data(), b.data(), a.shape().size() * sizeof(int)) == 0);
}

TEST_CASE("ranks asking for different strategies get the same error, never a hang", "[registry][mpi][errors]") {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) return;
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, true}});
  const bool first = world_rank() == 0;
  CHECK_THROWS_WITH(hs::make_plan<double>(grid, first ? "Shift" : "SingleHop", 1, 3),
                    Catch::Contains("strategy must be the same on all ranks"));
  // One rank asks Auto, the others a strategy: Auto's calibration must not start on one rank only.
  CHECK_THROWS_WITH(hs::make_plan<double>(grid, first ? "Auto" : "Shift", 1, 3),
                    Catch::Contains("strategy must be the same on all ranks"));
  if (first)
    CHECK_THROWS_WITH((hs::make_plan<hs::Auto, double>(grid, 1, 3)), Catch::Contains("strategy must be the same"));
  else
    CHECK_THROWS_WITH((hs::make_plan<hs::Shift, double>(grid, 1, 3)), Catch::Contains("strategy must be the same"));
  const hs::domain dom{{0, 0, 0}, {4, 4, 1}};
  const std::vector<hs::position> none;
  CHECK_THROWS_WITH(hs::make_particle_plan(grid, first ? "Auto" : "SingleHop", dom, 0.5, none),
                    Catch::Contains("strategy must be the same on all ranks"));
  hs::grid_field<double> f(grid, {8, 8, 1}, {1, 1, 0});
  CHECK_THROWS_WITH(hs::make_field_plan(grid, first ? "Auto" : "Shift", f.shape()),
                    Catch::Contains("strategy must be the same on all ranks"));
}

TEST_CASE("make_selective_plan asked for Auto says it needs a named strategy, not to include auto.hpp",
          "[registry][mpi][errors]") {
  // This file includes <haloshift/auto.hpp>: advising to include it would send the user in a circle.
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}});
  const std::vector<int> keys{1, 2, 3};
  auto every_key = [](const hs::offset&, const hs::offset&, const int&) { return true; };
  for (const char* name : {"Auto", "auto"}) {
    try {
      (void)hs::make_selective_plan(grid, name, hs::offset{1, 0, 0}, std::span<const int>(keys), every_key);
      FAIL("make_selective_plan took " << name);
    } catch (const hs::error& e) {
      const std::string what = e.what();
      CHECK_THAT(what, Catch::Contains(std::string("strategy \"") + name + "\" is not known") &&
                           Catch::Contains("make_selective_plan needs a strategy named"));
      CHECK_THAT(what, !Catch::Contains("auto.hpp"));
    }
  }
}

TEST_CASE("a registered custom strategy runs by name and joins Auto's candidates", "[registry][mpi]") {
  hs::register_strategy<ShiftAgain>();
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {false, true}});
  std::vector<int> mine(5, world_rank());
  auto custom = hs::make_plan<int>(grid, "shiftagain", 1, mine.size());
  CHECK(custom.strategy() == "ShiftAgain");
  CHECK(same_bytes(custom.forward(mine), hs::make_plan<hs::Shift, int>(grid, 1, mine.size()).forward(mine)));
  const auto ranking = hs::explain(grid.shape(), hs::make_range(grid.shape(), 1), 64, hs::hockney(1e-6, 1e-9, 1e-7));
  CHECK(std::any_of(ranking.begin(), ranking.end(), [](const hs::prediction& p) { return p.strategy == "ShiftAgain"; }));
  hs::register_strategy<ShiftAgain>(false);  // leaves Auto's candidates as they were for the other tests
  const auto after = hs::explain(grid.shape(), hs::make_range(grid.shape(), 1), 64, hs::hockney(1e-6, 1e-9, 1e-7));
  CHECK(std::none_of(after.begin(), after.end(), [](const hs::prediction& p) { return p.strategy == "ShiftAgain"; }));
}

// The shared-memory path (docs/node-aware.md): Auto takes it where the model predicts it faster and
// the plan can run it, priced on the grid's own nodes, and the plan it builds runs it. [nodes]: 1-4 ranks.
namespace {
/// A calibration where an MPI message costs 50 us and the shared-memory path `shm_alpha` seconds.
std::string with_shared_memory_path(double shm_alpha) {
  char json[200];
  std::snprintf(json, sizeof json,
                R"({"haloshift_calibration": 1, "alpha_s": 5e-5, "beta_s_per_byte": 1e-9, "gamma_s": 1e-6, )"
                R"("shm_alpha_s": %.17g})",
                shm_alpha);
  return json;
}

/// Every rank on one machine (one MPI_COMM_TYPE_SHARED node): the real node of the cases below.
bool all_on_one_machine() {
  MPI_Comm machine = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &machine);
  int size = 0;
  MPI_Comm_size(machine, &size);
  MPI_Comm_free(&machine);
  return size == world_size();
}

/// The lines rank 0 logs ("Auto chose ...") while `build` runs, verbose.
template <class Build>
std::vector<std::string> auto_log(Build&& build) {
  std::vector<std::string> lines;
  const auto previous = hs::set_log_sink([&](hs::log_level, std::string_view text) { lines.emplace_back(text); });
  hs::set_verbose(true);
  build();
  hs::set_verbose(false);
  hs::set_log_sink(previous);
  return lines;
}

/// Rank 0 logged exactly one choice, with the shared-memory path or without (`shared`); the others none.
bool logged_choice(const std::vector<std::string>& lines, bool shared) {
  std::vector<std::string> choices;
  std::copy_if(lines.begin(), lines.end(), std::back_inserter(choices),
               [](const std::string& l) { return l.rfind("Auto chose ", 0) == 0; });
  if (world_rank() != 0) return choices.empty();
  return choices.size() == 1 && (choices[0].find(" +shm") != std::string::npos) == shared;
}

/// Forward and reverse of `plan` against the oracle (block_oracle.hpp), rank `me`'s payload `pl`.
std::string block_plan_against_oracle(hs::plan<double>& plan, const sweep::shape& s, int me, sweep::payload pl) {
  const oracle::grid og = block_oracle::oracle_grid(s);
  const block_oracle::neighbourhood n{};
  std::vector<double> own(sweep::count_of(pl, me));
  for (std::size_t e = 0; e < own.size(); ++e) own[e] = block_oracle::value_of(me, e);
  const hs::halo<double> halo = plan.forward(own);
  if (std::string why = block_oracle::compare_forward(halo, og, me, block_oracle::range_of(s, 1), n, pl); !why.empty())
    return why;
  hs::halo<double> contributions = plan.make_halo();
  block_oracle::fill_contributions(contributions, me);
  plan.reverse(contributions, std::span<double>(own));
  return block_oracle::compare_reverse(own, og, me, block_oracle::range_of(s, 1), n);
}
}  // namespace

TEST_CASE("Auto takes the shared-memory path where the model predicts it faster, and runs it", "[auto][nodes]") {
  if (!all_on_one_machine()) return;  // the expectations take one node holding every rank
  const int size = world_size();
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const sweep::shape s{{dims[0], dims[1]}, {true, false}};
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {dims[0], dims[1]}, .periodic = {true, false}});
  const int me = grid.rank();
  const sweep::payload pl = sweep::payload::uniform;  // every rank sends: a flat plan sends MPI messages on all
  std::vector<double> mine(sweep::count_of(pl, me), 1.0);
  std::uint64_t largest = mine.size();
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  struct expectation {
    double shm_alpha;
    hs::protocol mode;
    bool asked;   // plan_options::shared_memory
    bool shared;  // Auto takes the path
  };
  // A cheap path wins wherever a node holds 2 ranks; a dear one loses, unless the user asked for it;
  // rendezvous keeps MPI whatever it costs.
  for (const expectation& e : {expectation{1e-8, hs::protocol::overlapping, false, size > 1},
                               expectation{0.5, hs::protocol::overlapping, false, false},
                               expectation{0.5, hs::protocol::overlapping, true, size > 1},
                               expectation{1e-8, hs::protocol::rendezvous, false, false}}) {
    INFO("shm_alpha " << e.shm_alpha << (e.mode == hs::protocol::rendezvous ? " rendezvous" : "")
                      << (e.asked ? " asked" : ""));
    const std::string path = use_calibration(with_shared_memory_path(e.shm_alpha));
    std::optional<hs::plan<double>> plan;
    const hs::plan_options options{.mode = e.mode, .shared_memory = e.asked};
    const auto lines = auto_log([&] { plan.emplace(hs::make_plan<hs::Auto, double>(grid, 1, mine.size(), options)); });
    CHECK(logged_choice(lines, e.shared));
    // The model's cheapest row that the plan runs as priced, on one node of every rank: under rendezvous a
    // flat one; where the user asked for the path (the plan takes it anyway), one on the path.
    const auto ranking = hs::explain(grid.shape(), hs::make_range(grid.shape(), 1), largest * sizeof(double),
                                     hs::load_calibration(path).cost, e.mode, {}, std::nullopt, size);
    const auto runnable = std::find_if(ranking.begin(), ranking.end(), [&](const hs::prediction& p) {
      if (e.mode == hs::protocol::rendezvous) return p.inside_nodes.empty();
      return !e.asked || size == 1 || p.inside_nodes == "shm";
    });
    REQUIRE(runnable != ranking.end());
    CHECK(plan->strategy() == runnable->strategy);
    CHECK((runnable->inside_nodes == "shm") == e.shared);
    // It runs as chosen, on every rank alike: on the path no MPI message (one node), flat some.
    hs::halo<double> halo = plan->make_halo();
    const long before = collectives::sends();
    plan->forward(mine, halo);
    const bool no_message = collectives::sends() == before;
    if (e.mode == hs::protocol::overlapping) CHECK(no_message == (e.shared || size == 1));
    CHECK(same_everywhere(std::string(plan->strategy()) + (no_message ? " without MPI" : "")));
    CHECK(block_plan_against_oracle(*plan, s, me, pl) == "");
    done_with(path);
  }
}

TEST_CASE("Auto prices the grid's own nodes: the path only where a node holds 2 ranks, MPI between nodes",
          "[auto][nodes]") {
  if (!all_on_one_machine()) return;  // pretend nodes split this machine's node
  const int size = world_size();
  const std::string path = use_calibration(with_shared_memory_path(1e-8));
  const sweep::shape s{{size}, {true}};
  for (const int node_size : {1, 2}) {
    INFO("pretend nodes of " << node_size);
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {size}, .periodic = {true}, .node_sizes = {node_size}});
    const int me = grid.rank();
    const sweep::payload pl = sweep::payload::uniform;
    std::optional<hs::plan<double>> plan;
    const auto lines = auto_log([&] { plan.emplace(hs::make_plan<hs::Auto, double>(grid, 1, sweep::count_of(pl, me))); });
    const auto ranking = hs::explain(grid.shape(), hs::make_range(grid.shape(), 1), sweep::count_of(pl, 0) * 8.0,
                                     hs::load_calibration(path).cost, hs::protocol::overlapping, {}, std::nullopt,
                                     std::min(node_size, size));
    CHECK(plan->strategy() == ranking.front().strategy);
    const bool shared = ranking.front().inside_nodes == "shm";
    CHECK(logged_choice(lines, shared));
    // By hand: the path pays where every rank has a neighbour on its node (nodes of 2, an even ring); never
    // on nodes of 1 rank, although all ranks share this machine's memory. (At 3 ranks rank 2, alone on its
    // node, sends by MPI either way: whether the others' path shortens the slowest rank depends on the
    // candidates, NodeAggregate's one message per node pair among them; explain's ranking decides.)
    if (node_size == 1 || size % 2 == 0) CHECK(shared == (node_size == 2 && size > 1));
    // No MPI message to a rank of this rank's node, where the flat plan of the same strategy sends some.
    auto flat = hs::make_plan<double>(grid, plan->strategy(), 1, sweep::count_of(pl, me));
    std::vector<double> mine(sweep::count_of(pl, me), 1.0);
    const auto in_node_sends = [&](hs::plan<double>& p) {
      std::vector<long> before(static_cast<std::size_t>(size));
      for (int q = 0; q < size; ++q) before[static_cast<std::size_t>(q)] = collectives::sends_to(q);
      p.forward(mine);
      long in_node = 0;
      for (int q = 0; q < size; ++q)
        if (q != me && q / node_size == me / node_size) in_node += collectives::sends_to(q) - before[static_cast<std::size_t>(q)];
      MPI_Allreduce(MPI_IN_PLACE, &in_node, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      return in_node;
    };
    if (shared) {
      CHECK(in_node_sends(*plan) == 0);
      CHECK(in_node_sends(flat) > 0);
    }
    CHECK(block_plan_against_oracle(*plan, s, me, pl) == "");
  }
  done_with(path);
}

TEST_CASE("field and particle plans from Auto take the shared-memory path too", "[auto][nodes]") {
  if (!all_on_one_machine() || world_size() < 2) return;  // one rank: no partner to share with
  const std::string path = use_calibration(with_shared_memory_path(1e-8));
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, false}});
  const int me = grid.rank();
  // A field: the same ghosts as Shift (over MPI), no MPI message.
  const hs::offset cells{2 * grid.dim(0) + 3, 3 * grid.dim(1) + 1};
  hs::grid_field<double> a(grid, cells, 1), b(grid, cells, 1);
  for (std::size_t i = 0; i < a.storage().size(); ++i) a.storage()[i] = b.storage()[i] = me * 1e4 + static_cast<double>(i);
  std::optional<hs::field_plan> field;
  CHECK(logged_choice(auto_log([&] { field.emplace(hs::make_field_plan<hs::Auto>(a)); }), true));
  long before = collectives::sends();
  field->forward(a);
  CHECK(collectives::sends() == before);
  hs::fill_ghosts<hs::Shift>(b);
  CHECK(std::memcmp(a.data(), b.data(), a.storage().size_bytes()) == 0);
  // Particles: the same ghosts and positions as Shift's plan, no MPI message.
  const hs::domain dom{{0, 0, 0}, {3, 2, 1}};
  const auto [lo, hi] = hs::box_of(grid, dom);
  std::vector<hs::position> x;
  for (int i = 0; i < 5; ++i) {
    const double f = (i + 0.5) / 5;
    x.push_back({lo[0] + f * (hi[0] - lo[0]), lo[1] + (1 - f) * (hi[1] - lo[1]), 0.5});
  }
  std::optional<hs::particle_plan> chosen;
  CHECK(logged_choice(auto_log([&] { chosen.emplace(hs::make_particle_plan<hs::Auto>(grid, dom, 0.7, x)); }), true));
  auto shift = hs::make_particle_plan<hs::Shift>(grid, dom, 0.7, x);
  std::vector<std::int64_t> ids(chosen->size()), expected(shift.size());
  for (std::size_t i = 0; i < x.size(); ++i) ids[i] = expected[i] = me * 100 + static_cast<std::int64_t>(i);
  before = collectives::sends();
  chosen->forward(ids);
  CHECK(collectives::sends() == before);
  shift.forward(expected);
  CHECK(ids == expected);
  CHECK(std::memcmp(chosen->positions().data(), shift.positions().data(), ids.size() * sizeof(hs::position)) == 0);
  done_with(path);
}

TEST_CASE("Auto sends several fields as one message per field where the model prices that cheaper",
          "[auto][mpi][per_field]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}});
  hs::field_bundle<double, double, double> bundle(grid, {12, 10, 8}, 1);
  // Auto's block: the mean ghost bytes per imported box of all three fields; one field's is a third.
  const auto [r, bytes] =
      hs::detail::field_plan_builder::auto_sizing(grid, bundle.shape(), {}, 3 * sizeof(double));
  hs::calibration c;
  c.host = hs::detail::host_name();
  c.mpi_library = hs::detail::mpi_library_version();
  MPI_Comm_size(MPI_COMM_WORLD, &c.ranks);
  // A handshake above half the block: the message of all three fields pays it, one field's does not.
  const hs::hockney handshake = hs::hockney::piecewise(
      {{0, 1e-6, 1e-10, 0.2e-6}, {bytes / 2, 1e-3, 1e-10, 1e-3}}, 0.2e-6);
  for (const bool dear : {false, true}) {
    c.cost = dear ? handshake : hs::hockney(1e-6, 1e-10, 1e-6);
    const std::string path = use_calibration("");
    if (world_rank() == 0) hs::save_calibration(c, path);
    MPI_Barrier(MPI_COMM_WORLD);
    auto chosen = hs::make_field_plan<hs::Auto>(bundle);
    // Where ranks exchange messages the handshake decides; with none (one rank) a tie keeps one per neighbour.
    const bool expect_apart = dear && grid.size() > 1;
    INFO("handshake " << dear << " ranks " << grid.size() << " chose " << chosen.strategy());
    CHECK(chosen.messages() == (expect_apart ? hs::field_messages::per_field : hs::field_messages::per_neighbor));
    CHECK(same_everywhere(std::string(chosen.strategy())));
    // The user's choice stands whatever the model says.
    auto told = hs::make_field_plan<hs::Auto>(bundle, {.messages = hs::field_messages::per_neighbor});
    CHECK(told.messages() == hs::field_messages::per_neighbor);
    // Bit for bit Shift's ghosts, one message per neighbour.
    hs::field_bundle<double, double, double> mine(grid, {12, 10, 8}, 1), shift(grid, {12, 10, 8}, 1);
    for (std::size_t i = 0; i < mine.get<0>().storage().size(); ++i)
      for (auto* b : {&mine, &shift}) {
        b->get<0>().storage()[i] = grid.rank() * 1e4 + static_cast<double>(i);
        b->get<1>().storage()[i] = -(grid.rank() * 1e4 + static_cast<double>(i));
        b->get<2>().storage()[i] = 0.5 * static_cast<double>(i);
      }
    chosen.forward(mine);
    hs::make_field_plan<hs::Shift>(shift, {.messages = hs::field_messages::per_neighbor}).forward(shift);
    CHECK(std::ranges::equal(mine.get<0>().storage(), shift.get<0>().storage()));
    CHECK(std::ranges::equal(mine.get<1>().storage(), shift.get<1>().storage()));
    CHECK(std::ranges::equal(mine.get<2>().storage(), shift.get<2>().storage()));
    done_with(path);
  }
}

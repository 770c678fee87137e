// SPDX-License-Identifier: BSD-3-Clause
// The model layer: calibration files (read by rank 0 for Auto, the result or
// the error broadcast), explain / simulate / advise arguments, the cost model.

#include "battery.hpp"

#include <haloshift/auto.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hs = haloshift;

namespace misuse {

namespace {
/// A file only this job uses (rank 0 writes it; the others wait), named by the job's launcher process.
std::string job_file(const world& w, const std::string& name, const std::string& text) {
  const std::string path = std::filesystem::temp_directory_path().string() + "/haloshift-misuse-" +
                           std::to_string(static_cast<long>(getppid())) + "-" + name;
  if (w.first()) std::ofstream(path) << text;
  MPI_Barrier(w.comm);
  return path;
}
/// An Auto plan reading the calibration at `path` (rank 0 reads it).
void auto_plan_with(const world& w, const std::string& path) {
  setenv("HALOSHIFT_CALIBRATION", path.c_str(), 1);
  const hs::cartesian_grid g(w.comm, {.dims = {0}, .periodic = {true}});
  hs::make_plan<double>(g, "Auto", 1, 4);
}
const hs::grid_shape shape3{{4, 4, 4}, {true, true, true}};
const hs::range r1{{1, 1, 1}, hs::shell::full};
const hs::hockney cost{1e-6, 1e-9};
const std::string good = R"({"haloshift_calibration": 1, "alpha_s": 1.5e-06, "beta_s_per_byte": 2e-10, "gamma_s": 5e-07})";
}  // namespace

void register_model_cases() {
  // The log: a null stream is refused when the sink is made (it crashed at the first message), and
  // a sink that throws cannot take rank 0 out of Auto's collectives (the job hung): the build
  // completes on every rank, which then raise the case's own error.
  add(
      "log/null-stream", {"set_log_sink: stream is a null FILE*"},
      [](const world&) { hs::set_log_sink(static_cast<std::FILE*>(nullptr)); }, 1, true);
  add("log/throwing-sink-auto", {"every rank built the Auto plan"}, [](const world& w) {
    hs::set_verbose(true);
    hs::set_log_sink([](hs::log_level, std::string_view) { throw hs::error("the sink throws"); });
    const hs::cartesian_grid g(w.comm, {.dims = {0}, .periodic = {true}});
    auto p = hs::make_plan<double>(g, "Auto", 1, 4);
    std::vector<double> mine(4, 1.0);
    p.forward(std::span<const double>(mine));
    throw hs::error("every rank built the Auto plan");
  }, 1, true);
  // Auto reading a file: the same error on every rank, whatever it is.
  add("model/auto-calibration-wrong-type", {"alpha_s", "is not a number"}, [](const world& w) {
    auto_plan_with(w, job_file(w, "type.json", R"({"haloshift_calibration": 1, "alpha_s": "fast", "beta_s_per_byte": 2e-10, "gamma_s": 0})"));
  }, 1, true);
  add("model/auto-calibration-directory", {"is a directory, not a file"}, [](const world& w) {
    auto_plan_with(w, std::filesystem::temp_directory_path().string());
  }, 1, true);
  add("model/auto-calibration-truncated", {"not valid JSON"}, [](const world& w) {
    auto_plan_with(w, job_file(w, "truncated.json", R"({"haloshift_calibration": 1, "alpha_s": 1e-6,)"));
  });
  add("model/auto-calibration-negative", {"alpha_s", "-1"}, [](const world& w) {
    auto_plan_with(w, job_file(w, "negative.json", R"({"haloshift_calibration": 1, "alpha_s": -1, "beta_s_per_byte": 2e-10, "gamma_s": 0})"));
  });
  add("model/auto-calibration-missing-field", {"field 'beta_s_per_byte' is missing"}, [](const world& w) {
    auto_plan_with(w, job_file(w, "missing.json", R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "gamma_s": 0})"));
  });
  add("model/auto-calibration-not-ours", {"field 'haloshift_calibration' is missing"}, [](const world& w) {
    auto_plan_with(w, job_file(w, "foreign.json", R"({"alpha_s": 1e-6, "beta_s_per_byte": 1e-9})"));
  });
  add("model/auto-calibration-array", {"the top level must be a JSON object"}, [](const world& w) {
    auto_plan_with(w, job_file(w, "array.json", "[1, 2, 3]"));
  });
  add("model/auto-calibration-empty", {"not valid JSON"}, [](const world& w) {
    auto_plan_with(w, job_file(w, "empty.json", ""));
  });
  add("model/auto-calibration-pieces-empty", {"field 'pieces' must be a non-empty array"}, [](const world& w) {
    auto_plan_with(w, job_file(w, "pieces.json", R"({"haloshift_calibration": 1, "gamma_s": 1e-7, "pieces": []})"));
  });
  add("model/auto-calibration-directory-on-rank-0-only", {"is a directory, not a file"}, [](const world& w) {
    // The other ranks would see a good file: rank 0 alone reads, so all fail alike.
    const std::string file = job_file(w, "good.json", good);
    auto_plan_with(w, w.first() ? std::filesystem::temp_directory_path().string() : file);
  }, 2, true);
  add("model/auto-calibration-strict-mismatch", {"was made for another job", "strict_calibration"}, [](const world& w) {
    setenv("HALOSHIFT_CALIBRATION_STRICT", "1", 1);
    auto_plan_with(w, job_file(w, "other.json", R"({"haloshift_calibration": 1, "alpha_s": 1.5e-06,
      "beta_s_per_byte": 2e-10, "gamma_s": 5e-7, "host": "another-host", "ranks": 99999})"));
  });
  // Reading a file directly (local: every rank reads its own).
  add("model/load-missing-file", {"calibration file /nonexistent/haloshift.json: cannot be read (no such file)"},
      [](const world&) { hs::load_calibration("/nonexistent/haloshift.json"); });
  // 100,000 levels deep: parsed without recursion, then refused as not an object (no stack overflow).
  add("model/parse-nested", {"deep.json: the top level must be a JSON object, got an array"}, [](const world&) {
    hs::detail::parse_calibration(std::string(100000, '[') + std::string(100000, ']'), "deep.json");
  });
  add("model/parse-ranks-fraction", {"field 'ranks' = 2.5 is not a whole number"}, [](const world&) {
    hs::detail::parse_calibration(
        R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s_per_byte": 1e-9, "gamma_s": 0, "ranks": 2.5})",
        "f.json");
  });
  add("model/parse-host-number", {"field 'host' is not a string"}, [](const world&) {
    hs::detail::parse_calibration(
        R"({"haloshift_calibration": 1, "alpha_s": 1e-6, "beta_s_per_byte": 1e-9, "gamma_s": 0, "host": 7})", "f.json");
  });
  // The cost model and its entry points.
  add("model/hockney-negative-alpha", {"hockney: alpha must be >= 0, got -1e-06"},
      [](const world&) { hs::hockney(-1e-6, 1e-9); });
  add("model/hockney-nan-beta", {"hockney: beta must be >= 0, got nan"},
      [](const world&) { hs::hockney(1e-6, nan_value); });
  add("model/explain-nan-bytes", {"explain", "bytes must be >= 0 bytes and finite, got nan"},
      [](const world&) { hs::explain(shape3, r1, nan_value, cost); }, 1, true);
  add("model/explain-negative-bytes", {"explain", "got -4"}, [](const world&) { hs::explain(shape3, r1, -4, cost); });
  add("model/explain-infinite-bytes", {"explain", "got inf"},
      [](const world&) { hs::explain(shape3, r1, std::numeric_limits<double>::infinity(), cost); });
  add("model/explain-empty-range", {"explain: r is empty (k is 0 along every dimension)"},
      [](const world&) { hs::explain(shape3, hs::range{{0, 0, 0}, hs::shell::full}, 64, cost); });
  add("model/explain-negative-k", {"explain: r.k[1] must be in [0, 1048576], got -2"},
      [](const world&) { hs::explain(shape3, hs::range{{1, -2, 1}, hs::shell::full}, 64, cost); });
  add("model/explain-shell-invalid", {"explain: r.kind must be shell::full or shell::eighth, got 9"},
      [](const world&) { hs::explain(shape3, hs::range{{1, 1, 1}, static_cast<hs::shell>(9)}, 64, cost); });
  add("model/explain-protocol-invalid", {"explain: mode must be protocol::overlapping or protocol::rendezvous, got 5"},
      [](const world&) { hs::explain(shape3, r1, 64, cost, static_cast<hs::protocol>(5)); });
  add("model/explain-k-beyond-dimensions", {"r.k[2] = 1 but the grid has only 2 dimension(s)"}, [](const world&) {
    hs::explain(hs::grid_shape({4, 4}, {true, true}), r1, 64, cost);
  });
  add("model/explain-huge-range", {"blocks, more than"},
      [](const world&) { hs::explain(shape3, hs::range{{1 << 20, 1 << 20, 1 << 20}, hs::shell::full}, 64, cost); });
  add("model/explain-particles-negative-cutoff", {"cutoff[0] must be finite and >= 0, got -1"}, [](const world&) {
    hs::explain_particles(shape3, {{0, 0, 0}, {1, 1, 1}}, hs::position{-1, 0.1, 0.1}, 1000, 24, cost);
  });
  add("model/advise-no-sizes", {"advise: the list of block sizes is empty"}, [](const world&) {
    hs::advice_request q;
    q.grid = shape3;
    q.ks = {1};
    q.cost = cost;
    hs::advise(q);
  });
  add("model/advise-negative-size", {"advise", "got -1"}, [](const world&) {
    hs::advice_request q;
    q.grid = shape3;
    q.ks = {1};
    q.sizes = {64, -1};
    q.cost = cost;
    hs::advise(q);
  });
  add("model/tradeoff-bad-interval", {"team_shift_tradeoff: need 0 < low < high < inf, got low 100, high 10"},
      [](const world&) { hs::detail::team_shift_tradeoff(shape3, 2, 100, 10, cost, hs::protocol::overlapping); });
}

}  // namespace misuse

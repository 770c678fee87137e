// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file calibration_file.hpp
/// @brief A calibration and its JSON file: what was measured, where, and the
/// checks that name the file and the field of anything wrong in it.

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "../error.hpp"
#include "fit.hpp"
#include "hockney.hpp"

namespace haloshift {

/// A fitted message-time model and where it came from.
struct calibration {
  /// The fitted model.
  hockney cost;
  double knee_bytes = 0;  ///< eager-to-rendezvous switch found by the fit (0: none)
  std::string method;     ///< "linear-regression", "per-size-means" or "two-piece"
  /// The MPI library the calibration was measured with (first line of MPI_Get_library_version).
  std::string mpi_library, host, date;
  /// Ranks the calibration was measured with (0: unknown).
  int ranks = 0;
  std::vector<fit::sample> samples;  ///< per-size means the fit used
  /// @var host
  /// Name of the host it was measured on.
  /// @var date
  /// When it was measured (UTC, ISO 8601).
};

namespace detail {
inline std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<std::size_t>(length));
  if (const auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}
inline std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}
inline std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}
}  // namespace detail

/// Where calibrations live: $HALOSHIFT_CALIBRATION, else
/// $XDG_CACHE_HOME/haloshift/calibration.json, else ~/.cache/haloshift/calibration.json.
inline std::string default_calibration_path() {
  if (const char* p = std::getenv("HALOSHIFT_CALIBRATION"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/haloshift/calibration.json";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/haloshift/calibration.json";
  return "haloshift-calibration.json";
}

/// Writes `c` to `path` as JSON (creating the directory), for load_calibration(). Throws haloshift::error when it cannot.
inline void save_calibration(const calibration& c, const std::string& path) {
  nlohmann::json j;
  j["haloshift_calibration"] = 1;
  j["alpha_s"] = c.cost.alpha();
  j["beta_s_per_byte"] = c.cost.beta();
  j["gamma_s"] = c.cost.gamma();
  j["copy_s_per_byte"] = c.cost.copy_beta();
  j["round_s"] = c.cost.round_delta();
  j["gamma_growth_s"] = c.cost.gamma_growth();
  for (const auto& p : c.cost.pieces()) {
    nlohmann::json piece{{"from_bytes", p.from_bytes}, {"alpha_s", p.alpha}, {"beta_s_per_byte", p.beta}};
    if (p.gamma == p.gamma) piece["gamma_s"] = p.gamma;  // NaN: the model's gamma
    j["pieces"].push_back(piece);
  }
  j["knee_bytes"] = c.knee_bytes;
  j["method"] = c.method;
  j["mpi_library"] = c.mpi_library;
  j["host"] = c.host;
  j["date"] = c.date;
  j["ranks"] = c.ranks;
  for (const auto& s : c.samples) j["samples"].push_back({s.bytes, s.seconds});
  std::error_code ignored;
  if (const auto dir = std::filesystem::path(path).parent_path(); !dir.empty())
    std::filesystem::create_directories(dir, ignored);
  std::ofstream out(path);
  if (!out) throw error("calibration file " + path + ": cannot be written");
  out << j.dump(2) << '\n';
}

/// Reads a calibration; every problem names the file and the field.
inline calibration load_calibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw error("calibration file " + path + ": cannot be read");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw error("calibration file " + path + ": not valid JSON (" + e.what() + ")");
  }
  auto number = [&](const nlohmann::json& obj, const char* field, double low, double high) {
    if (!obj.contains(field)) throw error("calibration file " + path + ": field '" + field + "' is missing");
    if (!obj[field].is_number()) throw error("calibration file " + path + ": field '" + field + "' is not a number");
    const double v = obj[field].get<double>();
    if (!(v >= low && v <= high))
      throw error("calibration file " + path + ": field '" + field + "' = " + std::to_string(v) +
                  " is out of range [" + std::to_string(low) + ", " + std::to_string(high) + "]");
    return v;
  };
  if (!j.is_object() || !j.contains("haloshift_calibration"))
    throw error("calibration file " + path + ": field 'haloshift_calibration' is missing (not a haloshift calibration)");
  calibration c;
  const double gamma = number(j, "gamma_s", 0, 1);
  if (j.contains("pieces")) {
    if (!j["pieces"].is_array() || j["pieces"].empty())
      throw error("calibration file " + path + ": field 'pieces' must be a non-empty array");
    std::vector<hockney::piece> pieces;
    for (const auto& p : j["pieces"]) {
      // A later piece's line may cross 0 before it starts (a steep segment of a measured
      // table); what must not be negative is the time where the piece begins.
      const double from = number(p, "from_bytes", 0, 1e15);
      const double alpha = number(p, "alpha_s", pieces.empty() ? 0 : -1, 1);
      const double beta = number(p, "beta_s_per_byte", 0, 1);
      if (alpha + beta * from < 0)
        throw error("calibration file " + path + ": field 'alpha_s' = " + std::to_string(alpha) +
                    " makes the time at " + std::to_string(from) + " bytes negative");
      const double piece_gamma =
          p.contains("gamma_s") ? number(p, "gamma_s", -1, 1) : std::numeric_limits<double>::quiet_NaN();
      if (piece_gamma + beta * from < 0)
        throw error("calibration file " + path + ": field 'gamma_s' = " + std::to_string(piece_gamma) +
                    " makes the injection of " + std::to_string(from) + " bytes negative");
      pieces.push_back({from, alpha, beta, piece_gamma});
    }
    try {
      c.cost = hockney::piecewise(pieces, gamma);
    } catch (const error& e) {
      throw error("calibration file " + path + ": field 'pieces': " + std::string(e.what()).substr(11));
    }
  } else {
    c.cost = hockney(number(j, "alpha_s", 0, 1), number(j, "beta_s_per_byte", 0, 1), gamma);
  }
  // Files from before local copies were measured have none: copies are free, as they were.
  if (j.contains("copy_s_per_byte")) c.cost = c.cost.with_copy_beta(number(j, "copy_s_per_byte", 0, 1));
  // Likewise files from before exchanges were measured: no cost per round, a constant gap.
  if (j.contains("round_s")) c.cost = c.cost.with_round_delta(number(j, "round_s", 0, 1));
  if (j.contains("gamma_growth_s")) c.cost = c.cost.with_gamma_growth(number(j, "gamma_growth_s", 0, 1));
  if (j.contains("knee_bytes")) c.knee_bytes = number(j, "knee_bytes", 0, 1e15);
  auto text = [&](const char* field) {
    if (!j.contains(field)) return std::string();
    if (!j[field].is_string()) throw error("calibration file " + path + ": field '" + field + "' is not a string");
    return j[field].get<std::string>();
  };
  c.method = text("method");
  c.mpi_library = text("mpi_library");
  c.host = text("host");
  c.date = text("date");
  if (j.contains("ranks")) c.ranks = static_cast<int>(number(j, "ranks", 0, 1e9));
  return c;
}

}  // namespace haloshift

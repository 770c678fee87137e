// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file calibration_file.hpp
/// @brief A calibration and its JSON file: what was measured, where, and the
/// checks that name the file and the field of anything wrong in it.

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "../../error.hpp"
#include "../cost/hockney.hpp"
#include "fit.hpp"

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
  /// Ranks per node of that job, real or pretend (HALOSHIFT_NODE_SIZE); 0: unknown or one level.
  int ranks_per_node = 0;
  std::vector<detail::fit::sample> samples;  ///< per-size means the fit used
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

namespace detail {
/// The pieces of `h` as the file's field 'pieces' holds them.
inline nlohmann::json pieces_json(const hockney& h) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : h.pieces()) {
    nlohmann::json piece{{"from_bytes", p.from_bytes}, {"alpha_s", p.alpha}, {"beta_s_per_byte", p.beta}};
    if (p.gamma == p.gamma) piece["gamma_s"] = p.gamma;  // NaN: the model's gamma
    list.push_back(piece);
  }
  return list;
}
}  // namespace detail

/// Writes `c` to `path` as JSON (creating the directory), for load_calibration(). Throws haloshift::error when it
/// cannot. A model of two levels adds the object 'between_nodes' (its alpha, beta, gamma and pieces) and the
/// shared-memory path's 'shm_alpha_s': files without them load as one level.
inline void save_calibration(const calibration& c, const std::string& path) {
  nlohmann::json j;
  j["haloshift_calibration"] = 1;
  j["alpha_s"] = c.cost.alpha();
  j["beta_s_per_byte"] = c.cost.beta();
  j["gamma_s"] = c.cost.gamma();
  j["copy_s_per_byte"] = c.cost.copy_beta();
  j["round_s"] = c.cost.round_delta();
  j["gamma_growth_s"] = c.cost.gamma_growth();
  if (const hockney::device_terms& d = c.cost.device(); d.any())
    j["device"] = {{"launch_s", d.launch},
                   {"pack_s_per_byte", d.pack_beta},
                   {"copy_alpha_s", d.copy_alpha},
                   {"copy_s_per_byte", d.copy_beta}};  // measured where a device was (measure_device_terms)
  j["pieces"] = detail::pieces_json(c.cost);
  if (const hockney* b = c.cost.between_nodes())
    j["between_nodes"] = {{"alpha_s", b->alpha()},       {"beta_s_per_byte", b->beta()},
                          {"gamma_s", b->gamma()},       {"gamma_growth_s", b->gamma_growth()},
                          {"pieces", detail::pieces_json(*b)}};
  if (c.cost.shm_alpha() > 0) j["shm_alpha_s"] = c.cost.shm_alpha();
  if (c.ranks_per_node > 0) j["ranks_per_node"] = c.ranks_per_node;
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

namespace detail {
/// A JSON value for an error message: its type, and the value itself when it is short
/// (never dumps arrays or objects, which may be nested deeper than the stack).
inline std::string json_value_text(const nlohmann::json& v) {
  if (v.is_number()) return v.dump();
  if (v.is_boolean() || v.is_null()) return v.dump();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.size() <= 32) return "the string " + v.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
    return "a string of " + std::to_string(s.size()) + " characters";
  }
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " element(s)";
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " field(s)";
  return std::string("a JSON ") + v.type_name();
}
/// Largest calibration file read (a real one is a few kilobytes).
inline constexpr std::uintmax_t max_calibration_file_bytes = 16u << 20;

/// The text of the calibration file at `path`. Throws haloshift::error naming
/// the file if it is missing, a directory, unreadable or too large.
inline std::string read_calibration_text(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw error("calibration file " + path + ": cannot be read (" + ec.message() + ")");
  if (!std::filesystem::exists(status)) throw error("calibration file " + path + ": cannot be read (no such file)");
  if (std::filesystem::is_directory(status)) throw error("calibration file " + path + ": is a directory, not a file");
  if (!std::filesystem::is_regular_file(status)) throw error("calibration file " + path + ": is not a regular file");
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > detail::max_calibration_file_bytes)
    throw error("calibration file " + path + ": is " + std::to_string(size) + " bytes, larger than " +
                std::to_string(detail::max_calibration_file_bytes) + " (not a calibration)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error("calibration file " + path + ": cannot be read");
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > detail::max_calibration_file_bytes)
      throw error("calibration file " + path + ": is larger than " +
                  std::to_string(detail::max_calibration_file_bytes) + " bytes (not a calibration)");
  }
  if (in.bad()) throw error("calibration file " + path + ": cannot be read (I/O error)");
  return text;
}

/// The checked fields of a calibration's JSON: every error names the file (`where`) and the field.
struct calibration_reader {
  std::string where;

  /// Field `field` of object `obj` (within `within`, for messages): a number in [low, high].
  double number(const nlohmann::json& obj, const char* field, double low, double high, const char* within = "") const {
    const std::string name = *within ? std::string(within) + "." + field : std::string(field);
    if (!obj.is_object()) throw error(where + "field '" + within + "' must be an object, got " + json_value_text(obj));
    const auto it = obj.find(field);
    if (it == obj.end()) throw error(where + "field '" + name + "' is missing");
    if (!it->is_number())
      throw error(where + "field '" + name + "' is not a number, got " + json_value_text(*it));
    const double v = it->get<double>();
    if (!(v >= low && v <= high))
      throw error(where + "field '" + name + "' = " + number_text(v) + " is out of range [" + number_text(low) + ", " +
                  number_text(high) + "]");
    return v;
  }
  /// An optional string field ("" when absent).
  std::string text(const nlohmann::json& j, const char* field) const {
    const auto it = j.find(field);
    if (it == j.end()) return std::string();
    if (!it->is_string())
      throw error(where + "field '" + field + "' is not a string, got " + json_value_text(*it));
    return it->get<std::string>();
  }
  /// The model of field 'pieces' (`list`, named `name`), with the file's `gamma` for pieces without their own.
  hockney pieces(const nlohmann::json& list, double gamma, const std::string& name = "pieces") const {
    if (!list.is_array() || list.empty())
      throw error(where + "field '" + name + "' must be a non-empty array, got " + json_value_text(list));
    if (list.size() > 4096)
      throw error(where + "field '" + name + "' has " + std::to_string(list.size()) + " pieces, more than 4096");
    std::vector<hockney::piece> pieces;
    for (const auto& p : list) {
      const std::string at = name + "[" + std::to_string(pieces.size()) + "]";
      // A later piece's line may cross 0 before it starts (a steep segment of a measured
      // table); what must not be negative is the time where the piece begins.
      const double from = number(p, "from_bytes", 0, 1e15, at.c_str());
      const double alpha = number(p, "alpha_s", pieces.empty() ? 0 : -1, 1, at.c_str());
      const double beta = number(p, "beta_s_per_byte", 0, 1, at.c_str());
      if (alpha + beta * from < 0)
        throw error(where + "field '" + at + ".alpha_s' = " + number_text(alpha) + " makes the time at " +
                    number_text(from) + " bytes negative");
      const double piece_gamma = p.contains("gamma_s") ? number(p, "gamma_s", -1, 1, at.c_str())
                                                       : std::numeric_limits<double>::quiet_NaN();
      if (piece_gamma + beta * from < 0)
        throw error(where + "field '" + at + ".gamma_s' = " + number_text(piece_gamma) + " makes the injection of " +
                    number_text(from) + " bytes negative");
      pieces.push_back({from, alpha, beta, piece_gamma});
    }
    try {
      return hockney::piecewise(pieces, gamma);
    } catch (const error& e) {
      const std::string what = e.what();
      const std::string prefix = "haloshift: ";
      throw error(where + "field '" + name + "': " + (what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what));
    }
  }
  /// The model between nodes of object `b` (field 'between_nodes'): its gamma, gap growth and pieces.
  hockney between_nodes(const nlohmann::json& b) const {
    const double gamma = number(b, "gamma_s", 0, 1, "between_nodes");
    const auto list = b.find("pieces");
    hockney h = list != b.end() ? pieces(*list, gamma, "between_nodes.pieces")
                                : hockney(number(b, "alpha_s", 0, 1, "between_nodes"),
                                          number(b, "beta_s_per_byte", 0, 1, "between_nodes"), gamma);
    return b.contains("gamma_growth_s") ? h.with_gamma_growth(number(b, "gamma_growth_s", 0, 1, "between_nodes")) : h;
  }
  /// A whole number field in [0, high].
  int count(const nlohmann::json& j, const char* field, double high) const {
    const double v = number(j, field, 0, high);
    if (v != std::floor(v)) throw error(where + "field '" + field + "' = " + number_text(v) + " is not a whole number");
    return static_cast<int>(v);
  }
};

inline calibration parse_calibration_unchecked(std::string_view text, const std::string& path) {
  const calibration_reader read{"calibration file " + path + ": "};
  const std::string& where = read.where;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw error(where + "not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object())
    throw error(where + "the top level must be a JSON object, got " + json_value_text(j) +
                " (not a haloshift calibration)");
  if (!j.contains("haloshift_calibration"))
    throw error(where + "field 'haloshift_calibration' is missing (not a haloshift calibration)");
  read.number(j, "haloshift_calibration", 1, 1);
  calibration c;
  const double gamma = read.number(j, "gamma_s", 0, 1);
  if (const auto pieces_it = j.find("pieces"); pieces_it != j.end())
    c.cost = read.pieces(*pieces_it, gamma);
  else
    c.cost = hockney(read.number(j, "alpha_s", 0, 1), read.number(j, "beta_s_per_byte", 0, 1), gamma);
  // Files from before local copies were measured have none: copies are free, as they were.
  if (j.contains("copy_s_per_byte")) c.cost = c.cost.with_copy_beta(read.number(j, "copy_s_per_byte", 0, 1));
  // Likewise files from before exchanges were measured: no cost per round, a constant gap.
  if (j.contains("round_s")) c.cost = c.cost.with_round_delta(read.number(j, "round_s", 0, 1));
  if (j.contains("gamma_growth_s")) c.cost = c.cost.with_gamma_growth(read.number(j, "gamma_growth_s", 0, 1));
  // Files measured without a device have no device terms: device data costs nothing more.
  if (const auto d = j.find("device"); d != j.end())
    c.cost = c.cost.with_device({read.number(*d, "launch_s", 0, 1, "device"),
                                 read.number(*d, "pack_s_per_byte", 0, 1, "device"),
                                 read.number(*d, "copy_alpha_s", 0, 1, "device"),
                                 read.number(*d, "copy_s_per_byte", 0, 1, "device")});
  if (j.contains("knee_bytes")) c.knee_bytes = read.number(j, "knee_bytes", 0, 1e15);
  c.method = read.text(j, "method");
  c.mpi_library = read.text(j, "mpi_library");
  c.host = read.text(j, "host");
  c.date = read.text(j, "date");
  if (j.contains("ranks")) c.ranks = read.count(j, "ranks", 1e9);
  // Files of one level (all before two levels existed) have neither: every message priced alike.
  if (const auto b = j.find("between_nodes"); b != j.end()) c.cost = c.cost.with_between_nodes(read.between_nodes(*b));
  if (j.contains("shm_alpha_s")) c.cost = c.cost.with_shm_alpha(read.number(j, "shm_alpha_s", 0, 1));
  if (j.contains("ranks_per_node")) c.ranks_per_node = read.count(j, "ranks_per_node", 1e9);
  return c;
}

/// Parses the text of a calibration file (`path` only names it in messages).
/// Every problem raises haloshift::error naming the file and the field (and
/// the offending value when it is short); no other exception escapes, so the
/// fuzzer (tests/fuzz) and a collective load can rely on it.
inline calibration parse_calibration(std::string_view text, const std::string& path = "<text>") {
  try {
    return detail::parse_calibration_unchecked(text, path);
  } catch (const error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw error("calibration file " + path + ": out of memory while parsing");
  } catch (const std::exception& e) {
    throw error("calibration file " + path + ": " + e.what());
  }
}
}  // namespace detail

/// Reads a calibration; every problem names the file and the field. Local (not
/// collective): agreed_model() calls it on rank 0 only and broadcasts the result.
inline calibration load_calibration(const std::string& path) {
  return detail::parse_calibration(detail::read_calibration_text(path), path);
}

}  // namespace haloshift

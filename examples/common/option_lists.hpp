// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Option values the tools share: lists of k and block sizes, grid shapes, times and sizes with units.
// Each function throws std::invalid_argument naming the text; tool::parses puts the option in front.

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <haloshift/grid/grid_shape.hpp>

namespace tool {

/// A bad option value: the message names the text; CLI11 puts the option's name in front.
[[noreturn]] inline void bad(const std::string& message) { throw std::invalid_argument(message); }

/// A number with an optional suffix from `units` (suffix -> factor). Errors name the text; the option
/// is put in front by CLI11 (the checks below) or by the caller.
inline double with_unit(const std::string& text, const std::map<std::string, double>& units) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    bad("'" + text + "' is not a number");
  }
  std::string suffix = text.substr(used);
  if (suffix.size() > 2 && suffix.substr(suffix.size() - 2) == "/B") suffix.resize(suffix.size() - 2);
  if (suffix.empty()) return v;
  const auto u = units.find(suffix);
  if (u == units.end()) bad("unknown unit '" + suffix + "' in '" + text + "'");
  return v * u->second;
}
inline double seconds(const std::string& text) {
  const double v = with_unit(text, {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}});
  if (!(v >= 0) || !std::isfinite(v)) bad("expected a time >= 0, got '" + text + "'");
  return v;
}
inline double bytes(const std::string& text) {
  const double v = with_unit(
      text, {{"B", 1}, {"K", 1024}, {"KiB", 1024}, {"M", 1 << 20}, {"MiB", 1 << 20}, {"G", 1 << 30}, {"GiB", 1 << 30}});
  if (!(v >= 1) || !std::isfinite(v)) bad("sizes must be >= 1 byte, got '" + text + "'");
  return std::round(v);
}
inline std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t next = text.find(sep, pos);
    out.push_back(text.substr(pos, next - pos));
    if (next == std::string::npos) return out;
    pos = next + 1;
  }
}
inline int integer_of(const std::string& text) {
  std::size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) bad("'" + text + "' is not an integer");
  return v;
}

/// "1:6" (every k) or "1,2,4".
inline std::vector<int> k_list(const std::string& text) {
  std::vector<int> out;
  if (const auto parts = split(text, ':'); parts.size() == 2) {
    for (int k = integer_of(parts[0]); k <= integer_of(parts[1]); ++k) out.push_back(k);
  } else {
    for (const auto& p : split(text, ',')) out.push_back(integer_of(p));
  }
  for (int k : out)
    if (k < 1 || k > 64) bad("k must lie in 1..64, got " + std::to_string(k) + " in '" + text + "'");
  if (out.empty()) bad("'" + text + "' gives no k");
  return out;
}
/// "8:1M" (powers of 2), "8:1M:8" (factor 8), or "64,4K,1M".
inline std::vector<double> size_list(const std::string& text) {
  std::vector<double> out;
  if (const auto parts = split(text, ':'); parts.size() == 2 || parts.size() == 3) {
    const double low = bytes(parts[0]), high = bytes(parts[1]);
    const double factor = parts.size() == 3 ? with_unit(parts[2], {}) : 2;
    if (!(factor > 1)) bad("the factor must be > 1, got '" + parts[2] + "' in '" + text + "'");
    if (high < low) bad("'" + text + "' runs backwards");
    for (double m = low; m <= high * 1.0000001; m *= factor) out.push_back(std::round(m));
  } else {
    for (const auto& p : split(text, ',')) out.push_back(bytes(p));
  }
  if (out.size() > 64) bad("'" + text + "' gives " + std::to_string(out.size()) + " sizes (at most 64)");
  return out;
}
/// "8x8x8": 1 to 3 sizes >= 1.
inline std::vector<int> dims_of(const std::string& text) {
  std::vector<int> dims;
  for (const auto& p : split(text, 'x')) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(p, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != p.size() || v < 1) bad("expected 1 to 3 sizes >= 1 like 8x8x8, got '" + text + "'");
    dims.push_back(v);
  }
  if (dims.size() > 3) bad("expected 1 to 3 sizes >= 1 like 8x8x8, got '" + text + "'");
  try {
    (void)haloshift::grid_shape(dims, std::vector<bool>(dims.size(), true));  // the product fits an MPI rank
  } catch (const haloshift::error&) {
    bad("'" + text + "' has more ranks than MPI can number");
  }
  return dims;
}
}  // namespace tool

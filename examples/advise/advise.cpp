// SPDX-License-Identifier: BSD-3-Clause
// haloshift-advise: which exchange strategy the cost model predicts fastest,
// for a machine (a calibration file, or alpha / beta / gamma / delta per round), a grid shape,
// and ranges of k and block size. Prints the predicted time of every
// strategy with the winner, the block sizes where TeamShift and Shift trade
// places, and optionally an SVG map. No MPI communication: run it anywhere.
//
//   haloshift-advise [--calibration FILE | --alpha 2.1us --beta 0.5ns [--gamma 0.3us] [--delta 1us]]
//                    [--grid 8x8x8] [--periodic 1,1,1] [--k 1:6] [--bytes 8:1M[:FACTOR]]
//                    [--protocol overlapping|rendezvous] [--shell full|eighth] [--svg FILE] [--title TEXT]
//                    [--help] [--version]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <haloshift/auto.hpp>
#include <haloshift/haloshift.hpp>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "svg_map.hpp"
#include "tool.hpp"

namespace hs = haloshift;

namespace {

/// A bad option value: the message names the text; CLI11 puts the option's name in front.
[[noreturn]] void bad(const std::string& message) { throw std::invalid_argument(message); }

/// A number with an optional suffix from `units` (suffix -> factor). Errors name the text; the option
/// is put in front by CLI11 (the checks below) or by the caller.
double with_unit(const std::string& text, const std::map<std::string, double>& units) {
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
double seconds(const std::string& text) {
  const double v = with_unit(text, {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}});
  if (!(v >= 0) || !std::isfinite(v)) bad("expected a time >= 0, got '" + text + "'");
  return v;
}
double bytes(const std::string& text) {
  const double v = with_unit(
      text, {{"B", 1}, {"K", 1024}, {"KiB", 1024}, {"M", 1 << 20}, {"MiB", 1 << 20}, {"G", 1 << 30}, {"GiB", 1 << 30}});
  if (!(v >= 1) || !std::isfinite(v)) bad("sizes must be >= 1 byte, got '" + text + "'");
  return std::round(v);
}
std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t next = text.find(sep, pos);
    out.push_back(text.substr(pos, next - pos));
    if (next == std::string::npos) return out;
    pos = next + 1;
  }
}
int integer(const std::string& text) {
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
std::vector<int> k_list(const std::string& text) {
  std::vector<int> out;
  if (const auto parts = split(text, ':'); parts.size() == 2) {
    for (int k = integer(parts[0]); k <= integer(parts[1]); ++k) out.push_back(k);
  } else {
    for (const auto& p : split(text, ',')) out.push_back(integer(p));
  }
  for (int k : out)
    if (k < 1 || k > 64) bad("k must lie in 1..64, got " + std::to_string(k) + " in '" + text + "'");
  if (out.empty()) bad("'" + text + "' gives no k");
  return out;
}
/// "8:1M" (powers of 2), "8:1M:8" (factor 8), or "64,4K,1M".
std::vector<double> size_list(const std::string& text) {
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
std::vector<int> dims_of(const std::string& text) {
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
    (void)hs::grid_shape(dims, std::vector<bool>(dims.size(), true));  // the product fits an MPI rank
  } catch (const hs::error&) {
    bad("'" + text + "' has more ranks than MPI can number");
  }
  return dims;
}
/// "1" (all dimensions) or "1,0,1".
std::vector<bool> periodic_of(const std::string& text) {
  std::vector<bool> periodic;
  for (const auto& p : split(text, ',')) {
    if (p != "0" && p != "1") bad("entries must be 0 or 1, got '" + p + "' in '" + text + "'");
    periodic.push_back(p == "1");
  }
  return periodic;
}

std::string model_text(const hs::hockney& h) {
  std::string s;
  char text[160];
  for (const auto& p : h.pieces()) {
    std::snprintf(text, sizeof text, "%salpha %.3g us, beta %.3g ns/B from %s", s.empty() ? "" : "; ", p.alpha * 1e6,
                  p.beta * 1e9, advise::bytes_label(p.from_bytes).c_str());
    s += text;
  }
  std::snprintf(text, sizeof text, "; gamma %.3g us", h.gamma() * 1e6);
  s += text;
  if (h.gamma_growth() > 0) {
    std::snprintf(text, sizeof text, " + %.3g ns per further message", h.gamma_growth() * 1e9);
    s += text;
  }
  if (h.round_delta() > 0) {
    std::snprintf(text, sizeof text, "; delta %.3g us per round", h.round_delta() * 1e6);
    s += text;
  }
  return s;
}
std::string label(const hs::prediction& p) {
  return p.strategy == "TeamShift" ? "TeamShift " + hs::to_string(p.team) : p.strategy;
}

void print_table(const hs::advice_map& map) {
  // One column per candidate that occurs anywhere (TeamShift once per team).
  std::vector<std::string> columns;
  for (const auto& c : map.cells)
    for (const auto& p : c.ranked)
      if (std::find(columns.begin(), columns.end(), label(p)) == columns.end()) columns.push_back(label(p));
  std::sort(columns.begin(), columns.end(), [](const std::string& a, const std::string& b) {
    auto order = [](const std::string& s) { return s == "Shift" ? 0 : s.rfind("TeamShift", 0) == 0 ? 1 : 2; };
    return order(a) != order(b) ? order(a) < order(b) : a < b;
  });
  std::printf("predicted time per exchange in us (- : not a candidate there)\n\n| k | block |");
  for (const auto& c : columns) std::printf(" %s |", c.c_str());
  std::printf(" fastest | next is slower by |\n|---:|---:|");
  for (std::size_t i = 0; i < columns.size(); ++i) std::printf("---:|");
  std::printf(":---|---:|\n");
  for (const auto& cell : map.cells) {
    std::printf("| %d | %s |", cell.k, advise::bytes_label(cell.bytes).c_str());
    for (const auto& col : columns) {
      const auto it = std::find_if(cell.ranked.begin(), cell.ranked.end(),
                                   [&](const hs::prediction& p) { return label(p) == col; });
      it == cell.ranked.end() ? std::printf(" - |") : std::printf(" %.4g |", it->seconds * 1e6);
    }
    const double margin = cell.ranked.size() > 1 ? cell.ranked[1].seconds / cell.winner().seconds - 1 : 0;
    std::printf(" %s | %.1f %% |\n", label(cell.winner()).c_str(), 100 * margin);
  }
}

void print_boundary(const hs::advice_map& map) {
  const auto& sizes = map.request.sizes;
  const double low = *std::min_element(sizes.begin(), sizes.end()), high = *std::max_element(sizes.begin(), sizes.end());
  std::printf("\nShift / TeamShift trade-off (best team against Shift, whoever wins overall):\n");
  for (const auto& t : map.team_boundary) {
    std::string line;
    for (const auto& [from, to] : t.team_intervals(low, high))
      line += (line.empty() ? "TeamShift faster " : ", ") + advise::bytes_label(from) + " to " + advise::bytes_label(to);
    if (!t.applies) line = "no TeamShift team applies (TeamShift is Shift)";
    else if (line.empty()) line = "Shift faster throughout";
    std::printf("  k = %d: %s\n", t.k, line.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  return tool::plain_main("haloshift-advise", [&] {
    CLI::App app{
        "Which exchange strategy the cost model predicts fastest, for a machine (a calibration file, or "
        "alpha / beta / gamma / delta per round), a grid shape, and ranges of k and block size. Prints the "
        "predicted time of every strategy with the winner, the block sizes where TeamShift and Shift trade "
        "places, and optionally an SVG map. No MPI communication: run it anywhere.\n"
        "TIME: seconds, or with a unit: 2.1us, 500ns, 0.47ns (beta: per byte). Without --calibration or "
        "--alpha, the calibration Auto reads (haloshift-calibrate writes it).",
        "haloshift-advise"};
    tool::add_version(app);
    std::string calibration, alpha, beta, gamma, delta, svg, title;
    std::string grid = "8x8x8", periodic = "1", k = "1:6", sizes = "8:1M", protocol = "overlapping", shell = "full";
    const auto time = tool::parses(seconds);
    auto* calibration_option =
        app.add_option("--calibration", calibration, "Calibration file of the machine")->check(CLI::ExistingFile);
    auto* alpha_option = app.add_option("--alpha", alpha, "Latency per message (TIME)")->check(time)->type_name("TIME");
    auto* beta_option = app.add_option("--beta", beta, "Time per byte (TIME)")->check(time)->type_name("TIME");
    auto* gamma_option = app.add_option("--gamma", gamma, "Gap per further message of a round (TIME; default alpha)")
                             ->check(time)
                             ->type_name("TIME");
    auto* delta_option =
        app.add_option("--delta", delta, "Cost per round (TIME; default 0)")->check(time)->type_name("TIME");
    alpha_option->needs(beta_option);
    beta_option->needs(alpha_option);
    gamma_option->needs(alpha_option);
    delta_option->needs(alpha_option);
    calibration_option->excludes(alpha_option)->excludes(beta_option);
    app.add_option("--grid", grid, "Ranks per dimension, PxQxR")
        ->check(tool::parses(dims_of))
        ->type_name("PxQxR")
        ->capture_default_str();
    app.add_option("--periodic", periodic, "Periodic per dimension, 1,1,1, or one entry for all")
        ->check(tool::parses(periodic_of))
        ->type_name("0|1[,...]")
        ->capture_default_str();
    app.add_option("--k", k, "Neighbourhood widths: FROM:TO or K1,K2,...")
        ->check(tool::parses(k_list))
        ->type_name("K")
        ->capture_default_str();
    app.add_option("--bytes", sizes, "Block sizes per rank: FROM:TO[:FACTOR] (default factor 2) or S1,S2,...")
        ->check(tool::parses(size_list))
        ->type_name("SIZES")
        ->capture_default_str();
    app.add_option("--protocol", protocol, "Message protocol of the model")
        ->check(CLI::IsMember({"overlapping", "rendezvous"}))
        ->capture_default_str();
    app.add_option("--shell", shell, "Neighbourhood shell")
        ->check(CLI::IsMember({"full", "eighth"}))
        ->capture_default_str();
    app.add_option("--svg", svg, "Write the map as SVG to this file")->type_name("FILE");
    app.add_option("--title", title, "Title of the SVG map");
    app.callback([&] {
      const std::size_t given = periodic_of(periodic).size(), dims = dims_of(grid).size();
      if (given != 1 && given != dims)
        throw tool::usage_error("--periodic", "'" + periodic + "' has " + std::to_string(given) + " entries, --grid " +
                                                  grid + " has " + std::to_string(dims) + " dimensions");
    });
    if (const int status = tool::parse(app, argc, argv, true); status >= 0) return status;

    // The machine: explicit parameters, a file, or the calibration Auto would read.
    hs::hockney cost;
    std::string source;
    if (alpha_option->count() > 0) {
      const double a = seconds(alpha);
      cost = hs::hockney(a, seconds(beta), gamma_option->count() ? seconds(gamma) : a);
      if (delta_option->count()) cost = cost.with_round_delta(seconds(delta));
      source = "given parameters";
    } else {
      const std::string path = calibration_option->count() ? calibration : hs::default_calibration_path();
      if (!calibration_option->count() && !std::filesystem::exists(path))
        throw hs::error("no --calibration and no --alpha/--beta, and no calibration at " + path +
                        " (run haloshift-calibrate, or pass the parameters)");
      const hs::calibration c = hs::load_calibration(path);
      cost = c.cost;
      source = "calibration " + std::filesystem::path(path).filename().string() +
               (c.host.empty() ? "" : " (" + c.host + (c.date.empty() ? "" : ", " + c.date.substr(0, 10)) + ")");
    }
    std::vector<bool> per = periodic_of(periodic);
    const std::vector<int> dims = dims_of(grid);
    if (per.size() == 1) per.assign(dims.size(), per[0]);  // "--periodic 0": all dimensions
    hs::advice_request request{hs::grid_shape(dims, per), k_list(k), size_list(sizes), cost};
    request.mode = protocol == "rendezvous" ? hs::protocol::rendezvous : hs::protocol::overlapping;
    request.kind = shell == "eighth" ? hs::shell::eighth : hs::shell::full;

    const hs::advice_map map = hs::advise(request);
    const std::string grid_text = grid +
                                  (periodic == "1"   ? " periodic"
                                   : periodic == "0" ? " non-periodic"
                                                     : " periodic " + periodic) +
                                  ", " + protocol + ", " + shell + " shell";
    std::printf("haloshift-advise: grid %s (%d ranks; max-plus simulation)\nmodel: %s (%s)\n\n", grid_text.c_str(),
                request.grid.size(), model_text(cost).c_str(), source.c_str());
    print_table(map);
    print_boundary(map);
    std::printf("\nNeighborAlltoall sends exactly SingleHop's messages; the model predicts it as SingleHop.\n");
    if (!svg.empty()) {
      if (title.empty()) title = "Fastest strategy predicted, grid " + grid_text;
      advise::write_svg(map, title, {"model: " + model_text(cost), source}, svg);
      std::printf("map written to %s\n", svg.c_str());
    }
    return 0;
  });
}

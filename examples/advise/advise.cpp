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
#include <haloshift/model/calibration.hpp>
#include <haloshift/select/advisor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "svg_map.hpp"

namespace hs = haloshift;

namespace {

const char* usage =
    "usage: haloshift-advise [--calibration FILE | --alpha TIME --beta TIME [--gamma TIME] [--delta TIME]]\n"
    "                        [--grid 8x8x8] [--periodic 1,1,1] [--k 1:6 | --k 1,2,4] [--bytes 8:1M[:FACTOR]]\n"
    "                        [--protocol overlapping|rendezvous] [--shell full|eighth] [--svg FILE] [--title TEXT]\n"
    "  TIME: seconds, or with a unit: 2.1us, 500ns, 0.47ns (beta: per byte).\n"
    "  Without --calibration or --alpha, the calibration Auto reads (haloshift-calibrate writes it).\n";

/// A number with an optional suffix from `units` (suffix -> factor); the
/// error names the option and the text.
double with_unit(const std::string& option, const std::string& text, const std::map<std::string, double>& units) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw hs::error(option + ": '" + text + "' is not a number");
  }
  std::string suffix = text.substr(used);
  if (suffix.size() > 2 && suffix.substr(suffix.size() - 2) == "/B") suffix.resize(suffix.size() - 2);
  if (suffix.empty()) return v;
  const auto u = units.find(suffix);
  if (u == units.end()) throw hs::error(option + ": unknown unit '" + suffix + "' in '" + text + "'");
  return v * u->second;
}
double seconds(const std::string& option, const std::string& text) {
  const double v = with_unit(option, text, {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}});
  if (!(v >= 0) || !std::isfinite(v)) throw hs::error(option + " must be a time >= 0, got '" + text + "'");
  return v;
}
double bytes(const std::string& option, const std::string& text) {
  const double v = with_unit(option, text, {{"B", 1}, {"K", 1024}, {"KiB", 1024}, {"M", 1 << 20}, {"MiB", 1 << 20},
                                             {"G", 1 << 30}, {"GiB", 1 << 30}});
  if (!(v >= 1) || !std::isfinite(v)) throw hs::error(option + " sizes must be >= 1 byte, got '" + text + "'");
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
int integer(const std::string& option, const std::string& text) {
  std::size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw hs::error(option + ": '" + text + "' is not an integer");
  return v;
}

/// "1:6" (every k) or "1,2,4".
std::vector<int> k_list(const std::string& text) {
  std::vector<int> out;
  if (const auto parts = split(text, ':'); parts.size() == 2) {
    for (int k = integer("--k", parts[0]); k <= integer("--k", parts[1]); ++k) out.push_back(k);
  } else {
    for (const auto& p : split(text, ',')) out.push_back(integer("--k", p));
  }
  for (int k : out)
    if (k < 1 || k > 64) throw hs::error("--k: k must lie in 1..64, got " + std::to_string(k));
  if (out.empty()) throw hs::error("--k '" + text + "' gives no k");
  return out;
}
/// "8:1M" (powers of 2), "8:1M:8" (factor 8), or "64,4K,1M".
std::vector<double> size_list(const std::string& text) {
  std::vector<double> out;
  if (const auto parts = split(text, ':'); parts.size() == 2 || parts.size() == 3) {
    const double low = bytes("--bytes", parts[0]), high = bytes("--bytes", parts[1]);
    const double factor = parts.size() == 3 ? with_unit("--bytes", parts[2], {}) : 2;
    if (!(factor > 1)) throw hs::error("--bytes: the factor must be > 1, got '" + parts[2] + "'");
    if (high < low) throw hs::error("--bytes: '" + text + "' runs backwards");
    for (double m = low; m <= high * 1.0000001; m *= factor) out.push_back(std::round(m));
  } else {
    for (const auto& p : split(text, ',')) out.push_back(bytes("--bytes", p));
  }
  if (out.size() > 64) throw hs::error("--bytes: '" + text + "' gives " + std::to_string(out.size()) + " sizes (at most 64)");
  return out;
}
hs::grid_shape grid_of(const std::string& dims_text, const std::string& periodic_text) {
  std::vector<int> dims;
  for (const auto& p : split(dims_text, 'x')) dims.push_back(integer("--grid", p));
  std::vector<bool> periodic;
  for (const auto& p : split(periodic_text, ',')) {
    if (p != "0" && p != "1") throw hs::error("--periodic: entries must be 0 or 1, got '" + p + "'");
    periodic.push_back(p == "1");
  }
  if (periodic.size() == 1) periodic.assign(dims.size(), periodic[0]);  // "--periodic 0": all dimensions
  return hs::grid_shape(dims, periodic);
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
  try {
    std::map<std::string, std::string> opt{{"--grid", "8x8x8"}, {"--periodic", "1"},    {"--k", "1:6"},
                                           {"--bytes", "8:1M"}, {"--protocol", "overlapping"}, {"--shell", "full"}};
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        std::fputs(usage, stdout);
        return 0;
      }
      static const char* known[] = {"--calibration", "--alpha",    "--beta", "--gamma", "--delta",
                                    "--grid",        "--periodic", "--k",    "--bytes", "--protocol",
                                    "--shell",       "--svg",      "--title"};
      if (std::find(std::begin(known), std::end(known), a) == std::end(known))
        throw hs::error("unknown option '" + a + "'");
      if (i + 1 >= argc) throw hs::error(a + " needs a value");
      opt[a] = argv[++i];
    }
    // The machine: explicit parameters, a file, or the calibration Auto would read.
    hs::hockney cost;
    std::string source;
    if (opt.count("--alpha") || opt.count("--beta")) {
      if (!opt.count("--alpha") || !opt.count("--beta")) throw hs::error("--alpha and --beta go together");
      if (opt.count("--calibration")) throw hs::error("give --calibration or --alpha/--beta, not both");
      const double alpha = seconds("--alpha", opt["--alpha"]);
      cost = hs::hockney(alpha, seconds("--beta", opt["--beta"]),
                         opt.count("--gamma") ? seconds("--gamma", opt["--gamma"]) : alpha);
      if (opt.count("--delta")) cost = cost.with_round_delta(seconds("--delta", opt["--delta"]));
      source = "given parameters";
    } else {
      if (opt.count("--gamma") || opt.count("--delta")) throw hs::error("--gamma and --delta need --alpha and --beta");
      const std::string path = opt.count("--calibration") ? opt["--calibration"] : hs::default_calibration_path();
      if (!opt.count("--calibration") && !std::filesystem::exists(path))
        throw hs::error("no --calibration and no --alpha/--beta, and no calibration at " + path +
                        " (run haloshift-calibrate, or pass the parameters)");
      const hs::calibration c = hs::load_calibration(path);
      cost = c.cost;
      source = "calibration " + std::filesystem::path(path).filename().string() +
               (c.host.empty() ? "" : " (" + c.host + (c.date.empty() ? "" : ", " + c.date.substr(0, 10)) + ")");
    }
    hs::advice_request request{grid_of(opt["--grid"], opt["--periodic"]), k_list(opt["--k"]),
                               size_list(opt["--bytes"]), cost};
    if (opt["--protocol"] != "overlapping" && opt["--protocol"] != "rendezvous")
      throw hs::error("--protocol must be overlapping or rendezvous, got '" + opt["--protocol"] + "'");
    if (opt["--shell"] != "full" && opt["--shell"] != "eighth")
      throw hs::error("--shell must be full or eighth, got '" + opt["--shell"] + "'");
    request.mode = opt["--protocol"] == "rendezvous" ? hs::protocol::rendezvous : hs::protocol::overlapping;
    request.kind = opt["--shell"] == "eighth" ? hs::shell::eighth : hs::shell::full;

    const hs::advice_map map = hs::advise(request);
    const std::string& per = opt["--periodic"];
    const std::string grid_text = opt["--grid"] + (per == "1" ? " periodic" : per == "0" ? " non-periodic" : " periodic " + per) + ", " +
                                  opt["--protocol"] + ", " + opt["--shell"] + " shell";
    std::printf("haloshift-advise: grid %s (%d ranks; %s)\nmodel: %s (%s)\n\n", grid_text.c_str(), request.grid.size(),
                request.grid.size() <= 4096 ? "max-plus simulation" : "closed forms", model_text(cost).c_str(),
                source.c_str());
    print_table(map);
    print_boundary(map);
    std::printf("\nNeighborAlltoall sends exactly SingleHop's messages; the model predicts it as SingleHop.\n");
    if (opt.count("--svg")) {
      const std::string title = opt.count("--title") ? opt["--title"] : "Fastest strategy predicted, grid " + grid_text;
      advise::write_svg(map, title, {"model: " + model_text(cost), source}, opt["--svg"]);
      std::printf("map written to %s\n", opt["--svg"].c_str());
    }
  } catch (const hs::error& e) {
    std::fprintf(stderr, "haloshift-advise: %s\n%s", e.what(), usage);
    return 2;
  }
  return 0;
}

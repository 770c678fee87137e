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

#include "option_lists.hpp"
#include "svg_map.hpp"
#include "tool.hpp"

namespace hs = haloshift;

namespace {

using tool::bad;
using tool::bytes;
using tool::dims_of;
using tool::k_list;
using tool::seconds;
using tool::size_list;
using tool::split;
using tool::with_unit;

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
  if (const hs::hockney* b = h.between_nodes()) s += "; between nodes: " + model_text(*b);
  if (h.shm_alpha() > 0) {
    std::snprintf(text, sizeof text, "; shared memory %.3g us + copy", h.shm_alpha() * 1e6);
    s += text;
  }
  return s;
}
std::string label(const hs::prediction& p) {
  return (p.strategy == "TeamShift" ? "TeamShift " + hs::to_string(p.team) : p.strategy) +
         (p.inside_nodes.empty() ? "" : "+" + p.inside_nodes) + (p.messages == "per_field" ? " per field" : "");
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
    int node_size = 0;
    app.add_option("--node-size", node_size,
                   "Ranks per node in consecutive blocks: two levels, and each strategy also with the "
                   "shared-memory path inside nodes (+shm)")
        ->check(tool::integer(0))
        ->type_name("N");
    int fields = 1;
    app.add_option("--fields", fields,
                   "Fields each block holds (a bundle, views exchanged together): each strategy also with one "
                   "message per field ('per field'; the rest: one message per neighbour)")
        ->check(tool::integer(1))
        ->type_name("N");
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
    request.ranks_per_node = node_size;
    request.fields = fields;

    const hs::advice_map map = hs::advise(request);
    const std::string grid_text = grid +
                                  (periodic == "1"   ? " periodic"
                                   : periodic == "0" ? " non-periodic"
                                                     : " periodic " + periodic) +
                                  ", " + protocol + ", " + shell + " shell" +
                                  (node_size > 1 ? ", " + std::to_string(node_size) + " ranks per node" : "") +
                                  (fields > 1 ? ", " + std::to_string(fields) + " fields per block" : "");
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

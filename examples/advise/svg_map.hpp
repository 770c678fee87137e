// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The advisor's picture: which strategy the model predicts fastest over
// k (rows, k = 1 at the bottom) x block size (columns, in the order given,
// drawn evenly: the sizes are meant to be geometric), with the Shift /
// TeamShift crossovers drawn as a dashed line through the rows.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <haloshift/auto.hpp>
#include <haloshift/haloshift.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace advise {

/// The strategies the model tells apart, with their map colours (NodeAggregate only with --node-size).
struct family {
  const char* name;
  const char* colour;
};
inline const std::vector<family>& families() {
  static const std::vector<family> f{{"Shift", "#4e79a7"},
                                     {"TeamShift", "#f28e2b"},
                                     {"SingleHop", "#59a14f"},
                                     {"TtlMultiHop", "#e15759"},
                                     {"NodeAggregate", "#76b7b2"}};
  return f;
}
inline const char* colour_of(const std::string& strategy) {
  for (const family& f : families())
    if (strategy == f.name) return f.colour;
  return "#bab0ac";
}

/// "8 B", "4 KiB", "1.5 MiB".
inline std::string bytes_label(double bytes) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (bytes >= 1024 && u < 3) bytes /= 1024, ++u;
  char text[32];
  std::snprintf(text, sizeof text, bytes == std::floor(bytes) ? "%.0f %s" : "%.1f %s", bytes, unit[u]);
  return text;
}

inline std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

/// Horizontal position of `bytes` on the size axis: linear in log size
/// between the centres of the neighbouring columns.
inline double x_of(const std::vector<double>& sizes, double bytes, double left, double cell) {
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i)
    if (bytes <= sizes[i + 1] || i + 2 == sizes.size()) {
      const double a = std::log(std::max(sizes[i], 1.0)), b = std::log(std::max(sizes[i + 1], 1.0));
      const double t = b > a ? (std::log(bytes) - a) / (b - a) : 0;
      return left + (static_cast<double>(i) + 0.5 + t) * cell;
    }
  return left + 0.5 * cell;
}

/// Writes the map as a standalone SVG file; `notes` (one line each) say
/// which machine and model.
inline void write_svg(const haloshift::advice_map& map, const std::string& title, const std::vector<std::string>& notes,
                      const std::string& path) {
  const auto& ks = map.request.ks;
  const auto& sizes = map.request.sizes;
  const double cell_w = 44, cell_h = 34, left = 70, top = 50 + 18 * static_cast<double>(notes.size());
  const double plot_w = cell_w * static_cast<double>(sizes.size()), plot_h = cell_h * static_cast<double>(ks.size());
  const double legend_x = left + plot_w + 24, height = top + plot_h + 80;
  // About 6.5 px per character of 12 px text, so no note runs off the picture.
  std::size_t longest = title.size();
  for (const auto& n : notes) longest = std::max(longest, n.size());
  const double width = std::max(legend_x + 250, left + 6.5 * static_cast<double>(longest) + 10);
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << left << "\" y=\"24\" font-size=\"16\" font-weight=\"bold\">" << escape(title) << "</text>\n";
  for (std::size_t i = 0; i < notes.size(); ++i)
    s << "<text x=\"" << left << "\" y=\"" << 44 + 18 * static_cast<double>(i) << "\" fill=\"#444\">" << escape(notes[i])
      << "</text>\n";
  auto row_y = [&](std::size_t ki) { return top + plot_h - cell_h * static_cast<double>(ki + 1); };
  for (std::size_t ki = 0; ki < ks.size(); ++ki)
    for (std::size_t si = 0; si < sizes.size(); ++si) {
      const auto& c = map.at(ki, si);
      const auto& w = c.winner();
      const double x = left + cell_w * static_cast<double>(si), y = row_y(ki);
      // Tooltip: the whole ranking, so the file answers "by how much" too.
      std::ostringstream tip;
      tip << "k=" << c.k << ", " << bytes_label(c.bytes);
      for (const auto& p : c.ranked)
      {
        tip << "\n" << p.strategy;
        if (p.strategy == "TeamShift") tip << ' ' << haloshift::to_string(p.team);
        if (!p.inside_nodes.empty()) tip << '+' << p.inside_nodes;
        tip << ": " << p.seconds * 1e6 << " us";
      }
      s << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << cell_w << "\" height=\"" << cell_h << "\" fill=\""
        << colour_of(w.strategy) << "\" stroke=\"white\"><title>" << escape(tip.str()) << "</title></rect>\n";
      if (w.strategy == "TeamShift")
        s << "<text x=\"" << x + cell_w / 2 << "\" y=\"" << y + cell_h / 2 + 4
          << "\" text-anchor=\"middle\" fill=\"white\" font-size=\"11\">c=" << *std::max_element(w.team.begin(), w.team.end())
          << "</text>\n";
    }
  // Axes: k on the left, sizes below (every second label when they crowd).
  for (std::size_t ki = 0; ki < ks.size(); ++ki)
    s << "<text x=\"" << left - 8 << "\" y=\"" << row_y(ki) + cell_h / 2 + 4 << "\" text-anchor=\"end\">" << ks[ki]
      << "</text>\n";
  const std::size_t every = sizes.size() > 12 ? 2 : 1;
  for (std::size_t si = 0; si < sizes.size(); si += every) {
    const double x = left + cell_w * (static_cast<double>(si) + 0.5), y = top + plot_h + 14;
    s << "<text x=\"" << x << "\" y=\"" << y << "\" text-anchor=\"end\" transform=\"rotate(-40 " << x << " " << y
      << ")\">" << bytes_label(sizes[si]) << "</text>\n";
  }
  s << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 8
    << "\" text-anchor=\"middle\">block size per rank (bytes, log scale)</text>\n"
    << "<text x=\"20\" y=\"" << top + plot_h / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 20 "
    << top + plot_h / 2 << ")\">k (neighbourhood width)</text>\n";
  // The Shift / TeamShift boundary: the outline of the region where the
  // best TeamShift beats Shift, a vertical stroke at each crossover through
  // its row and a horizontal one where neighbouring rows disagree.
  std::ostringstream path_d;
  const double x_low = left, x_high = left + plot_w;
  auto size_at = [&](double x) {  // inverse of x_of, by bisection in log size (x_of is monotonic)
    double lo = std::max(sizes.front(), 1.0) / 1e3, hi = sizes.back() * 1e3;
    for (int i = 0; i < 60; ++i) (x_of(sizes, std::sqrt(lo * hi), left, cell_w) < x ? lo : hi) = std::sqrt(lo * hi);
    return std::sqrt(lo * hi);
  };
  const auto& trades = map.team_boundary;
  for (std::size_t ki = 0; ki < trades.size(); ++ki) {
    std::vector<double> xs{x_low, x_high};
    for (double c : trades[ki].crossovers) {
      const double x = x_of(sizes, c, left, cell_w);
      path_d << " M " << x << " " << row_y(ki) << " v " << cell_h;
      xs.push_back(x);
    }
    if (ki + 1 == trades.size()) continue;
    for (double c : trades[ki + 1].crossovers) xs.push_back(x_of(sizes, c, left, cell_w));
    std::sort(xs.begin(), xs.end());
    for (std::size_t i = 0; i + 1 < xs.size(); ++i) {
      const double mid = size_at((xs[i] + xs[i + 1]) / 2);
      if (trades[ki].team_wins(mid) != trades[ki + 1].team_wins(mid))
        path_d << " M " << xs[i] << " " << row_y(ki) << " H " << xs[i + 1];
    }
  }
  if (!path_d.str().empty())
    s << "<path d=\"" << path_d.str() << "\" fill=\"none\" stroke=\"black\" stroke-width=\"2.5\" "
      << "stroke-dasharray=\"6 3\"/>\n";
  // Legend: every strategy the model tells apart, and the boundary.
  double ly = top;
  s << "<text x=\"" << legend_x << "\" y=\"" << ly - 8 << "\" font-weight=\"bold\">fastest (predicted)</text>\n";
  for (const family& f : families()) {
    s << "<rect x=\"" << legend_x << "\" y=\"" << ly << "\" width=\"16\" height=\"16\" fill=\"" << f.colour
      << "\"/><text x=\"" << legend_x + 22 << "\" y=\"" << ly + 12 << "\">" << f.name
      << (std::string(f.name) == "TeamShift" ? " (c = team size)" : "")
      << (std::string(f.name) == "NodeAggregate" ? " (with nodes)" : "") << "</text>\n";
    ly += 24;
  }
  s << "<path d=\"M " << legend_x << " " << ly + 8 << " h 16\" stroke=\"black\" stroke-width=\"2.5\" "
    << "stroke-dasharray=\"6 3\"/><text x=\"" << legend_x + 22 << "\" y=\"" << ly + 12
    << "\">TeamShift = Shift (outlines where</text><text x=\"" << legend_x + 22 << "\" y=\"" << ly + 26
    << "\">TeamShift beats Shift)</text>\n";
  ly += 14;
  ly += 30;
  s << "<text x=\"" << legend_x << "\" y=\"" << ly << "\" fill=\"#444\" font-size=\"11\">NeighborAlltoall sends"
    << "</text>\n<text x=\"" << legend_x << "\" y=\"" << ly + 14 << "\" fill=\"#444\" font-size=\"11\">"
    << "SingleHop's messages: same prediction</text>\n";
  s << "</svg>\n";
  std::ofstream out(path);
  if (!out) throw haloshift::error("--svg " + path + ": cannot be written");
  out << s.str();
}

}  // namespace advise

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file fit.hpp
/// @brief Fitting Hockney parameters to ping-pong samples: the two methods of
/// the Shift paper (sec. 4.4), the fastest-20 % filter (sec. 6.2.3) and a
/// two-piece fit split at the eager-to-rendezvous knee.

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "../../error.hpp"
#include "../cost/hockney.hpp"

/// Fitting Hockney models to timed messages.
namespace haloshift::detail::fit {

/// One timed one-way message (half a round trip).
struct sample {
  /// Message size.
  double bytes;
  /// One-way time.
  double seconds;
};

/// Keeps, per message size, the fastest `fraction` of the samples (the
/// papers' observation: the fastest 20 % predict "stunningly" well).
inline std::vector<sample> fastest(const std::vector<sample>& all, double fraction) {
  if (!(fraction > 0 && fraction <= 1)) throw error("fit::fastest: fraction must lie in (0, 1], got " + std::to_string(fraction));
  std::map<double, std::vector<double>> by_size;
  for (const sample& s : all) by_size[s.bytes].push_back(s.seconds);
  std::vector<sample> out;
  for (auto& [bytes, times] : by_size) {
    std::sort(times.begin(), times.end());
    const auto keep = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(fraction * times.size())));
    for (std::size_t i = 0; i < keep; ++i) out.push_back({bytes, times[i]});
  }
  return out;
}

/// Mean time per message size, sorted by size.
inline std::vector<sample> means(const std::vector<sample>& all) {
  std::map<double, std::pair<double, int>> acc;
  for (const sample& s : all) {
    acc[s.bytes].first += s.seconds;
    ++acc[s.bytes].second;
  }
  std::vector<sample> out;
  for (const auto& [bytes, sum] : acc) out.push_back({bytes, sum.first / sum.second});
  return out;
}

/// The closest non-decreasing sequence to `values` in least squares (pool
/// adjacent violators): a measured time per size that dips, because a
/// repetition was lucky, is averaged with its neighbours instead of giving a
/// negative slope.
inline std::vector<double> non_decreasing(const std::vector<double>& values) {
  std::vector<double> mean;          // pooled blocks: their mean
  std::vector<std::size_t> count;    // and how many values each holds
  for (double v : values) {
    mean.push_back(v);
    count.push_back(1);
    while (mean.size() > 1 && mean[mean.size() - 2] > mean.back()) {
      const std::size_t n = count.back() + count[count.size() - 2];
      const double m = (mean.back() * static_cast<double>(count.back()) +
                        mean[mean.size() - 2] * static_cast<double>(count[count.size() - 2])) / static_cast<double>(n);
      mean.pop_back();
      count.pop_back();
      mean.back() = m;
      count.back() = n;
    }
  }
  std::vector<double> out;
  for (std::size_t b = 0; b < mean.size(); ++b) out.insert(out.end(), count[b], mean[b]);
  return out;
}

/// Method 1 of the Shift paper: alpha is the mean time of empty messages,
/// the per-size means become a table (beta per size), interpolated between sizes.
inline hockney per_size_means(const std::vector<sample>& all, double gamma = -1) {
  std::vector<std::pair<double, double>> points;
  for (const sample& s : means(all)) points.emplace_back(s.bytes, s.seconds);
  if (points.empty() || points.front().first != 0)
    throw error("fit::per_size_means: the samples must include empty (0-byte) messages for alpha");
  return hockney::from_table(points, gamma);
}

/// Weighted least-squares line (intercept, slope) through the samples,
/// sample `s` counting `weight(s)` (0: not at all).
template <class Weight>
std::pair<double, double> weighted_line(const std::vector<sample>& all, Weight&& weight) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const sample& s : all)
    if (const double w = weight(s); w > 0) {
      n += w;
      sx += w * s.bytes;
      sy += w * s.seconds;
      sxx += w * s.bytes * s.bytes;
      sxy += w * s.bytes * s.seconds;
    }
  const double d = n * sxx - sx * sx;
  if (n <= 0 || !(d > 0)) throw error("fit::line: need samples of at least two sizes");
  const double beta = (n * sxy - sx * sy) / d;
  return {(sy - beta * sx) / n, beta};
}

/// Least-squares line through the samples of sizes in [from, to]. With
/// `relative`, each sample is weighted by 1/t^2, so small and large messages
/// count by their relative error (plain least squares lets the largest sizes
/// decide alpha alone).
inline std::pair<double, double> line(const std::vector<sample>& all, double from = 0,
                                      double to = std::numeric_limits<double>::infinity(), bool relative = false) {
  return weighted_line(all, [&](const sample& s) {
    if (s.bytes < from || s.bytes > to) return 0.0;
    return relative ? 1.0 / std::max(s.seconds * s.seconds, 1e-30) : 1.0;
  });
}

/// Method 2 of the Shift paper: one linear regression over all sizes.
inline hockney linear_regression(const std::vector<sample>& all, double gamma = -1) {
  const auto [alpha, beta] = line(all);
  return hockney(std::max(alpha, 0.0), std::max(beta, 0.0), gamma);
}

/// Two lines split at the size that minimises the squared relative error: the knee
/// where MPI switches from eager to rendezvous. Returns the piecewise model
/// and the knee in bytes (0 when one line fits best).
inline std::pair<hockney, double> two_piece(const std::vector<sample>& all, double gamma = -1) {
  std::vector<sample> avg = means(all);
  auto error_of = [&](double a, double b, double from, double to) {
    double e = 0;
    for (const sample& s : avg)
      if (s.bytes >= from && s.bytes <= to) e += std::pow((a + b * s.bytes - s.seconds) / std::max(s.seconds, 1e-30), 2);
    return e;
  };
  const auto [a0, b0] = line(avg, 0, std::numeric_limits<double>::infinity(), true);
  double best = error_of(a0, b0, 0, std::numeric_limits<double>::infinity()), knee = 0;
  // One line that misses the means by under 2 % (relative RMS) needs no knee.
  if (std::sqrt(best / static_cast<double>(avg.size())) < 0.02)
    return {hockney(std::max(a0, 0.0), std::max(b0, 0.0), gamma), 0.0};
  hockney model(std::max(a0, 0.0), std::max(b0, 0.0), gamma);
  for (std::size_t split = 2; split + 2 <= avg.size(); ++split) {
    const double lo_end = avg[split - 1].bytes, hi_start = avg[split].bytes;
    const auto [a1, b1] = line(avg, 0, lo_end, true);
    const auto [a2, b2] = line(avg, hi_start, std::numeric_limits<double>::infinity(), true);
    const double e = error_of(a1, b1, 0, lo_end) + error_of(a2, b2, hi_start, std::numeric_limits<double>::infinity());
    if (e < 0.5 * best) {  // a knee must explain clearly more than one line does
      best = e;
      knee = hi_start;
      const double g = gamma < 0 ? std::max(a1, 0.0) : gamma;
      model = hockney::piecewise({{0, std::max(a1, 0.0), std::max(b1, 0.0)}, {hi_start, std::max(a2, 0.0), std::max(b2, 0.0)}}, g);
    }
  }
  return {model, knee};
}

}  // namespace haloshift::detail::fit

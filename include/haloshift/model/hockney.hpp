#pragma once
/// @file hockney.hpp
/// @brief Time of one message: Hockney's alpha + beta * m, piecewise where
/// the protocol changes (eager / rendezvous) or from a measured table, plus
/// the injection gap gamma for messages posted together.

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"

namespace haloshift {

/// Message time as a function of its size: piecewise linear in bytes. The
/// simplest model is one piece, `alpha + beta * m`. `gamma` is the part of
/// `alpha` a sender pays per message when it posts several at once (the rest
/// overlaps): a burst of `n` messages of `m` bytes takes
/// `alpha + (n - 1) * gamma + n * beta * m`. `gamma = alpha` is the papers'
/// model (every message fully serialized); `gamma = 0` overlaps all latency.
class hockney {
public:
  /// One linear piece, valid from `from_bytes` on (until the next piece).
  struct piece {
    double from_bytes;
    double alpha;  ///< seconds
    double beta;   ///< seconds per byte
  };

  hockney() = default;
  /// `alpha` seconds, `beta` seconds per byte, `gamma` seconds per extra message in a burst (default: alpha).
  hockney(double alpha, double beta, double gamma = -1)
      : pieces_{{0, alpha, beta}}, gamma_(gamma < 0 ? alpha : gamma) {
    if (!(alpha >= 0)) throw error("hockney: alpha must be >= 0, got " + std::to_string(alpha));
    if (!(beta >= 0)) throw error("hockney: beta must be >= 0, got " + std::to_string(beta));
    validate();
  }

  /// Piecewise linear (e.g. split at the eager / rendezvous threshold).
  static hockney piecewise(std::vector<piece> pieces, double gamma) {
    hockney h;
    h.pieces_ = std::move(pieces);
    h.gamma_ = gamma;
    h.validate();
    return h;
  }

  /// Interpolates a measured table of (bytes, seconds) points, the way the
  /// papers feed their ping-pong averages to the model; beyond the last point
  /// the last segment is extended. `gamma` defaults to the time of 0 bytes.
  static hockney from_table(std::vector<std::pair<double, double>> points, double gamma = -1) {
    if (points.empty()) throw error("hockney::from_table: the table is empty");
    std::sort(points.begin(), points.end());
    hockney h;
    h.pieces_.clear();
    if (points.size() == 1) {
      h.pieces_ = {{points[0].first, points[0].second, 0}};
    } else {
      for (std::size_t i = 0; i + 1 < points.size(); ++i) {
        const auto [m0, t0] = points[i];
        const auto [m1, t1] = points[i + 1];
        if (m1 == m0) throw error("hockney::from_table: two points at " + std::to_string(m0) + " bytes");
        const double beta = (t1 - t0) / (m1 - m0);
        h.pieces_.push_back({i == 0 ? 0.0 : m0, t0 - beta * m0, beta});
      }
    }
    h.gamma_ = gamma < 0 ? h.time(0) : gamma;
    h.validate();
    return h;
  }

  /// Time of one message of `bytes` bytes, alone.
  double time(double bytes) const noexcept {
    const piece& p = at(bytes);
    return p.alpha + p.beta * bytes;
  }
  /// Latency part of a message of that size (the time of its first byte).
  double alpha(double bytes = 0) const noexcept { return at(bytes).alpha; }
  /// Transfer part: seconds per byte at that size.
  double beta(double bytes = 0) const noexcept { return at(bytes).beta; }
  double gamma() const noexcept { return gamma_; }
  const std::vector<piece>& pieces() const noexcept { return pieces_; }

private:
  const piece& at(double bytes) const noexcept {
    std::size_t i = 0;
    while (i + 1 < pieces_.size() && pieces_[i + 1].from_bytes <= bytes) ++i;
    return pieces_[i];
  }
  void validate() const {
    if (pieces_.empty()) throw error("hockney: no pieces");
    for (std::size_t i = 0; i < pieces_.size(); ++i) {
      const piece& p = pieces_[i];
      // Measured tables may dip (noise), so slopes may be negative; they must be numbers.
      if (!(p.alpha == p.alpha) || !(p.beta == p.beta) || p.from_bytes < 0)
        throw error("hockney: piece " + std::to_string(i) + " has invalid alpha " + std::to_string(p.alpha) +
                    " or beta " + std::to_string(p.beta));
      if (i && p.from_bytes <= pieces_[i - 1].from_bytes)
        throw error("hockney: pieces must start at increasing sizes");
    }
    if (!(gamma_ >= 0)) throw error("hockney: gamma must be >= 0, got " + std::to_string(gamma_));
  }

  std::vector<piece> pieces_{{0, 0, 0}};
  double gamma_ = 0;
};

}  // namespace haloshift

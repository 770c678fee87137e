// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file hockney.hpp
/// @brief Time of one message: Hockney's alpha + beta * m, piecewise where
/// the protocol changes (eager / rendezvous) or from a measured table, plus
/// the injection gap gamma for messages posted together.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../../error.hpp"

namespace haloshift {

/// Message time as a function of its size: piecewise linear in bytes. The
/// simplest model is one piece, `alpha + beta * m`. `gamma` is the part of
/// `alpha` a sender pays per message when it posts several at once (the rest
/// overlaps): a burst of `n` messages of `m` bytes takes
/// `alpha + (n - 1) * gamma + n * beta * m`. `gamma = alpha` is the papers'
/// model (every message fully serialized); `gamma = 0` overlaps all latency.
/// A piece may carry its own `gamma`: with a rendezvous protocol above the
/// eager limit each message needs a handshake, and bursts of such messages
/// overlap far less than eager ones. `copy_beta` is the time per byte of a
/// block a rank copies to itself (a periodic dimension shorter than the
/// neighbourhood); 0, the default, treats those copies as free.
///
/// Two terms describe what an exchange pays beyond its messages (both 0 by
/// default, which is the papers' model; docs/model.md, "Rounds and large
/// bursts"). `round_delta` is charged once per dependency step to every rank
/// that communicates in it: per round in overlapping mode (the round's
/// MPI_Waitall: completion, progress, and on an oversubscribed node the wait
/// for the partner to be scheduled), per synchronous message in rendezvous
/// mode. `gamma_growth` makes the gap grow with the burst: a rank posting `n`
/// messages in one round pays `gamma + gamma_growth * (n - 1)` per further
/// message (request bookkeeping and matching that get slower the more are
/// outstanding), so a burst takes
/// `alpha + (n - 1) (gamma + gamma_growth (n - 1)) + n beta m`.
///
/// `device()` holds what an exchange of device memory pays besides (all 0
/// by default: no device charge; docs/model.md, "Device data").
///
/// Two levels (docs/node-aware.md, "The two-level model"): a model may hold a
/// second one, `between_nodes()`, for messages between ranks on different
/// nodes; this one then prices messages inside a node. Without it (the
/// default) every message is priced by this one, exactly as before. The
/// shared-memory path inside a node (a partner copies straight out of the
/// sender's window, no MPI message) costs `shm_alpha() + copy_beta() * m`:
/// a synchronisation latency and one copy.
class hockney {
public:
  /// The costs of a batched exchange of device memory, per round of a rank:
  /// each pack and unpack launch costs `launch`, each byte packed or unpacked
  /// on the device `pack_beta`, and, where messages are staged through the
  /// host, the copy of the round's departures to the host and of its arrivals
  /// back `copy_alpha + copy_beta * bytes` each (one copy per direction and
  /// round, as detail/batch/batched_round.hpp makes them).
  struct device_terms {
    double launch = 0;      ///< seconds per launch
    double pack_beta = 0;   ///< seconds per byte packed or unpacked on the device
    double copy_alpha = 0;  ///< seconds per copy between device and host
    double copy_beta = 0;   ///< seconds per byte of such a copy
    /// Whether any is charged (a calibration that measured a device).
    bool any() const noexcept { return launch > 0 || pack_beta > 0 || copy_alpha > 0 || copy_beta > 0; }
  };

  /// One linear piece, valid from `from_bytes` on (until the next piece).
  struct piece {
    /// Smallest message size, in bytes, the piece applies to.
    double from_bytes;
    double alpha;  ///< seconds
    double beta;   ///< seconds per byte
    /// Injection gap for messages of this piece; NaN (the default): the model's gamma. It may be
    /// negative where a measured table's gap grows faster than its time (model/calibration/round_table.hpp):
    /// what must not be negative is a message's injection, gamma + beta m, where the piece starts.
    double gamma = std::numeric_limits<double>::quiet_NaN();
  };

  hockney() = default;
  /// `alpha` seconds, `beta` seconds per byte, `gamma` seconds per extra message in a burst (default: alpha).
  hockney(double alpha, double beta, double gamma = -1)
      : pieces_{{0, alpha, beta}}, gamma_(gamma < 0 ? alpha : gamma) {
    if (!(alpha >= 0)) throw error("hockney: alpha must be >= 0, got " + detail::number_text(alpha));
    if (!(beta >= 0)) throw error("hockney: beta must be >= 0, got " + detail::number_text(beta));
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
  /// Injection gap for messages of `bytes` posted together with others.
  double gamma(double bytes = 0) const noexcept {
    const piece& p = at(bytes);
    return p.gamma == p.gamma ? p.gamma : gamma_;
  }
  /// Gap between the messages of a burst of `n` messages of `bytes` each.
  double gap(double bytes, double n) const noexcept { return gamma(bytes) + gamma_growth_ * (n - 1); }
  /// Time until the last of `n` messages of `bytes` posted together completes (0 for none):
  /// `alpha + (n - 1) gap + n beta m`, without the round's delta.
  double burst(double n, double bytes) const noexcept {
    return n > 0 ? alpha(bytes) + (n - 1) * gap(bytes, n) + n * beta(bytes) * bytes : 0.0;
  }
  /// Seconds per byte of a copy to the rank itself.
  double copy_beta() const noexcept { return copy_beta_; }
  /// Seconds per dependency step (round, or synchronous message) of a rank that communicates in it.
  double round_delta() const noexcept { return round_delta_; }
  /// Seconds the gap grows by per further message posted in the same round.
  double gamma_growth() const noexcept { return gamma_growth_; }
  /// The same model with local copies costing `seconds_per_byte`.
  hockney with_copy_beta(double seconds_per_byte) const {
    return with(&hockney::copy_beta_, "copy_beta", seconds_per_byte);
  }
  /// The same model with `seconds` per dependency step.
  hockney with_round_delta(double seconds) const { return with(&hockney::round_delta_, "round_delta", seconds); }
  /// The same model with the gap growing by `seconds` per further message of a burst.
  hockney with_gamma_growth(double seconds) const { return with(&hockney::gamma_growth_, "gamma_growth", seconds); }
  /// The device terms (all 0: data in host memory costs no more).
  const device_terms& device() const noexcept { return device_; }
  /// The same model with device terms `d` (each >= 0 and finite).
  hockney with_device(const device_terms& d) const {
    const std::pair<double, const char*> terms[] = {
        {d.launch, "launch"}, {d.pack_beta, "pack_beta"}, {d.copy_alpha, "copy_alpha"}, {d.copy_beta, "copy_beta"}};
    for (const auto& [value, name] : terms)
      if (!(value >= 0) || std::isinf(value))
        throw error(std::string("hockney: device term ") + name + " must be >= 0 and finite, got " +
                    detail::number_text(value));
    hockney h = *this;
    h.device_ = d;
    return h;
  }
  /// The model of messages between nodes, or null: one level, this model for every message.
  const hockney* between_nodes() const noexcept { return between_.get(); }
  /// The same model pricing messages inside a node, with `between` (its own second level ignored)
  /// pricing those between nodes.
  hockney with_between_nodes(const hockney& between) const {
    hockney h = *this;
    hockney outer = between;
    outer.between_.reset();
    h.between_ = std::make_shared<const hockney>(std::move(outer));
    return h;
  }
  /// The same model with one level again.
  hockney one_level() const {
    hockney h = *this;
    h.between_.reset();
    return h;
  }
  /// Seconds of the synchronisation of one transfer by the shared-memory path inside a node.
  double shm_alpha() const noexcept { return shm_alpha_; }
  /// The same model with `seconds` per shared-memory transfer.
  hockney with_shm_alpha(double seconds) const { return with(&hockney::shm_alpha_, "shm_alpha", seconds); }
  /// The linear pieces, by ascending `from_bytes` (one for a plain model).
  const std::vector<piece>& pieces() const noexcept { return pieces_; }

private:
  hockney with(double hockney::*field, const char* name, double value) const {
    if (!(value >= 0)) throw error(std::string("hockney: ") + name + " must be >= 0, got " + detail::number_text(value));
    hockney h = *this;
    h.*field = value;
    return h;
  }
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
      if (!(p.alpha == p.alpha) || !(p.beta == p.beta) || std::isinf(p.gamma) || p.from_bytes < 0)
        throw error("hockney: piece " + std::to_string(i) + " has invalid alpha " + detail::number_text(p.alpha) +
                    ", beta " + detail::number_text(p.beta) + " or gamma " + detail::number_text(p.gamma));
      if (p.gamma + p.beta * p.from_bytes < 0)
        throw error("hockney: piece " + std::to_string(i) + " has gamma " + detail::number_text(p.gamma) +
                    ": a message of " + std::to_string(p.from_bytes) + " bytes would take negative time to inject");
      if (i && p.from_bytes <= pieces_[i - 1].from_bytes)
        throw error("hockney: pieces must start at increasing sizes");
    }
    if (!(gamma_ >= 0)) throw error("hockney: gamma must be >= 0, got " + std::to_string(gamma_));
  }

  std::vector<piece> pieces_{{0, 0, 0}};
  double gamma_ = 0;
  double copy_beta_ = 0;
  double round_delta_ = 0;
  double gamma_growth_ = 0;
  device_terms device_{};
  double shm_alpha_ = 0;
  std::shared_ptr<const hockney> between_{};  // null: one level
};

}  // namespace haloshift

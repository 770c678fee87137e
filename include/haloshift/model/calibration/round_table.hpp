// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file round_table.hpp
/// @brief A message-time model measured from exchange rounds of every rank at
/// once, size by size: what an exchange costs where a ping-pong between two
/// otherwise idle ranks does not describe it (ranks sharing cores, a
/// transport whose cost per message changes with the load).
///
/// Ping-pong parameters assume the rest of the machine is idle. On a node
/// with more ranks than cores, every rank of an exchange competes for the
/// CPU that moves its bytes, and each dependent round waits for partners to
/// be scheduled; the all-pairs ping-pong (`--loaded`) sees some of this but
/// measures one message at a time. Here the two quantities the max-plus
/// simulation uses are measured directly, per size `m`, with every rank
/// running the executor's rounds (all receives, all sends, MPI_Waitall):
///
/// * `per_round(m)`: a chain of rounds of two messages of `m` bytes, time
///   per round (a Shift step sends two);
/// * `gap(m)`: a chain of rounds of `n` messages, time per round beyond the
///   two-message round's, per further message.
///
/// In the model a round of `n` messages takes `t(m) + (n - 1) (gamma(m) +
/// beta(m) m)` (hockney::burst), so a table point gives `t(m) = per_round -
/// gap` and `gamma(m) = gap - beta(m) m`; between points the model is linear
/// (one hockney piece per measured size, round_table_model). The cost per
/// round is part of `t(m)` (`round_delta` 0): a chain cannot tell the two
/// apart.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <mpi.h>

#include "../../error.hpp"
#include "../../detail/mpi/check.hpp"
#include "../cost/hockney.hpp"
#include "fit.hpp"
#include "measure.hpp"

namespace haloshift::detail {

/// What one size of the table measured.
struct round_point {
  /// Message size of this point.
  double bytes = 0;
  double per_round = 0;  ///< seconds per round of a chain of rounds of 2 messages
  double gap = 0;        ///< seconds per further message of a round of `burst` (gap + beta m)
  int burst = 3;         ///< messages per round of the chain the gap was measured with
};

/// Measures one size on every rank of `comm` (collective; the same result
/// everywhere). Both quantities come from chains of rounds, the steady state
/// of a multi-round exchange, where every round waits for the partners of
/// the last (a single round after a barrier is cheaper per message: its
/// ranks start apart and finish apart). Each is a difference of two such
/// times, `chain` rounds against one, so the barrier's skew cancels, and
/// each time is the median over `repetitions` of the slowest rank. Messages
/// are spread over the other ranks as SingleHop's are (message i to the
/// rank 1 + i mod (P - 1) further on). The burst holds up to 32 messages (a
/// gap is a difference divided by the burst, so a long burst resolves it
/// best: SingleHop's 26 on a 3D grid, not Shift's 2, is where it matters),
/// fewer where they would exceed `burst_bytes` per rank (at least 3).
inline round_point measure_round_point(MPI_Comm comm, std::size_t bytes, int repetitions = 11, int chain = 8,
                                       std::size_t burst_bytes = std::size_t{32} << 20) {
  if (bytes == 0) throw error("measure_round_point: bytes must be >= 1, got 0");
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw error("measure_round_point: bytes must fit an MPI count (<= 2^31 - 1), got " + std::to_string(bytes));
  if (repetitions < 1)
    throw error("measure_round_point: repetitions must be >= 1, got " + std::to_string(repetitions));
  if (chain < 2) throw error("measure_round_point: chain must be >= 2, got " + std::to_string(chain));
  round_point p;
  p.bytes = static_cast<double>(bytes);
  p.burst = static_cast<int>(std::clamp<std::size_t>(burst_bytes / bytes, 3, 32));
  auto per_round = [&](int messages) {
    const double one = detail::time_rounds(comm, messages, bytes, 1, repetitions, true);
    const double all = detail::time_rounds(comm, messages, bytes, chain, repetitions, true);
    return std::max(all - one, 0.0) / (chain - 1);
  };
  p.per_round = per_round(2);
  p.gap = std::max(per_round(p.burst) - p.per_round, 0.0) / (p.burst - 2);
  return p;
}

/// The table over `sizes` (collective). `progress(i)` is called after size i on every rank.
inline std::vector<round_point> measure_round_table(MPI_Comm comm, const std::vector<std::size_t>& sizes,
                                                    int repetitions = 11,
                                                    const std::function<void(std::size_t)>& progress = {}) {
  std::vector<round_point> out;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    out.push_back(measure_round_point(comm, sizes[i], repetitions));
    if (progress) progress(i);
  }
  return out;
}

/// The piecewise model of a measured table: one piece per size, after
/// smoothing (per_round, gap and t(m) must not fall with size;
/// detail::fit::non_decreasing pools the dips of noise). A burst multiplies the gap,
/// so the gap is the one kept exact: each piece's beta is the slope of the
/// gap to the next size (the last piece keeps the slope before it), which
/// makes `gamma + beta m` pass through every measured gap, and alpha puts
/// `t(m)` on the measured value where the piece starts (it then rises with
/// the gap's slope to the next size). `gamma_growth` (from
/// measure_exchange_terms: how the gap grows with the burst) is kept, and
/// taken out of each measured gap at its burst size, so the gap of a burst
/// of `n` is `gamma(m) + gamma_growth (n - 1)` as everywhere else.
inline hockney round_table_model(std::vector<round_point> points, double gamma_growth = 0) {
  if (points.size() < 2) throw error("round_table_model: need at least 2 sizes, got " + std::to_string(points.size()));
  std::sort(points.begin(), points.end(), [](const round_point& a, const round_point& b) { return a.bytes < b.bytes; });
  std::vector<double> per_round, gap;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i && points[i].bytes == points[i - 1].bytes)
      throw error("round_table_model: two points at " + std::to_string(points[i].bytes) + " bytes");
    per_round.push_back(points[i].per_round);
    gap.push_back(points[i].gap);
  }
  per_round = detail::fit::non_decreasing(per_round);
  gap = detail::fit::non_decreasing(gap);
  // t(m): a round of the chain is t(m) plus the gap of a burst of 2, which is the measured gap
  // less its growth from 2 messages to the burst's.
  std::vector<double> single;
  for (std::size_t i = 0; i < points.size(); ++i)
    single.push_back(std::max(per_round[i] - (gap[i] - gamma_growth * (points[i].burst - 2)), 0.0));
  single = detail::fit::non_decreasing(single);
  auto gamma_at = [&](std::size_t i, double beta) {
    return gap[i] - beta * points[i].bytes - gamma_growth * (points[i].burst - 1);
  };
  // Below the smallest size, the smallest size's time (messages of 0 bytes are not sent).
  std::vector<hockney::piece> pieces{{0, single[0], 0, std::max(gamma_at(0, 0), 0.0)}};
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::size_t j = i + 1 < points.size() ? i : i - 1;  // the segment whose slope this piece uses
    const double m = points[i].bytes;
    const double beta = (gap[j + 1] - gap[j]) / (points[j + 1].bytes - points[j].bytes);
    // gamma + beta m is the injection of a message here: >= 0 (gamma alone may not be)
    pieces.push_back({m, single[i] - beta * m, beta, std::max(gamma_at(i, beta), -beta * m)});
  }
  const double first_gamma = pieces.front().gamma;
  return hockney::piecewise(std::move(pieces), first_gamma).with_gamma_growth(gamma_growth);
}

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file measure.hpp
/// @brief The measurements a calibration is made of: ping-pong, the
/// injection gap, the copy speed alone and under load, and rounds shaped like
/// the executor's on every rank (the exchange terms).

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <mpi.h>

#include "../../error.hpp"
#include "../../detail/mpi/check.hpp"
#include "../cost/hockney.hpp"
#include "fit.hpp"

namespace haloshift::detail {

/// Ping-pong between ranks 0 and `partner` of `comm` (with one rank: messages to
/// itself); the two-level calibration picks a partner on rank 0's node and one
/// on another node. Collective; every rank gets the one-way times of every round trip.
inline std::vector<detail::fit::sample> ping_pong(MPI_Comm comm, const std::vector<std::size_t>& sizes, int repetitions,
                                                  int warmup = 2, int partner = 1) {
  int rank = 0, size = 0;
  mpi::check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  if (size > 1 && (partner < 1 || partner >= size))
    throw error("ping_pong: partner must be in [1, " + std::to_string(size - 1) + "], got " + std::to_string(partner));
  const int peer = size == 1 ? rank : rank == 0 ? partner : 0;
  std::vector<double> times;
  std::size_t largest = 1;
  for (std::size_t s : sizes) largest = std::max(largest, s);
  std::vector<char> buffer(largest), back(largest);
  for (std::size_t bytes : sizes)
    for (int rep = -warmup; rep < repetitions; ++rep) {
      double t = 0;
      if (rank == 0 || (size > 1 && rank == partner)) {
        const int n = static_cast<int>(bytes);
        const double start = MPI_Wtime();
        if (size == 1) {
          MPI_Request r[2];
          MPI_Irecv(back.data(), n, MPI_BYTE, peer, 7, comm, &r[0]);
          MPI_Isend(buffer.data(), n, MPI_BYTE, peer, 7, comm, &r[1]);
          MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        } else if (rank == 0) {
          MPI_Send(buffer.data(), n, MPI_BYTE, peer, 7, comm);
          MPI_Recv(back.data(), n, MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(back.data(), n, MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE);
          MPI_Send(buffer.data(), n, MPI_BYTE, peer, 7, comm);
        }
        t = (MPI_Wtime() - start) / (size == 1 ? 1 : 2);
      }
      if (rep >= 0 && rank == 0) times.push_back(t);
    }
  std::vector<double> flat(times.size());
  int count = static_cast<int>(times.size());
  mpi::check(MPI_Bcast(&count, 1, MPI_INT, 0, comm), "MPI_Bcast");
  times.resize(static_cast<std::size_t>(count));
  mpi::check(MPI_Bcast(times.data(), count, MPI_DOUBLE, 0, comm), "MPI_Bcast");
  std::vector<detail::fit::sample> out;
  std::size_t i = 0;
  for (std::size_t bytes : sizes)
    for (int rep = 0; rep < repetitions; ++rep) out.push_back({static_cast<double>(bytes), times[i++]});
  return out;
}

/// The injection gap, measured as an exchange round uses it: ranks 0 and 1
/// each post `burst` receives and then `burst` sends of `bytes` to the other
/// (the executor's overlapping round), so the gap includes posting and
/// matching receives, not only sends; gamma = (burst time - single time -
/// (burst - 1) beta m) / (burst - 1), from the fastest repetition.
inline double measure_gamma(MPI_Comm comm, const hockney& single, std::size_t bytes = 8, int burst = 16,
                            int repetitions = 50) {
  int rank = 0, size = 0;
  mpi::check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  double best = 1e30;
  if (size > 1 && rank <= 1) {
    const std::size_t n = static_cast<std::size_t>(burst);
    std::vector<char> in(bytes * n), out(bytes * n);
    std::vector<MPI_Request> req(2 * n);
    const int peer = 1 - rank, count = static_cast<int>(bytes);
    for (int rep = -2; rep < repetitions; ++rep) {
      MPI_Sendrecv(nullptr, 0, MPI_BYTE, peer, 9, nullptr, 0, MPI_BYTE, peer, 9, comm, MPI_STATUS_IGNORE);  // start together
      const double start = MPI_Wtime();
      for (std::size_t i = 0; i < n; ++i) MPI_Irecv(in.data() + bytes * i, count, MPI_BYTE, peer, 8, comm, &req[i]);
      for (std::size_t i = 0; i < n; ++i) MPI_Isend(out.data() + bytes * i, count, MPI_BYTE, peer, 8, comm, &req[n + i]);
      MPI_Waitall(2 * burst, req.data(), MPI_STATUSES_IGNORE);
      if (rep >= 0) best = std::min(best, MPI_Wtime() - start);
    }
  }
  mpi::check(MPI_Bcast(&best, 1, MPI_DOUBLE, 0, comm), "MPI_Bcast");
  if (size == 1) return single.alpha();
  const double gap = (best - single.time(static_cast<double>(bytes)) -
                      (burst - 1) * single.beta(static_cast<double>(bytes)) * static_cast<double>(bytes)) /
                     (burst - 1);
  return std::clamp(gap, 0.0, single.alpha(static_cast<double>(bytes)));
}

/// Seconds per byte of a rank copying a block to itself (memcpy of `bytes`,
/// by default larger than the L2 cache as halos of large blocks are,
/// between two touched buffers, the median of `repetitions`): what a
/// periodic image costs instead of a message. No MPI.
inline double measure_copy_beta(std::size_t bytes = 8 << 20, int repetitions = 11) {
  if (bytes == 0 || repetitions < 1)
    throw error("measure_copy_beta: bytes and repetitions must be >= 1, got " + std::to_string(bytes) + " and " +
                std::to_string(repetitions));
  std::vector<char> from(bytes, 1), to(bytes, 0);
  std::vector<double> t;
  for (int rep = 0; rep < repetitions; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    from[static_cast<std::size_t>(rep) % bytes] = to[bytes / 2];  // keeps the copies observable
  }
  std::nth_element(t.begin(), t.begin() + repetitions / 2, t.end());
  return t[static_cast<std::size_t>(repetitions / 2)] / static_cast<double>(bytes);
}

/// Seconds per byte of the copies of every rank of `comm` at once: each
/// rank copies `bytes` `passes` times after a barrier, and per node the time
/// from the first rank's start to the last rank's end counts, per byte one
/// rank copied (the slowest node; median of `repetitions`). Where ranks
/// share cores this is the share of a core a rank gets, which is what its
/// packing and its copies to itself cost during an exchange; with a core per
/// rank it is about measure_copy_beta(). The span must be the node's, not
/// each rank's own: a rank the scheduler runs only after its core-mates
/// starts its own clock late, and then every rank alone looks as fast as a
/// rank with a core to itself. Collective; the same result on every rank.
inline double measure_copy_beta_loaded(MPI_Comm comm, std::size_t bytes = 8 << 20, int passes = 4,
                                       int repetitions = 5) {
  if (bytes == 0 || passes < 1 || repetitions < 1)
    throw error("measure_copy_beta_loaded: bytes, passes and repetitions must be >= 1, got " + std::to_string(bytes) +
                ", " + std::to_string(passes) + " and " + std::to_string(repetitions));
  MPI_Comm node = MPI_COMM_NULL;  // ranks that share a clock (and the cores)
  mpi::check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  std::vector<char> from(bytes, 1), to(bytes, 0);
  std::vector<double> t;
  auto now = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  for (int rep = -1; rep < repetitions; ++rep) {  // one warm-up
    mpi::check(MPI_Barrier(comm), "MPI_Barrier");
    double span[2] = {-now(), 0};  // -start (the max gives the earliest start) and the end
    for (int pass = 0; pass < passes; ++pass) {
      std::memcpy(to.data(), from.data(), bytes);
      from[static_cast<std::size_t>(pass + rep + 1) % bytes] = to[bytes / 2];  // keeps the copies observable
    }
    span[1] = now();
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, span, 2, MPI_DOUBLE, MPI_MAX, node), "MPI_Allreduce");
    double elapsed = span[1] + span[0];
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
    if (rep >= 0) t.push_back(elapsed);
  }
  mpi::check(MPI_Comm_free(&node), "MPI_Comm_free");
  std::nth_element(t.begin(), t.begin() + repetitions / 2, t.end());
  return t[static_cast<std::size_t>(repetitions / 2)] / (static_cast<double>(bytes) * passes);
}

/// `rounds` overlapping rounds back to back on every rank of `comm`, as the
/// executor runs a round: `n` receives, then `n` sends of `bytes` (tag i for
/// message i), then MPI_Waitall. With `spread`, message i goes to the rank
/// 1 + i mod (P - 1) further on, so a burst reaches every other rank as
/// SingleHop's does; otherwise to the ring neighbour rank + 1 for even i and
/// rank - 1 for odd i, as a Shift step's two messages do. Each repetition
/// starts after a barrier and counts the slowest rank; returns the median,
/// which is what the validation benchmark compares with.
inline double time_rounds(MPI_Comm comm, int n, std::size_t bytes, int rounds, int repetitions, bool spread) {
  int rank = 0, size = 0;
  mpi::check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const int count = static_cast<int>(bytes);
  auto distance = [&](std::size_t i) {  // how far on message i goes (and from how far back it comes)
    if (spread) return size > 1 ? 1 + static_cast<int>(i % static_cast<std::size_t>(size - 1)) : 0;
    return i % 2 ? size - 1 : 1;
  };
  auto to = [&](std::size_t i) { return (rank + distance(i)) % size; };
  auto from = [&](std::size_t i) { return (rank + size - distance(i)) % size; };
  const auto messages = static_cast<std::size_t>(n);
  // Every send of a round reads the same block, as an exchange's do (SingleHop sends the rank's
  // block to every neighbour, a Shift step the same slab both ways): what the transport reads
  // then stays in cache, which at large sizes makes each further message markedly cheaper.
  std::vector<char> in(bytes * messages), out(std::max<std::size_t>(bytes, 1));
  std::vector<MPI_Request> req(2 * messages);
  std::vector<double> times;
  for (int rep = -2; rep < repetitions; ++rep) {
    mpi::check(MPI_Barrier(comm), "MPI_Barrier");
    const double start = MPI_Wtime();
    for (int r = 0; r < rounds; ++r) {
      for (std::size_t i = 0; i < messages; ++i)
        MPI_Irecv(in.data() + bytes * i, count, MPI_BYTE, from(i), static_cast<int>(i), comm, &req[i]);
      for (std::size_t i = 0; i < messages; ++i)
        MPI_Isend(out.data(), count, MPI_BYTE, to(i), static_cast<int>(i), comm, &req[messages + i]);
      mpi::check(MPI_Waitall(2 * n, req.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    }
    double t = MPI_Wtime() - start;
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
    if (rep >= 0) times.push_back(t);
  }
  std::nth_element(times.begin(), times.begin() + repetitions / 2, times.end());
  return times[static_cast<std::size_t>(repetitions / 2)];
}

/// What an exchange pays beyond its ping-pong messages, measured from short
/// real exchanges on every rank of `comm` (so on the rank count and
/// placement of the run: oversubscribed ranks wait for the scheduler here as
/// they do in an exchange).
struct exchange_terms {
  double gamma = 0;         ///< gap between the messages of a burst, extrapolated to a burst of 1
  double gamma_growth = 0;  ///< growth of the gap per further message in the burst
  double round_delta = 0;   ///< cost per round (dependency step) beyond its messages
  std::vector<detail::fit::sample> gaps;  ///< (messages - 1, measured gap): what the gap fit used
  double round_seconds = 0;       ///< measured time per round of the chain
};

/// Fits the terms to measured `x.gaps` and `x.round_seconds` (what
/// measure_exchange_terms times): a line through the gaps over n - 1 gives
/// gamma (intercept, clamped to [0, alpha]) and gamma_growth (slope, >= 0);
/// delta is the time per round beyond the model's round of 2 messages
/// (>= 0). One gap only: gamma is that gap and does not grow. The gap of n
/// messages is a time difference divided by n - 1, so its error shrinks
/// like 1 / (n - 1): the fit weighs it by (n - 1)^2, i.e. it fits the
/// measured times, not the quotients (when ranks wait for the scheduler, a
/// burst of 4 varies by tens of microseconds, which would be a gap of 10 us).
inline exchange_terms fit_exchange_terms(exchange_terms x, const hockney& single, double bytes = 8) {
  const double alpha = single.alpha(bytes);
  if (x.gaps.size() >= 2) {
    const auto [gamma, growth] =
        detail::fit::weighted_line(x.gaps, [](const detail::fit::sample& s) { return s.bytes * s.bytes; });
    x.gamma = std::clamp(gamma, 0.0, alpha);
    x.gamma_growth = std::max(growth, 0.0);
  } else {
    x.gamma = x.gaps.empty() ? alpha : std::clamp(x.gaps[0].seconds, 0.0, alpha);
    x.gamma_growth = 0;
  }
  const hockney fitted = hockney(alpha, single.beta(bytes), x.gamma).with_gamma_growth(x.gamma_growth);
  x.round_delta = std::max(x.round_seconds - fitted.burst(2, bytes), 0.0);
  return x;
}

/// Bursts: one round of n = 4, 16, ... up to `max_burst` messages of 8 B,
/// spread over all other ranks, against one of 1 message; the gap is
/// (T(n) - T(1)) / (n - 1) - beta m.
/// Chain: `chain` rounds of 2 messages back to back against one such round,
/// (T(chain) - T(1)) / (chain - 1) per round (the barrier's skew, paid once,
/// cancels). Then fit_exchange_terms. Collective; with one rank (an exchange
/// sends no messages) gamma = alpha and no further terms.
inline exchange_terms measure_exchange_terms(MPI_Comm comm, const hockney& single, int max_burst = 1024,
                                             int chain = 32, int repetitions = 11) {
  int size = 0;
  mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  exchange_terms x;
  if (size == 1) return fit_exchange_terms(x, single);
  const std::size_t bytes = 8;
  const double beta_m = single.beta(bytes) * bytes;
  const double one = detail::time_rounds(comm, 1, bytes, 1, repetitions, true);
  for (int n = 4; n <= max_burst; n *= 4)
    x.gaps.push_back({n - 1.0, (detail::time_rounds(comm, n, bytes, 1, repetitions, true) - one) / (n - 1) - beta_m});
  const double pair = detail::time_rounds(comm, 2, bytes, 1, repetitions, false);
  x.round_seconds = (detail::time_rounds(comm, 2, bytes, chain, repetitions, false) - pair) / (chain - 1);
  return fit_exchange_terms(x, single, bytes);
}

}  // namespace haloshift::detail

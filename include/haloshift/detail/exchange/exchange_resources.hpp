// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file exchange_resources.hpp
/// @brief What a plan's exchanges run in: staging, request handles, and the
/// batch caches of its executors, sized when the plan is built.

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <memory>
#include <tuple>
#include <vector>

#include "../batch/batch_cache.hpp"
#include "../compiled.hpp"
#include "aligned_buffer.hpp"
#include "background_thread.hpp"
#include "program.hpp"
#include "shared_window.hpp"

namespace haloshift::detail {

/// Staging an exchange of `p` needs, in elements: one array stages only what
/// cannot go in place (the program says where); several arrays stage every
/// message of a round, one after another.
inline std::size_t staging_elements(const program& p, bool backward, bool single) {
  if (single) return p.scratch[backward ? 1 : 0];
  std::size_t most = 0;
  for (const round_program& r : p.rounds) {
    std::size_t round = 0;
    for (const transfer_program& t : r.transfers) round += t.send.count + t.recv.count;
    most = std::max(most, round);
  }
  return most;
}

/// What a plan's exchanges run in: staging space and request handles. Owned
/// by the plan (at a stable address, so a plan may be moved while an exchange
/// is in flight) and sized when the plan is built, so that forward, reverse,
/// start, progress and wait allocate nothing. The exchanges of one plan share
/// it, so at most one of them is in flight at a time (`busy`).
class exchange_resources {
 public:
  exchange_resources() = default;
  exchange_resources(const exchange_resources&) = delete;
  exchange_resources& operator=(const exchange_resources&) = delete;
  /// Out of line with HALOSHIFT_COMPILED: destroying the window and the batch caches is a builder's
  /// work, not code generated in every file that holds a plan.
  HALOSHIFT_BUILDER ~exchange_resources();

  /// Staging for `elements` elements of T. Grows only when an element type
  /// larger than the plan was sized for needs more (once per such type).
  template <class T>
  T* staging(std::size_t elements) {
    const std::size_t bytes = elements * sizeof(T);
    if (bytes > bytes_.size()) bytes_.resize(bytes);
    return reinterpret_cast<T*>(bytes_.data());
  }
  /// Sizes the staging for `element_size`-byte elements of `p` (either
  /// direction; `single`: of one array, else of several moved together), plus
  /// `extra_bytes`, and the request list for its largest round.
  void reserve(const program& p, std::size_t element_size, bool single = true, std::size_t extra_bytes = 0) {
    const std::size_t bytes =
        std::max(staging_elements(p, false, single), staging_elements(p, true, single)) * element_size + extra_bytes;
    if (bytes > bytes_.size()) bytes_.resize(bytes);
    forget_batches();
    std::size_t requests_needed = 1;  // a neighbourhood collective's one request
    for (const round_program& r : p.rounds) requests_needed = std::max(requests_needed, 2 * r.transfers.size());
    requests.reserve(requests_needed);
  }

  /// The batch cache of executor `key` (one per memory space or thread count), made by `make`
  /// on first use.
  template <class Make>
  batch::batch_cache& batches(const void* key, int variant, Make&& make) {
    for (auto& [k, v, cache] : batches_)
      if (k == key && v == variant) return *cache;
    batches_.emplace_back(key, variant, std::make_unique<batch::batch_cache>(make()));
    return *std::get<2>(batches_.back());
  }
  /// Forgets every batched program (the plan's programs were rebuilt in place).
  void forget_batches() noexcept {
    for (auto& b : batches_) std::get<2>(b)->clear();
  }

  std::vector<MPI_Request> requests;  ///< the current round's
  bool busy = false;                  ///< an exchange is in flight
  /// The first exception the reduction of the exchange in flight raised (completing_op): kept here,
  /// at the plan's stable address, while the run goes on to complete its messages.
  std::exception_ptr failure;
  /// The shared-memory path's window and routes (plan_options::shared_memory), for the plan's program.
  std::unique_ptr<shared_window> window;
  /// The thread split-phase exchanges run on (plan_options::background); null without.
  std::unique_ptr<background_thread> background;

 private:
  aligned_vector<std::byte> bytes_;
  std::vector<std::tuple<const void*, int, std::unique_ptr<batch::batch_cache>>> batches_;
};

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER exchange_resources::~exchange_resources() = default;
#endif

}  // namespace haloshift::detail

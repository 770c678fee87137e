// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file measure_device.hpp
/// @brief The device terms of a calibration (hockney::device_terms),
/// measured through a batched exchange's executor (detail/batch/segment.hpp):
/// what a launch costs, packing on the device per byte, and the copies
/// between device and host. Through the interface, so that it measures a GPU
/// as well as the emulated device (memory/emulated_device.hpp) in tests.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../../detail/batch/segment.hpp"
#include "../../error.hpp"
#include "../cost/hockney.hpp"

namespace haloshift::detail {

/// Executor memory, freed with the executor's own call (pinned host memory with `pinned`).
struct executor_buffer {
  batch::executor& x;
  std::size_t bytes;
  bool pinned;
  void* p;
  executor_buffer(batch::executor& on, std::size_t n, bool host = false)
      : x(on), bytes(n), pinned(host), p(host ? on.allocate_pinned(n) : on.allocate(n)) {}
  executor_buffer(const executor_buffer&) = delete;
  executor_buffer& operator=(const executor_buffer&) = delete;
  ~executor_buffer() { pinned ? x.deallocate_pinned(p, bytes) : x.deallocate(p, bytes); }
  std::byte* data() const noexcept { return static_cast<std::byte*>(p); }
};

/// The median over `repetitions` of the seconds `f()` takes, each followed by x.synchronize()
/// (after one warm-up), divided by `per`.
template <class F>
double median_seconds(batch::executor& x, int repetitions, double per, F&& f) {
  std::vector<double> t;
  for (int rep = -1; rep < repetitions; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    f();
    x.synchronize();
    if (rep >= 0) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / per);
  }
  std::nth_element(t.begin(), t.begin() + repetitions / 2, t.end());
  return t[static_cast<std::size_t>(repetitions / 2)];
}

/// The slope between a small and a large measurement, per byte: the large one alone (an upper
/// bound) where noise makes the difference not positive.
inline double per_byte(double small_seconds, double large_seconds, double small_bytes, double large_bytes) {
  const double slope = (large_seconds - small_seconds) / (large_bytes - small_bytes);
  return slope > 0 ? slope : large_seconds / large_bytes;
}

/// Measures `x`'s device terms with `bytes` bytes (>= 4096, a multiple of 128) in one launch or
/// copy: `launch` from batches of launches of one 8-byte row, `pack_beta` from a pack of rows of
/// 64 bytes every 128 (a face's strided rows into contiguous staging) against the 8-byte launch,
/// `copy_alpha` from copies of 8 bytes to the host and back, `copy_beta` from copies of `bytes`.
/// Medians of `repetitions`. Local (no MPI); a calibration broadcasts rank 0's.
inline hockney::device_terms measure_device_terms(batch::executor& x, std::size_t bytes = 4 << 20,
                                                  int repetitions = 9) {
  if (bytes < 4096 || bytes % 128 != 0 || repetitions < 1)
    throw error("measure_device_terms: bytes must be >= 4096 and a multiple of 128 and repetitions >= 1, got " +
                std::to_string(bytes) + " and " + std::to_string(repetitions));
  const executor_buffer source{x, 2 * bytes}, staging{x, bytes}, host{x, bytes, true}, table{x, 2 * sizeof(batch::segment)};
  batch::segment rows[2];
  rows[0].row_bytes = 8;  // the smallest launch: one word
  rows[0].repeat = 1;
  rows[1].row_bytes = 64;  // the pack: every other 64 bytes of the source, packed
  rows[1].repeat = static_cast<std::uint32_t>(bytes / 64);
  rows[1].from_stride = 128;
  rows[1].to_stride = 64;
  for (batch::segment& r : rows) r.to_base = 1;
  x.upload(table.p, rows, sizeof rows);
  batch::bases at;
  at.at[0] = source.data();
  at.at[1] = staging.data();
  const auto* segments = static_cast<const batch::segment*>(table.p);
  const batch::launch tiny{0, 1, 1, 8}, pack{1, 1, bytes / 8, 8};
  constexpr int batch_of = 32;  // launches back to back: their latency, not one synchronisation's
  hockney::device_terms d;
  d.launch = median_seconds(x, repetitions, batch_of, [&] {
    for (int i = 0; i < batch_of; ++i) x.run(segments, tiny, at);
  });
  const double one = median_seconds(x, repetitions, 1, [&] { x.run(segments, tiny, at); });
  const double packed = median_seconds(x, repetitions, 1, [&] { x.run(segments, pack, at); });
  d.pack_beta = per_byte(one, packed, 8, static_cast<double>(bytes));
  const auto round_trip = [&](std::size_t n) {
    return median_seconds(x, repetitions, 2, [&] {
      x.to_host(host.p, staging.p, n);
      x.to_device(staging.p, host.p, n);
    });
  };
  d.copy_alpha = round_trip(8);
  d.copy_beta = per_byte(d.copy_alpha, round_trip(bytes), 8, static_cast<double>(bytes));
  return d;
}

}  // namespace haloshift::detail

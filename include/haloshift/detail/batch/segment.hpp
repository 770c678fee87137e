// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file segment.hpp
/// @brief What a batched exchange hands its executor: every copy of one
/// phase (the packing of a round's departures with its copies to the rank
/// itself, or the unpacking of its arrivals) as one table of strided copies,
/// run as one launch: a GPU kernel, a host loop over emulated device memory,
/// or a loop split among host threads. Plain data, so that the table can live
/// in device memory.
///
/// An executor (batch::executor below; detail/batch/host_threads.hpp,
/// memory/emulated_device.hpp, memory/device.hpp) runs the launches and
/// moves staging between executor memory and the host. Runtime-polymorphic:
/// one virtual call per phase, and one handle type for every memory space.

#include <cstddef>
#include <cstdint>

namespace haloshift::detail::batch {

/// How a launch writes its targets.
enum class batch_op : std::uint8_t {
  copy,  ///< stores: packing, unpacking a forward exchange, copies to the rank itself
  plus,  ///< target = target + source, element by element (a reverse exchange's sum)
  min,   ///< target = min(target, source)
  max,   ///< target = max(target, source)
  /// target = T(double(target) + d), d the double at the row's source (rows of one element): a
  /// periodic shift, one rounding as the host path's (particle positions, from a small table)
  shift,
};

/// The element type a combining launch reads (a copy needs none: it moves bytes).
enum class scalar_kind : std::uint8_t { none, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64 };

/// `repeat` rows of `row_bytes` bytes, from `bases[from_base] + from + r * from_stride` to
/// `bases[to_base] + to + r * to_stride` (r = 0 .. repeat-1). Offsets are in bytes and may be
/// negative only where a view's strides are (never in practice).
struct segment {
  std::int64_t from = 0, to = 0;
  std::int64_t from_stride = 0, to_stride = 0;
  std::uint64_t first_word = 0;  ///< words of the launch's segments before this one (thread mapping)
  std::uint32_t row_bytes = 0;
  std::uint32_t repeat = 0;
  std::uint16_t from_base = 0, to_base = 0;
};

/// The base pointers a launch's offsets count from: the user's arrays first, the staging last.
inline constexpr int max_bases = 16;
struct bases {
  std::byte* at[max_bases] = {};
};

/// One launch: the segments `[first, first + count)` of a phase's table.
struct launch {
  std::size_t first = 0, count = 0;
  std::uint64_t words = 0;        ///< sum over its segments of repeat * row_bytes / word_bytes
  std::uint32_t word_bytes = 1;   ///< 1, 2, 4 or 8: divides every offset, stride and row (and the bases)
  batch_op op = batch_op::copy;
  scalar_kind scalar = scalar_kind::none;  ///< for a combine: the element type; word_bytes is its size
};

/// Runs a batched exchange's phases. Everything but upload and allocation is enqueued in order
/// (on a GPU, on the executor's stream); synchronize() waits for all of it.
class executor {
 public:
  virtual ~executor() = default;
  /// For logs and explain(): "host threads", "emulated device", "cuda", "hip".
  virtual const char* name() const noexcept = 0;
  /// Whether the user's arrays and executor memory can be read from the host (false for a device).
  virtual bool host_accessible() const noexcept = 0;
  /// Whether MPI may read and write executor memory itself (GPU-aware MPI, or host memory):
  /// otherwise messages are staged through pinned host buffers.
  virtual bool mpi_reaches_memory() const noexcept = 0;
  /// Executor memory (staging, segment tables): device memory on a device.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p, std::size_t bytes) noexcept = 0;
  /// Host memory that MPI reads and writes when staging (page-locked on a GPU).
  virtual void* allocate_pinned(std::size_t bytes) = 0;
  virtual void deallocate_pinned(void* p, std::size_t bytes) noexcept = 0;
  /// Host -> executor memory, synchronous (segment tables, once per program).
  virtual void upload(void* to, const void* from, std::size_t bytes) = 0;
  /// Executor memory -> pinned host, enqueued.
  virtual void to_host(void* to, const void* from, std::size_t bytes) = 0;
  /// Pinned host -> executor memory, enqueued.
  virtual void to_device(void* to, const void* from, std::size_t bytes) = 0;
  /// One launch over `table` (executor memory), enqueued.
  virtual void run(const segment* table, const launch& l, const bases& b) = 0;
  /// Waits for everything enqueued.
  virtual void synchronize() = 0;

  // Stream-ordered exchanges (a view whose space names a stream): the exchange enqueues its
  // launches and copies on the caller's stream, after the work already there, and never waits
  // for the whole stream. An executor without streams runs everything at once and keeps these.
  /// Enqueue on `stream` from now on (null: on the executor's own).
  virtual void use_stream(void* stream) { (void)stream; }
  /// Marks the current end of the stream.
  virtual void mark() {}
  /// Whether everything enqueued before the last mark has run (without waiting).
  virtual bool marked_done() {
    synchronize();
    return true;
  }
  /// Waits until everything enqueued before the last mark has run (and nothing enqueued since).
  virtual void wait_mark() { synchronize(); }
};

}  // namespace haloshift::detail::batch

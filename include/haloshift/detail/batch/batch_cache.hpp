// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file batch_cache.hpp
/// @brief What a plan keeps for its batched exchanges through one executor:
/// the executor, each program compiled once per direction and set of arrays
/// (its segment table uploaded to executor memory), and staging in executor
/// memory and, where MPI cannot reach that (or a node's window carries messages:
/// the host copies them), in pinned host memory. Built on a
/// layout's first exchange; later exchanges of the layout allocate nothing.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "../compiled.hpp"
#include "compile.hpp"
#include "segment.hpp"

namespace haloshift::detail::batch {

/// A batched exchange's state as exchange_run uses it.
struct batch_run {
  const compiled_program* program = nullptr;  ///< null: not batched
  const segment* table = nullptr;             ///< the program's table in executor memory
  executor* exec = nullptr;
  std::byte* staging = nullptr;  ///< executor memory: packed departures and arrivals
  std::byte* pinned = nullptr;   ///< where MPI reads and writes them when it cannot reach `staging`
  /// Host memory holding the messages a node's window carries (exchange_run: the shared-memory
  /// path), at their staging offsets: `pinned`, `staging` where the host reaches it, else pinned
  /// memory of their own (MPI reaches `staging` but the host does not: GPU-aware MPI). Null
  /// without a window.
  std::byte* host = nullptr;
  bases at;                      ///< the arrays, then the staging
  scalar_kind kinds[max_bases] = {};  ///< each array's element type, for combines
  batch_op op = batch_op::copy;       ///< how a reverse combines
  void* stream = nullptr;             ///< the caller's stream: the exchange is stream-ordered

  /// `l` with the exchange's operation and its target's element type (combining launches).
  launch with_op(const launch& l) const noexcept {
    launch out = l;
    if (l.op != batch_op::copy) {
      out.op = op;
      out.scalar = kinds[program->table[l.first].to_base];
    }
    return out;
  }
};

class batch_cache {
 public:
  explicit batch_cache(std::unique_ptr<executor> e) : exec_(std::move(e)) {}
  batch_cache(const batch_cache&) = delete;
  batch_cache& operator=(const batch_cache&) = delete;
  ~batch_cache() {
    clear();
    if (staging_) exec_->deallocate(staging_, staging_bytes_);
    if (pinned_) exec_->deallocate_pinned(pinned_, staging_bytes_);
  }

  executor& exec() noexcept { return *exec_; }

  /// `p` compiled for `arrays`, forwards or `backward` (`collective`: its one round through a
  /// neighbourhood collective), with staging to run it; compiled and uploaded on first use.
  /// `window`: the plan has a shared-memory window, whose messages the host copies (batch_run::host).
  batch_run prepare(const program& p, bool backward, std::span<const array_shape> arrays, bool collective,
                    bool window = false) {
    entry* found = nullptr;
    for (entry& e : entries_)
      if (e.p == &p && e.backward == backward && e.collective == collective &&
          std::ranges::equal(e.arrays, arrays, [](const array_shape& a, const array_shape& b) {
            return a.bytes == b.bytes && a.align == b.align;
          }))
        found = &e;
    if (!found) found = &compile(p, backward, arrays, collective);
    if (window && !pinned_ && staging_bytes_ && !exec_->host_accessible())  // once: every program's staging fits it
      pinned_ = static_cast<std::byte*>(exec_->allocate_pinned(staging_bytes_));
    batch_run run;
    run.program = &found->compiled;
    run.table = found->table;
    run.exec = exec_.get();
    run.staging = staging_;
    run.pinned = exec_->mpi_reaches_memory() ? nullptr : pinned_;
    if (window) run.host = exec_->host_accessible() ? staging_ : pinned_;
    run.at.at[arrays.size()] = staging_;
    return run;
  }

  /// Forgets every compiled program (the plan was rebuilt: its programs changed in place).
  void clear() noexcept {
    for (entry& e : entries_)
      if (e.table) exec_->deallocate(e.table, e.table_bytes);
    entries_.clear();
    forget_scratch();
    for (side_launch& s : sides_)
      if (s.memory) exec_->deallocate(s.memory, s.bytes);
    sides_.clear();
  }

  /// Executor memory of `bytes` that a plan keeps under `key` for copies of its own besides the
  /// programs' (a block plan's own block in and out of its halo): allocated on first use, when
  /// `fresh` is set (its contents are for the caller to upload), then the same memory while
  /// `bytes` stays the same. Freed with the cache, or by clear().
  std::byte* scratch(const void* key, std::size_t bytes, bool& fresh) {
    fresh = false;
    for (auto& [k, p, n] : scratch_)
      if (k == key) {
        if (n == bytes) return p;
        exec_->deallocate(std::exchange(p, nullptr), n);
        p = static_cast<std::byte*>(exec_->allocate(bytes));
        n = bytes;
        fresh = true;
        return p;
      }
    scratch_.emplace_back(key, static_cast<std::byte*>(exec_->allocate(bytes)), bytes);
    fresh = true;
    return std::get<1>(scratch_.back());
  }

  /// A payload's own launch beside its programs (a particle plan's periodic shift): `make()`
  /// returns its bytes (its segments, then whatever they read) and the launch over them; built
  /// and uploaded once per `key`, kept until the plan's programs change (clear) like a program's.
  struct side_launch {
    std::vector<std::uint64_t> key;
    launch l;
    std::byte* memory = nullptr;  ///< executor memory: the bytes (the launch's table first)
    std::size_t bytes = 0;
  };
  template <class Make>
  const side_launch& side(std::span<const std::uint64_t> key, Make&& make) {
    for (const side_launch& s : sides_)
      if (std::ranges::equal(s.key, key)) return s;
    const auto [bytes, l] = make();
    side_launch& s = sides_.emplace_back(side_launch{{key.begin(), key.end()}, l, nullptr, bytes.size()});
    if (s.bytes) {
      s.memory = static_cast<std::byte*>(exec_->allocate(s.bytes));
      exec_->upload(s.memory, bytes.data(), s.bytes);
    }
    return s;
  }

 private:
  struct entry {
    const program* p = nullptr;
    bool backward = false, collective = false;
    std::vector<array_shape> arrays;
    compiled_program compiled;
    segment* table = nullptr;  ///< executor memory
    std::size_t table_bytes = 0;
  };

  HALOSHIFT_BUILDER entry& compile(const program& p, bool backward, std::span<const array_shape> arrays,
                                   bool collective);

  void reserve(std::size_t bytes) {
    if (bytes <= staging_bytes_) return;
    const bool had_pinned = pinned_ != nullptr;  // kept for a window's messages (prepare)
    if (staging_) exec_->deallocate(staging_, staging_bytes_);
    if (pinned_) exec_->deallocate_pinned(pinned_, staging_bytes_);
    staging_ = pinned_ = nullptr;
    staging_bytes_ = bytes;
    staging_ = static_cast<std::byte*>(exec_->allocate(bytes));
    if (!exec_->mpi_reaches_memory() || (had_pinned && !exec_->host_accessible()))
      pinned_ = static_cast<std::byte*>(exec_->allocate_pinned(bytes));
  }

  void forget_scratch() noexcept {
    for (auto& [k, p, n] : scratch_)
      if (p) exec_->deallocate(p, n);
    scratch_.clear();
  }

  std::unique_ptr<executor> exec_;
  std::vector<std::tuple<const void*, std::byte*, std::size_t>> scratch_;
  std::deque<entry> entries_;  ///< a deque: an exchange in flight keeps its entry where it is
  std::deque<side_launch> sides_;
  std::byte* staging_ = nullptr;
  std::byte* pinned_ = nullptr;
  std::size_t staging_bytes_ = 0;
};

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER batch_cache::entry& batch_cache::compile(const program& p, bool backward,
                                                           std::span<const array_shape> arrays, bool collective) {
  entry& e = entries_.emplace_back();
  e.p = &p;
  e.backward = backward;
  e.collective = collective;
  e.arrays.assign(arrays.begin(), arrays.end());
  e.compiled = program_compiler(p, backward, e.arrays, collective).run();
  e.table_bytes = e.compiled.table.size() * sizeof(segment);
  if (e.table_bytes) {
    e.table = static_cast<segment*>(exec_->allocate(e.table_bytes));
    exec_->upload(e.table, e.compiled.table.data(), e.table_bytes);
  }
  reserve(e.compiled.staging);
  return e;
}
#endif

}  // namespace haloshift::detail::batch

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file shared_route.hpp
/// @brief One message's way through the shared-memory path's window
/// (shared_window.hpp): its slot, the counters its two ends raise, and how a
/// rank waits on a peer of its node.

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>

#include "../mpi/check.hpp"
#include "shared_slot_bytes.hpp"

namespace haloshift::detail {


/// One message's way through the window, as one end sees it: its slot (two
/// counters, each on its own cache line, then the data) and this end's count
/// of the messages it moved through the slot.
struct shared_route {
  std::byte* slot = nullptr;  ///< null: the message goes by MPI
  std::uint64_t* moved = nullptr;
  /// The receiver's side: the sender's rank in the node's communicator, where its copies out of
  /// a lent array lie among the window's (zero copy): into its own array laid out as the window's
  /// program, then (to `packed_last`) into the message packed, and the elements the sender lends.
  int sender = 0;
  std::size_t copies_first = 0, copies_last = 0, packed_last = 0, lent_elements = 0;
  /// The sender's side: the runs of its array the message carries, and their elements (zero copy
  /// lends only runs long enough: worth_lending).
  std::size_t runs = 0, elements = 0;
  std::byte* data() const noexcept { return slot + 2 * line; }
  std::atomic_ref<std::uint64_t> ready() const noexcept { return counter(0); }
  std::atomic_ref<std::uint64_t> consumed() const noexcept { return counter(line); }
  /// The sender's side, before publish(): the message is its array, segment `number` from byte
  /// `offset` of its part (zero copy), or (number 0) packed in the slot. Beside `ready`, on its
  /// line: the receiver reads it after the acquire load that sees the message.
  void lend(std::uint64_t number, std::uint64_t offset) const noexcept {
    std::memcpy(slot + 8, &number, 8);
    std::memcpy(slot + 16, &offset, 8);
  }
  std::uint64_t lent_segment() const noexcept { return word(8); }
  std::uint64_t lent_offset() const noexcept { return word(16); }
  static constexpr std::size_t line = 64;

 private:
  std::atomic_ref<std::uint64_t> counter(std::size_t at) const noexcept {
    return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(slot + at));
  }
  std::uint64_t word(std::size_t at) const noexcept {
    std::uint64_t w = 0;
    std::memcpy(&w, slot + at, 8);
    return w;
  }
};
// The counters are shared between processes: only lock-free atomics are address-free.
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free);

/// Lets MPI progress while a rank waits on a peer of its node (`spins`: the
/// waits so far): the peer may be waiting on this rank's messages between
/// nodes. After a short spin it yields the core, which an oversubscribed peer
/// may need to get on (MPICH's progress does not yield).
inline void progress_while_waiting(MPI_Comm comm, unsigned& spins) {
  int flag = 0;
  mpi::check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE), "MPI_Iprobe");
  if (++spins > 64) std::this_thread::yield();
}

/// The sender's side: whether the receiver took the slot's previous message (it may be written).
inline bool writable(const shared_route& r) { return r.consumed().load(std::memory_order_acquire) == *r.moved; }
/// The sender's side: the message is packed; the receiver may read it.
inline void publish(const shared_route& r) { r.ready().store(++*r.moved, std::memory_order_release); }
/// The receiver's side: whether the next message has been published.
inline bool arrived(const shared_route& r) {
  return r.ready().load(std::memory_order_acquire) == *r.moved + 1;
}
/// The receiver's side: the message is unpacked; the sender may reuse the slot.
inline void release(const shared_route& r) { r.consumed().store(++*r.moved, std::memory_order_release); }

}  // namespace haloshift::detail

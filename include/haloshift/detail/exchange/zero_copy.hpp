// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file zero_copy.hpp
/// @brief Zero copy on the shared-memory path (docs/node-aware.md): where a
/// sender's array lives in node-shared memory (haloshift::shared_array), a
/// message to a rank of its node lends the array instead of packing it: the
/// slot says which array, and the receiver copies its elements straight out
/// of it (one copy in all). The sender decides per exchange, by address, and
/// says so in the slot, so ranks with and without shared arrays mix freely.

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../../error.hpp"
#include "lent_copies.hpp"
#include "node_segment.hpp"
#include "shared_window.hpp"

namespace haloshift::detail {

/// Messages this thread has lent so far (a statistic: the tests and the benchmark read it to see
/// that zero copy was taken).
inline thread_local std::uint64_t lent_messages = 0;

/// What a sender lends: its array's segment (0: none, its messages are packed) and the array's
/// byte offset in this rank's part of it.
struct lending {
  std::uint64_t segment = 0, offset = 0;
};

/// What an exchange of `data` through `window` (forwards or `backward`) lends: one array of its
/// element type that lies, as far as its messages through the window reach, in a shared array
/// of the window's node. Found once per exchange by address; nothing allocated.
template <class Data>
lending lending_of([[maybe_unused]] const shared_window* window, [[maybe_unused]] const Data& data,
                   [[maybe_unused]] bool backward) {
  if constexpr (Data::plain_single) {
    const std::size_t extent = window ? window->extent(backward) : 0;
    if (extent == 0) return {};
    const auto* base = data.only();
    if (const node_segment* s = segment_holding(window->segments(), base, extent * sizeof(*base)))
      return {s->number(), static_cast<std::uint64_t>(reinterpret_cast<const std::byte*>(base) - s->data())};
  }
  return {};
}

/// Whether lending the message of route `s` pays, with elements of `element_bytes`: it is one
/// run of the array, or its runs are a cache line long on average. Shorter runs (a field's x
/// face: a cell or two per row, a row apart) would have the reader pull a whole line out of the
/// sender's cache for each (measured: 2.3 to 4 times the slots' time for such faces, 2 ranks);
/// packed, they cross in dense lines.
inline bool worth_lending(const shared_route& s, std::size_t element_bytes) {
  return s.runs <= 1 || s.elements * element_bytes >= s.runs * shared_route::line;
}

/// Sends message `out` of `data` (laid out as `layout`) through its free slot `s`: lends the
/// array (`lend`, where worth it: zero copy; the exchange then completes once the receiver has
/// copied it) or packs it into the slot, then publishes it.
template <class Data>
void send_shared(shared_window& window, const lending& lend, const Data& data, const block_layout& layout,
                 const message& out, const shared_route& s) {
  const bool lends = lend.segment && worth_lending(s, data.element_bytes());
  s.lend(lends ? lend.segment : 0, lend.offset);
  if (lends) {
    window.lent(s);
    ++lent_messages;
  } else {
    data.gather(layout, out, s.data());
  }
  publish(s);
}

/// The array the sender of route `in` lent, as this process maps it.
inline const std::byte* lent_array(const shared_window& window, const shared_route& in) {
  const node_segment* s = segment_numbered(window.segments(), in.lent_segment());
  if (!s)
    throw error("shared-memory path: a node partner lent shared array number " + std::to_string(in.lent_segment()) +
                " of its node, which this rank does not hold (make and destroy a grid's shared arrays in one order "
                "on every rank)");
  return s->part_of(in.sender) + in.lent_offset();
}

/// Takes the arrival of route `in` (`bytes` in all) into `data`. Packed in the slot: returns the
/// slot's data, for the caller to unpack. Lent (zero copy), into one array laid out as the
/// window's program (`own_layout`): copied straight out of the sender's array into `data`, stored
/// forwards or combined with `op` backwards; returns null. Lent, into any other arrays (a view of
/// another layout, a bundle, several fields: their cells in the same message order, perhaps other
/// bytes per cell): gathered into the slot first and returned, so that a sender may lend whatever
/// array kind its node partner passes. The slot is the sender's own, idle while its message is
/// lent (the sender writes it again only once this rank has raised `consumed`), and holds the
/// message (it went through the window: shared_window::fits).
template <class Data, class Op>
const std::byte* take_arrival(const shared_window& window, const shared_route& in, [[maybe_unused]] const Data& data,
                              [[maybe_unused]] Op& op, [[maybe_unused]] bool own_layout, std::size_t bytes) {
  if (!in.lent_segment()) return in.data();
  const std::byte* array = lent_array(window, in);
  if constexpr (Data::plain_single)
    if (own_layout) {
      using T = std::remove_pointer_t<decltype(data.only())>;
      copy_lent(window.copies_of(in), reinterpret_cast<const T*>(array), data.only(), op);
      return nullptr;
    }
  if (in.lent_elements == 0 || bytes % in.lent_elements != 0)
    throw error("shared-memory path: a node partner lent " + std::to_string(in.lent_elements) +
                " elements where this rank receives " + std::to_string(bytes) +
                " bytes (the ranks called different exchanges of the plan)");
  gather_lent(window.packed_copies_of(in), array, in.data(), bytes / in.lent_elements);
  return in.data();
}

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the announcement codec of MsnAnnounce: the package one
// rank receives from an MSN predecessor in a step (message count, then per
// message origin, sequence, TTL, payload length, payload) and the
// announcements step() builds from it. Any bytes either decode or raise
// haloshift::error; every other exception, crash, sanitizer report or hang is
// a finding, and so is a decoded package that breaks what a real sender
// guarantees (checked below) or does not re-encode to the same bytes.
//
// Input: a 12-byte header describing the receiving network, then the package.
//   bytes 0-3   ranks   (uint32, little-endian; 1 + value % INT_MAX)
//   bytes 4-7   TTL     (uint32; 1 + value % INT_MAX: the network's msn_announce::ttl())
//   bytes 8-11  step    (uint32: the receiver's step count, from 0)
//   bytes 12-   the package, exactly as it came off the link
// tests/fuzz/make_seeds.py writes the seed corpus in this layout.

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <haloshift/network/msn_announce.hpp>
#include <span>
#include <vector>

namespace hs = haloshift;

namespace {

std::uint32_t header_field(const std::uint8_t* data, int index) {
  std::uint32_t v = 0;
  for (int b = 3; b >= 0; --b) v = (v << 8) | data[4 * index + b];
  return v;
}

// The announcement step() would deliver for `m` (the receiving side of
// msn_announce::step: the TTL drops by one for this hop, hops = TTL spent),
// with what every real sender guarantees checked.
template <class T>
void deliver(const hs::detail::msn_wire_message& m, int ranks, int ttl, long step) {
  const int remaining = m.ttl - 1;  // after this hop, as step() computes it
  const int hops = ttl - remaining;
  try {
    const hs::detail::announcement<T> a =
        hs::detail::make_announcement<T>(m.origin, m.sequence, step, hops, m.payload, MPI_COMM_NULL);
    if (a.origin < 0 || a.origin >= ranks) std::abort();          // a rank of the communicator
    if (a.hops < 1 || a.hops > ttl) std::abort();                 // at least this hop, at most the TTL
    if (a.posted_step < 0 || a.posted_step > step) std::abort();  // posted in a step that happened
    if (a.sequence != m.sequence) std::abort();
  } catch (const hs::error&) {
    // The payload does not decode as a T: reported naming the origin.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 12) return 0;
  const int ranks = 1 + static_cast<int>(header_field(data, 0) % INT_MAX);
  const int ttl = 1 + static_cast<int>(header_field(data, 1) % INT_MAX);
  const long step = static_cast<long>(header_field(data, 2));
  const std::span<const std::byte> package(reinterpret_cast<const std::byte*>(data) + 12, size - 12);

  std::vector<hs::detail::msn_wire_message> messages;
  try {
    hs::detail::read_msn_package(package, /*from=*/0, ranks, ttl, step, messages);
  } catch (const hs::error&) {
    return 0;  // the documented failure: a message naming what is wrong
  }
  for (const auto& m : messages) {
    deliver<int>(m, ranks, ttl, step);              // fixed size: decodes only from 4 bytes
    deliver<hs::byte_buffer>(m, ranks, ttl, step);  // any size decodes
  }
  // Round trip: what decodes is exactly what the sender's encoder writes.
  hs::byte_buffer again;
  hs::detail::put(again, static_cast<std::uint32_t>(messages.size()));
  for (const auto& m : messages) hs::detail::put_msn_message(again, m.origin, m.sequence, m.ttl, m.payload);
  if (again.size() != package.size() || std::memcmp(again.data(), package.data(), package.size()) != 0) std::abort();
  return 0;
}

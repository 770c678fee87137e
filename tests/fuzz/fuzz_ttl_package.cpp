// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the forwarding frames of ttl_local_exchange: the
// package one rank receives over one grid link in a step (message count, then
// per message origin, sequence, the offset travelled so far, payload length,
// payload) and the local_message deliveries step() builds from it. Any bytes
// either decode or raise haloshift::error; every other exception, crash,
// sanitizer report or hang is a finding, and so is a decoded package that
// breaks what a real sender guarantees (checked below) or does not re-encode
// to the same bytes.
//
// Input: a 16-byte header describing the receiving rank, then the package.
//   byte 0      bits 0-1: dimensions - 1 (3 taken as 3D); bits 2-4: periodic, per dimension
//   bytes 1-3   boxes per dimension, 1 + value % 5 (beyond the dimensions: 1)
//   bytes 4-6   the receiver's coordinates, value % boxes
//   byte 7      the link the package came over: index into ttl::neighbor_directions, value % count
//   bytes 8-11  hops, the network's TTL (uint32, little-endian; 1 + value % INT_MAX)
//   bytes 12-15 step (uint32: the receiver's step count, from 0)
//   bytes 16-   the package, exactly as it came off the link
// A header naming a link that does not exist (across a non-periodic border) is skipped.
// tests/fuzz/make_seeds.py writes the seed corpus in this layout.

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <haloshift/network/ttl_local_exchange.hpp>
#include <span>
#include <vector>

namespace hs = haloshift;

namespace {

std::uint32_t le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
}

// The delivery step() would make of `m`, with what every real sender guarantees checked.
template <class T>
void deliver(const hs::detail::ttl_wire_message& m, const hs::grid_shape& shape, const hs::offset& coords,
             const hs::offset& moved, int max_hops, long step) {
  try {
    const hs::detail::local_message<T> d = hs::detail::make_local_message<T>(m, shape, coords, step, MPI_COMM_NULL);
    if (d.hops < 1 || d.hops > max_hops) std::abort();  // at least this hop, at most the TTL
    if (d.from != -m.travelled) std::abort();
    const auto poster = shape.neighbor_at(coords, d.from);
    if (!poster || poster->rank != d.source || poster->image != d.image) std::abort();  // a box that exists, its owner
    if (hs::detail::ttl::last_hop(d.from, d.hops) != moved) std::abort();  // a path of the forwarding tree ending on this link
    if (d.posted_step < 0 || d.posted_step > step) std::abort();   // posted in a step that happened
  } catch (const hs::error&) {
    // The payload does not decode as a T: reported naming the origin.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 16) return 0;
  const int ndims = std::min(3, 1 + (data[0] & 3));
  std::vector<int> dims;
  std::vector<bool> periodic;
  for (int d = 0; d < ndims; ++d) {
    dims.push_back(1 + data[1 + d] % 5);
    periodic.push_back((data[0] >> (2 + d)) & 1);
  }
  const hs::grid_shape shape(dims, periodic);
  hs::offset coords{0, 0, 0};
  for (int d = 0; d < ndims; ++d) coords[d] = data[4 + d] % dims[static_cast<std::size_t>(d)];
  const auto directions = hs::detail::ttl::neighbor_directions(ndims);
  const hs::offset moved = directions[data[7] % directions.size()];
  if (!shape.exists(coords, -moved)) return 0;  // no such link: nothing ever arrives over it
  const int max_hops = 1 + static_cast<int>(le32(data + 8) % INT_MAX);
  const long step = static_cast<long>(le32(data + 12));
  const std::span<const std::byte> package(reinterpret_cast<const std::byte*>(data) + 16, size - 16);

  std::vector<hs::detail::ttl_wire_message> messages;
  try {
    hs::detail::read_ttl_package(package, /*from=*/0, shape, coords, moved, max_hops, step, messages);
  } catch (const hs::error&) {
    return 0;  // the documented failure: a message naming what is wrong
  }
  for (const auto& m : messages) {
    deliver<int>(m, shape, coords, moved, max_hops, step);              // fixed size: decodes only from 4 bytes
    deliver<hs::byte_buffer>(m, shape, coords, moved, max_hops, step);  // any size decodes
  }
  // Round trip: what decodes is exactly what the sender's encoder writes.
  hs::byte_buffer again;
  hs::detail::put(again, static_cast<std::uint32_t>(messages.size()));
  for (const auto& m : messages) hs::detail::put_ttl_message(again, m.origin, m.sequence, m.travelled, m.payload);
  if (again.size() != package.size() || std::memcmp(again.data(), package.data(), package.size()) != 0) std::abort();
  return 0;
}

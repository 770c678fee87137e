// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the network message decoder, message_codec<T>
// (network/message_codec.hpp): the bytes of one message payload as they
// arrive from another rank, decoded as one of several message types. Any bytes
// either decode or raise haloshift::error; every other exception, crash,
// sanitizer report or hang is a finding, and so is `decodes` disagreeing with
// `decode`, or a decoded value that does not re-encode to the same bytes.
//
// Input: byte 0 picks the message type (value % 7, the list in
// LLVMFuzzerTestOneInput), the rest is the payload.
// tests/fuzz/make_seeds.py writes the seed corpus in this layout.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <haloshift/error.hpp>
#include <haloshift/network/message_codec.hpp>
#include <span>

namespace hs = haloshift;

namespace {

// A user struct without padding (padding bytes need not survive a copy, so a
// padded struct would fail the round trip without anything being wrong).
struct record {
  std::int32_t id;
  std::uint32_t flags;
  double weight;
};

enum class colour : std::uint8_t { red, green, blue };

template <class T>
void check(std::span<const std::byte> in) {
  const bool decodes = hs::message_codec<T>::decodes(in);
  try {
    const T value = hs::message_codec<T>::decode(in, MPI_COMM_NULL);
    if (!decodes) std::abort();  // decode accepted what decodes refused
    hs::byte_buffer again;
    hs::message_codec<T>::encode(value, MPI_COMM_NULL, again);
    if (again.size() != in.size() || (!in.empty() && std::memcmp(again.data(), in.data(), in.size()) != 0))
      std::abort();
  } catch (const hs::error&) {
    if (decodes) std::abort();  // decodes promised these bytes would decode
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data) + 1, size - 1);
  switch (data[0] % 7) {
    case 0:
      check<int>(in);
      break;
    case 1:
      check<double>(in);
      break;
    case 2:
      check<record>(in);
      break;
    case 3:
      check<std::array<std::byte, 3>>(in);
      break;
    case 4:
      check<bool>(in);
      break;
    case 5:
      check<colour>(in);
      break;
    default:
      check<hs::byte_buffer>(in);
      break;
  }
  return 0;
}

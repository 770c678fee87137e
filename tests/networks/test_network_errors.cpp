// SPDX-License-Identifier: BSD-3-Clause
// Bad arguments: named with their value, and, where ranks must agree, the
// same error on every rank (checked collectively at construction).

#include "../support/catch.hpp"
#include <haloshift/network/local_exchange.hpp>
#include <haloshift/network/msn_announce.hpp>
#include <haloshift/network/ttl_local_exchange.hpp>

#include <climits>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace hs = haloshift;

TEST_CASE("MsnAnnounce: bad or disagreeing arguments throw on every rank", "[msn][errors][mpi]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CHECK_THROWS_WITH(hs::msn_announce<int>(MPI_COMM_WORLD, 0), Catch::Contains("degree must be from 1 to 30, got 0"));
  CHECK_THROWS_WITH(hs::msn_announce<int>(MPI_COMM_WORLD, 2, {.ttl = -1}),
                    Catch::Contains("ttl must be >= 0 (0: the diameter), got -1"));
  // A bad value on one rank only: every rank reports it.
  CHECK_THROWS_WITH(hs::msn_announce<int>(MPI_COMM_WORLD, rank == size - 1 ? 0 : 2),
                    Catch::Contains("degree must be from 1 to 30, got 0"));
  if (size > 1) {
    CHECK_THROWS_WITH(hs::msn_announce<int>(MPI_COMM_WORLD, rank == 0 ? 2 : 3),
                      Catch::Contains("msn_announce degree must be the same on all ranks, got values from 2 to 3"));
    const int d = hs::msn_announce<int>(MPI_COMM_WORLD, 1).diameter();  // a ring: size - 1
    CHECK(d == size - 1);
    if (d > 1)
      CHECK_THROWS_WITH(hs::msn_announce<int>(MPI_COMM_WORLD, 1, {.ttl = 1}),
                        Catch::Contains("ttl 1 is below the network's diameter"));
  }
}

TEST_CASE("local networks: bad or disagreeing hops throw on every rank", "[local][errors][mpi]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {{0}, {true}});
  CHECK_THROWS_WITH(hs::ttl_local_exchange<int>(grid, -2), Catch::Contains("hops must be >= 1, got -2"));
  CHECK_THROWS_WITH(hs::ttl_local_exchange<int>(grid, rank == 0 ? 0 : 1), Catch::Contains("hops must be >= 1, got 0"));
  if (size > 1)
    CHECK_THROWS_WITH(hs::ttl_local_exchange<int>(grid, rank == 0 ? 1 : 2),
                      Catch::Contains("ttl_local_exchange hops must be the same on all ranks, got values from 1 to 2"));
}

TEST_CASE("a package beyond MPI's int count throws before anything is sent", "[local][errors][mpi]") {
  // Only the size is looked at: the span is never read.
  static const std::byte one{};
  const std::size_t too_many = static_cast<std::size_t>(INT_MAX) + 1;
  const std::vector<std::span<const std::byte>> out{std::span<const std::byte>(&one, too_many)};
  std::vector<hs::byte_buffer> in;
  CHECK_THROWS_WITH(hs::detail::exchange_packages(MPI_COMM_SELF, {{0, 0}}, out, {}, in),
                    Catch::Contains("a package of 2147483648 bytes to rank 0 exceeds MPI's int count"));
}

// Malformed packages (found by the fuzz targets, docs/fuzzing.md): the pure decoders step() calls
// raise haloshift::error naming what is wrong, instead of undefined behaviour, an endless
// forwarding loop or a delivery from a box that does not exist. Each case is a minimal trigger.
namespace {

// A package as the networks' step() writes one: the message count, then the messages.
hs::byte_buffer wire_msn_package(std::initializer_list<hs::detail::msn_wire_message> messages) {
  hs::byte_buffer out;
  hs::detail::put(out, static_cast<std::uint32_t>(messages.size()));
  for (const auto& m : messages) hs::detail::put_msn_message(out, m.origin, m.sequence, m.ttl, m.payload);
  return out;
}

hs::byte_buffer wire_ttl_package(std::initializer_list<hs::detail::ttl_wire_message> messages) {
  hs::byte_buffer out;
  hs::detail::put(out, static_cast<std::uint32_t>(messages.size()));
  for (const auto& m : messages) hs::detail::put_ttl_message(out, m.origin, m.sequence, m.travelled, m.payload);
  return out;
}

}  // namespace

TEST_CASE("MsnAnnounce: a malformed package throws naming what is wrong", "[msn][errors][wire]") {
  // The receiver: rank 3's predecessor sent it, 8 ranks, TTL 3, step 5.
  std::vector<hs::detail::msn_wire_message> out;
  const auto read = [&](const hs::byte_buffer& package, long step = 5) {
    hs::detail::read_msn_package(package, 3, 8, 3, step, out);
  };
  const std::byte four[4]{};
  read(wire_msn_package({{2, 0, 3, four}, {7, 9, 1, {}}}));  // what a real sender writes decodes
  CHECK(out.size() == 2);
  // The TTL as received: 0 (never sent) used to be forwarded with -1, -2, ... for ever, as the
  // TTL never reached 0 again; INT_MIN overflowed in `ttl - 1`; above the network's TTL gave hops < 1.
  CHECK_THROWS_WITH(read(wire_msn_package({{2, 0, 0, {}}})),
                    Catch::Contains("msn_announce: a package from rank 3 of 20 bytes: message 1 of 1 has ttl 0, "
                                    "outside 1 to 3 (the network's ttl)"));
  CHECK_THROWS_WITH(read(wire_msn_package({{2, 0, INT_MIN, {}}})), Catch::Contains("has ttl -2147483648, outside 1 to 3"));
  CHECK_THROWS_WITH(read(wire_msn_package({{2, 0, 7, {}}})), Catch::Contains("has ttl 7, outside 1 to 3"));
  // More hops than steps so far: posted_step would be negative.
  CHECK_THROWS_WITH(read(wire_msn_package({{2, 0, 1, {}}}), 0),
                    Catch::Contains("message 1 of 1 has ttl 1 of 3, so 3 hops by step 0"));
  // An origin that is no rank used to be delivered as it was.
  CHECK_THROWS_WITH(read(wire_msn_package({{0, 0, 3, {}}, {-1, 0, 3, {}}})),
                    Catch::Contains("message 2 of 2 has origin -1, not a rank of the 8"));
  CHECK_THROWS_WITH(read(wire_msn_package({{8, 0, 3, {}}})), Catch::Contains("has origin 8, not a rank of the 8"));
  // Counts and lengths from the wire are checked against the bytes left.
  hs::byte_buffer huge_count;
  hs::detail::put(huge_count, std::uint32_t{0xFFFFFFFF});
  CHECK_THROWS_WITH(read(huge_count), Catch::Contains("4294967295 messages of at least 16 bytes do not fit in the "
                                                      "0 bytes left"));
  hs::byte_buffer huge_payload = wire_msn_package({{2, 0, 3, four}});
  std::memset(huge_payload.data() + 16, 0xFF, 4);  // the payload length
  CHECK_THROWS_WITH(read(huge_payload), Catch::Contains("msn_announce: a package from rank 3 of 24 bytes: a payload of "
                                                        "4294967295 bytes at byte 20 exceeds the 4 bytes left"));
  CHECK_THROWS_WITH(read(hs::byte_buffer(3)), Catch::Contains("the message count of 4 bytes at byte 0 exceeds the "
                                                              "3 bytes left"));
  // Bytes after the last message used to be ignored.
  hs::byte_buffer trailing = wire_msn_package({});
  trailing.push_back(std::byte{7});
  CHECK_THROWS_WITH(read(trailing), Catch::Contains("of 5 bytes: 1 byte left over after the last message"));
}

TEST_CASE("ttl_local_exchange: a malformed package throws naming what is wrong", "[local][ttl][errors][wire]") {
  // The receiver: the box (1, 1) of a periodic 3x3 grid, over the link along +x from rank 3, TTL 2, step 3.
  const hs::grid_shape shape({3, 3}, {true, true});
  const hs::offset at{1, 1, 0}, along_x{1, 0, 0};
  std::vector<hs::detail::ttl_wire_message> out;
  const auto read = [&](const hs::byte_buffer& package) {
    hs::detail::read_ttl_package(package, 3, shape, at, along_x, 2, 3, out);
  };
  // Rank 1 owns (0, 1), one box along -x; rank 6 owns (2, 0), at (-1, 0) across the periodic
  // border: two hops, the last along x alone (the forwarding tree's last hop moves along the
  // dimensions of the largest distance).
  read(wire_ttl_package({{1, 0, {1, 0, 0}, {}}, {6, 5, {2, 1, 0}, {}}}));  // what a real sender writes decodes
  CHECK(out.size() == 2);
  // INT_MIN used to be negated and passed to std::abs (undefined).
  CHECK_THROWS_WITH(read(wire_ttl_package({{1, 0, {INT_MIN, 0, 0}, {}}})),
                    Catch::Contains("ttl_local_exchange: a package from rank 3 of 28 bytes: message 1 of 1 has "
                                    "travelled (-2147483648,0,0), more than the network's 2 hops"));
  CHECK_THROWS_WITH(read(wire_ttl_package({{4, 0, {0, 0, 0}, {}}})), Catch::Contains("(0,0,0), no hop at all"));
  CHECK_THROWS_WITH(read(wire_ttl_package({{4, 0, {0, 1, 0}, {}}})),
                    Catch::Contains("(0,1,0), which does not end with a hop along (1,0,0), the link it came over"));
  CHECK_THROWS_WITH(read(wire_ttl_package({{7, 0, {1, 0, 0}, {}}})),
                    Catch::Contains("(1,0,0), from the box of rank 1, but names rank 7 as its origin"));
  // Off a non-periodic grid there is no box to deliver from: the empty optional used to be dereferenced.
  const hs::grid_shape closed({3, 3}, {false, false});
  CHECK_THROWS_WITH(hs::detail::read_ttl_package(wire_ttl_package({{0, 0, {2, 0, 0}, {}}}), 3, closed, {1, 0, 0},
                                                 along_x, 2, 3, out),
                    Catch::Contains("(2,0,0), from outside the grid"));
  CHECK_THROWS_WITH(hs::detail::read_ttl_package(wire_ttl_package({{1, 0, {2, 0, 0}, {}}}), 3, shape, at, along_x, 2,
                                                 0, out),
                    Catch::Contains("(2,0,0), too far by step 0"));
  hs::byte_buffer trailing = wire_ttl_package({{1, 0, {1, 0, 0}, {}}});
  trailing.resize(trailing.size() + 2);
  CHECK_THROWS_WITH(read(trailing), Catch::Contains("of 30 bytes: 2 bytes left over after the last message"));
}

TEST_CASE("message_codec: bytes that do not decode throw, also without decodes()", "[errors][wire]") {
  const std::byte two[2]{}, invalid_bool[1]{std::byte{2}};
  CHECK_FALSE(hs::message_codec<int>::decodes(two));
  // decode used to copy sizeof(T) bytes from a shorter buffer.
  CHECK_THROWS_WITH(hs::message_codec<int>::decode(two, MPI_COMM_NULL),
                    Catch::Contains("network message: 2 bytes do not decode as a type of 4 bytes"));
  // Any byte but 0 and 1 used to become an invalid bool (undefined to use).
  CHECK_FALSE(hs::message_codec<bool>::decodes(invalid_bool));
  CHECK_THROWS_WITH(hs::message_codec<bool>::decode(invalid_bool, MPI_COMM_NULL),
                    Catch::Contains("network message: a bool must be the byte 0 or 1, got 2"));
  const std::byte one[1]{std::byte{1}};
  CHECK(hs::message_codec<bool>::decode(one, MPI_COMM_NULL));
}

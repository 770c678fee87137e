// SPDX-License-Identifier: BSD-3-Clause
// Serializable messages through Boost.MPI: strings, vectors and a user struct
// with `serialize` reach every rank intact, exactly once.

#include "../support/catch.hpp"
#include <haloshift/network/boost_serialization.hpp>
#include <haloshift/network/msn_announce.hpp>
#include <haloshift/network/ttl_local_exchange.hpp>

#include <map>
#include <string>
#include <vector>

namespace hs = haloshift;

namespace {
struct block_created {
  int owner = 0;
  std::vector<int> position;
  std::string label;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar & owner & position & label;
  }
  friend bool operator==(const block_created&, const block_created&) = default;
};

block_created block_of(int r) { return {r, std::vector<int>(static_cast<std::size_t>(r % 4), r), std::string(static_cast<std::size_t>(r), 'b')}; }

template <class T, class Make>
void announce_all(int degree, Make make) {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs::msn_announce<T> net(MPI_COMM_WORLD, degree);
  net.post(make(rank));
  std::map<int, int> seen;
  for (int s = 0; s < std::max(net.diameter(), 1); ++s) {
    net.step();
    for (const auto& a : net.delivered()) {
      CHECK(a.value == make(a.origin));
      ++seen[a.origin];
    }
  }
  CHECK(static_cast<int>(seen.size()) == size);
  for (const auto& [origin, n] : seen) CHECK(n == 1);
}
}  // namespace

TEST_CASE("MsnAnnounce carries Boost-serializable messages", "[msn][boost][mpi]") {
  announce_all<std::string>(2, [](int r) { return "block " + std::to_string(r) + std::string(static_cast<std::size_t>(r), '!'); });
  announce_all<std::vector<int>>(3, [](int r) { return std::vector<int>(static_cast<std::size_t>(r), r); });
  announce_all<block_created>(1, block_of);
}

TEST_CASE("TTL multi-hop carries Boost-serializable messages", "[local][boost][mpi]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {{0}, {false}});
  hs::ttl_local_exchange<block_created> net(grid, 2);
  net.post(block_of(rank));
  std::size_t received = 0;
  for (int s = 0; s < 2; ++s) {
    net.step();
    for (const auto& m : net.delivered()) {
      CHECK(m.value == block_of(m.source));
      ++received;
    }
  }
  // A non-periodic line: the ranks within two boxes.
  std::size_t want = 0;
  for (int r = 0; r < size; ++r) want += r != rank && std::abs(r - rank) <= 2;
  CHECK(received == want);
}

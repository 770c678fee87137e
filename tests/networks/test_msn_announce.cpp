// SPDX-License-Identifier: BSD-3-Clause
// MsnAnnounce under the rank sweep: whatever the pattern of posts, every rank
// receives every announcement exactly once, intact, within the diameter.
// The expected set is recomputed on every rank from the posting pattern.

#include "../support/catch.hpp"
#include <haloshift/network/msn_announce.hpp>

#include <map>
#include <tuple>
#include <vector>

#include "../support/sweep.hpp"

namespace hs = haloshift;

namespace {

enum class pattern { none, one_rank, all_ranks, bursts };

const char* name(pattern p) {
  return p == pattern::none ? "none" : p == pattern::one_rank ? "one rank" : p == pattern::all_ranks ? "all ranks"
                                                                                                    : "bursts";
}

/// How many messages `rank` posts before step `step`.
int posts(pattern p, int rank, int size, int step) {
  switch (p) {
    case pattern::none: return 0;
    case pattern::one_rank: return rank == size - 1 && step == 1 ? 1 : 0;
    case pattern::all_ranks: return step == 0 ? 1 : 0;
    case pattern::bursts: return step < 6 ? (rank * 5 + step * 3) % 4 : 0;  // 0 to 3 per step, several steps
  }
  return 0;
}
constexpr int last_post_step = 5;

/// The content of message `sequence` of `origin`: variable length, empty included.
hs::byte_buffer content(int origin, std::uint32_t sequence) {
  hs::byte_buffer b(static_cast<std::size_t>((origin * 7 + sequence * 3) % 13));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::byte>((origin * 31 + sequence * 17 + i) & 0xff);
  return b;
}

struct trivially_copyable_message {
  int origin;
  std::uint32_t sequence;
  double value;
};

}  // namespace

TEST_CASE("MsnAnnounce delivers every announcement exactly once within the diameter", "[msn][announce][mpi]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::vector<int> degrees = sweep::reduced() ? std::vector<int>{1, 2, 3} : std::vector<int>{1, 2, 3, 4, 5, 10};
  for (int degree : degrees)
    for (pattern p : {pattern::none, pattern::one_rank, pattern::all_ranks, pattern::bursts}) {
      INFO("degree " << degree << ", posts: " << name(p) << ", rank " << rank << " of " << size);
      hs::msn_announce<hs::byte_buffer> net(MPI_COMM_WORLD, degree);
      const int d = net.diameter();
      CHECK(d == hs::detail::msn_diameter(net.topology()));
      CHECK(net.ttl() == d);

      // The oracle: (origin, sequence) -> posted step, from the pattern alone.
      std::map<std::pair<int, std::uint32_t>, long> expected;
      for (int r = 0; r < size; ++r) {
        std::uint32_t sequence = 0;
        for (int s = 0; s <= last_post_step; ++s)
          for (int k = 0; k < posts(p, r, size, s); ++k) expected[{r, sequence++}] = s;
      }

      std::map<std::pair<int, std::uint32_t>, int> times;
      std::uint32_t mine = 0;
      for (long s = 0; s <= last_post_step + d; ++s) {
        for (int k = 0; k < posts(p, rank, size, static_cast<int>(s)); ++k) net.post(content(rank, mine++));
        net.step();
        for (const auto& a : net.delivered()) {
          const auto id = std::make_pair(a.origin, a.sequence);
          ++times[id];
          REQUIRE(expected.count(id) == 1);
          CHECK(a.value == content(a.origin, a.sequence));
          CHECK(a.posted_step == expected[id]);
          CHECK(a.hops == (a.origin == rank ? 0 : s - a.posted_step + 1));
          CHECK(s - a.posted_step <= std::max(d - 1, 0));  // within the diameter
          CHECK(a.hops <= d);
        }
      }
      CHECK(times.size() == expected.size());
      for (const auto& [id, n] : times) CHECK(n == 1);
      CHECK(net.live_messages() == 0);  // the buffer of live messages drains
    }
}

TEST_CASE("MsnAnnounce carries trivially copyable messages", "[msn][announce][mpi]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs::msn_announce<trivially_copyable_message> net(MPI_COMM_WORLD, 2);
  net.post({rank, 0, rank + 0.5});
  std::vector<int> seen(static_cast<std::size_t>(size), 0);
  for (int s = 0; s < net.diameter() || s == 0; ++s) {
    net.step();
    for (const auto& a : net.delivered()) {
      CHECK(a.value.origin == a.origin);
      CHECK(a.value.value == a.origin + 0.5);
      ++seen[static_cast<std::size_t>(a.origin)];
    }
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == size);
}

// SPDX-License-Identifier: BSD-3-Clause
// The information networks: MSN announcements and the local exchanges, with
// arguments that are wrong on every rank, on one, or differ across ranks.

#include "battery.hpp"

#include <haloshift/haloshift.hpp>

#include <climits>
#include <cstddef>
#include <span>
#include <vector>

namespace hs = haloshift;

namespace misuse {

void register_network_cases() {
  add("network/msn-degree-zero", {"degree must be from 1 to 30, got 0"},
      [](const world& w) { hs::msn_announce<int>(w.comm, 0); }, 1, true);
  add("network/msn-degree-too-large", {"degree must be from 1 to 30, got 31"},
      [](const world& w) { hs::msn_announce<int>(w.comm, 31); });
  add("network/msn-degree-negative-one-rank", {"degree must be from 1 to 30, got -4"},
      [](const world& w) { hs::msn_announce<int>(w.comm, w.on_last(-4, 2)); });
  add("network/msn-ttl-negative", {"ttl must be >= 0 (0: the diameter), got -1"},
      [](const world& w) { hs::msn_announce<int>(w.comm, 2, {.ttl = -1}); });
  add("network/msn-degree-differ", {"msn_announce degree must be the same on all ranks, got values from 2 to 3"},
      [](const world& w) { hs::msn_announce<int>(w.comm, w.first_or(2, 3)); }, 2, true);
  add("network/msn-ttl-differ", {"msn_announce ttl must be the same on all ranks, got values from 0 to 5"},
      [](const world& w) { hs::msn_announce<int>(w.comm, 1, {.ttl = w.first_or(0, 5)}); }, 2);
  add("network/msn-ttl-below-diameter", {"ttl 1 is below the network's diameter"},
      [](const world& w) { hs::msn_announce<int>(w.comm, 1, {.ttl = 1}); }, 3);
  add("network/msn-comm-null", {"MPI_COMM_NULL"}, [](const world&) { hs::msn_announce<int>(MPI_COMM_NULL, 1); });
  add("network/ttl-hops-zero", {"ttl_local_exchange: hops must be >= 1, got 0"}, [](const world& w) {
    const hs::cartesian_grid g(w.comm, {.dims = {0}, .periodic = {true}});
    hs::ttl_local_exchange<int>(g, 0);
  }, 1, true);
  add("network/ttl-hops-negative-one-rank", {"hops must be >= 1, got -2"}, [](const world& w) {
    const hs::cartesian_grid g(w.comm, {.dims = {0, 0}, .periodic = {true, false}});
    hs::ttl_local_exchange<int>(g, w.on_last(-2, 1));
  });
  add("network/ttl-hops-differ", {"ttl_local_exchange hops must be the same on all ranks, got values from 1 to 2"},
      [](const world& w) {
        const hs::cartesian_grid g(w.comm, {.dims = {0}, .periodic = {true}});
        hs::ttl_local_exchange<int>(g, w.first_or(1, 2));
      }, 2);
  add("network/package-beyond-int", {"a package of 2147483648 bytes", "exceeds MPI's int count"}, [](const world&) {
    static const std::byte one{};
    const std::size_t too_many = static_cast<std::size_t>(INT_MAX) + 1;
    const std::vector<std::span<const std::byte>> out{std::span<const std::byte>(&one, too_many)};
    std::vector<hs::byte_buffer> in;
    hs::detail::exchange_packages(MPI_COMM_SELF, {{0, 0}}, out, {}, in);
  });
}

}  // namespace misuse

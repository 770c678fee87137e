// SPDX-License-Identifier: BSD-3-Clause
// Per-call misuse of block plans: wrong lengths, foreign halos, moved-from
// plans, an exchange started twice. Made on every rank, each rank raises
// locally; made on one rank only, the plan must run with collective argument
// checks (plan_options::checks or HALOSHIFT_CHECKS=collective) for its
// peers to raise too.

#include "battery.hpp"

#include <haloshift/haloshift.hpp>

#include <cstdlib>
#include <span>
#include <utility>
#include <vector>

namespace hs = haloshift;

namespace misuse {

namespace {
hs::cartesian_grid exchange_ring(const world& w) {
  return hs::cartesian_grid(w.comm, {.dims = {0}, .periodic = {true}});
}
hs::plan_options collective_checks() {
  hs::plan_options o;
  o.checks = hs::argument_checks::collective;
  return o;
}
/// A plan of 4 doubles per rank; `o` its options.
hs::plan<double> four(const hs::cartesian_grid& g, hs::plan_options o = {}) {
  return hs::make_plan<hs::Shift, double>(g, 1, 4, o);
}
}  // namespace

void register_exchange_cases() {
  add("exchange/forward-short", {"forward/reverse: the local data has 3 elements but the plan was built for 4"},
      [](const world& w) {
        const hs::cartesian_grid g = exchange_ring(w);
        auto p = four(g);
        std::vector<double> mine(3);
        p.forward(std::span<const double>(mine));
      }, 1, true);
  add("exchange/forward-long-into-halo", {"the local data has 5 elements but the plan was built for 4"},
      [](const world& w) {
        const hs::cartesian_grid g = exchange_ring(w);
        auto p = four(g);
        auto h = p.make_halo();
        std::vector<double> mine(5);
        p.forward(std::span<const double>(mine), h);
      });
  add("exchange/reverse-short", {"the local data has 2 elements but the plan was built for 4"}, [](const world& w) {
    const hs::cartesian_grid g = exchange_ring(w);
    auto p = four(g);
    auto h = p.make_halo();
    std::vector<double> own(2);
    p.reverse(h, std::span<double>(own));
  });
  add("exchange/forward-short-one-rank-collective", {"the local data has 3 elements but the plan was built for 4"},
      [](const world& w) {
        const hs::cartesian_grid g = exchange_ring(w);
        auto p = four(g, collective_checks());
        std::vector<double> mine(w.on_last<std::size_t>(3, 4));
        p.forward(std::span<const double>(mine));
      }, 1, true);
  add("exchange/reverse-short-one-rank-collective", {"the local data has 1 elements but the plan was built for 4"},
      [](const world& w) {
        const hs::cartesian_grid g = exchange_ring(w);
        auto p = four(g, collective_checks());
        auto h = p.make_halo();
        std::vector<double> own(w.on_last<std::size_t>(1, 4));
        p.reverse(h, std::span<double>(own));
      });
  add("exchange/forward-short-one-rank-environment", {"the local data has 0 elements but the plan was built for 4"},
      [](const world& w) {
        setenv("HALOSHIFT_CHECKS", "collective", 1);
        const hs::cartesian_grid g = exchange_ring(w);
        auto p = four(g);
        std::vector<double> mine(w.on_last<std::size_t>(0, 4));
        p.forward(std::span<const double>(mine));
      });
  add("exchange/foreign-halo", {"forward/reverse: the halo was not made by this plan"}, [](const world& w) {
    const hs::cartesian_grid g = exchange_ring(w);
    auto p = four(g), q = four(g);
    auto h = q.make_halo();
    std::vector<double> mine(4);
    p.forward(std::span<const double>(mine), h);
  });
  add("exchange/foreign-halo-reverse", {"the halo was not made by this plan"}, [](const world& w) {
    const hs::cartesian_grid g = exchange_ring(w);
    auto p = four(g), q = four(g);
    auto h = q.make_halo();
    std::vector<double> own(4);
    p.reverse(h, std::span<double>(own));
  });
  add("exchange/foreign-halo-one-rank-collective", {"the halo was not made by this plan"}, [](const world& w) {
    const hs::cartesian_grid g = exchange_ring(w);
    auto p = four(g, collective_checks()), q = four(g, collective_checks());
    auto mine_halo = p.make_halo(), other = q.make_halo();
    std::vector<double> mine(4);
    p.forward(std::span<const double>(mine), w.last() ? other : mine_halo);
  }, 1, true);
  add("exchange/moved-from-forward", {"forward: the plan was moved from"}, [](const world& w) {
    const hs::cartesian_grid g = exchange_ring(w);
    auto p = four(g);
    auto q = std::move(p);
    std::vector<double> mine(4);
    p.forward(std::span<const double>(mine));  // NOLINT(bugprone-use-after-move): the misuse under test
  }, 1, true);
  add("exchange/moved-from-reverse", {"start_reverse: the plan was moved from"}, [](const world& w) {
    const hs::cartesian_grid g = exchange_ring(w);
    auto p = four(g);
    auto q = std::move(p);
    auto h = q.make_halo();
    std::vector<double> own(4);
    p.reverse(h, std::span<double>(own));  // NOLINT(bugprone-use-after-move)
  });
  add("exchange/moved-from-make-halo", {"make_halo: the plan was moved from"}, [](const world& w) {
    const hs::cartesian_grid g = exchange_ring(w);
    auto p = four(g);
    auto q = std::move(p);
    (void)p.make_halo();  // NOLINT(bugprone-use-after-move)
  });
  add("exchange/moved-from-start", {"start_forward: the plan was moved from"}, [](const world& w) {
    const hs::cartesian_grid g = exchange_ring(w);
    auto p = four(g);
    auto q = std::move(p);
    auto h = q.make_halo();
    std::vector<double> mine(4);
    p.start_forward(std::span<const double>(mine), h).wait();  // NOLINT(bugprone-use-after-move)
  });
  add("exchange/moved-from-assigned-over", {"forward: the plan was moved from"}, [](const world& w) {
    const hs::cartesian_grid g = exchange_ring(w);
    auto p = four(g);
    auto q = four(g);
    q = std::move(p);
    std::vector<double> mine(4);
    p.forward(std::span<const double>(mine));  // NOLINT(bugprone-use-after-move)
  });
  add("exchange/moved-from-details", {"details: the plan was moved from"}, [](const world& w) {
    const hs::cartesian_grid g = exchange_ring(w);
    auto p = four(g);
    auto q = std::move(p);
    if (p.local_count() != 0) return;  // NOLINT(bugprone-use-after-move): well defined, 0; then details() raises
    (void)p.details().rounds.size();
  });
  add("exchange/start-twice", {"start_forward: this plan already has an exchange in flight"}, [](const world& w) {
    const hs::cartesian_grid g = exchange_ring(w);
    auto p = four(g);
    auto h1 = p.make_halo(), h2 = p.make_halo();
    std::vector<double> mine(4);
    auto first = p.start_forward(std::span<const double>(mine), h1);
    auto second = p.start_forward(std::span<const double>(mine), h2);
  }, 1, true);
  add("exchange/reverse-during-forward", {"start_reverse: this plan already has an exchange in flight"},
      [](const world& w) {
        const hs::cartesian_grid g = exchange_ring(w);
        auto p = four(g);
        auto h1 = p.make_halo(), h2 = p.make_halo();
        std::vector<double> mine(4), own(4);
        auto first = p.start_forward(std::span<const double>(mine), h1);
        p.reverse(h2, std::span<double>(own));
      });
  add("exchange/start-twice-one-rank-collective", {"start_forward: this plan already has an exchange in flight"},
      [](const world& w) {
        const hs::cartesian_grid g = exchange_ring(w);
        // SingleHop posts every message at the start: the others' first exchange completes while the
        // last rank is already in the second call's agreement.
        auto p = hs::make_plan<hs::SingleHop, double>(g, 1, 4, collective_checks());
        auto h1 = p.make_halo(), h2 = p.make_halo();
        std::vector<double> mine(4);
        // The last rank starts a second exchange without waiting for its first; the others wait first.
        auto first = p.start_forward(std::span<const double>(mine), h1);
        if (!w.last()) first.wait();
        auto second = p.start_forward(std::span<const double>(mine), h2);
        second.wait();
      });
}

}  // namespace misuse

// SPDX-License-Identifier: BSD-3-Clause
// Particle plans: domain, cutoff, positions and strategy, wrong on every rank,
// on one rank, or differing across ranks; rebuild and per-call misuse.

#include "battery.hpp"

#include <haloshift/auto.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace hs = haloshift;

namespace misuse {

namespace {
const hs::domain unit_cube{{0, 0, 0}, {1, 1, 1}};
hs::cartesian_grid particle_grid(const world& w) { return hs::cartesian_grid(w.comm, {.dims = {0, 0, 0}}); }
/// One particle at the centre of this rank's box.
std::vector<hs::position> centre(const hs::cartesian_grid& g, const hs::domain& dom = unit_cube) {
  const auto [lo, hi] = hs::box_of(g, dom);
  return {{(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2}};
}
hs::plan_options collective() {
  hs::plan_options o;
  o.checks = hs::argument_checks::collective;
  return o;
}
hs::particle_plan shift_plan(const hs::cartesian_grid& g, const std::vector<hs::position>& x, hs::plan_options o = {}) {
  return hs::make_particle_plan<hs::Shift>(g, unit_cube, 0.2, std::span<const hs::position>(x), o);
}
}  // namespace

void register_particle_cases() {
  add("particles/domain-cuts-differ", {"domain.cuts[0] (hash of the values) must be the same on all ranks"},
      [](const world& w) {
        const hs::cartesian_grid g(w.comm, {.dims = {0}, .periodic = {true}});
        hs::domain dom = unit_cube;
        for (int c = 0; c <= g.dim(0); ++c) dom.cuts[0].push_back(static_cast<double>(c) / g.dim(0));
        dom.cuts[0][1] *= w.first_or(0.5, 1.0);  // rank 0 moves its first inner cut
        hs::make_particle_plan<hs::Shift>(g, dom, 0.2, std::span<const hs::position>());
      }, 2);
  add("particles/domain-cuts-count", {"domain.cuts[0] must have P_0 + 1"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::domain dom = unit_cube;
    dom.cuts[0] = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};  // more than any grid of this battery has
    const auto x = centre(g);
    hs::make_particle_plan<hs::Shift>(g, dom, 0.2, std::span<const hs::position>(x));
  });
  add("particles/rebalance-weights-one-rank", {"rebalance: weights has 2 values for 1 particles"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::domain dom = unit_cube;
    const auto x = centre(g);
    const std::vector<double> weights(w.first_or<std::size_t>(2, 1), 1.0);
    hs::rebalance(g, dom, x, weights);
  }, 2);
  add("particles/rebalance-max-move", {"balance_options.max_move must be > 0, got -1"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::domain dom = unit_cube;
    hs::rebalance(g, dom, 1.0, {.max_move = -1});
  });
  add("particles/cutoff-negative", {"cutoff[0] must be finite and >= 0, got -0.5"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan<hs::Shift>(g, unit_cube, hs::position{-0.5, 0.1, 0.1}, centre(g));
  }, 1, true);
  add("particles/cutoff-nan", {"cutoff[1] must be finite and >= 0, got nan"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan<hs::SingleHop>(g, unit_cube, hs::position{0.1, nan_value, 0.1}, centre(g));
  });
  add("particles/cutoff-infinite", {"cutoff[2] must be finite and >= 0, got inf"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan<hs::Shift>(g, unit_cube, hs::position{0.1, 0.1, std::numeric_limits<double>::infinity()},
                                      centre(g));
  });
  add("particles/cutoff-huge", {"cutoff[0] = 1e+300 spans more than a million boxes"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan<hs::Shift>(g, unit_cube, hs::position{1e300, 0.1, 0.1}, centre(g));
  });
  add("particles/cutoff-negative-one-rank", {"cutoff[0] must be finite and >= 0, got -1"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan<hs::Shift>(g, unit_cube, w.on_last(-1.0, 0.1), centre(g));
  });
  add("particles/cutoff-differ", {"cutoff[0] must be the same on all ranks, got values from 0.1 to 0.125"},
      [](const world& w) {
        const auto g = particle_grid(w);
        hs::make_particle_plan<hs::Shift>(g, unit_cube, w.first_or(0.1, 0.125), centre(g));
      }, 2, true);
  add("particles/domain-inverted", {"domain: lo[0] = 1 must be below hi[0] = 0"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan<hs::Shift>(g, {{1, 0, 0}, {0, 1, 1}}, 0.1, std::vector<hs::position>{});
  }, 1, true);
  add("particles/domain-empty", {"domain: lo[2] = 0.5 must be below hi[2] = 0.5"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan<hs::Shift>(g, {{0, 0, 0.5}, {1, 1, 0.5}}, 0.1, std::vector<hs::position>{});
  });
  add("particles/domain-nan", {"domain: lo[1] = nan must be below hi[1] = 1"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan<hs::Shift>(g, {{0, nan_value, 0}, {1, 1, 1}}, 0.1, std::vector<hs::position>{});
  });
  add("particles/domain-differ", {"domain.hi[0] must be the same on all ranks, got values from 1 to 2"},
      [](const world& w) {
        const auto g = particle_grid(w);
        hs::make_particle_plan<hs::Shift>(g, {{0, 0, 0}, {w.first_or(1.0, 2.0), 1, 1}}, 0.1,
                                          std::vector<hs::position>{});
      }, 2, true);
  add("particles/outside-box", {"lies outside this rank's box", "call migrate first"}, [](const world& w) {
    const auto g = particle_grid(w);
    std::vector<hs::position> x{{1.5, 0.5, 0.5}};
    shift_plan(g, x);
  }, 1, true);
  add("particles/outside-box-one-rank", {"particle 0 at coordinate -0.25 along dimension 0 lies outside"},
      [](const world& w) {
        const auto g = particle_grid(w);
        std::vector<hs::position> x = centre(g);
        if (w.last()) x[0][0] = -0.25;
        shift_plan(g, x);
      });
  add("particles/nan-position", {"particle 0 at coordinate nan along dimension 1"}, [](const world& w) {
    const auto g = particle_grid(w);
    std::vector<hs::position> x = centre(g);
    x[0][1] = nan_value;
    shift_plan(g, x);
  });
  add("particles/on-domain-upper-bound", {"at coordinate 1 along dimension 2 lies outside"}, [](const world& w) {
    const auto g = particle_grid(w);
    std::vector<hs::position> x = centre(g);
    if (w.last()) x[0][2] = 1.0;  // hi is outside the half-open domain: migrate wraps it to lo
    shift_plan(g, x);
  });
  add("particles/too-few-coordinates", {"positions: 2 coordinates per particle, the grid has 3"}, [](const world& w) {
    const auto g = particle_grid(w);
    std::vector<std::array<double, 2>> x;
    hs::make_particle_plan<hs::Shift>(g, unit_cube, 0.1, hs::array_positions(std::span<const std::array<double, 2>>(x)));
  });
  add("particles/teamshift", {"strategy TeamShift carries block payloads only"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan<hs::TeamShift>(g, unit_cube, 0.1, centre(g));
  }, 1, true);
  add("particles/teamshift-by-name", {"strategy TeamShift carries block payloads only", offered}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan(g, "teamshift", unit_cube, hs::position{0.1, 0.1, 0.1}, centre(g));
  });
  add("particles/nodeaggregate", {"strategy NodeAggregate carries block payloads only",
                                  "NodeAggregate's gathers at a node's leaders", offered}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan<hs::NodeAggregate>(g, unit_cube, 0.1, centre(g));
  });
  add("particles/teamshift-with-teams", {"strategy TeamShift carries block payloads only"}, [](const world& w) {
    const auto g = hs::cartesian_grid(w.comm, {.dims = {0}, .periodic = {true}});
    hs::plan_options o;
    o.team = {w.size, 1, 1};
    hs::make_particle_plan<hs::TeamShift>(g, unit_cube, 0.9, std::vector<hs::position>{}, o);
  });
  add("particles/strategy-unknown", {"strategy \"Shiftt\" is not known",
                                     "strategies for particle, field and selective plans: Shift, SingleHop, "
                                     "TtlMultiHop, NeighborAlltoall"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan(g, "Shiftt", unit_cube, hs::position{0.1, 0.1, 0.1}, centre(g));
  });
  add("particles/strategy-differ", {"strategy must be the same on all ranks, got Shift on rank 0 and SingleHop on rank 1"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan(g, w.first_or("Shift", "SingleHop"), unit_cube, hs::position{0.1, 0.1, 0.1}, centre(g));
  }, 2, true);
  add("particles/auto-versus-shift", {"strategy must be the same on all ranks, got Auto on rank 0 and Shift on rank 1"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::make_particle_plan(g, w.first_or("Auto", "Shift"), unit_cube, hs::position{0.1, 0.1, 0.1}, centre(g));
  }, 2);
  add("particles/protocol-invalid", {"plan_options.mode: invalid protocol value 4"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::plan_options o;
    o.mode = static_cast<hs::protocol>(4);
    shift_plan(g, centre(g), o);
  });
  add("particles/neighbor-rendezvous", {"only protocol::overlapping applies"}, [](const world& w) {
    const auto g = particle_grid(w);
    hs::plan_options o;
    o.mode = hs::protocol::rendezvous;
    hs::make_particle_plan<hs::NeighborAlltoall>(g, unit_cube, 0.1, centre(g), o);
  });
  add("particles/rebuild-outside-box-one-rank", {"lies outside this rank's box"}, [](const world& w) {
    const auto g = particle_grid(w);
    auto x = centre(g);
    auto p = shift_plan(g, x);
    if (w.last()) x[0][0] = 7.0;
    p.rebuild(std::span<const hs::position>(x));
  });
  add("particles/rebuild-moved-from", {"rebuild: the plan was moved from"}, [](const world& w) {
    const auto g = particle_grid(w);
    auto x = centre(g);
    auto p = shift_plan(g, x);
    auto q = std::move(p);
    p.rebuild(std::span<const hs::position>(x));  // NOLINT(bugprone-use-after-move)
  });
  // Every member of a moved-from particle plan raises or is well defined (send_lists segfaulted).
  const auto moved_from = [](const world& w, const auto& use) {
    const auto g = particle_grid(w);
    auto x = centre(g);
    auto p = shift_plan(g, x);
    auto q = std::move(p);
    if (p.size() != 0 || p.owned() != 0 || p.ghosts() != 0 || !p.blocks().empty()) return;  // NOLINT: well defined
    use(p);
  };
  add("particles/send-lists-moved-from", {"send_lists: the plan was moved from"}, [=](const world& w) {
    moved_from(w, [](hs::particle_plan& p) { (void)p.send_lists(); });
  });
  add("particles/ghost-origins-moved-from", {"ghost_origins: the plan was moved from"}, [=](const world& w) {
    moved_from(w, [](hs::particle_plan& p) { (void)p.ghost_origins(); });
  });
  add("particles/reserve-arrays-moved-from", {"reserve_arrays: the plan was moved from"}, [=](const world& w) {
    moved_from(w, [](hs::particle_plan& p) { p.reserve_arrays(16); });
  });
  add("particles/forward-positions-moved-from", {"start_forward: the plan was moved from"}, [=](const world& w) {
    moved_from(w, [](hs::particle_plan& p) {
      std::vector<hs::position> x;
      p.forward_positions(std::span<hs::position>(x));
    });
  });
  add("particles/rebuild-in-flight", {"rebuild: this plan already has an exchange in flight"}, [](const world& w) {
    const auto g = particle_grid(w);
    auto x = centre(g);
    auto p = shift_plan(g, x);
    std::vector<double> q(p.size());
    auto h = p.start_forward(std::span<double>(q));
    p.rebuild(std::span<const hs::position>(x));
  });
  add("particles/forward-short", {"the array has", "elements but the plan needs"}, [](const world& w) {
    const auto g = particle_grid(w);
    auto p = shift_plan(g, centre(g));
    std::vector<double> q(p.size() + 1);
    p.forward(q);
  }, 1, true);
  add("particles/forward-short-one-rank-collective", {"the array has", "elements but the plan needs"},
      [](const world& w) {
        const auto g = particle_grid(w);
        auto p = shift_plan(g, centre(g), collective());
        std::vector<double> q(p.size() + (w.last() ? 3 : 0));
        p.forward(q);
      }, 1, true);
  add("particles/reverse-short-one-rank-collective", {"the array has", "elements but the plan needs"},
      [](const world& w) {
        const auto g = particle_grid(w);
        auto p = shift_plan(g, centre(g), collective());
        std::vector<float> q(w.last() ? 0 : p.size());
        p.reverse(q);
      });
  add("particles/forward-positions-short", {"the array has 0 elements but the plan needs"}, [](const world& w) {
    const auto g = particle_grid(w);
    auto p = shift_plan(g, centre(g));
    std::vector<hs::position> x;
    p.forward_positions(x);
  });
  add("particles/forward-arrays-differ-one-rank-collective", {"the array has", "but the plan needs"},
      [](const world& w) {
        const auto g = particle_grid(w);
        auto p = shift_plan(g, centre(g), collective());
        std::vector<double> a(p.size());
        std::vector<int> b(w.last() ? p.size() + 1 : p.size());
        p.forward(a, b);
      });
  add("particles/element-type-differ-collective", {"the element size (bytes) must be the same on all ranks",
                                                     "got values from 4 to 8"},
      [](const world& w) {
        const auto g = particle_grid(w);
        auto p = shift_plan(g, centre(g), collective());
        std::vector<float> f(p.size());
        std::vector<double> d(p.size());
        if (w.first()) p.forward(f);
        else p.forward(d);
      }, 2);
  // Several arrays: each array's element size and their number agree (the sum agreed only: float,
  // double on one rank and double, float on another moved the wrong bytes into every ghost).
  add("particles/arrays-permuted-collective",
      {"the element size (bytes) of array 0 must be the same on all ranks, got values from 4 to 8"},
      [](const world& w) {
        const auto g = particle_grid(w);
        auto p = shift_plan(g, centre(g), collective());
        std::vector<float> f(p.size());
        std::vector<double> d(p.size());
        if (w.first()) p.forward(f, d);
        else p.forward(d, f);
      }, 2, true);
  add("particles/reverse-arrays-permuted-collective",
      {"the element size (bytes) of array 1 must be the same on all ranks, got values from 4 to 8"},
      [](const world& w) {
        const auto g = particle_grid(w);
        auto p = shift_plan(g, centre(g), collective());
        std::vector<double> d(p.size());
        std::vector<float> f(p.size());
        std::vector<int> i(p.size());
        if (w.first()) p.reverse(i, d, f, std::plus<>{});
        else p.reverse(i, f, d, std::plus<>{});  // 16 bytes per particle on every rank
      }, 2);
  add("particles/arrays-count-differ-collective",
      {"the number of arrays must be the same on all ranks, got values from 2 to 3"}, [](const world& w) {
        const auto g = particle_grid(w);
        auto p = shift_plan(g, centre(g), collective());
        std::vector<double> a(p.size()), b(p.size());
        std::vector<std::int32_t> c(p.size()), d(p.size());
        if (w.first()) p.forward(a, b);
        else p.forward(a, c, d);  // 16 bytes per particle either way
      }, 2);
  add("particles/one-array-versus-two-collective",
      {"the number of arrays must be the same on all ranks, got values from 1 to 2"}, [](const world& w) {
        const auto g = particle_grid(w);
        auto p = shift_plan(g, centre(g), collective());
        std::vector<double> a(p.size());
        std::vector<std::int32_t> c(p.size()), d(p.size());
        if (w.first()) p.forward(a);
        else p.forward(c, d);
      }, 2);
  add("particles/make-grid-bad-domain", {"lengths[0] must be finite and > 0, got -1", "from the domain"}, [](const world& w) {
    hs::make_particle_grid(w.comm, {{2, 0, 0}, {1, 1, 1}});
  });
}

}  // namespace misuse

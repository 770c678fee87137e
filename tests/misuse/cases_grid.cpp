// SPDX-License-Identifier: BSD-3-Clause
// Grid construction: dims, periodic and lengths, wrong on every rank, on one
// rank, or differing across ranks. Checked in one agreement on the user's
// communicator before anything else is communicated.

#include "battery.hpp"
#include "../support/scoped_env.hpp"

#include <haloshift/haloshift.hpp>

#include <climits>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace hs = haloshift;

namespace misuse {

void register_grid_cases() {
  using V = std::vector<int>;
  using B = std::vector<bool>;
  // Node sizes are agreed when a plan first needs the nodes (the shared-memory path).
  auto shared_plan = [](const hs::cartesian_grid& g) { hs::make_plan<hs::Shift, double>(g, 1, 4, {.shared_memory = true}); };
  add("grid/node-sizes-differ",
      {"node sizes (grid_options.node_sizes or HALOSHIFT_NODE_SIZE): the first must be the same on all ranks, got "
       "values from 1 to 2"},
      [=](const world& w) { shared_plan(hs::cartesian_grid(w.comm, {.dims = V{0}, .node_sizes = V{w.first_or(1, 2)}})); },
      2);
  add("grid/node-sizes-zero", {"grid_options.node_sizes[1] must be >= 1, got 0"},
      [=](const world& w) { shared_plan(hs::cartesian_grid(w.comm, {.dims = V{0}, .node_sizes = V{2, w.on_last(0, 1)}})); });
  add("grid/node-size-environment", {"HALOSHIFT_NODE_SIZE = \"2,x\" must be a node size N >= 1 or a list"},
      [=](const world& w) {
        const scoped::env size("HALOSHIFT_NODE_SIZE", w.on_last(std::string("2,x"), std::string("2")));
        shared_plan(hs::cartesian_grid(w.comm, {.dims = V{0}}));
      });
  add("grid/dims-empty", {"dims must have 1, 2 or 3 entries, got 0"},
      [](const world& w) { hs::cartesian_grid(w.comm, {.dims = V{}, .periodic = B{}}); }, 1, true);
  add("grid/dims-four", {"dims must have 1, 2 or 3 entries, got 4"},
      [](const world& w) { hs::cartesian_grid(w.comm, {.dims = V{0, 0, 0, 0}, .periodic = B(4, true)}); });
  add("grid/dims-negative", {"dims[0] must be >= 1 (or 0 to choose), got -2"},
      [](const world& w) { hs::cartesian_grid(w.comm, {.dims = V{-2}, .periodic = B{true}}); }, 1, true);
  add("grid/dims-negative-one-rank", {"dims[1] must be >= 1 (or 0 to choose), got -1"},
      [](const world& w) { hs::cartesian_grid(w.comm, {.dims = V{0, w.on_last(-1, 0)}, .periodic = B{true, true}}); });
  add("grid/dims-product-too-large", {"dims multiply to", "but the communicator has"}, [](const world& w) {
    hs::cartesian_grid(w.comm, {.dims = V{w.size + 1}, .periodic = B{true}});
  });
  add("grid/dims-product-one-rank", {"dims multiply to", "but the communicator has"}, [](const world& w) {
    hs::cartesian_grid(w.comm, {.dims = V{w.size, w.on_last(2, 1)}, .periodic = B{true, true}});
  });
  add("grid/dims-not-dividing", {"fixed dims multiply to", "which does not divide the communicator size"},
      [](const world& w) { hs::cartesian_grid(w.comm, {.dims = V{w.size + 1, 0}, .periodic = B{true, true}}); });
  add("grid/dims-overflow", {"dims multiply to more than 2147483647", "2147483647"}, [](const world& w) {
    hs::cartesian_grid(w.comm, {.dims = V{INT_MAX, INT_MAX, INT_MAX}, .periodic = B{true, true, true}});
  });
  add("grid/periodic-too-short", {"periodic must have one entry per dimension (2), got 1"},
      [](const world& w) { hs::cartesian_grid(w.comm, {.dims = V{0, 0}, .periodic = B{true}}); });
  add("grid/periodic-too-long", {"periodic must have one entry per dimension (1), got 3"},
      [](const world& w) { hs::cartesian_grid(w.comm, {.dims = V{0}, .periodic = B{true, true, true}}); });
  add("grid/periodic-short-one-rank", {"periodic must have one entry per dimension (2), got 1"},
      [](const world& w) {
        hs::cartesian_grid(w.comm, {.dims = V{0, 0}, .periodic = w.on_last(B{true}, B{true, true})});
      });
  add("grid/dims-differ", {"grid_options.dims[0] must be the same on all ranks, got values from 1 to"},
      [](const world& w) {
        hs::cartesian_grid(w.comm, {.dims = w.first_or(V{w.size, 1}, V{1, w.size}), .periodic = B{true, true}});
      },
      2, true);
  add("grid/dims-count-differ", {"grid_options.dims.size() must be the same on all ranks, got values from 1 to 2"},
      [](const world& w) {
        hs::cartesian_grid(w.comm, {.dims = w.first_or(V{0}, V{0, 0}), .periodic = w.first_or(B{true}, B{true, true})});
      },
      2);
  add("grid/periodic-differ", {"grid_options.periodic[0] must be the same on all ranks, got values from 0 to 1"},
      [](const world& w) { hs::cartesian_grid(w.comm, {.dims = V{0}, .periodic = B{w.first()}}); }, 2, true);
  add("grid/periodic-differ-last-dimension",
      {"grid_options.periodic[2] must be the same on all ranks, got values from 0 to 1"}, [](const world& w) {
        hs::cartesian_grid(w.comm, {.dims = V{0, 0, 0}, .periodic = B{true, true, w.last()}});
      },
      2);
  add("grid/lengths-negative", {"lengths[0] must be finite and > 0, got -1"}, [](const world& w) {
    hs::cartesian_grid(w.comm, {.dims = V{0, 0, 0}, .periodic = B{true, true, true}, .lengths = {-1.0, 1.0, 1.0}});
  });
  add("grid/lengths-zero", {"lengths[1] must be finite and > 0, got 0"}, [](const world& w) {
    hs::cartesian_grid(w.comm, {.dims = V{0, 0, 0}, .periodic = B{true, true, true}, .lengths = {1.0, 0.0, 1.0}});
  });
  add("grid/lengths-nan", {"lengths[2] must be finite and > 0, got nan"}, [](const world& w) {
    hs::cartesian_grid(w.comm, {.dims = V{0, 0, 0},
                                .periodic = B{true, true, true},
                                .lengths = {1.0, 1.0, std::numeric_limits<double>::quiet_NaN()}});
  });
  add("grid/lengths-infinite", {"lengths[0] must be finite and > 0, got inf"}, [](const world& w) {
    hs::cartesian_grid(w.comm, {.dims = V{0, 0},
                                .periodic = B{true, true},
                                .lengths = {std::numeric_limits<double>::infinity(), 1.0}});
  });
  add("grid/lengths-count", {"lengths must be empty or have one entry per dimension (3), got 2"},
      [](const world& w) {
        hs::cartesian_grid(w.comm, {.dims = V{0, 0, 0}, .periodic = B{true, true, true}, .lengths = {1.0, 1.0}});
      });
  add("grid/lengths-negative-one-rank", {"lengths[0] must be finite and > 0, got -3.5"}, [](const world& w) {
    hs::cartesian_grid(w.comm, {.dims = V{0, 0}, .periodic = B{true, true}, .lengths = {w.on_last(-3.5, 2.0), 1.0}});
  });
  add("grid/lengths-differ", {"grid_options.lengths[0] must be the same on all ranks, got values from 1 to 2.5"},
      [](const world& w) {
        hs::cartesian_grid(w.comm, {.dims = V{0, 0}, .periodic = B{true, true}, .lengths = {w.first_or(1.0, 2.5), 1.0}});
      },
      2);
  // The rank order and the remainder rule: an enumerator outside the enumeration (on one rank), or
  // enumerators that differ across ranks, named as such.
  using order = hs::grid_options::rank_order;
  using rule = hs::grid_options::remainder_cells;
  add("grid/order-invalid-one-rank", {"order must be rank_order::last_fastest (0) or rank_order::first_fastest (1), got 2"},
      [](const world& w) { hs::cartesian_grid(w.comm, {.dims = V{0, 0}, .order = static_cast<order>(w.on_last(2, 1))}); });
  add("grid/remainder-invalid", {"remainder must be remainder_cells::spread (0), first (1) or last (2), got 3"},
      [](const world& w) { hs::cartesian_grid(w.comm, {.dims = V{0}, .remainder = static_cast<rule>(3)}); });
  add("grid/order-differ", {"grid_options.order must be the same on all ranks, got first_fastest on rank 0 and last_fastest on rank 1"},
      [](const world& w) {
        hs::cartesian_grid(w.comm, {.dims = V{0, 0, 0}, .order = w.first_or(order::first_fastest, order::last_fastest)});
      },
      2, true);
  add("grid/remainder-differ", {"grid_options.remainder must be the same on all ranks, got first on rank 0 and last on rank"},
      [](const world& w) { hs::cartesian_grid(w.comm, {.dims = V{0}, .remainder = w.first_or(rule::first, rule::last)}); },
      2);
  add("grid/comm-null", {"communicator: MPI_COMM_NULL is not a valid communicator"},
      [](const world&) { hs::cartesian_grid(MPI_COMM_NULL, {.dims = V{0}, .periodic = B{true}}); }, 1, true);

  // A moved-from grid has no communicator left: every use of it raises before any collective
  // (it segfaulted). Its shape stays: what needs no communicator still works.
  const auto moved_from = [](const world& w) {
    hs::cartesian_grid g(w.comm, {.dims = V{0, 0, 0}, .periodic = B{true, true, true}});
    hs::cartesian_grid taken = std::move(g);
    return g;  // NOLINT(bugprone-use-after-move): the misuse under test
  };
  const std::string moved = "grid: the cartesian_grid was moved from and has no communicator left";
  add("grid/moved-from-plan", {moved, "for comm()", "use the grid it was moved to"},
      [=](const world& w) { hs::make_plan<hs::Shift, double>(moved_from(w), 1, 4); }, 1, true);
  add("grid/moved-from-plan-by-name", {moved}, [=](const world& w) { hs::make_plan<double>(moved_from(w), "Shift", 1, 4); });
  add("grid/moved-from-particle-plan", {moved}, [=](const world& w) {
    const hs::cartesian_grid g = moved_from(w);
    const hs::domain dom{{0, 0, 0}, {1, 1, 1}};
    const auto [lo, hi] = hs::box_of(g, dom);  // the shape alone: still fine
    const std::vector<hs::position> x{{(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2}};
    hs::make_particle_plan<hs::Shift>(g, dom, 0.2, std::span<const hs::position>(x));
  });
  add("grid/moved-from-field", {moved}, [=](const world& w) { hs::grid_field<double>(moved_from(w), hs::offset{8, 8, 8}, 1); });
  add("grid/moved-from-migrate", {moved}, [=](const world& w) {
    std::vector<hs::position> x{{0.5, 0.5, 0.5}};
    hs::migrate(moved_from(w), {{0, 0, 0}, {1, 1, 1}}, x);
  });
  add("grid/moved-from-rank", {moved, "for rank()"}, [=](const world& w) { (void)moved_from(w).rank(); });
  add("grid/moved-from-comm", {moved, "for comm()"}, [=](const world& w) { (void)moved_from(w).comm(); });
}

}  // namespace misuse

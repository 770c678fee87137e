// SPDX-License-Identifier: BSD-3-Clause
// Grid fields: global size, ghost widths, views and element types; plans of
// strategies that cannot select; per-call shape checks, on every rank or
// (with collective argument checks) on one.

#include "battery.hpp"

#include <haloshift/auto.hpp>

#include <climits>
#include <functional>
#include <utility>
#include <vector>

namespace hs = haloshift;

namespace misuse {

namespace {
hs::cartesian_grid field_grid(const world& w) { return hs::cartesian_grid(w.comm, {.dims = {0, 0, 0}}); }
hs::plan_options field_collective() {
  hs::plan_options o;
  o.checks = hs::argument_checks::collective;
  return o;
}
const hs::offset eight{8, 8, 8};
/// Splits evenly over 1-4 ranks in any layout: a view's mistake then reads the same on every rank.
const hs::offset twelve{12, 12, 12};
/// The caller's own array shaped like `f` (ghost width 1), and a view of it.
template <class T>
struct padded {
  std::vector<T> cells;
  hs::field_view<T> view;
  explicit padded(const hs::grid_field<double>& f)
      : cells(f.storage().size()), view(hs::make_field_view(cells.data(), f.shape().interior, hs::offset{1, 1, 1})) {}
};
}  // namespace

void register_field_cases() {
  add("fields/ghost-negative", {"ghost[1] must be >= 0, got -1"},
      [](const world& w) { hs::grid_field<double>(field_grid(w), eight, hs::offset{1, -1, 1}); }, 1, true);
  add("fields/global-zero", {"global[0] must be >= 1, got 0"},
      [](const world& w) { hs::grid_field<double>(field_grid(w), hs::offset{0, 8, 8}, 1); });
  add("fields/global-negative-one-rank", {"global[2] must be >= 1, got -8"},
      [](const world& w) { hs::grid_field<double>(field_grid(w), hs::offset{8, 8, w.on_last(-8, 8)}, 1); });
  add("fields/ghost-huge", {"ghost[0] = 2147483647 makes the padded extent", "more than INT_MAX"},
      [](const world& w) { hs::grid_field<double>(field_grid(w), eight, hs::offset{INT_MAX, 1, 1}); }, 1, true);
  add("fields/cells-overflow-size-t", {"overflows size_t"}, [](const world& w) {
    hs::grid_field<double>(field_grid(w), hs::offset{INT_MAX, INT_MAX, INT_MAX}, hs::offset{0, 0, 0});
  });
  add("fields/ghost-beyond-int", {"more than INT_MAX"}, [](const world& w) {
    hs::grid_field<double>(field_grid(w), hs::offset{64, 64, 64}, hs::offset{INT_MAX / 2, 1, 1});
  });
  add("fields/cuts-differ", {"cuts[0] (hash of the values) must be the same on all ranks"}, [](const world& w) {
    const hs::cartesian_grid g(w.comm, {.dims = {0}, .periodic = {true}});
    hs::cell_cuts cuts;
    for (int c = 0; c <= g.dim(0); ++c) cuts[0].push_back(4 * c);
    cuts[0][static_cast<std::size_t>(g.dim(0)) - 1] += w.first_or(1, 0);  // rank 0 moves its last inner cut
    hs::grid_field<double>(g, cuts, hs::offset{1, 0, 0});
  }, 2);
  add("fields/cuts-decreasing", {"cuts must be nondecreasing"}, [](const world& w) {
    const hs::cartesian_grid g(w.comm, {.dims = {0}, .periodic = {true}});
    hs::cell_cuts cuts;
    for (int c = 0; c <= g.dim(0); ++c) cuts[0].push_back(4 * c);
    cuts[0][1] = 4 * g.dim(0) + 1;  // above the cuts after it
    hs::grid_field<double>(g, cuts, hs::offset{1, 0, 0});
  }, 2);
  add("fields/extra-dimension", {"but the grid has only 1 dimension(s)"}, [](const world& w) {
    const hs::cartesian_grid g(w.comm, {.dims = {0}, .periodic = {true}});
    hs::grid_field<double>(g, hs::offset{8, 8, 1}, hs::offset{1, 0, 0});
  });
  add("fields/global-differ", {"global[0] must be the same on all ranks, got values from 8 to 9"},
      [](const world& w) { hs::grid_field<double>(field_grid(w), hs::offset{w.first_or(8, 9), 8, 8}, 1); }, 2, true);
  add("fields/ghost-differ", {"ghost[2] must be the same on all ranks, got values from 1 to 2"},
      [](const world& w) { hs::grid_field<double>(field_grid(w), eight, hs::offset{1, 1, w.first_or(1, 2)}); }, 2);
  // Widths per side: each side checked and agreed on its own; a plan agrees them (and its pattern) too.
  add("fields/ghost-high-negative", {"ghost_high[2] must be >= 0, got -1"}, [](const world& w) {
    hs::grid_field<double>(field_grid(w), eight, hs::offset{1, 1, 1}, hs::offset{1, 0, -1});
  });
  add("fields/ghost-high-differ", {"ghost_high[1] must be the same on all ranks, got values from 0 to 1"},
      [](const world& w) {
        hs::grid_field<double>(field_grid(w), eight, hs::offset{1, 1, 1}, hs::offset{1, w.first_or(0, 1), 1});
      }, 2);
  add("fields/plan-ghost-high-differ", {"ghost_high[0] must be the same on all ranks, got values from 1 to 2"},
      [](const world& w) {
        const auto g = field_grid(w);
        const hs::field_shape shape(g.shape(), g.coords(), eight, hs::offset{1, 1, 1},
                                    hs::offset{w.first_or(2, 1), 1, 1});
        hs::make_field_plan<hs::SingleHop>(g, shape);
      }, 2);
  add("fields/pattern-differ", {"pattern must be the same on all ranks"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> f(g, eight, 1);
    hs::make_field_plan<hs::Shift>(f, {.pattern = w.first_or(hs::halo_pattern::faces, hs::halo_pattern::full)});
  }, 2, true);
  add("fields/view-ghost-high-negative", {"make_field_view: dimension 1 has interior 1, ghost 0, ghost_high -1"},
      [](const world&) {
        std::vector<double> a(10);
        hs::make_field_view(a.data(), hs::offset{1, 1, 1}, hs::offset{0, 0, 0}, hs::offset{0, -1, 0});
      });
  add("fields/view-narrow-ghost-high", {"ghost_high[0] = 1 is narrower than the plan's ghost_high (2,1,1)"},
      [](const world& w) {
        const auto g = field_grid(w);
        hs::grid_field<double> a(g, eight, hs::offset{1, 1, 1}, hs::offset{2, 1, 1});
        auto p = hs::make_field_plan<hs::Shift>(a);
        const hs::offset in = a.shape().interior;
        std::vector<double> storage(static_cast<std::size_t>((in[0] + 3) * (in[1] + 3) * (in[2] + 3)));
        p.forward(hs::make_field_view(storage.data(), in, hs::offset{1, 1, 1}));  // 1 layer above, the plan 2
      });
  add("fields/element-type-differ-at-construction", {"sizeof(T) must be the same on all ranks"},
      [](const world& w) {
        const auto g = field_grid(w);
        if (w.first()) hs::grid_field<float>(g, eight, 1);
        else hs::grid_field<double>(g, eight, 1);
      }, 2);
  add("fields/teamshift", {"strategy TeamShift carries block payloads only", offered}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> f(g, eight, 1);
    hs::make_field_plan<hs::TeamShift>(f);
  }, 1, true);
  add("fields/teamshift-by-name", {"strategy TeamShift carries block payloads only", offered}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> f(g, eight, 1);
    hs::make_field_plan(g, "TEAMSHIFT", f.shape());
  });
  add("fields/nodeaggregate-by-name", {"strategy NodeAggregate carries block payloads only", offered},
      [](const world& w) {
        const auto g = field_grid(w);
        hs::grid_field<double> f(g, eight, 1);
        hs::make_field_plan(g, "nodeaggregate", f.shape());
      });
  add("fields/strategy-unknown", {"strategy \"Stencil\" is not known",
                                  "strategies for particle, field and selective plans: Shift, SingleHop, TtlMultiHop, "
                                  "NeighborAlltoall"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> f(g, eight, 1);
    hs::make_field_plan(g, "Stencil", f.shape());
  });
  add("fields/strategy-differ", {"strategy must be the same on all ranks, got Auto on rank 0 and SingleHop on rank 1"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> f(g, eight, 1);
    hs::make_field_plan(g, w.first_or("Auto", "SingleHop"), f.shape());
  }, 2);
  add("fields/protocol-invalid", {"plan_options.mode: invalid protocol value 3"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> f(g, eight, 1);
    hs::plan_options o;
    o.mode = static_cast<hs::protocol>(3);
    hs::make_field_plan<hs::Shift>(f, o);
  });
  add("fields/plan-shape-differ", {"global[1] must be the same on all ranks"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> a(g, eight, 1), b(g, hs::offset{8, 9, 8}, 1);
    hs::make_field_plan<hs::Shift>(g, w.first() ? a.shape() : b.shape());
  }, 2);
  add("fields/forward-other-shape", {"forward: the field has", "but the plan was built for"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> a(g, eight, 1), b(g, eight, 2);
    auto p = hs::make_field_plan<hs::Shift>(a);
    p.forward(b);
  }, 1, true);
  add("fields/reverse-other-shape", {"reverse: the field has", "but the plan was built for"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> a(g, eight, 1), b(g, hs::offset{9, 8, 8}, 1);
    auto p = hs::make_field_plan<hs::SingleHop>(a);
    p.reverse(b);
  });
  add("fields/forward-other-shape-one-rank-collective", {"forward: the field has", "but the plan was built for"},
      [](const world& w) {
        const auto g = field_grid(w);
        hs::grid_field<double> a(g, eight, 1), b(g, eight, 2);
        auto p = hs::make_field_plan<hs::Shift>(a, field_collective());
        p.forward(w.last() ? b : a);
      }, 1, true);
  add("fields/element-type-differ-collective",
      {"the element size (bytes) must be the same on all ranks, got values from 4 to 8"}, [](const world& w) {
        const auto g = field_grid(w);
        hs::grid_field<double> d(g, eight, 1);
        hs::grid_field<float> f(g, eight, 1);
        auto p = hs::make_field_plan<hs::TtlMultiHop>(d, field_collective());
        if (w.first()) p.forward(f);
        else p.forward(d);
      }, 2, true);
  add("fields/view-interior-negative", {"make_field_view: dimension 0 has interior -1"}, [](const world&) {
    std::vector<double> a(10);
    hs::make_field_view(a.data(), hs::offset{-1, 1, 1}, hs::offset{1, 0, 0});
  });
  add("fields/view-ghost-negative", {"make_field_view: dimension 2 has interior 1, ghost -1"}, [](const world&) {
    std::vector<double> a(10);
    hs::make_field_view(a.data(), hs::offset{1, 1, 1}, hs::offset{0, 0, -1});
  });
  add("fields/view-order-invalid", {"make_field_view: invalid storage_order value 5"}, [](const world&) {
    std::vector<double> a(27);
    hs::make_field_view(a.data(), hs::offset{1, 1, 1}, hs::offset{1, 1, 1}, static_cast<hs::storage_order>(5));
  });
  add("fields/view-wrong-interior", {"interior", "but this rank's interior is"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> a(g, twelve, 1);
    auto p = hs::make_field_plan<hs::Shift>(a);
    hs::offset wrong = a.shape().interior;
    wrong[0] += 1;
    std::vector<double> storage(static_cast<std::size_t>((wrong[0] + 2) * (wrong[1] + 2) * (wrong[2] + 2)));
    p.forward(hs::make_field_view(storage.data(), wrong, hs::offset{1, 1, 1}));
  });
  add("fields/view-narrow-ghost", {"is narrower than the plan's ghost"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> a(g, eight, 2);
    auto p = hs::make_field_plan<hs::Shift>(a);
    const hs::offset in = a.shape().interior;
    std::vector<double> storage(static_cast<std::size_t>((in[0] + 2) * (in[1] + 2) * (in[2] + 2)));
    p.forward(hs::make_field_view(storage.data(), in, hs::offset{1, 1, 1}));
  });
  add("fields/view-narrow-ghost-one-rank-collective", {"is narrower than the plan's ghost"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> a(g, eight, 2);
    auto p = hs::make_field_plan<hs::SingleHop>(a, field_collective());
    const hs::offset in = a.shape().interior;
    std::vector<double> storage(static_cast<std::size_t>((in[0] + 4) * (in[1] + 4) * (in[2] + 4)));
    const int ghost = w.on_last(1, 2);
    p.forward(hs::make_field_view(storage.data(), in, hs::offset{ghost, ghost, ghost}));
  });
  add("fields/views-differ-in-layout", {"views exchanged together must share their layout"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> a(g, twelve, 1);
    auto p = hs::make_field_plan<hs::Shift>(a);
    const hs::offset in = a.shape().interior;
    std::vector<double> u(static_cast<std::size_t>((in[0] + 2) * (in[1] + 2) * (in[2] + 2)));
    std::vector<float> v(static_cast<std::size_t>((in[0] + 4) * (in[1] + 4) * (in[2] + 4)));
    p.forward(hs::make_field_view(u.data(), in, hs::offset{1, 1, 1}), hs::make_field_view(v.data(), in, hs::offset{2, 2, 2}));
  });
  // Views of several types: each view's element size agrees (their sum did, so permuted types
  // corrupted the ghosts), in the call's one collective.
  add("fields/views-permuted-collective",
      {"the element size (bytes) of array 0 must be the same on all ranks, got values from 4 to 8"},
      [](const world& w) {
        const auto g = field_grid(w);
        hs::grid_field<double> a(g, twelve, 1);
        auto p = hs::make_field_plan<hs::Shift>(a, field_collective());
        padded<double> u(a);
        padded<float> v(a);
        if (w.first()) p.forward(v.view, u.view);
        else p.forward(u.view, v.view);
      }, 2, true);
  add("fields/reverse-views-count-differ-collective",
      {"the number of arrays must be the same on all ranks, got values from 1 to 2"}, [](const world& w) {
        const auto g = field_grid(w);
        hs::grid_field<double> a(g, twelve, 1);
        auto p = hs::make_field_plan<hs::SingleHop>(a, field_collective());
        padded<double> u(a);
        padded<float> v(a), x(a);
        if (w.first()) p.reverse(u.view);
        else p.reverse(v.view, x.view, std::plus<>{});
      }, 2);
  add("fields/bundle-permuted", {"the element size (bytes) of field 0 must be the same on all ranks, got values from 4 to 8"},
      [](const world& w) {
        const auto g = field_grid(w);
        if (w.first()) hs::field_bundle<float, double>(g, eight, 1);
        else hs::field_bundle<double, float>(g, eight, 1);
      }, 2);
  add("fields/bundle-count-differ", {"the number of fields must be the same on all ranks, got values from 1 to 2"},
      [](const world& w) {
        const auto g = field_grid(w);
        if (w.first()) hs::field_bundle<double>(g, eight, 1);
        else hs::field_bundle<float, float>(g, eight, 1);
      }, 2);
  // A moved-from field plan: every member raises (details() was undefined) or is well defined.
  const auto moved_from = [](const world& w, const auto& use) {
    const auto g = field_grid(w);
    hs::grid_field<double> a(g, eight, 1);
    auto p = hs::make_field_plan<hs::Shift>(a);
    auto q = std::move(p);
    if (p.busy()) return;  // NOLINT(bugprone-use-after-move): well defined, idle
    use(p, a);
  };
  add("fields/moved-from-details", {"details: the plan was moved from"}, [=](const world& w) {
    moved_from(w, [](hs::field_plan& p, hs::grid_field<double>&) { (void)p.details().rounds.size(); });
  });
  add("fields/moved-from-forward", {"start_forward: the plan was moved from"}, [=](const world& w) {
    moved_from(w, [](hs::field_plan& p, hs::grid_field<double>& a) { p.forward(a); });
  });
  // A moved-from field kept a pointer into the storage of the field it moved to: a plan wrote there.
  add("fields/forward-moved-from-field", {"forward: the field was moved from"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> a(g, eight, 1);
    auto p = hs::make_field_plan<hs::Shift>(a);
    hs::grid_field<double> b = std::move(a);
    p.forward(a);  // NOLINT(bugprone-use-after-move): the misuse under test
  }, 1, true);
  add("fields/reverse-moved-from-field", {"reverse: the field was moved from"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> a(g, eight, 1), b(g, eight, 1);
    auto p = hs::make_field_plan<hs::SingleHop>(a);
    b = std::move(a);
    p.reverse(a, hs::take_max{});  // NOLINT(bugprone-use-after-move)
  });
  add("fields/forward-moved-from-bundle", {"forward: the field was moved from"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::field_bundle<double, float> a(g, eight, 1);
    auto p = hs::make_field_plan<hs::Shift>(a);
    auto b = std::move(a);
    p.forward(a);  // NOLINT(bugprone-use-after-move)
  });
  // An empty plan (default-constructed, never built) raises on every rank, each holding its own.
  add("fields/empty-plan-forward", {"start_forward: the plan was never built", "make_field_plan"}, [](const world& w) {
    const auto g = field_grid(w);
    hs::grid_field<double> a(g, eight, 1);
    hs::field_plan p;
    p.forward(a);
  });
  add("fields/moved-from-reverse-ghost-value", {"reverse: the plan was moved from"}, [=](const world& w) {
    moved_from(w, [](hs::field_plan& p, hs::grid_field<double>& a) { p.reverse(a, hs::take_ghost_value{}); });
  });
}

}  // namespace misuse

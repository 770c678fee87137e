// SPDX-License-Identifier: BSD-3-Clause
// Block plans: k, the strategy, the options and the element type, wrong on
// every rank, on one rank, or differing across ranks (Auto and
// NeighborAlltoall included: they must meet the others in the same first
// collective). Selective plans with a selector that is not geometric.

#include "battery.hpp"

#include <haloshift/auto.hpp>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

namespace hs = haloshift;

namespace misuse {

namespace {
hs::cartesian_grid ring(const world& w) { return hs::cartesian_grid(w.comm, {.dims = {0}, .periodic = {true}}); }
hs::cartesian_grid cube(const world& w) { return hs::cartesian_grid(w.comm, {.dims = {0, 0, 0}}); }
hs::plan_options with_mode(int mode) {
  hs::plan_options o;
  o.mode = static_cast<hs::protocol>(mode);
  return o;
}
hs::plan_options with_shell(int kind) {
  hs::plan_options o;
  o.kind = static_cast<hs::shell>(kind);
  return o;
}
hs::plan_options with_pattern(int pattern) {
  hs::plan_options o;
  o.pattern = static_cast<hs::halo_pattern>(pattern);
  return o;
}
hs::plan_options with_team(hs::offset team) {
  hs::plan_options o;
  o.team = team;
  return o;
}
}  // namespace

void register_plan_cases() {
  add("plan/k-negative", {"k must be >= 1, got -1"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(ring(w), -1, 4); }, 1, true);
  add("plan/k-zero", {"k must be >= 1, got 0"}, [](const world& w) { hs::make_plan<hs::SingleHop, double>(ring(w), 0, 4); });
  add("plan/k-offset-negative", {"k[0] must be >= 0, got -1"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(cube(w), hs::offset{-1, 1, 1}, 4); });
  add("plan/k-offset-zero", {"k must be positive in at least one dimension, got (0,0,0)"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(cube(w), hs::offset{0, 0, 0}, 4); });
  add("plan/k-beyond-dimensions", {"k[1] = 2", "but the grid has only 1"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(ring(w), hs::offset{1, 2, 0}, 4); });
  add("plan/k-int-max", {"k = (2147483647,2147483647,2147483647) is too large"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(cube(w), INT_MAX, 4); }, 1, true);
  add("plan/k-million", {"k = (1000000,1000000,1000000) is too large", "8000012000006000000 offsets"},
      [](const world& w) { hs::make_plan<hs::TtlMultiHop, double>(cube(w), 1000000, 4); });
  add("plan/k-huge-one-dimension", {"k = (1000000,1,1) is too large"},
      [](const world& w) { hs::make_plan<double>(cube(w), "SingleHop", hs::offset{1000000, 1, 1}, 4); });
  add("plan/k-huge-one-rank", {"k = (2147483647,2147483647,2147483647) is too large"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(cube(w), w.on_last(INT_MAX, 1), 4); });
  add("plan/k-negative-one-rank", {"k must be >= 1, got -3"},
      [](const world& w) { hs::make_plan<hs::TeamShift, double>(ring(w), w.on_last(-3, 1), 4); });
  add("plan/k-differ", {"k[0] must be the same on all ranks, got values from 1 to 2"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(ring(w), w.first_or(1, 2), 4); }, 2, true);
  add("plan/k-differ-by-dimension", {"k[2] must be the same on all ranks, got values from 0 to 1"},
      [](const world& w) { hs::make_plan<hs::SingleHop, double>(cube(w), hs::offset{1, 1, w.first_or(0, 1)}, 4); }, 2);
  add("plan/strategy-differ-by-name", {"strategy must be the same on all ranks, got Shift on rank 0 and SingleHop on rank 1"},
      [](const world& w) { hs::make_plan<double>(ring(w), w.first_or("Shift", "SingleHop"), 1, 4); }, 2, true);
  add("plan/strategy-differ-by-type", {"strategy must be the same on all ranks, got TtlMultiHop on rank 0 and Shift on rank 1"}, [](const world& w) {
    const hs::cartesian_grid g = ring(w);
    if (w.first()) hs::make_plan<hs::TtlMultiHop, double>(g, 1, 4);
    else hs::make_plan<hs::Shift, double>(g, 1, 4);
  }, 2);
  add("plan/strategy-auto-versus-shift", {"strategy must be the same on all ranks, got Auto on rank 0 and Shift on rank 1"}, [](const world& w) {
    const hs::cartesian_grid g = ring(w);
    if (w.first()) hs::make_plan<double>(g, "Auto", 1, 4);
    else hs::make_plan<hs::Shift, double>(g, 1, 4);
  }, 2, true);
  add("plan/strategy-neighbor-versus-singlehop",
      {"strategy must be the same on all ranks, got SingleHop on rank 0 and NeighborAlltoall on rank"}, [](const world& w) {
    const hs::cartesian_grid g = ring(w);
    if (w.last()) hs::make_plan<hs::NeighborAlltoall, double>(g, 1, 4);
    else hs::make_plan<hs::SingleHop, double>(g, 1, 4);
  }, 2);
  add("plan/strategy-auto-versus-neighbor", {"strategy must be the same on all ranks, got Auto on rank 0 and NeighborAlltoall on rank 1"},
      [](const world& w) { hs::make_plan<double>(ring(w), w.first_or("Auto", "NeighborAlltoall"), 1, 4); }, 2);
  add("plan/strategy-unknown", {"strategy \"Shfit\" is not known", "known strategies: Shift"},
      [](const world& w) { hs::make_plan<double>(ring(w), "Shfit", 1, 4); }, 1, true);
  add("plan/strategy-unknown-one-rank", {"strategy \"NoSuchStrategy\" is not known"},
      [](const world& w) { hs::make_plan<double>(ring(w), w.on_last("NoSuchStrategy", "Shift"), 1, 4); });
  add("plan/strategy-empty-name", {"strategy \"\" is not known"},
      [](const world& w) { hs::make_plan<double>(ring(w), "", 1, 4); });
  add("plan/protocol-invalid", {"plan_options.mode: invalid protocol value 7"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(ring(w), 1, 4, with_mode(7)); }, 1, true);
  add("plan/protocol-invalid-one-rank", {"plan_options.mode: invalid protocol value -3"},
      [](const world& w) { hs::make_plan<hs::SingleHop, double>(ring(w), 1, 4, with_mode(w.on_last(-3, 0))); });
  add("plan/protocol-invalid-auto", {"plan_options.mode: invalid protocol value 9"},
      [](const world& w) { hs::make_plan<double>(ring(w), "Auto", 1, 4, with_mode(9)); });
  add("plan/shell-invalid", {"plan_options.kind: invalid shell value -1"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(ring(w), 1, 4, with_shell(-1)); }, 1, true);
  add("plan/shell-invalid-by-name", {"plan_options.kind: invalid shell value 5"},
      [](const world& w) { hs::make_plan<double>(ring(w), "TtlMultiHop", 1, 4, with_shell(5)); });
  add("plan/protocol-differ", {"protocol must be the same on all ranks, got values from 0 to 1"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(ring(w), 1, 4, with_mode(w.first_or(0, 1))); }, 2);
  add("plan/shared-memory-differ", {"shared_memory must be the same on all ranks, got values from 0 to 1"},
      [](const world& w) {
        hs::make_plan<hs::Shift, double>(ring(w), 1, 4, {.shared_memory = w.first_or(false, true)});
      }, 2);
  add("plan/shared-memory-differ-particles", {"shared_memory must be the same on all ranks, got values from 0 to 1"},
      [](const world& w) {
        const std::vector<hs::position> x;  // no particles: the options alone disagree
        hs::make_particle_plan<hs::SingleHop>(cube(w), hs::domain{{0, 0, 0}, {1, 1, 1}}, hs::position{0.1, 0.1, 0.1},
                                              x, {.shared_memory = w.first_or(true, false)});
      }, 2);
  // The battery initializes MPI with MPI_Init (MPI_THREAD_SINGLE): a background thread may not call MPI.
  add(
      "plan/background-thread-single",
      {"plan_options::background is true, but MPI provides thread level MPI_THREAD_SINGLE",
       "MPI_Init_thread at MPI_THREAD_SERIALIZED"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(ring(w), 1, 4, {.background = true}); }, 1, true);
  add("plan/background-thread-single-one-rank", {"plan_options::background is true"},
      [](const world& w) { hs::make_plan<hs::SingleHop, double>(cube(w), 1, 4, {.background = w.last()}); });
  add("plan/background-thread-single-particles", {"plan_options::background is true"}, [](const world& w) {
    const std::vector<hs::position> x;
    hs::make_particle_plan<hs::Shift>(cube(w), hs::domain{{0, 0, 0}, {1, 1, 1}}, hs::position{0.1, 0.1, 0.1}, x,
                                      {.background = true});
  });
  add("plan/background-thread-single-field", {"plan_options::background is true"}, [](const world& w) {
    hs::grid_field<double> u(cube(w), hs::offset{8, 8, 8}, hs::offset{1, 1, 1});
    hs::make_field_plan<hs::SingleHop>(u, {.background = w.first()});
  });
  add("plan/shell-differ", {"shell must be the same on all ranks, got values from 0 to 1"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(ring(w), 1, 4, with_shell(w.first_or(0, 1))); }, 2);
  add("plan/pattern-invalid", {"plan_options.pattern: invalid halo_pattern value 4"},
      [](const world& w) { hs::make_plan<hs::SingleHop, double>(cube(w), 1, 4, with_pattern(w.on_last(4, 0))); });
  add("plan/pattern-differ", {"pattern must be the same on all ranks, got values from 0 to 1"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(cube(w), 1, 4, with_pattern(w.first_or(0, 1))); }, 2);
  add("plan/element-type-differ", {"sizeof(T) must be the same on all ranks, got values from 4 to 8"},
      [](const world& w) {
        const hs::cartesian_grid g = ring(w);
        if (w.first()) hs::make_plan<hs::Shift, float>(g, 1, 4);
        else hs::make_plan<hs::Shift, double>(g, 1, 4);
      },
      2, true);
  add("plan/neighbor-rendezvous", {"NeighborAlltoall runs MPI_Neighbor_alltoallv: only protocol::overlapping applies"},
      [](const world& w) {
        hs::make_plan<hs::NeighborAlltoall, double>(ring(w), 1, 4, with_mode(static_cast<int>(hs::protocol::rendezvous)));
      });
  add("plan/neighbor-rendezvous-one-rank", {"only protocol::overlapping applies"}, [](const world& w) {
    hs::make_plan<double>(ring(w), "NeighborAlltoall", 1, 4,
                          with_mode(static_cast<int>(w.on_last(hs::protocol::rendezvous, hs::protocol::overlapping))));
  });
  add("plan/team-negative", {"TeamShift: team[0] = -1 must lie in 1.."},
      [](const world& w) { hs::make_plan<hs::TeamShift, double>(ring(w), 2, 4, with_team({-1, 0, 0})); });
  add("plan/team-too-large", {"TeamShift: team[0] =", "must lie in 1.."}, [](const world& w) {
    hs::make_plan<hs::TeamShift, double>(ring(w), 2, 4, with_team({w.size + 1, 0, 0}));
  });
  add("plan/team-not-dividing", {"TeamShift: team[0] =", "must divide the", "boxes along dimension 0"},
      [](const world& w) { hs::make_plan<hs::TeamShift, double>(ring(w), 2, 4, with_team({w.size - 1, 0, 0})); }, 3);
  add("plan/team-differ", {"team[0] must be the same on all ranks, got values from 0 to 1"},
      [](const world& w) { hs::make_plan<hs::TeamShift, double>(ring(w), 1, 4, with_team({w.first_or(0, 1), 0, 0})); }, 2);
  add("plan/local-count-too-large", {"local_count", "is too large"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(ring(w), 1, SIZE_MAX / 4); }, 1, true);
  add("plan/message-beyond-int", {"exceeds MPI's int count"},
      [](const world& w) { hs::make_plan<hs::Shift, double>(ring(w), 1, std::size_t{1} << 29); });
  add("plan/message-beyond-int-uneven", {"exceeds MPI's int count"},
      [](const world& w) { hs::make_plan<hs::SingleHop, double>(ring(w), 1, w.on_last(std::size_t{1} << 29, std::size_t{1})); });
  add("plan/selector-not-geometric", {"the selector is not geometric"}, [](const world& w) {
    const std::vector<int> keys{1, 2, 3};
    auto skips_a_box = [](const hs::offset&, const hs::offset& rel, const int&) { return rel[0] % 2 == 0; };
    hs::make_selective_plan<hs::Shift>(ring(w), hs::offset{2, 0, 0}, std::span<const int>(keys), skips_a_box);
  });
  add("plan/selective-teamshift", {"TeamShift", "block payloads only"}, [](const world& w) {
    const std::vector<int> keys{1, 2, 3};
    auto all = [](const hs::offset&, const hs::offset&, const int&) { return true; };
    hs::make_selective_plan<hs::TeamShift>(ring(w), hs::offset{2, 0, 0}, std::span<const int>(keys), all);
  });
  add("plan/checks-invalid", {"plan_options.checks: invalid value 7"}, [](const world& w) {
    hs::plan_options o;
    o.checks = static_cast<hs::argument_checks>(7);
    hs::make_plan<hs::Shift, double>(ring(w), 1, 4, o);
  });
  add("plan/checks-differ", {"checks must be the same on all ranks, got values from 1 to 2"}, [](const world& w) {
    hs::plan_options o;
    o.checks = w.first_or(hs::argument_checks::local, hs::argument_checks::collective);
    hs::make_plan<hs::Shift, double>(ring(w), 1, 4, o);
  }, 2);
  add("plan/checks-environment-invalid", {"HALOSHIFT_CHECKS", "\"sometimes\"", "local or collective"},
      [](const world& w) {
        setenv("HALOSHIFT_CHECKS", "sometimes", 1);
        hs::make_plan<hs::Shift, double>(ring(w), 1, 4);
      });
}

}  // namespace misuse

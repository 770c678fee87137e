// SPDX-License-Identifier: BSD-3-Clause
// Grid mode against an oracle computed from global coordinates alone: after
// a ghost fill every ghost cell holds the value of the cell it images
// (wrapped across periodic dimensions), non-periodic outer ghosts keep their
// sentinel; reverse combines every holder's ghost copy onto the owner as a
// serial loop over all ranks' padded boxes says. Swept over the grid shapes
// of the world size, uneven sizes, ghost widths up to several boxes (the same
// on each side or per side, 0 on one side), halo patterns (a ghost cell
// outside the pattern keeps its sentinel and contributes nothing in reverse),
// and the strategies that can select.

#include "../support/catch.hpp"
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <haloshift/auto.hpp>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <tuple>

#include "../support/oracle.hpp"
#include "../support/sweep.hpp"
#include "../support/window_messages.hpp"
#include "box_oracle.hpp"
#include "view_check.hpp"

namespace hs = haloshift;

namespace {

/// Everything the oracle knows: the grid, global sizes (split evenly) and ghost widths. Its
/// split and wrap arithmetic is its own (no library code).
struct world : box_oracle::boxes {
  std::array<int, 3> n{1, 1, 1};
};

double value_at(const std::array<int, 3>& w) { return w[0] + 1000.0 * w[1] + 1e6 * w[2] + 0.25; }
constexpr double sentinel = -7.5;

struct cell {  // a struct field: several members, padding included
  std::int32_t a;
  double b;
};

std::int64_t contribution(int holder, std::size_t index) { return holder * 100003 + static_cast<std::int64_t>(index); }

/// Ghost widths (below, above) and a halo pattern (box_oracle::boxes::pattern_dims) to try.
struct widths {
  std::array<int, 3> low, high;
  int pattern_dims = 3;
  bool operator==(const widths&) const = default;
};

/// Widths to try for a world: 1, 2, and more than the narrowest interior, mixed per dimension;
/// per side with 0 on one side (faces only), and wider than the boxes next door on one side only
/// (faces and edges).
std::vector<widths> ghost_sets(const world& w) {
  int beyond = 0;
  for (int d = 0; d < w.ndims; ++d) beyond = std::max(beyond, w.n[d] / w.g.dims[d] + 1);
  std::vector<widths> out{{{1, 1, 1}, {1, 1, 1}},
                          {{2, 1, 2}, {2, 1, 2}},
                          {{beyond, beyond, beyond}, {beyond, beyond, beyond}},
                          {{beyond, 0, 1}, {1, beyond, 0}, 2}};
  if (!sweep::reduced()) out.push_back({{0, 2, 1}, {1, 0, 2}, 1});
  for (auto& g : out)
    for (int d = w.ndims; d < 3; ++d) g.low[d] = g.high[d] = 0;
  return out;
}

/// The caller's own arrays (field views) against `u`, a field the plan filled: x fastest with padded
/// rows and planes and one ghost layer more than the plan's (which must stay untouched), blocking;
/// z fastest (C `a[x][y][z]`), split phase. Then reverse on a view against reverse on a field.
std::string check_views(const hs::grid_field<double>& u, hs::field_plan& plan, int ndims) {
  std::ostringstream why;
  const hs::field_shape& sh = u.shape();
  std::vector<double> z_fastest_copy;
  hs::field_view<double> z_fastest_view;
  for (hs::storage_order order : {hs::storage_order::x_fastest, hs::storage_order::z_fastest}) {
    const bool x_fastest = order == hs::storage_order::x_fastest;
    hs::offset low = sh.ghost, high = sh.ghost_high, padding{0, 0, 0};
    std::size_t n = 1;
    for (int d = 0; d < 3; ++d) {
      if (x_fastest && d < ndims) low[d] += 1, high[d] += 2 - d, padding[d] = 3 - d;
      n *= static_cast<std::size_t>(low[d] + sh.interior[d] + high[d] + padding[d]);
    }
    std::vector<double> a(n, sentinel);
    const hs::field_view<double> v = hs::make_field_view(a.data(), sh.interior, low, high, order, padding);
    auto at = [&](int i, int j, int k) -> double& { return view_check::cell_of(v, i, j, k); };
    for (int k = 0; k < sh.interior[2]; ++k)
      for (int j = 0; j < sh.interior[1]; ++j)
        for (int i = 0; i < sh.interior[0]; ++i) at(i, j, k) = u(i, j, k);
    if (x_fastest) {
      plan.forward(v);
    } else {
      auto pending = plan.start_forward(v);
      pending.progress();
      pending.wait();
    }
    view_check::compare(v, u, sentinel, x_fastest ? "x-fastest" : "z-fastest", why);
    if (!x_fastest) z_fastest_copy = a, z_fastest_view = v, z_fastest_view.data = z_fastest_copy.data();
  }
  // Two views of different element types in one exchange, laid out as the plan's fields, and z fastest
  // with padding and a ghost layer more below: the same cells as each exchanged alone.
  for (const bool own_layout : {true, false}) {
    hs::offset low = sh.ghost, padding{0, 0, 0};
    std::size_t n = 1;
    for (int d = 0; d < 3; ++d) {
      if (!own_layout && d < ndims) low[d] += 1, padding[d] = d + 1;
      n *= static_cast<std::size_t>(low[d] + sh.interior[d] + sh.ghost_high[d] + padding[d]);
    }
    const auto view_of = [&](auto* p) {
      return own_layout ? hs::make_field_view(p, sh)
                        : hs::make_field_view(p, sh.interior, low, sh.ghost_high, hs::storage_order::z_fastest, padding);
    };
    std::vector<double> a(n, sentinel), a_alone(n, sentinel);
    std::vector<float> b(n, -1.0f), b_alone(n, -1.0f);
    for (int k = 0; k < sh.interior[2]; ++k)
      for (int j = 0; j < sh.interior[1]; ++j)
        for (int i = 0; i < sh.interior[0]; ++i) {
          view_check::cell_of(view_of(a.data()), i, j, k) = view_check::cell_of(view_of(a_alone.data()), i, j, k) =
              u(i, j, k);
          view_check::cell_of(view_of(b.data()), i, j, k) = view_check::cell_of(view_of(b_alone.data()), i, j, k) =
              static_cast<float>(u(i, j, k)) * 0.5f;
        }
    auto pending = plan.start_forward(view_of(a.data()), view_of(b.data()));
    pending.wait();
    plan.forward(view_of(a_alone.data()));
    plan.forward(view_of(b_alone.data()));
    if (a != a_alone || b != b_alone) why << "two views in one exchange differ from one at a time; ";
    plan.reverse(view_of(a.data()), view_of(b.data()), hs::take_max{});
    plan.reverse(view_of(a_alone.data()), hs::take_max{});
    plan.reverse(view_of(b_alone.data()), hs::take_max{});
    if (a != a_alone || b != b_alone) why << "two views reversed together differ from one at a time; ";
  }
  // Reverse: the filled view and a field copy of u, both combined with take_max (order-independent).
  hs::grid_field<double> field(u.grid(), sh.global, sh.ghost, sh.ghost_high);
  std::copy(u.storage().begin(), u.storage().end(), field.storage().begin());
  for (std::size_t i = 0; i < field.storage().size(); ++i) field.storage()[i] += static_cast<double>(i % 7);
  for (int k = -sh.ghost[2]; k < sh.interior[2] + sh.ghost_high[2]; ++k)
    for (int j = -sh.ghost[1]; j < sh.interior[1] + sh.ghost_high[1]; ++j)
      for (int i = -sh.ghost[0]; i < sh.interior[0] + sh.ghost_high[0]; ++i)
        view_check::cell_of(z_fastest_view, i, j, k) = field(i, j, k);
  plan.reverse(field, hs::take_max{});
  plan.reverse(z_fastest_view, hs::take_max{});
  for (int k = 0; k < sh.interior[2]; ++k)
    for (int j = 0; j < sh.interior[1]; ++j)
      for (int i = 0; i < sh.interior[0]; ++i) {
        const double got = view_check::cell_of(z_fastest_view, i, j, k);
        if (got != field(i, j, k) && why.tellp() < 600)
          why << "reverse on a view, cell (" << i << "," << j << "," << k << "): " << got << ", expected "
              << field(i, j, k) << "; ";
      }
  return why.str();
}

/// Zero copy: a view of a shared_array laid out as the plan's fields lends every message inside a
/// node that fits a slot (counted exactly) and fills the ghosts of `u` (which `plan` filled from the
/// same interior) bit for bit, blocking and split phase; reverse (max) equals reverse of a plain
/// array. `mixed`: ranks of odd number keep a plain array (packed), mixed with the lending ones.
/// `windowed`: the plan has the window (not a neighbourhood collective), else nothing is lent.
std::string check_zero_copy(const hs::cartesian_grid& grid, const world& w, int rank,
                            const hs::grid_field<double>& u, hs::field_plan& plan, bool mixed, bool windowed) {
  std::ostringstream why;
  const hs::field_shape& sh = u.shape();
  hs::shared_array<double> shared(grid, sh.size());  // collective: every rank makes one
  std::vector<double> own(sh.size()), plain(sh.size());
  const bool lends = windowed && (!mixed || rank % 2 == 0);
  double* a = !mixed || rank % 2 == 0 ? shared.data() : own.data();
  const std::size_t bytes = sh.size() * sizeof(double);
  for (int split = 0; split < 2; ++split) {
    w.for_each_cell(rank, [&](std::size_t i, std::array<int, 3> p) {
      a[i] = w.interior(rank, p) ? u.storage()[i] : sentinel;
    });
    const std::uint64_t before = hs::detail::lent_messages;
    if (split) {
      auto pending = plan.start_forward(hs::make_field_view(a, sh));
      pending.progress();
      pending.wait();
    } else {
      plan.forward(hs::make_field_view(a, sh));
    }
    const std::uint64_t lent = lends ? window_messages(grid, plan.details(), sizeof(double), false) : 0;
    if (hs::detail::lent_messages - before != lent)
      why << "zero copy: " << hs::detail::lent_messages - before << " messages lent; ";
    if (std::memcmp(a, u.storage().data(), bytes) != 0) why << "zero copy forward (split " << split << ") differs; ";
  }
  for (std::size_t i = 0; i < sh.size(); ++i) plain[i] = a[i] += static_cast<double>(i % 7);
  const std::uint64_t before = hs::detail::lent_messages;
  plan.reverse(hs::make_field_view(a, sh), hs::take_max{});
  const std::uint64_t lent = lends ? window_messages(grid, plan.details(), sizeof(double), true) : 0;
  if (hs::detail::lent_messages - before != lent)
    why << "zero copy reverse: " << hs::detail::lent_messages - before << " messages lent; ";
  plan.reverse(hs::make_field_view(plain.data(), sh), hs::take_max{});
  if (std::memcmp(a, plain.data(), bytes) != 0) why << "zero copy reverse differs from a plain array's; ";
  return why.str();
}

template <class Strategy>
std::string check_fill(const hs::cartesian_grid& grid, const world& w, int rank, std::size_t& checked,
                       std::optional<hs::field_plan>& plan, bool shared_memory = false,
                       hs::field_messages messages = hs::field_messages::automatic) {
  std::ostringstream why;
  const hs::offset global{w.n[0], w.n[1], w.ndims > 2 ? w.n[2] : 1};
  const hs::offset ghost{w.ghost[0], w.ghost[1], w.ghost[2]},
      ghost_high{w.ghost_high[0], w.ghost_high[1], w.ghost_high[2]};
  hs::grid_field<double> u(grid, global, ghost, ghost_high, sentinel);
  hs::field_bundle<std::int32_t, cell> both(grid, global, ghost, ghost_high);
  w.for_each_cell(rank, [&](std::size_t i, std::array<int, 3> p) {
    if (!w.interior(rank, p)) {
      both.get<0>().storage()[i] = -1;
      both.get<1>().storage()[i] = {-1, sentinel};
      return;
    }
    u.storage()[i] = value_at(p);
    both.get<0>().storage()[i] = p[0] * 7 + p[1] * 131 + p[2] * 9973;
    both.get<1>().storage()[i] = {p[2], value_at(p)};
  });
  // `checked` counts this rank's cells: on 2 ranks some plans run in the background on one rank only.
  plan.emplace(hs::make_field_plan<Strategy>(u, {.pattern = w.pattern(),
                                                 .shared_memory = shared_memory,
                                                 .background = sweep::background(checked),
                                                 .messages = messages}));
  const bool per_field = messages == hs::field_messages::per_field;
  if (plan->messages() != (per_field ? hs::field_messages::per_field : hs::field_messages::per_neighbor))
    why << "the plan runs another field_messages than asked; ";
  for (int d = 0; d < w.ndims; ++d) {
    const int narrowest = w.n[d] / w.g.dims[d], wider = std::max(w.ghost[d], w.ghost_high[d]);
    const int k = (wider + narrowest - 1) / narrowest;
    if (plan->reach()[d] != k && !(plan->reach() == hs::offset{1, w.ndims > 1, w.ndims > 2} && k == 0))
      why << "reach[" << d << "] " << plan->reach()[d] << " expected " << k << "; ";
  }
  plan->forward(u);
  {  // a plan repeats; here split phase: progress() once, then wait()
    auto pending = plan->start_forward(u);
    pending.progress();
    pending.wait();
  }
  if (shared_memory)
    why << check_zero_copy(grid, w, rank, u, *plan, w.ghost != w.ghost_high,
                           std::string(Strategy::name) != "NeighborAlltoall");
  if (std::string(Strategy::name) != "NeighborAlltoall" && !sweep::reduced() && w.ghost == ghost_sets(w).front().low) {
    hs::grid_field<double> v(grid, global, ghost, sentinel);  // synchronous sends give the same ghosts
    std::copy(u.storage().begin(), u.storage().end(), v.storage().begin());
    w.for_each_cell(rank, [&](std::size_t i, std::array<int, 3> p) {
      if (!w.interior(rank, p)) v.storage()[i] = sentinel;
    });
    // (Synchronous sends never take the shared-memory path: this is the flat path's result too.)
    hs::make_field_plan<Strategy>(v, {.mode = hs::protocol::rendezvous, .messages = messages}).forward(v);
    if (std::memcmp(u.data(), v.data(), u.storage().size_bytes()) != 0) why << "rendezvous differs; ";
  }
  {  // one plan serves every field of its shape; split phase, test() until done
    auto pending = plan->start_forward(both);
    while (!pending.test()) {
    }
  }
  if (std::string(Strategy::name) == "Shift") {
    int limit = 0;
    for (int d = 0; d < 3; ++d) limit += 2 * plan->reach()[d];
    if (plan->details().messages_sent > static_cast<std::size_t>(limit))
      why << "Shift sent " << plan->details().messages_sent << " messages, at most " << limit << " expected; ";
  }
  if (u.shape().size() != static_cast<std::size_t>(w.extent(rank)[0]) * w.extent(rank)[1] * w.extent(rank)[2])
    return "padded size differs from the oracle's";
  why << check_views(u, *plan, w.ndims);
  w.for_each_cell(rank, [&](std::size_t i, std::array<int, 3> p) {
    std::array<int, 3> q = p;
    const bool real = w.wrap(q) && w.in_pattern(rank, p);  // outside the pattern: the sentinel stays
    const double want = real ? value_at(q) : sentinel;
    const double got = u.storage()[i];
    const std::int32_t want_a = real ? q[0] * 7 + q[1] * 131 + q[2] * 9973 : -1;
    const cell got_c = both.get<1>().storage()[i];
    const bool ok = std::memcmp(&got, &want, sizeof want) == 0 && both.get<0>().storage()[i] == want_a &&
                    got_c.a == (real ? q[2] : -1) && std::memcmp(&got_c.b, &want, sizeof want) == 0;
    if (!ok && why.tellp() < 400)
      why << "rank " << rank << " cell (" << p[0] << "," << p[1] << "," << p[2] << "): got " << got << " / "
          << both.get<0>().storage()[i] << ", expected " << want << " / " << want_a << "; ";
    ++checked;
  });
  return why.str();
}

/// Reverse with sum, min, max and replace against a serial loop over every holder's padded box.
std::string check_reverse(const hs::cartesian_grid& grid, const world& w, int rank, int size, hs::field_plan& plan) {
  std::ostringstream why;
  const hs::offset global{w.n[0], w.n[1], w.ndims > 2 ? w.n[2] : 1};
  const hs::offset ghost{w.ghost[0], w.ghost[1], w.ghost[2]},
      ghost_high{w.ghost_high[0], w.ghost_high[1], w.ghost_high[2]};
  hs::grid_field<std::int64_t> sum(grid, global, ghost, ghost_high), low(grid, global, ghost, ghost_high),
      high(grid, global, ghost, ghost_high);
  hs::grid_field<double> last(grid, global, ghost, ghost_high);
  auto own_value = [](const std::array<int, 3>& p) { return static_cast<std::int64_t>(value_at(p)) % 50021; };
  auto fill = [&](int r, std::size_t i, const std::array<int, 3>& p, bool mine) {
    const std::int64_t v = w.interior(r, p) ? own_value(p) : contribution(r, i) % 90001;
    if (!mine) return v;
    sum.storage()[i] = low.storage()[i] = high.storage()[i] = v;
    last.storage()[i] = static_cast<double>(v);
    return v;
  };
  w.for_each_cell(rank, [&](std::size_t i, std::array<int, 3> p) { fill(rank, i, p, true); });
  plan.reverse(sum);
  {
    auto pending = plan.start_reverse(low, hs::take_min{});
    while (!pending.test()) {
    }
  }
  plan.reverse(high, hs::take_max{});
  plan.reverse(last, hs::take_ghost_value{});

  // The oracle: start from the owners' values, fold in every holder's ghost copies in the pattern.
  std::map<std::array<int, 3>, std::array<std::int64_t, 3>> expect;
  std::map<std::array<int, 3>, std::pair<std::pair<int, std::size_t>, std::int64_t>> winner;
  w.for_each_cell(rank, [&](std::size_t, std::array<int, 3> p) {
    if (w.interior(rank, p)) expect[p] = {own_value(p), own_value(p), own_value(p)};
  });
  for (int h = 0; h < size; ++h)
    w.for_each_cell(h, [&](std::size_t i, std::array<int, 3> p) {
      if (w.interior(h, p) || !w.in_pattern(h, p)) return;
      std::array<int, 3> q = p;
      if (!w.wrap(q) || !expect.count(q)) return;
      const std::int64_t v = fill(h, i, p, false);
      auto& e = expect[q];
      e[0] += v;
      e[1] = std::min(e[1], v);
      e[2] = std::max(e[2], v);
      auto& best = winner[q];
      if (best.first < std::pair<int, std::size_t>{h + 1, i}) best = {{h + 1, i}, v};
    });
  w.for_each_cell(rank, [&](std::size_t i, std::array<int, 3> p) {
    if (!w.interior(rank, p)) return;
    const auto& e = expect[p];
    const double want_last = static_cast<double>(winner.count(p) ? winner[p].second : own_value(p));
    const bool ok = sum.storage()[i] == e[0] && low.storage()[i] == e[1] && high.storage()[i] == e[2] &&
                    last.storage()[i] == want_last;
    if (!ok && why.tellp() < 400)
      why << "rank " << rank << " cell (" << p[0] << "," << p[1] << "," << p[2] << "): sum " << sum.storage()[i]
          << "/" << e[0] << " min " << low.storage()[i] << "/" << e[1] << " max " << high.storage()[i] << "/" << e[2]
          << " replace " << last.storage()[i] << "/" << want_last << "; ";
  });
  return why.str();
}

/// Pretend node sizes of the shared-memory sweep: 1 to 4 nodes of uneven sizes at 1-4 ranks.
const std::vector<std::vector<int>> node_size_cases{{}, {1}, {2, 1}, {3}};

/// The sweep; `shared_memory`: through the shared-memory path inside pretend nodes instead
/// (plan_options::shared_memory), on every third shape, each under the next of node_size_cases,
/// every other one of those with one message per field. `messages`: how a bundle and two views
/// travel (per field: every other shape, to keep the sweep short).
template <class Strategy>
void sweep_grids(bool shared_memory = false, hs::field_messages messages = hs::field_messages::automatic) {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::size_t checked = 0, configurations = 0, shape_index = 0;
  const std::uint64_t lent_before = hs::detail::lent_messages;
  for (const sweep::shape& s : sweep::shapes(size)) {
    const std::size_t nth = shape_index++;
    if (shared_memory && nth % 3 != 0) continue;
    if (messages == hs::field_messages::per_field && nth % 2 != 0) continue;
    const hs::field_messages asked =
        shared_memory && nth / 3 % 2 == 1 && std::string(Strategy::name) != "NeighborAlltoall"
            ? hs::field_messages::per_field
            : messages;
    const std::vector<int> nodes = shared_memory ? node_size_cases[nth / 3 % node_size_cases.size()] : std::vector<int>{};
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic, .node_sizes = nodes});
    world w;
    w.ndims = static_cast<int>(s.dims.size());
    for (int d = 0; d < w.ndims; ++d) {
      w.g.dims[d] = s.dims[d];
      w.g.periodic[d] = s.periodic[d];
    }
    // Uneven sizes (3 P + d + 1 cells: some boxes one wider), smaller in 3D to keep runs short.
    for (int d = 0; d < w.ndims; ++d) w.n[d] = (w.ndims == 3 ? 2 : 3) * s.dims[d] + d + 1;
    w.split_evenly(w.n);
    for (const widths& g : ghost_sets(w)) {
      w.ghost = g.low;
      w.ghost_high = g.high;
      w.pattern_dims = g.pattern_dims;
      // Streamed, not a chain of std::string +: GCC 12 -O2 warns falsely (-Warray-bounds) on that chain.
      INFO(Strategy::name << " " << s.name() << " cells " << w.n[0] << "x" << w.n[1] << "x" << w.n[2] << " ghost "
                          << g.low[0] << "," << g.low[1] << "," << g.low[2] << " ghost_high " << g.high[0] << ","
                          << g.high[1] << "," << g.high[2] << " pattern dims " << g.pattern_dims
                          << (shared_memory ? " shared memory" : "") << " node sizes " << nodes.size()
                          << (asked == hs::field_messages::per_field ? " one message per field" : ""));
      std::optional<hs::field_plan> plan;
      CHECK(check_fill<Strategy>(grid, w, rank, checked, plan, shared_memory, asked) == "");
      if (!sweep::reduced() || g == ghost_sets(w).front()) CHECK(check_reverse(grid, w, rank, size, *plan) == "");
      ++configurations;
    }
  }
  CHECK(configurations > 0);
  CHECK(checked > 0);
  // Zero copy was taken somewhere (NeighborAlltoall has no window; a node of one rank lends nothing).
  long lent = static_cast<long>(hs::detail::lent_messages - lent_before);
  MPI_Allreduce(MPI_IN_PLACE, &lent, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm machine;  // the ranks that share memory: all of them here, unless run across machines
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &machine);
  int machine_size = 0;
  MPI_Comm_size(machine, &machine_size);
  MPI_Comm_free(&machine);
  if (shared_memory && machine_size > 1 && std::string(Strategy::name) != "NeighborAlltoall") CHECK(lent > 0);
}

}  // namespace

using grid_strategies = std::tuple<hs::Shift, hs::SingleHop, hs::TtlMultiHop, hs::NeighborAlltoall>;

TEMPLATE_LIST_TEST_CASE("grid ghosts and reverse match the oracle", "[grids][oracle]", grid_strategies) {
  sweep_grids<TestType>();
}

using point_to_point_grid_strategies = std::tuple<hs::Shift, hs::SingleHop, hs::TtlMultiHop>;

TEMPLATE_LIST_TEST_CASE("several fields as one message per neighbour and field match the oracle",
                        "[grids][oracle][per_field]", point_to_point_grid_strategies) {
  sweep_grids<TestType>(false, hs::field_messages::per_field);
}

TEMPLATE_LIST_TEST_CASE("grid ghosts and reverse through the shared-memory path inside pretend nodes",
                        "[grids][oracle][nodes]", grid_strategies) {
  sweep_grids<TestType>(true);
}

TEST_CASE("Auto picks a selecting strategy and fills the same ghosts", "[grids][auto]") {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, false, true}});
  hs::grid_field<double> a(grid, {9, 8, 7}, 2), b(grid, {9, 8, 7}, 2);
  for (std::size_t i = 0; i < a.storage().size(); ++i) a.storage()[i] = b.storage()[i] = rank * 1e4 + i;
  auto chosen = hs::make_field_plan<hs::Auto>(a);
  CHECK((chosen.strategy() == "Shift" || chosen.strategy() == "SingleHop" || chosen.strategy() == "TtlMultiHop"));
  chosen.forward(a);
  hs::fill_ghosts<hs::Shift>(b);
  CHECK(std::memcmp(a.data(), b.data(), a.storage().size_bytes()) == 0);
}

TEST_CASE("grid fields reject bad input on every rank", "[grids][errors]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, false}});
  const hs::offset global{2 * grid.dim(0) + 1, 3 * grid.dim(1)};

  SECTION("a negative ghost width") {
    CHECK_THROWS_WITH(hs::grid_field<double>(grid, global, hs::offset{1, -2}), Catch::Contains("ghost[1]") &&
                                                                                 Catch::Contains("got -2"));
  }
  SECTION("fewer cells than boxes: boxes without interior cells are legal") {
    // test_uneven_fields.cpp checks their exchanges against the oracle.
    hs::grid_field<double> f(grid, {grid.dim(0) - 1 + (grid.dim(0) == 1), 4}, 1);
    const hs::offset want{grid.coords()[0] == 0 && grid.dim(0) > 1 ? 0 : 1, f.shape().interior[1], 1};  // box 0 is empty
    CHECK(f.shape().interior == want);
    CHECK(f.shape().padded[0] == want[0] + 2);
  }
  SECTION("ghosts along a dimension the grid lacks") {
    CHECK_THROWS_WITH(hs::grid_field<float>(grid, global, hs::offset{1, 1, 1}), Catch::Contains("ghost[2] = 1"));
  }
  SECTION("a global size that differs between ranks, raised on every rank") {
    if (size > 1)
      CHECK_THROWS_WITH(hs::grid_field<double>(grid, {global[0] + (rank == 0), global[1]}, 1),
                        Catch::Contains("global[0] must be the same on all ranks"));
  }
  SECTION("an error on one rank only reaches all ranks") {
    if (size > 1)
      CHECK_THROWS_WITH(hs::grid_field<double>(grid, global, hs::offset{rank == size - 1 ? -1 : 1, 1}),
                        Catch::Contains("ghost[0] must be >= 0"));
  }
  SECTION("a field of another shape than the plan's") {
    hs::grid_field<double> a(grid, global, 1), b(grid, global, 2);
    hs::field_bundle<double, int> c(grid, global, 2);
    auto plan = hs::make_field_plan<hs::Shift>(a);
    CHECK_THROWS_WITH(plan.forward(b), Catch::Contains("the plan was built for global"));
    CHECK_THROWS_WITH(plan.forward(c), Catch::Contains("ghost (2,2,0)"));
    CHECK_THROWS_WITH(plan.reverse(b), Catch::Contains("the plan was built for"));
    // Widths per side: the same width below but not above is another shape, and says so.
    hs::grid_field<double> one_sided(grid, global, hs::offset{1, 1, 0}, hs::offset{2, 0, 0});
    CHECK(one_sided.shape().padded[0] == one_sided.shape().interior[0] + 3);
    CHECK_FALSE(one_sided.shape().same_layout_as(a.shape()));
    CHECK_THROWS_WITH(plan.forward(one_sided),
                      Catch::Contains("the field has global (" + std::to_string(global[0]) + "," +
                                      std::to_string(global[1]) + ",1) ghost (1,1,0) ghost_high (2,0,0) but"));
  }
  SECTION("a view that does not fit the plan") {
    hs::grid_field<double> a(grid, global, 1);
    auto plan = hs::make_field_plan<hs::Shift>(a);
    const hs::field_shape& sh = a.shape();
    std::vector<double> cells(a.storage().size() * 4);
    hs::offset wider = sh.interior;
    wider[0] += 1;
    CHECK_THROWS_WITH(plan.forward(hs::make_field_view(cells.data(), wider, sh.ghost)),
                      Catch::Contains("interior[0] = " + std::to_string(wider[0])));
    CHECK_THROWS_WITH(plan.forward(hs::make_field_view(cells.data(), sh.interior, hs::offset{0, 0, 0})),
                      Catch::Contains("ghost[0] = 0 is narrower than the plan's ghost"));
    hs::field_view<double> overlapping = hs::make_field_view(cells.data(), sh);
    overlapping.stride[1] = 1;
    CHECK_THROWS_WITH(plan.forward(overlapping), Catch::Contains("makes cells overlap"));
    hs::field_view<double> none = hs::make_field_view(cells.data(), sh);
    none.data = nullptr;
    CHECK_THROWS_WITH(plan.reverse(none), Catch::Contains("null pointer"));
    CHECK_THROWS_WITH(hs::make_field_view(cells.data(), sh.interior, sh.ghost, static_cast<hs::storage_order>(7)),
                      Catch::Contains("invalid storage_order value 7"));
    plan.forward(hs::make_field_view(a.storage().data(), sh));  // the plan still works: nothing was started
  }
  SECTION("NeighborAlltoall with synchronous sends") {
    hs::grid_field<double> a(grid, global, 1);
    CHECK_THROWS_WITH(hs::make_field_plan<hs::NeighborAlltoall>(a, {.mode = hs::protocol::rendezvous}),
                      Catch::Contains("only protocol::overlapping"));
  }
  SECTION("one message per field with NeighborAlltoall, or an invalid field_messages") {
    hs::grid_field<double> a(grid, global, 1);
    CHECK_THROWS_WITH(hs::make_field_plan<hs::NeighborAlltoall>(a, {.messages = hs::field_messages::per_field}),
                      Catch::Contains("NeighborAlltoall sends one message per neighbour by construction"));
    CHECK_THROWS_WITH(hs::make_field_plan<hs::Shift>(a, {.messages = static_cast<hs::field_messages>(9)}),
                      Catch::Contains("plan_options.messages: invalid field_messages value 9"));
    // Differing across ranks: the same error on every rank, no hang.
    const auto mine = grid.rank() % 2 ? hs::field_messages::per_field : hs::field_messages::per_neighbor;
    if (grid.size() > 1)
      CHECK_THROWS_WITH(hs::make_field_plan<hs::Shift>(a, {.messages = mine}), Catch::Contains("messages"));
  }
  SECTION("strategies that cannot select") {
    hs::grid_field<double> a(grid, global, 1);
    // Refused whatever the team size: with teams of one it would be Shift under another name.
    CHECK_THROWS_WITH(hs::make_field_plan<hs::TeamShift>(a, {.team = {grid.dim(0), 1, 1}}),
                      Catch::Contains("TeamShift carries block payloads only"));
    CHECK_THROWS_WITH(hs::make_field_plan(grid, "TeamShift", a.shape()), Catch::Contains("block payloads only"));
  }
}

TEST_CASE("a build offers exactly the shell, in storage order", "[grids][shell]") {
  // Local shapes (one box per dimension): every interior cell within ghost_high of a low face or
  // ghost of a high face along some dimension, found by a scan of the whole interior.
  const hs::grid_shape cube({1, 1, 1}, {true, true, true}), plane({1, 1}, {true, false});
  const std::vector<std::tuple<const hs::grid_shape*, hs::offset, hs::offset, hs::offset>> cases{
      {&cube, {7, 6, 5}, {1, 1, 1}, {1, 1, 1}}, {&cube, {7, 6, 5}, {2, 0, 1}, {0, 0, 3}},
      {&cube, {7, 6, 5}, {0, 0, 0}, {0, 0, 0}}, {&cube, {4, 3, 9}, {3, 0, 0}, {2, 0, 0}},
      {&cube, {5, 5, 5}, {0, 2, 0}, {0, 0, 6}}, {&plane, {9, 4, 1}, {1, 0, 0}, {0, 1, 0}},
      {&plane, {9, 4, 1}, {0, 0, 0}, {5, 0, 0}}};
  for (const auto& [grid, global, low, high] : cases) {
    const hs::field_shape s(*grid, {0, 0, 0}, global, low, high);
    std::vector<hs::offset> want;
    for (int k = 0; k < s.interior[2]; ++k)
      for (int j = 0; j < s.interior[1]; ++j)
        for (int i = 0; i < s.interior[0]; ++i) {
          const hs::offset c{i, j, k};
          bool shell = false;
          for (int d = 0; d < grid->ndims(); ++d) shell = shell || c[d] < high[d] || c[d] >= s.interior[d] - low[d];
          if (shell) want.push_back(c);
        }
    CAPTURE(hs::to_string(s));
    CHECK(hs::detail::shell_cells(s) == want);
  }
}

TEST_CASE("strided packing equals a copy cell by cell", "[grids][pack]") {
  // Runs as a relocated field plan makes them: faces, rows, backward jumps, single cells.
  const std::vector<std::vector<hs::detail::element_run>> patterns{
      {{5, 1}, {12, 1}, {19, 1}, {26, 1}, {40, 1}, {47, 1}},  // x face: stride 7, then a new group
      {{0, 3}, {10, 3}, {20, 3}, {21, 1}, {2, 1}},             // rows, a merge, a backward jump
      {{30, 2}, {4, 2}, {8, 2}, {9, 1}},                        // backwards, then forwards
      {{7, 1}}};
  for (const auto& runs : patterns) {
    hs::detail::message m;
    m.peer = 0;
    hs::detail::select_pieces(m, runs);
    std::vector<std::size_t> cells;  // the oracle: every cell in message order
    for (const auto& r : runs)
      for (std::size_t e = 0; e < r.count; ++e) cells.push_back(r.first + e);
    REQUIRE(m.count == cells.size());
    // Strided groups, or (short runs at irregular places) a send list of every cell instead.
    std::size_t grouped = 0;
    for (const auto& g : m.strided) grouped += g.count * g.repeat;
    CHECK(grouped == (m.contiguous || !m.list.empty() ? 0 : cells.size()));
    if (!m.list.empty()) CHECK(std::vector<std::size_t>(m.list.begin(), m.list.end()) == cells);
    if (m.contiguous) continue;
    std::vector<double> buffer(64), packed(m.count), back(64, -1);
    for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = 0.5 + static_cast<double>(i);
    hs::detail::block_layout layout;
    hs::detail::gather(layout, m, buffer.data(), packed.data());
    for (std::size_t i = 0; i < cells.size(); ++i) CHECK(packed[i] == buffer[cells[i]]);
    hs::detail::scatter(layout, m, packed.data(), back.data());
    for (std::size_t i = 0; i < back.size(); ++i)
      CHECK(back[i] == (std::find(cells.begin(), cells.end(), i) != cells.end() ? buffer[i] : -1.0));
  }
  // The x-face pattern groups into single cells 7 apart (4, then 2); so few cells per group go as
  // a send list.
  CHECK(hs::detail::group_runs(patterns[0]) ==
        std::vector<hs::detail::strided_run>{{5, 1, 7, 4}, {40, 1, 7, 2}});
  CHECK(hs::detail::count_groups(patterns[0]) == 2);
  hs::detail::message face;
  face.peer = 0;
  hs::detail::select_pieces(face, patterns[0]);
  CHECK(face.list == std::vector<std::uint32_t>{5, 12, 19, 26, 40, 47});
  CHECK(face.strided.empty());
}

namespace {
/// Packs and unpacks `repeat` rows of `count` elements `stride` apart and compares cell by cell.
template <class T>
void check_rows(std::size_t first, std::size_t count, std::size_t stride, std::size_t repeat) {
  std::vector<hs::detail::element_run> runs;
  for (std::size_t r = 0; r < repeat; ++r) runs.push_back({first + r * stride, count});
  hs::detail::message m;
  m.peer = 0;
  hs::detail::select_pieces(m, runs);
  REQUIRE(m.strided.size() == 1);
  const std::size_t size = first + (repeat - 1) * stride + count + 7;
  std::vector<T> buffer(size), packed(m.count), back(size, T(-1));
  for (std::size_t i = 0; i < size; ++i) buffer[i] = static_cast<T>(i % 97 + 1);
  hs::detail::block_layout layout;
  hs::detail::gather(layout, m, buffer.data(), packed.data());
  std::size_t mismatches = 0;
  for (std::size_t r = 0; r < repeat; ++r)
    for (std::size_t e = 0; e < count; ++e) mismatches += packed[r * count + e] != buffer[first + r * stride + e];
  CHECK(mismatches == 0);
  hs::detail::scatter(layout, m, packed.data(), back.data());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < size; ++i) {
    const bool in = i >= first && (i - first) % stride < count && (i - first) / stride < repeat;
    wrong += back[i] != (in ? buffer[i] : T(-1));
  }
  CHECK(wrong == 0);
}
}  // namespace

TEST_CASE("rows of every length pack like a copy cell by cell", "[grids][pack]") {
  // Rows of 32 bytes and more take vector moves with an overlapping tail, and
  // rows spread over more than the prefetch span also prefetch: lengths around
  // the 16, 32 and 64 byte chunk sizes, in 1-, 4- and 8-byte elements.
  for (std::size_t bytes : {8, 24, 31, 32, 33, 40, 56, 63, 64, 65, 72, 96, 127, 128, 136, 272, 2064}) {
    CAPTURE(bytes);
    check_rows<std::uint8_t>(3, bytes, bytes + 5, 6);
    if (bytes % 4 == 0) check_rows<float>(1, bytes / 4, bytes / 4 + 3, 5);
    if (bytes % 8 == 0) {
      check_rows<double>(2, bytes / 8, bytes / 8 + 9, 7);
      check_rows<double>(0, bytes / 8, (std::size_t{3} << 20) / 8 / 3, 4);  // rows 1 MiB apart: prefetched
      check_rows<std::uint8_t>(5, bytes, (std::size_t{3} << 20) / 3, 4);
    }
  }
}


TEST_CASE("a grid field keeps its grid: the grid may be moved from and destroyed first", "[grid_field]") {
  auto grid = std::make_unique<hs::cartesian_grid>(MPI_COMM_WORLD);
  const std::array<int, 3> global{7, 5, 4};
  hs::grid_field<double> u(*grid, {global[0], global[1], global[2]}, 1, sentinel);
  const int rank = grid->rank();
  { hs::cartesian_grid elsewhere = std::move(*grid); }  // the grid u was built on: moved from, then gone
  grid.reset();
  CHECK(u.grid().rank() == rank);
  CHECK(u.grid().comm() != MPI_COMM_NULL);
  const hs::field_shape& s = u.shape();
  auto wrapped = [&](int d, int x) { return ((x % global[d]) + global[d]) % global[d]; };  // the oracle's own
  for (int k = 0; k < s.interior[2]; ++k)
    for (int j = 0; j < s.interior[1]; ++j)
      for (int i = 0; i < s.interior[0]; ++i) u(i, j, k) = value_at({s.lo[0] + i, s.lo[1] + j, s.lo[2] + k});
  hs::make_field_plan<hs::Shift>(u).forward(u);  // plans take the grid from the field
  int wrong = 0;
  for (int k = -1; k <= s.interior[2]; ++k)
    for (int j = -1; j <= s.interior[1]; ++j)
      for (int i = -1; i <= s.interior[0]; ++i)  // the default grid is periodic along every dimension
        wrong += u(i, j, k) != value_at({wrapped(0, s.lo[0] + i), wrapped(1, s.lo[1] + j), wrapped(2, s.lo[2] + k)});
  CHECK(wrong == 0);
}

TEST_CASE("an empty field plan raises on every call until a built plan is assigned", "[grid_field][empty]") {
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, false}});
  hs::grid_field<double> u(grid, {7, 5}, 1, sentinel), filled(grid, {7, 5}, 1, sentinel);
  hs::field_bundle<double, float> bundle(grid, {7, 5}, 1);
  std::vector<double> a(u.storage().size()), b(u.storage().size());
  const hs::field_view<double> va = hs::make_field_view(a.data(), u.shape());
  const hs::field_view<double> vb = hs::make_field_view(b.data(), u.shape());
  hs::field_plan plan;  // a C-style code declares it at setup and builds it later
  CHECK(plan.strategy().empty());
  CHECK_FALSE(plan.busy());
  const std::string never = ": the plan was never built (it is empty: assign it the plan make_field_plan returns)";
  CHECK_THROWS_WITH(plan.forward(u), Catch::Contains("start_forward" + never));
  CHECK_THROWS_WITH((void)plan.start_forward(u), Catch::Contains("start_forward" + never));
  CHECK_THROWS_WITH(plan.reverse(u), Catch::Contains("start_reverse" + never));
  CHECK_THROWS_WITH(plan.reverse(u, hs::take_ghost_value{}), Catch::Contains("reverse" + never));
  CHECK_THROWS_WITH(plan.forward(bundle), Catch::Contains("start_forward" + never));
  CHECK_THROWS_WITH(plan.forward(va), Catch::Contains("start_forward" + never));
  CHECK_THROWS_WITH(plan.reverse(va, hs::take_min{}), Catch::Contains("start_reverse" + never));
  CHECK_THROWS_WITH(plan.forward(va, vb), Catch::Contains("start_forward" + never));
  CHECK_THROWS_WITH(plan.reverse(va, vb), Catch::Contains("start_reverse" + never));
  CHECK_THROWS_WITH(plan.details(), Catch::Contains("details" + never));
  CHECK_THROWS_WITH(plan.shape(), Catch::Contains("shape" + never));
  CHECK_THROWS_WITH(plan.reach(), Catch::Contains("reach" + never));
  CHECK_THROWS_WITH(plan.interior_regions({1, 1, 0}), Catch::Contains("interior_regions" + never));
  hs::field_plan still_empty = std::move(plan);  // moving an empty plan leaves two empty plans
  CHECK_THROWS_WITH(still_empty.forward(u), Catch::Contains("start_forward" + never));

  plan = hs::make_field_plan<hs::SingleHop>(u);  // built: it works like any plan
  CHECK(plan.strategy() == "SingleHop");
  CHECK(plan.shape().interior == u.shape().interior);
  for (std::size_t i = 0; i < u.storage().size(); ++i) u.storage()[i] = filled.storage()[i] = 0.5 * i + grid.rank();
  plan.forward(u);
  hs::fill_ghosts<hs::Shift>(filled);
  CHECK(std::memcmp(u.data(), filled.data(), u.storage().size_bytes()) == 0);
  hs::field_plan elsewhere = std::move(plan);  // a plan moved from says so, not "never built"
  CHECK_THROWS_WITH(plan.forward(u), Catch::Contains("start_forward: the plan was moved from"));  // NOLINT
  elsewhere.forward(u);
}

TEST_CASE("interior_regions: the inner box updated before the ghosts arrive, the rim after", "[grid_field][overlap]") {
  int failures = 0;
  for (int ndims = 1; ndims <= 3; ++ndims) {
    std::vector<int> dims(static_cast<std::size_t>(ndims), 0);
    std::vector<bool> periodic(static_cast<std::size_t>(ndims), false);
    periodic[0] = true;
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = dims, .periodic = periodic});
    // Uneven sizes, and fewer cells than boxes along x (boxes without cells) where there are 2 or more.
    for (const hs::offset& global : {hs::offset{2 * grid.dim(0) + 3, grid.dim(1) + 4, 5},
                                     hs::offset{std::max(grid.dim(0) - 1, 1), 6, 3}})
      for (const hs::offset& width : {hs::offset{1, 1, 1}, hs::offset{2, 0, 3}}) {
        hs::offset n = global, ghost = width;
        for (int d = ndims; d < 3; ++d) n[d] = 1, ghost[d] = 0;
        hs::grid_field<double> overlapped(grid, n, ghost, -3.5), blocking(grid, n, ghost, -3.5);
        const hs::field_shape& s = overlapped.shape();
        for (int k = 0; k < s.interior[2]; ++k)
          for (int j = 0; j < s.interior[1]; ++j)
            for (int i = 0; i < s.interior[0]; ++i)
              overlapped(i, j, k) = blocking(i, j, k) = value_at({s.lo[0] + i, s.lo[1] + j, s.lo[2] + k});
        hs::field_plan plan = hs::make_field_plan<hs::Shift>(overlapped);
        // A star stencil of the ghost width along each dimension, weighted so that every read counts.
        hs::grid_field<double> out_overlapped(grid, n, ghost, 0.0), out_blocking(grid, n, ghost, 0.0);
        auto update = [&](const hs::grid_field<double>& in, hs::grid_field<double>& out, const auto& box) {
          for (int k = box.lo[2]; k < box.hi[2]; ++k)
            for (int j = box.lo[1]; j < box.hi[1]; ++j)
              for (int i = box.lo[0]; i < box.hi[0]; ++i) {
                double sum = in(i, j, k);
                for (int d = 0; d < 3; ++d)
                  for (int r = 1; r <= ghost[d]; ++r) {
                    const hs::offset e = r * hs::unit(d);
                    sum += (d + 0.5 * r) * in(i + e[0], j + e[1], k + e[2]) - 0.125 * in(i - e[0], j - e[1], k - e[2]);
                  }
                out(i, j, k) += sum + 1.0;  // += and + 1: a cell updated twice or never shows
              }
        };
        const auto parts = plan.interior_regions(ghost);
        update(overlapped, out_overlapped, parts.inner);  // before the exchange: a ghost read would show
        auto pending = plan.start_forward(overlapped);
        pending.wait();
        for (const auto& box : parts.rim) update(overlapped, out_overlapped, box);
        plan.forward(blocking);
        update(blocking, out_blocking, hs::detail::cell_box{hs::zero_offset, s.interior});
        failures += std::memcmp(out_overlapped.data(), out_blocking.data(), out_blocking.storage().size_bytes()) != 0;

        // A view from the plan's shape with a storage order and padding: the field's cells, no widths spelled.
        const hs::offset padding{1, 2, 0};
        std::vector<double> c_array(static_cast<std::size_t>(s.padded[0] + 1) * (s.padded[1] + 2) * s.padded[2], -3.5);
        const auto view = hs::make_field_view(c_array.data(), plan.shape(), hs::storage_order::z_fastest, padding);
        for (int k = 0; k < s.interior[2]; ++k)
          for (int j = 0; j < s.interior[1]; ++j)
            for (int i = 0; i < s.interior[0]; ++i) view_check::cell_of(view, i, j, k) = blocking(i, j, k);
        plan.forward(view);
        std::ostringstream why;
        view_check::compare(view, blocking, -3.5, "from the plan's shape", why);
        CHECK(why.str().empty());
      }
  }
  CHECK(failures == 0);
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}});
  const hs::grid_field<double> u(grid, {8}, 1);
  CHECK_THROWS_WITH(hs::make_field_plan<hs::Shift>(u).interior_regions({1, -2, 0}),
                    Catch::Contains("interior_regions: reach[1] = -2 must be >= 0"));
}

TEST_CASE("a field plan's strategy errors list only the strategies that can carry fields", "[grids][errors]") {
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}});
  const hs::grid_field<double> u(grid, {6, 6}, 1);
  // TeamShift sits between TtlMultiHop and NeighborAlltoall in the registry: a list that offered it
  // would break these substrings.
  CHECK_THROWS_WITH(hs::make_field_plan(grid, "Stencil", u.shape()),
                    Catch::Contains("strategy \"Stencil\" is not known; strategies for particle, field and selective "
                                    "plans: Shift, SingleHop, TtlMultiHop, NeighborAlltoall") &&
                        !Catch::Contains("TeamShift"));
  CHECK_THROWS_WITH(hs::make_field_plan(grid, "teamshift", u.shape()),
                    Catch::Contains("use Shift, SingleHop, TtlMultiHop, NeighborAlltoall or Auto"));
  // A (custom) strategy whose schedule moves a block back towards its source: the others are offered.
  hs::schedule back;
  back.rounds.push_back({{hs::transfer{{1, 0, 0}, {hs::offset{1, 0, 0}}}}});
  CHECK_THROWS_WITH(hs::detail::check_away_from_source(back, "Mine"),
                    Catch::EndsWith("; use Shift, SingleHop, TtlMultiHop, NeighborAlltoall"));
  CHECK_THROWS_WITH(hs::detail::check_away_from_source(back, "singlehop"),
                    Catch::EndsWith("; use Shift, TtlMultiHop, NeighborAlltoall"));
  // A block plan still offers every strategy.
  CHECK_THROWS_WITH(hs::make_plan<double>(grid, "Stencil", 1, 4),
                    Catch::Contains("known strategies: Shift, SingleHop, TtlMultiHop, TeamShift, NeighborAlltoall"));
}

TEST_CASE("a shared_array is lent only by the grid whose nodes it was made on", "[grids][nodes]") {
  // The same ranks, another grid: its node layout does not know the array, whose messages then go
  // through the slots (nothing lent), with the same ghosts as a lent one and a plain field.
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}}), other(MPI_COMM_WORLD, {.dims = {0, 0}});
  hs::grid_field<double> u(grid, {2 * grid.dim(0) + 1, 3 * grid.dim(1)}, 1);
  for (std::size_t i = 0; i < u.storage().size(); ++i) u.storage()[i] = rank * 1e4 + static_cast<double>(i);
  auto plan = hs::make_field_plan<hs::SingleHop>(u, {.shared_memory = true});
  hs::shared_array<double> here(grid, u.storage().size()), foreign(other, u.storage().size());
  std::copy(u.storage().begin(), u.storage().end(), here.begin());
  std::copy(u.storage().begin(), u.storage().end(), foreign.begin());
  const std::uint64_t before = hs::detail::lent_messages;
  plan.forward(hs::make_field_view(foreign.data(), u.shape()));
  CHECK(hs::detail::lent_messages == before);
  plan.forward(hs::make_field_view(here.data(), u.shape()));
  CHECK(hs::detail::lent_messages - before == window_messages(grid, plan.details(), sizeof(double), false));
  plan.forward(u);
  CHECK(std::equal(u.storage().begin(), u.storage().end(), here.begin()));
  CHECK(std::equal(u.storage().begin(), u.storage().end(), foreign.begin()));
}

TEST_CASE("a shared_array whose bytes overflow raises the same error on every rank", "[grids][nodes][errors]") {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}});
  const std::size_t n = rank == 0 ? SIZE_MAX / 4 : 10;  // rank 0's alone: the others must raise too
  CHECK_THROWS_WITH((hs::shared_array<double>(grid, n)),
                    Catch::Contains("shared_array: n = " + std::to_string(SIZE_MAX / 4) + " elements of 8 bytes") &&
                        Catch::Contains("overflows size_t"));
}

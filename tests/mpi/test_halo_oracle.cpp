// SPDX-License-Identifier: BSD-3-Clause
// Every strategy, every configuration of the sweep: forward halos equal the
// oracle bit for bit, reverse sums equal a serial sum over all holders.

#include "../support/driving.hpp"
#include "../support/catch.hpp"
#include <cstring>
#include <haloshift/haloshift.hpp>
#include <haloshift/memory/emulated_device.hpp>
#include <sstream>
#include <tuple>

#include "../../examples/custom_strategy/zyx_shift.hpp"
#include "../support/block_oracle.hpp"
#include "../support/counting_mpi.hpp"
#include "../support/counting_new.hpp"
#include "../support/oracle.hpp"
#include "../support/sweep.hpp"
#include "../support/window_messages.hpp"
#include "../grids/view_check.hpp"

namespace hs = haloshift;

namespace {

using namespace block_oracle;

/// Reverse of `contributions` (a halo of `plan`, filled here) against the oracle.
std::string run_reverse_and_compare(hs::plan<double>& plan, hs::halo<double>& contributions, const oracle::grid& g,
                                    int me, const oracle::coords& k, const neighbourhood& n, sweep::payload pl,
                                    driving how) {
  fill_contributions(contributions, me);
  std::vector<double> own(sweep::count_of(pl, me));
  for (std::size_t e = 0; e < own.size(); ++e) own[e] = value_of(me, e);
  if (how == driving::blocking)
    plan.reverse(contributions, std::span<double>(own));
  else
    drive(plan.start_reverse(contributions, std::span<double>(own)), how);
  return compare_reverse(own, g, me, k, n);
}
std::string run_reverse_and_compare(hs::plan<double>& plan, const oracle::grid& g, int me, const oracle::coords& k,
                                    const neighbourhood& n, sweep::payload pl, driving how) {
  hs::halo<double> contributions = plan.make_halo();
  return run_reverse_and_compare(plan, contributions, g, me, k, n, pl, how);
}

/// Team sizes to try: 0 (TeamShift picks) and, per dimension, 2 where it divides, and the whole dimension.
std::vector<hs::offset> team_variants(const sweep::shape& s) {
  hs::offset two{1, 1, 1}, whole{1, 1, 1};
  for (std::size_t d = 0; d < s.dims.size(); ++d) {
    two[d] = s.dims[d] % 2 == 0 ? 2 : 1;
    whole[d] = s.dims[d];
  }
  if (sweep::reduced()) return {whole};
  return {hs::offset{0, 0, 0}, two, whole};
}

template <class Strategy>
std::vector<hs::protocol> protocols(const neighbourhood& n) {
  // Patterns change which blocks travel, not how: overlapping covers them.
  if constexpr (requires { Strategy::neighbor_collective; })
    return {hs::protocol::overlapping};
  else if (n.pattern != hs::halo_pattern::full)
    return {hs::protocol::overlapping};
  else
    return {hs::protocol::overlapping, hs::protocol::rendezvous};
}

template <class Strategy>
std::vector<hs::offset> teams(const sweep::shape& s) {
  if constexpr (std::is_same_v<Strategy, hs::TeamShift>)
    return team_variants(s);
  else
    return {hs::offset{0, 0, 0}};
}

/// Pretend node sizes (grid_options::node_sizes) to try: the real node for strategies that ignore
/// nodes; for node-aware ones 1 to 4 nodes (as the ranks allow) of uneven sizes, a node of one rank
/// first and the rest shared by the others (the last ones larger): 8 ranks as 8, 1+7, 1+3+4, 1+2+2+3.
/// The grid shapes take them in turn.
template <class Strategy>
constexpr bool node_aware = requires { requires Strategy::node_aware; };

template <class Strategy>
std::vector<std::vector<int>> node_layouts(int size) {
  if constexpr (!node_aware<Strategy>) {
    return {{}};
  } else {
    std::vector<std::vector<int>> out{{size}};
    for (int nodes = 2; nodes <= std::min(4, size); ++nodes) {
      const int rest = size - 1, others = nodes - 1;
      std::vector<int> sizes{1};
      for (int i = 0; i < others; ++i) sizes.push_back(rest / others + (i >= others - rest % others ? 1 : 0));
      out.push_back(sizes);
    }
    return out;
  }
}

std::string nodes_name(const std::vector<int>& sizes) {
  std::string out;
  for (int n : sizes) out += (out.empty() ? " nodes " : "+") + std::to_string(n);
  return out;
}

template <class Strategy>
void sweep_strategy(const neighbourhood& n) {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::size_t configurations = 0;
  const std::vector<std::vector<int>> layouts = node_layouts<Strategy>(size);
  std::size_t shapes = 0;
  // The reduced sweep (busy-polling MPICH) runs the other neighbourhoods on one shape of each dimensionality:
  // they only drop offsets from the routes the full shell sweeps over every shape, and stage 1 runs them all.
  const bool variant = n.eighth() || n.pattern != hs::halo_pattern::full || n.x_fastest;
  std::size_t last_dimensions = 0;
  for (const sweep::shape& s : sweep::shapes(size)) {
    if (sweep::reduced() && variant && s.dims.size() == last_dimensions) continue;
    last_dimensions = s.dims.size();
    using order = hs::grid_options::rank_order;
    const std::vector<int>& nodes = layouts[shapes++ % layouts.size()];
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims,
                                             .periodic = s.periodic,
                                             .order = n.x_fastest ? order::first_fastest : order::last_fastest,
                                             .node_sizes = nodes});
    oracle::grid og = oracle_grid(s);
    og.x_fastest = n.x_fastest;
    for (int k : sweep::ks(s))
      for (sweep::payload pl : sweep::payloads())
        for (hs::protocol mode : protocols<Strategy>(n))
          for (const hs::offset& team : teams<Strategy>(s)) {
            if (n.x_fastest && (k > 2 || pl != sweep::payload::uneven || mode != protocols<Strategy>(n).front() ||
                                team != teams<Strategy>(s).back()))
              continue;
            // Reduced sweep (busy-polling MPICH): synchronous sends only at k = 1.
            // And for node-aware strategies (CI time): their messages are the executor's like any other's.
            if ((sweep::reduced() || node_aware<Strategy>) && mode == hs::protocol::rendezvous && k > 1) continue;
            const std::string where =
                std::string(Strategy::name) + " " + s.name() + " k=" + std::to_string(k) + " " + sweep::to_string(pl) +
                n.name() + (mode == hs::protocol::rendezvous ? " rendezvous" : " overlapping") + " team " +
                hs::to_string(team) + nodes_name(nodes) + (sweep::background(configurations) ? " background" : "");
            INFO(where);
            std::vector<double> mine(sweep::count_of(pl, rank));
            for (std::size_t e = 0; e < mine.size(); ++e) mine[e] = value_of(rank, e);
            auto plan = hs::make_plan<Strategy, double>(grid, k, mine.size(),
                                                        {.mode = mode,
                                                         .kind = n.kind,
                                                         .pattern = n.pattern,
                                                         .team = team,
                                                         .background = sweep::background(configurations)});
            hs::halo<double> halo = plan.make_halo();
            plan.forward(mine, halo);
            CHECK(compare_forward(halo, og, rank, range_of(s, k), n, pl) == "");
            // A plan repeats: the same result the second time, here split phase (progress() once,
            // then wait()); the reverse alternates between blocking and test() until done.
            hs::halo<double> again = plan.make_halo();
            drive(plan.start_forward(mine, again), driving::progress_once);
            CHECK(compare_forward(again, og, rank, range_of(s, k), n, pl) == "");
            CHECK(run_reverse_and_compare(plan, og, rank, range_of(s, k), n, pl,
                                          configurations % 2 ? driving::test_until_done : driving::blocking) == "");
            ++configurations;
          }
  }
  CHECK(configurations > 0);
}

}  // namespace

using strategies = std::tuple<hs::Shift, hs::TeamShift, hs::SingleHop, hs::TtlMultiHop, hs::NeighborAlltoall, ZyxShift>;

TEMPLATE_LIST_TEST_CASE("forward and reverse match the oracle with the full shell", "[halo][oracle][layouts]",
                        strategies) {
  sweep_strategy<TestType>({hs::shell::full});
}

TEMPLATE_LIST_TEST_CASE("forward and reverse match the oracle with the eighth shell", "[halo][oracle]", strategies) {
  sweep_strategy<TestType>({hs::shell::eighth});
}

TEMPLATE_LIST_TEST_CASE("forward and reverse match the oracle with ranks numbered x fastest", "[halo][oracle]",
                        strategies) {
  sweep_strategy<TestType>({hs::shell::full, hs::halo_pattern::full, true});
}

TEMPLATE_LIST_TEST_CASE("forward and reverse match the oracle with halo patterns", "[halo][oracle][pattern]",
                        strategies) {
  // The eighth shell with faces only is the half-shell star of codes that send forces back (reverse).
  for (const neighbourhood n : {neighbourhood{hs::shell::full, hs::halo_pattern::faces},
                                neighbourhood{hs::shell::full, hs::halo_pattern::faces_and_edges},
                                neighbourhood{hs::shell::eighth, hs::halo_pattern::faces}})
    if (!sweep::reduced() || n.pattern == hs::halo_pattern::faces) sweep_strategy<TestType>(n);
}

namespace {

/// Pretend node sizes giving 1 to 4 nodes of uneven sizes at 1-4 ranks: one node, one rank a
/// node, 2 + 1 + 2 + ..., 3 + the rest.
const std::vector<std::vector<int>> node_size_cases{{}, {1}, {2, 1}, {3}};

/// Zero copy: halos in node-shared memory (make_shared_halo) lend every message inside a node that
/// fits a slot (counted exactly), and forward (blocking and split phase) and reverse give the flat
/// plan's halo bit for bit and the oracle's sums, allocating nothing. `mixed`: ranks of odd number
/// keep halos of their own memory (packed into the slots), which mix with the lending ones. A
/// neighbourhood collective (no window) lends nothing.
template <class Strategy>
void check_zero_copy(const hs::cartesian_grid& grid, hs::plan<double>& plan, const std::vector<double>& mine,
                     const hs::halo<double>& expected, const oracle::grid& og, const oracle::coords& k,
                     sweep::payload pl, bool mixed) {
  const int rank = grid.rank();
  const bool shared = !mixed || rank % 2 == 0, lends = shared && !requires { Strategy::neighbor_collective; };
  hs::halo<double> shared_halo = plan.make_shared_halo(), own_halo = plan.make_halo();  // collective: every rank
  hs::halo<double>& halo = shared ? shared_halo : own_halo;
  const std::uint64_t lent_before = hs::detail::lent_messages;
  allocations::count = 0;
  allocations::counting = true;
  plan.forward(mine, halo);
  allocations::counting = false;
  // Its readers have copied once forward returns (the price of zero copy): the halo is the rank's
  // again at once, and what it writes now reaches no other rank's halo.
  const std::vector<double> got(halo.buffer().begin(), halo.buffer().end());
  std::fill(halo.buffer().begin(), halo.buffer().end(), -1.0);
  CHECK(allocations::count == 0);
  CHECK(hs::detail::lent_messages - lent_before ==
        (lends ? window_messages(grid, plan.details(), sizeof(double), false) : 0));
  CHECK((got.size() == expected.buffer().size() &&
         (got.empty() || std::memcmp(got.data(), expected.buffer().data(), expected.buffer().size_bytes()) == 0)));
  drive(plan.start_forward(mine, halo), driving::progress_once);
  CHECK(compare_forward(halo, og, rank, k, neighbourhood{hs::shell::full}, pl) == "");
  const std::uint64_t reverse_before = hs::detail::lent_messages;
  CHECK(run_reverse_and_compare(plan, halo, og, rank, k, neighbourhood{hs::shell::full}, pl,
                                mixed ? driving::test_until_done : driving::blocking) == "");
  CHECK(hs::detail::lent_messages - reverse_before ==
        (lends ? window_messages(grid, plan.details(), sizeof(double), true) : 0));
}

/// The shared-memory path (plan_options::shared_memory) under pretend nodes: forward, split phase
/// and reverse equal the oracle, and the forward halo equals the flat (MPI) plan's bit for bit; the
/// same with zero copy (check_zero_copy), every other configuration with ranks lending and not mixed.
/// A subset of the sweep: every third shape (periodic and not), k = 1 and 3, uneven payloads.
template <class Strategy>
void sweep_shared_memory() {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const neighbourhood n{hs::shell::full};
  const std::vector<sweep::shape> shapes = sweep::shapes(size);
  MPI_Comm machine;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &machine);
  int machine_size = 0;
  MPI_Comm_size(machine, &machine_size);
  MPI_Comm_free(&machine);
  const bool one_machine = machine_size == size;
  std::size_t configurations = 0;
  const std::uint64_t lent_before = hs::detail::lent_messages;
  for (std::size_t i = 0; i < shapes.size(); i += 3)
    for (const std::vector<int>& nodes : node_size_cases) {
      if (sweep::reduced() && nodes.size() == 1) continue;  // busy-polling MPICH: one node, and uneven nodes
      const sweep::shape& s = shapes[i];
      hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic, .node_sizes = nodes});
      const oracle::grid og = oracle_grid(s);
      const sweep::payload pl = nodes == std::vector<int>{3} ? sweep::payload::empty : sweep::payload::uneven;
      for (int k : sweep::reduced() ? std::vector<int>{1} : std::vector<int>{1, 3}) {
        INFO(std::string(Strategy::name) + " " + s.name() + " k=" + std::to_string(k) + " " + sweep::to_string(pl) +
             " nodes of " + std::to_string(nodes.empty() ? size : nodes.front()) + "...");
        std::vector<double> mine(sweep::count_of(pl, rank));
        for (std::size_t e = 0; e < mine.size(); ++e) mine[e] = value_of(rank, e);
        auto shared = hs::make_plan<Strategy, double>(grid, k, mine.size(), {.shared_memory = true});
        auto flat = hs::make_plan<Strategy, double>(grid, k, mine.size());
        hs::halo<double> halo = shared.make_halo(), expected = flat.make_halo();
        const long sends_before = collectives::sends();
        allocations::count = 0;
        allocations::counting = true;
        shared.forward(mine, halo);
        allocations::counting = false;
        // One node holds every rank (all on one machine here): nothing goes by MPI, nothing is allocated.
        if (nodes.empty() && one_machine) CHECK(collectives::sends() == sends_before);
        CHECK(allocations::count == 0);
        flat.forward(mine, expected);
        CHECK(compare_forward(halo, og, rank, range_of(s, k), n, pl) == "");
        // Bit for bit; an empty halo's buffers may be null, which memcmp must not see.
        CHECK((halo.buffer().size() == expected.buffer().size() &&
               (halo.buffer().empty() ||
                std::memcmp(halo.buffer().data(), expected.buffer().data(), halo.buffer().size_bytes()) == 0)));
        hs::halo<double> again = shared.make_halo();
        drive(shared.start_forward(mine, again), driving::progress_once);
        CHECK(compare_forward(again, og, rank, range_of(s, k), n, pl) == "");
        CHECK(run_reverse_and_compare(shared, og, rank, range_of(s, k), n, pl,
                                      configurations % 2 ? driving::test_until_done : driving::blocking) == "");
        // Zero copy: on every other configuration in the reduced sweep (busy-polling MPICH, where each
        // wait between oversubscribed ranks costs a time slice: 6 s more at 3 ranks on every one).
        const std::size_t step = sweep::reduced() ? 2 : 1;
        if (configurations % step == 0)
          check_zero_copy<Strategy>(grid, shared, mine, expected, og, range_of(s, k), pl,
                                    configurations / step % 2 == 1);
        ++configurations;
      }
    }
  CHECK(configurations > 0);
  // Zero copy was taken: some rank lent (a rank of no elements may have nothing to send; a
  // neighbourhood collective has no window).
  long lent = static_cast<long>(hs::detail::lent_messages - lent_before);
  MPI_Allreduce(MPI_IN_PLACE, &lent, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (size > 1 && one_machine && !requires { Strategy::neighbor_collective; }) CHECK(lent > 0);
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("the shared-memory path inside pretend nodes matches the oracle and the flat path",
                        "[halo][oracle][nodes]", strategies) {
  sweep_shared_memory<TestType>();
}

TEST_CASE("a start on the shared-memory path never waits for a node partner's exchange still in flight",
          "[halo][split][nodes]") {
  // Rank 0 holds its first exchange open across a barrier; the others finish theirs and start the
  // next one before the barrier: their messages to rank 0 wait in start() for the slots rank 0
  // frees only in wait() (after the barrier), so start() must defer them instead of blocking.
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const sweep::shape s{{size}, {true}};
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic});
  const oracle::grid og = oracle_grid(s);
  const neighbourhood n{hs::shell::full};
  std::vector<double> mine(sweep::count_of(sweep::payload::uneven, rank));
  for (std::size_t e = 0; e < mine.size(); ++e) mine[e] = value_of(rank, e);
  auto plan = hs::make_plan<hs::SingleHop, double>(grid, 1, mine.size(), {.shared_memory = true});
  hs::halo<double> first = plan.make_halo(), second = plan.make_halo();
  if (rank == 0) {
    auto pending = plan.start_forward(mine, first);
    MPI_Barrier(MPI_COMM_WORLD);
    pending.wait();
    plan.forward(mine, second);
  } else {
    plan.forward(mine, first);
    auto pending = plan.start_forward(mine, second);
    MPI_Barrier(MPI_COMM_WORLD);
    pending.wait();
  }
  CHECK(compare_forward(first, og, rank, range_of(s, 1), n, sweep::payload::uneven) == "");
  CHECK(compare_forward(second, og, rank, range_of(s, 1), n, sweep::payload::uneven) == "");
}

// NodeAggregate on pretend nodes of uneven sizes (node_layouts), the grid shapes taking the layouts in
// turn, with the full shell: the eighth shell and the patterns only drop offsets from the same routes,
// which the whole-grid simulation (unit/test_programs.cpp) runs on many more layouts. Then composed with
// the shared-memory path: its transfers inside a node go through the window, equal to the flat plan's.
TEST_CASE("NodeAggregate: forward and reverse match the oracle on pretend nodes", "[halo][oracle][nodes]") {
  sweep_strategy<hs::NodeAggregate>({hs::shell::full});
  sweep_shared_memory<hs::NodeAggregate>();
}

namespace {

/// The kinds of array a rank may pass to a field plan's exchange while its node partners pass
/// others: the plan's own grid_field; a padded x-fastest view with more ghost layers than the
/// plan's; a z-fastest view; a view of a shared_array laid out as the plan's fields (it lends: zero
/// copy). All but the first and the last run a program derived from the plan's.
enum class array_kind { field, padded, z_fastest, lender };

/// What a cell holds after a forward (all dimensions periodic): its global cell's value, from its
/// coordinates alone, and the exchange's `salt` (so that no slot still holds the right bytes).
double periodic_value(const hs::field_shape& sh, int i, int j, int k, int salt = 0) {
  const int at[3] = {i, j, k};
  double v = 0.25 + 1e9 * salt, scale = 1;
  for (int d = 0; d < 3; ++d, scale *= 1000) v += scale * ((sh.lo[d] + at[d] + sh.global[d]) % sh.global[d]);
  return v;
}

/// One rank's array of `kind`, and a view of its cells (a grid_field's too).
struct mixed_array {
  mixed_array(hs::grid_field<double>& f, hs::shared_array<double>& shared, array_kind k) : field(&f), kind(k) {
    const hs::field_shape& sh = f.shape();
    if (k == array_kind::field) view = hs::make_field_view(f.data(), sh);
    if (k == array_kind::lender) view = hs::make_field_view(shared.data(), sh);
    if (k == array_kind::z_fastest) {
      own.assign(sh.size(), -7.5);
      view = hs::make_field_view(own.data(), sh, hs::storage_order::z_fastest);
    }
    if (k == array_kind::padded) {
      const hs::offset low{sh.ghost[0] + 1, sh.ghost[1] + 1, sh.ghost[2] + 1},
          high{sh.ghost_high[0] + 2, sh.ghost_high[1] + 1, sh.ghost_high[2]}, padding{3, 2, 1};
      std::size_t n = 1;
      for (int d = 0; d < 3; ++d) n *= static_cast<std::size_t>(low[d] + sh.interior[d] + high[d] + padding[d]);
      own.assign(n, -7.5);
      view = hs::make_field_view(own.data(), sh.interior, low, high, hs::storage_order::x_fastest, padding);
    }
  }
  /// Calls `f(cell, in_plan_box, interior, i, j, k)` for every cell of the view.
  template <class F>
  void each_cell(F&& f) const {
    const hs::field_shape& sh = field->shape();
    const hs::offset high = view.high();
    for (int k = -view.ghost[2]; k < sh.interior[2] + high[2]; ++k)
      for (int j = -view.ghost[1]; j < sh.interior[1] + high[1]; ++j)
        for (int i = -view.ghost[0]; i < sh.interior[0] + high[0]; ++i) {
          const int at[3] = {i, j, k};
          bool box = true, interior = true;
          for (int d = 0; d < 3; ++d) {
            box = box && at[d] >= -sh.ghost[d] && at[d] < sh.interior[d] + sh.ghost_high[d];
            interior = interior && at[d] >= 0 && at[d] < sh.interior[d];
          }
          f(view_check::cell_of(view, i, j, k), box, interior, i, j, k);
        }
  }
  /// forward (`split`: split phase) or reverse (sum) through `plan`, as this kind is exchanged.
  void exchange(hs::field_plan& plan, bool reverse, bool split) const {
    if (kind == array_kind::field) {
      if (split && reverse) return plan.start_reverse(*field).wait();
      if (split) return drive_field(plan.start_forward(*field));
      return reverse ? plan.reverse(*field) : plan.forward(*field);
    }
    if (split && reverse) return plan.start_reverse(view).wait();
    if (split) return drive_field(plan.start_forward(view));
    return reverse ? plan.reverse(view) : plan.forward(view);
  }
  template <class Handle>
  static void drive_field(Handle&& h) {
    h.progress();
    h.wait();
  }
  hs::grid_field<double>* field;
  array_kind kind;
  std::vector<double> own;
  hs::field_view<double> view;
};

/// In-node MPI messages this rank has sent since `before` (per grid rank: counting_mpi), nodes of
/// `node_size` consecutive ranks (0: one node).
long in_node_sends(const hs::cartesian_grid& grid, int node_size, const std::vector<long>& before) {
  long n = 0;
  for (int q = 0; q < grid.size(); ++q)
    if (q != grid.rank() && (node_size == 0 || q / node_size == grid.rank() / node_size))
      n += collectives::sends_to(q) - before[static_cast<std::size_t>(q)];
  return n;
}
std::vector<long> sends_by_rank(const hs::cartesian_grid& grid) {
  std::vector<long> out;
  for (int q = 0; q < grid.size(); ++q) out.push_back(collectives::sends_to(q));
  return out;
}
/// Whether every rank of MPI_COMM_WORLD runs on one machine (then nothing inside a node, pretend
/// or not, may go by MPI).
bool on_one_machine() {
  int size = 0, machine_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm machine;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &machine);
  MPI_Comm_size(machine, &machine_size);
  MPI_Comm_free(&machine);
  return machine_size == size;
}

/// Forward and reverse of one field plan on the shared-memory path with each rank passing another
/// kind of array (array_kind, turned by rank and round): ghosts equal the coordinates' oracle (and
/// extra layers keep their sentinel), reverse equals the flat (MPI) plan's; nothing inside a node
/// goes by MPI, and a repeat allocates nothing.
template <class Strategy>
std::string check_mixed_kinds(const hs::cartesian_grid& grid, int node_size, bool one_machine) {
  std::ostringstream why;
  const hs::offset cells{2 * grid.dim(0) + 1, 2 * grid.dim(1) + 2, 2 * grid.dim(2) + 1};
  hs::grid_field<double> u(grid, cells, 1), flat_field(grid, cells, 1);
  hs::shared_array<double> shared(grid, u.storage().size());
  // Odd ranks ask for pack threads (not agreed across ranks): on the path they pack on the calling
  // thread, through the window, as their partners do.
  auto plan = hs::make_field_plan<Strategy>(u, {.pack_threads = 1 + grid.rank() % 2, .shared_memory = true});
  auto flat = hs::make_field_plan<Strategy>(u);
  const hs::field_shape& sh = u.shape();
  for (int round = 0; round < 5; ++round) {
    const int salt = round + 1;
    const mixed_array a(u, shared, static_cast<array_kind>((grid.rank() + round) % 4));
    std::vector<long> before = sends_by_rank(grid);
    a.each_cell([&](double& c, bool, bool interior, int i, int j, int k) {
      c = interior ? periodic_value(sh, i, j, k, salt) : -7.5;
    });
    allocations::count = 0;
    allocations::counting = round == 4;  // a repeat of round 0's kinds: every program built
    // The lender lends every message inside its node that fits a slot (zero copy), whatever its partners pass.
    const auto lends = [&](bool backward) {
      return a.kind == array_kind::lender ? window_messages(grid, plan.details(), sizeof(double), backward) : 0;
    };
    std::uint64_t lent = hs::detail::lent_messages;
    a.exchange(plan, false, round % 2 == 1);
    if (hs::detail::lent_messages - lent != lends(false))
      why << "round " << round << ": lent " << hs::detail::lent_messages - lent << "; ";
    allocations::counting = false;
    if (allocations::count != 0) why << "round " << round << ": " << allocations::count << " allocations; ";
    long in_node = in_node_sends(grid, node_size, before);
    a.each_cell([&](double& c, bool box, bool, int i, int j, int k) {
      const double want = box ? periodic_value(sh, i, j, k, salt) : -7.5;
      if (c != want && why.tellp() < 600)
        why << "round " << round << " cell (" << i << "," << j << "," << k << "): " << c << ", expected " << want
            << "; ";
    });
    // Reverse (sum of integral values: exact in any order) against the flat plan on a grid field.
    const auto contribution = [&](int i, int j, int k) {
      return grid.rank() * 1000.0 + (i + 2) * 100 + (j + 2) * 10 + k;
    };
    a.each_cell([&](double& c, bool box, bool interior, int i, int j, int k) {
      c = interior ? periodic_value(sh, i, j, k, salt) : box ? contribution(i, j, k) : -7.5;
      if (box) flat_field(i, j, k) = c;
    });
    before = sends_by_rank(grid);
    lent = hs::detail::lent_messages;
    a.exchange(plan, true, round % 2 == 0);
    if (hs::detail::lent_messages - lent != lends(true))
      why << "reverse round " << round << ": lent " << hs::detail::lent_messages - lent << "; ";
    in_node += in_node_sends(grid, node_size, before);
    flat.reverse(flat_field);
    a.each_cell([&](double& c, bool, bool interior, int i, int j, int k) {
      if (interior && c != flat_field(i, j, k) && why.tellp() < 600)
        why << "reverse round " << round << " cell (" << i << "," << j << "," << k << "): " << c << ", expected "
            << flat_field(i, j, k) << "; ";
    });
    if (one_machine && in_node != 0) why << "round " << round << ": " << in_node << " MPI messages inside the node; ";
  }
  return why.str();
}

/// A bundle on even ranks, two padded views of the same element types on odd ones (the same bytes
/// per cell, in the same order): one exchange, through the window (no MPI message inside the node),
/// the ghosts of both fields equal to the coordinates' oracle; a repeat allocates nothing.
template <class Strategy>
std::string check_several_fields(const hs::cartesian_grid& grid, int node_size, bool one_machine) {
  std::ostringstream why;
  const hs::offset cells{2 * grid.dim(0) + 2, 2 * grid.dim(1) + 1, 2 * grid.dim(2) + 1};
  hs::field_bundle<double, float> bundle(grid, cells, hs::offset{1, 1, 1});
  hs::shared_array<double> unused(grid, 1);
  hs::grid_field<double>& u = bundle.get<0>();
  auto plan = hs::make_field_plan<Strategy>(u, {.shared_memory = true});
  const hs::field_shape& sh = u.shape();
  const mixed_array a(u, unused, grid.rank() % 2 ? array_kind::padded : array_kind::field);
  std::vector<float> b_own(a.own.size());
  hs::field_view<float> b{b_own.data(), a.view.interior, a.view.ghost, a.view.stride, a.view.ghost_high};
  if (grid.rank() % 2 == 0) b = hs::make_field_view(bundle.get<1>().data(), sh);
  for (int repeat = 0; repeat < 2; ++repeat) {
    const int salt = repeat + 1;
    a.each_cell([&](double& c, bool, bool interior, int i, int j, int k) {
      c = interior ? periodic_value(sh, i, j, k, salt) : -7.5;
      view_check::cell_of(b, i, j, k) = static_cast<float>(c) * 0.5f;
    });
    const std::vector<long> before = sends_by_rank(grid);
    allocations::count = 0;
    allocations::counting = repeat == 1;
    if (grid.rank() % 2)
      plan.start_forward(a.view, b).wait();
    else
      plan.forward(bundle);
    allocations::counting = false;
    if (allocations::count != 0) why << allocations::count << " allocations; ";
    if (one_machine && in_node_sends(grid, node_size, before) != 0)
      why << in_node_sends(grid, node_size, before) << " MPI messages inside the node; ";
    a.each_cell([&](double& c, bool box, bool, int i, int j, int k) {
      const double want = box ? periodic_value(sh, i, j, k, salt) : -7.5;
      const float got = view_check::cell_of(b, i, j, k);
      if ((c != want || got != static_cast<float>(want) * 0.5f) && why.tellp() < 600)
        why << "cell (" << i << "," << j << "," << k << "): " << c << " / " << got << ", expected " << want << "; ";
    });
  }
  return why.str();
}

/// One rank's field array for check_device_memory: its host image (the plan's layout), and, on a
/// device rank, the same cells in emulated device memory, which the exchanges get.
struct device_or_host {
  device_or_host(hs::grid_field<double>& u, hs::shared_array<double>& shared, bool device, bool lender)
      : shape(u.shape()), image(lender ? shared.data() : u.data()),
        on_device(device ? hs::memory::emulated_device::allocate<double>(shape.size()) : nullptr) {}
  ~device_or_host() { hs::memory::emulated_device::deallocate(on_device); }
  device_or_host(const device_or_host&) = delete;
  device_or_host& operator=(const device_or_host&) = delete;
  /// Calls `f(cell of the image, interior, i, j, k)` for every cell of the plan's box.
  template <class F>
  void each_cell(F&& f) const {
    const hs::field_view<double> v = hs::make_field_view(image, shape);
    for (int k = -shape.ghost[2]; k < shape.interior[2] + shape.ghost_high[2]; ++k)
      for (int j = -shape.ghost[1]; j < shape.interior[1] + shape.ghost_high[1]; ++j)
        for (int i = -shape.ghost[0]; i < shape.interior[0] + shape.ghost_high[0]; ++i)
          f(view_check::cell_of(v, i, j, k),
            i >= 0 && j >= 0 && k >= 0 && i < shape.interior[0] && j < shape.interior[1] && k < shape.interior[2], i,
            j, k);
  }
  /// forward or reverse (sum), `split`: split phase, of the image (through device memory on a device
  /// rank; `ordered`: ordered on a stream, the packing run only once the exchange polls it).
  void exchange(hs::field_plan& plan, bool reverse, bool split, bool ordered = false) const {
    using emulated = hs::memory::emulated_device;
    const std::size_t bytes = shape.size() * sizeof(double);
    if (!on_device) return run(plan, hs::make_field_view(image, shape), reverse, split);
    emulated::copy_to_device(on_device, image, bytes);
    emulated::queue stream;
    run(plan, hs::make_field_view(emulated{ordered ? &stream : nullptr}, on_device, shape), reverse, split);
    stream.synchronize();  // the unpacking, still pending on the stream after wait()
    emulated::copy_to_host(image, on_device, bytes);
  }
  template <class View>
  static void run(hs::field_plan& plan, const View& v, bool reverse, bool split) {
    if (split && reverse) return plan.start_reverse(v).wait();
    if (split) return mixed_array::drive_field(plan.start_forward(v));
    return reverse ? plan.reverse(v) : plan.forward(v);
  }
  hs::field_shape shape;
  double* image;
  double* on_device;
};

/// Batched exchanges (emulated device memory, `path`: staged through pinned memory or handed to
/// MPI directly) on the shared-memory path: on every rank, or (`mixed`) on even ranks while odd
/// ones exchange host memory, rank 1 a shared_array it lends. Forward (blocking, split phase, and
/// split phase ordered on a stream) ghosts equal the coordinates' oracle, reverse equals the flat (MPI) plan's bit for bit; nothing
/// inside a node goes by MPI, whatever memory either end uses. (No count of allocations: the
/// emulated device allocates in each launch and copy, the list of mappings it opens.)
template <class Strategy>
std::string check_device_memory(const hs::cartesian_grid& grid, int node_size, bool one_machine,
                                hs::memory::mpi_path path, bool mixed) {
  std::ostringstream why;
  const hs::offset cells{2 * grid.dim(0) + 1, 2 * grid.dim(1) + 2, 2 * grid.dim(2) + 1};
  hs::grid_field<double> u(grid, cells, 1), flat_field(grid, cells, 1);
  hs::shared_array<double> shared(grid, u.storage().size());
  auto plan = hs::make_field_plan<Strategy>(u, {.device_mpi = path, .shared_memory = true});
  auto flat = hs::make_field_plan<Strategy>(u);
  const hs::field_shape& sh = u.shape();
  const bool lender = mixed && grid.rank() == 1;
  const device_or_host a(u, shared, !mixed || grid.rank() % 2 == 0, lender);
  // Round 0: blocking forward, split reverse; round 1 the other way round; round 2 both split and
  // ordered on a stream.
  for (int round = 0; round < 3; ++round) {
    const int salt = round + 1;
    std::vector<long> before = sends_by_rank(grid);
    a.each_cell([&](double& c, bool interior, int i, int j, int k) {
      c = interior ? periodic_value(sh, i, j, k, salt) : -7.5;
    });
    const std::uint64_t lent = hs::detail::lent_messages;
    a.exchange(plan, false, round >= 1, round == 2);
    if (hs::detail::lent_messages - lent != (lender ? window_messages(grid, plan.details(), sizeof(double), false) : 0))
      why << "round " << round << ": lent " << hs::detail::lent_messages - lent << "; ";
    long in_node = in_node_sends(grid, node_size, before);
    a.each_cell([&](double& c, bool, int i, int j, int k) {
      if (c != periodic_value(sh, i, j, k, salt) && why.tellp() < 600)
        why << "round " << round << " cell (" << i << "," << j << "," << k << "): " << c << "; ";
    });
    a.each_cell([&](double& c, bool interior, int i, int j, int k) {
      c = interior ? periodic_value(sh, i, j, k, salt) : grid.rank() * 1000.0 + (i + 2) * 100 + (j + 2) * 10 + k;
      flat_field(i, j, k) = c;
    });
    before = sends_by_rank(grid);
    a.exchange(plan, true, round != 1, round == 2);
    in_node += in_node_sends(grid, node_size, before);
    flat.reverse(flat_field);
    a.each_cell([&](double& c, bool interior, int i, int j, int k) {
      if (interior && std::memcmp(&c, &flat_field(i, j, k), sizeof c) != 0 && why.tellp() < 600)
        why << "reverse round " << round << " cell (" << i << "," << j << "," << k << "): " << c << ", expected "
            << flat_field(i, j, k) << "; ";
    });
    if (one_machine && in_node != 0) why << "round " << round << ": " << in_node << " MPI messages inside the node; ";
  }
  return why.str();
}

}  // namespace

TEST_CASE("ranks of a node exchanging different kinds of field array meet in the window", "[halo][oracle][nodes]") {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool one_machine = on_one_machine();
  for (const int node_size : {0, 2}) {
    const std::vector<int> nodes = node_size ? std::vector<int>{node_size} : std::vector<int>{};
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}, .node_sizes = nodes});
    INFO("nodes of " << (node_size ? node_size : size));
    CHECK(check_mixed_kinds<hs::Shift>(grid, node_size, one_machine) == "");
    CHECK(check_mixed_kinds<hs::SingleHop>(grid, node_size, one_machine) == "");
    CHECK(check_several_fields<hs::SingleHop>(grid, node_size, one_machine) == "");
  }
}

TEST_CASE("device memory on some ranks of a node and host memory on others meet in the window",
          "[halo][oracle][nodes][device]") {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool one_machine = on_one_machine();
  for (const int node_size : {0, 2})
    for (const hs::memory::mpi_path path : {hs::memory::mpi_path::staged, hs::memory::mpi_path::direct}) {
      const std::vector<int> nodes = node_size ? std::vector<int>{node_size} : std::vector<int>{};
      hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}, .node_sizes = nodes});
      INFO("nodes of " << (node_size ? node_size : size) << (path == hs::memory::mpi_path::direct ? ", direct" : ""));
      CHECK(check_device_memory<hs::SingleHop>(grid, node_size, one_machine, path, false) == "");
      CHECK(check_device_memory<hs::SingleHop>(grid, node_size, one_machine, path, true) == "");
      CHECK(check_device_memory<hs::Shift>(grid, node_size, one_machine, path, true) == "");
    }
}

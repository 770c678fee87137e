// SPDX-License-Identifier: BSD-3-Clause
// Particle mode against a brute-force oracle over the rank sweep: every rank's
// ghosts (which particles, in which order, with which periodic shift) follow
// from the gathered positions alone; reverse sums equal a serial sum.

#include "../support/catch.hpp"
#include <cmath>
#include <cstring>
#include <haloshift/auto.hpp>
#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <tuple>
#include <type_traits>

#include "../support/oracle.hpp"
#include "../support/sweep.hpp"
#include "particle_oracle.hpp"
#include "particle_world.hpp"

namespace hs = haloshift;
using particle_world::particle;

namespace {

using particle_oracle::compare;
using particle_oracle::config;
using particle_oracle::contribution;
using particle_oracle::cutoff_factors;
using particle_oracle::expected_ghosts;
using particle_oracle::image_of;

/// Positions in every layout the views take (a flat array with PAD 3 and PAD 4, one array per
/// coordinate, an array per particle with a fourth entry, a member of a struct), in `F`, written in
/// place by forward_positions with companions in the same exchange, and summed back by reverse:
/// each ghost's coordinates are its owner's, stored as `F`, shifted in double by the oracle's image
/// and rounded once; each companion holds its owner's id; padding and room past size() stay.
template <class F>
void check_layouts(hs::particle_plan& plan, const config& c, const std::vector<particle>& mine,
                   const std::vector<particle>& want, const std::map<std::int64_t, particle>& by_id, int rank,
                   const std::map<std::int64_t, std::pair<double, std::size_t>>& held) {
  const std::size_t n = plan.size(), owned = plan.owned(), room = n + 2;
  const int nd = c.ndims;
  const F pad = F(-7);
  // What coordinate d of entry i must hold after the forward (room past size(): untouched).
  auto expected = [&](std::size_t i, int d) -> F {
    if (i >= n) return pad;
    if (i < owned) return static_cast<F>(mine[i].x[d]);
    const particle& g = want[i - owned];
    const particle& o = by_id.at(g.id);
    return static_cast<F>(static_cast<double>(static_cast<F>(o.x[d])) + image_of(c, g, o)[d] * c.length[d]);
  };
  auto id_of = [&](std::size_t i) { return i < owned ? mine[i].id : want[i - owned].id; };
  struct atom {
    std::array<F, 3> x;
    std::int32_t type;
    double q;
  };
  std::vector<F> p3(3 * room, pad), p4(4 * room, pad), sx(room, pad), sy(room, pad), sz(room, pad);
  std::vector<std::array<F, 4>> a4(room, {pad, pad, pad, pad});
  std::vector<atom> atoms(room, atom{{pad, pad, pad}, -1, -1.0});
  std::vector<std::int64_t> gid(room, -1), gid2(room, -1);
  std::vector<std::int32_t> type(room, -1);
  F* split[3] = {sx.data(), sy.data(), sz.data()};
  for (std::size_t i = 0; i < owned; ++i) {
    for (int d = 0; d < 3; ++d) {
      p3[3 * i + d] = p4[4 * i + d] = split[d][i] = a4[i][d] = atoms[i].x[d] = expected(i, d);
    }
    p4[4 * i + 3] = a4[i][3] = static_cast<F>(mine[i].id);
    gid[i] = gid2[i] = mine[i].id;
    type[i] = atoms[i].type = static_cast<std::int32_t>(mine[i].id % 5);
    atoms[i].q = static_cast<double>(mine[i].id) / 8;
  }
  const std::span<F> cx(sx), cy(sy), cz(sz);
  const hs::split_positions<F> soa = nd == 1 ? hs::split_positions<F>(cx) : nd == 2 ? hs::split_positions<F>(cx, cy)
                                                                                     : hs::split_positions<F>(cx, cy, cz);
  plan.forward_positions(hs::strided_positions<F>(p3.data(), room, 3), gid);
  plan.forward_positions(hs::strided_positions<F>(p4.data(), room, 4, nd), hs::strided_positions<F>(p4.data() + 3, room, 4, 1),
                         std::span<std::int32_t>(type));
  {
    auto pending = plan.start_forward_positions(soa, std::span<std::int64_t>(gid2));
    pending.progress();
    pending.wait();
  }
  plan.forward_positions(hs::array_positions<std::array<F, 4>>(a4));
  plan.forward_positions(hs::member_positions<atom, std::array<F, 3>>(atoms, &atom::x),
                         hs::member_positions<atom, std::int32_t>(atoms, &atom::type),
                         hs::member_positions<atom, double>(atoms, &atom::q));
  bool positions = true, companions = true, untouched = true;
  for (std::size_t i = 0; i < room; ++i) {
    for (int d = 0; d < 3; ++d) {
      const F want_d = expected(i, d);
      positions = positions && p3[3 * i + d] == want_d && a4[i][d] == want_d && atoms[i].x[d] == want_d &&
                  p4[4 * i + d] == (d < nd ? want_d : i < owned ? want_d : pad) &&
                  (d >= nd || split[d][i] == want_d);
    }
    if (i >= n) {
      untouched = untouched && gid[i] == -1 && type[i] == -1 && atoms[i].type == -1 && p4[4 * i + 3] == pad;
      continue;
    }
    const std::int64_t id = id_of(i);
    companions = companions && gid[i] == id && gid2[i] == id && type[i] == id % 5 && atoms[i].type == id % 5 &&
                 atoms[i].q == static_cast<double>(id) / 8 && p4[4 * i + 3] == static_cast<F>(id) &&
                 a4[i][3] == static_cast<F>(id);
  }
  CHECK(positions);
  CHECK(companions);
  CHECK(untouched);

  // Reverse in the same layouts: integer values, exact in float too whatever the order of the sums.
  auto value = [&](std::size_t i, int d) {
    return static_cast<F>(i < owned ? mine[i].id % 1000 + d : contribution(rank, id_of(i)) + d);
  };
  for (std::size_t i = 0; i < room; ++i)
    for (int d = 0; d < 3; ++d)
      p3[3 * i + d] = p4[4 * i + d] = split[d][i] = a4[i][d] = atoms[i].x[d] = i < n ? value(i, d) : pad;
  plan.reverse(hs::strided_positions<F>(p3.data(), room, 3));
  plan.reverse(hs::strided_positions<F>(p4.data(), room, 4, nd));
  plan.reverse(soa, std::plus<>{});
  plan.reverse(hs::array_positions<std::array<F, 4>>(a4));
  {
    auto pending = plan.start_reverse(hs::member_positions<atom, std::array<F, 3>>(atoms, &atom::x));
    pending.wait();
  }
  bool sums = true;
  for (std::size_t i = 0; i < owned; ++i) {
    // Every ghost of the particle adds its holder's contribution and d.
    const auto& [contributions, copies] = held.at(mine[i].id);
    for (int d = 0; d < 3; ++d) {
      const F s = static_cast<F>(static_cast<double>(mine[i].id % 1000 + d) + contributions +
                                 static_cast<double>(d) * static_cast<double>(copies));
      sums = sums && p3[3 * i + d] == s && a4[i][d] == s && atoms[i].x[d] == s &&
             (d >= nd || (p4[4 * i + d] == s && split[d][i] == s));
    }
  }
  CHECK(sums);
}

/// A code's own ghost fill over the plan's send lists (an EAM embedding term's loop): per round,
/// pack `indices`, send to `rank`, receive from `source` into `received`. Returns the filled ids.
std::vector<std::int64_t> fill_by_send_lists(const hs::particle_plan& plan, const std::vector<particle>& mine) {
  std::vector<std::int64_t> v(plan.size(), -1);
  for (std::size_t i = 0; i < mine.size(); ++i) v[i] = mine[i].id;
  const std::vector<hs::send_list> lists = plan.send_lists();
  auto tag = [](const hs::offset& o) { return ((o[0] + 16) * 32 + (o[1] + 16)) * 32 + (o[2] + 16); };
  std::vector<std::vector<std::int64_t>> out(lists.size()), in(lists.size());
  std::vector<MPI_Request> requests;
  for (std::size_t first = 0, next = 0; first < lists.size(); first = next) {
    requests.clear();
    for (next = first; next < lists.size() && lists[next].round == lists[first].round; ++next) {
      const hs::send_list& l = lists[next];
      CHECK(l.count == l.received.size());
      CHECK((l.received.empty() || l.first == l.received.front()));
      in[next].resize(l.count);
      if (l.source >= 0)
        MPI_Irecv(in[next].data(), static_cast<int>(l.count * 8), MPI_BYTE, l.source, tag(l.direction), MPI_COMM_WORLD,
                  &requests.emplace_back());
      for (std::size_t i : l.indices) out[next].push_back(v[i]);
      if (l.rank >= 0)
        MPI_Isend(out[next].data(), static_cast<int>(out[next].size() * 8), MPI_BYTE, l.rank, tag(l.direction),
                  MPI_COMM_WORLD, &requests.emplace_back());
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    for (std::size_t k = first; k < next; ++k)
      for (std::size_t j = 0; j < lists[k].received.size(); ++j) v[lists[k].received[j]] = in[k][j];
  }
  return v;
}

/// Pretend node sizes of the shared-memory sweep: 1 to 4 nodes of uneven sizes at 1-4 ranks.
const std::vector<std::vector<int>> node_size_cases{{}, {1}, {2, 1}, {3}};

/// The sweep; `shared_memory`: through the shared-memory path inside pretend nodes instead
/// (plan_options::shared_memory), on every third shape, each under the next of node_size_cases.
template <class Strategy>
void sweep_particles(bool shared_memory = false) {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::size_t configurations = 0, shape_index = 0;
  for (const sweep::shape& s : sweep::shapes(size)) {
    const std::size_t nth = shape_index++;
    if (shared_memory && nth % 3 != 0) continue;
    const std::vector<int> nodes = shared_memory ? node_size_cases[nth / 3 % node_size_cases.size()] : std::vector<int>{};
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic, .node_sizes = nodes});
    config c{};
    c.ndims = static_cast<int>(s.dims.size());
    for (int d = 0; d < c.ndims; ++d) {
      c.g.dims[d] = s.dims[d];
      c.g.periodic[d] = s.periodic[d];
    }
    c.lo = particle_world::lo();
    c.length = particle_world::length();
    const hs::domain dom{c.lo, {c.lo[0] + c.length[0], c.lo[1] + c.length[1], c.lo[2] + c.length[2]}};
    const oracle::coords me = c.g.coords_of(rank);
    for (double factor : cutoff_factors(s)) {
      for (int d = 0; d < 3; ++d) {
        c.cutoff[d] = d < c.ndims ? factor * c.length[d] / c.g.dims[d] : 0.0;
        c.reach[d] = d < c.ndims ? static_cast<int>(std::ceil(factor)) : 0;
      }
      const unsigned seed = static_cast<unsigned>(configurations + 1);
      std::vector<particle> mine = particle_world::make(rank, c.box_lo(me), c.box_hi(me), c.ndims, seed);
      const auto all = particle_world::gather(mine, MPI_COMM_WORLD);
      const auto want = expected_ghosts(c, rank, all);
      for (hs::protocol mode : {hs::protocol::overlapping, hs::protocol::rendezvous}) {
        // Synchronous sends: the executor's ordering is shared by all strategies; Shift within one box suffices.
        if (mode == hs::protocol::rendezvous &&
            (shared_memory || sweep::reduced() || factor > 1 || !std::is_same_v<Strategy, hs::Shift>))
          continue;
        // Streamed, not a chain of std::string +: GCC 12 -O2 warns falsely (-Warray-bounds) on that chain.
        INFO(Strategy::name << " " << s.name() << " cutoff " << factor << " boxes "
                            << (mode == hs::protocol::rendezvous ? "rendezvous" : "overlapping")
                            << (shared_memory ? " shared memory, node sizes " + std::to_string(nodes.size()) : ""));
        std::vector<hs::position> x;
        for (const particle& p : mine) x.push_back(p.x);
        auto plan = hs::make_particle_plan<Strategy>(
            grid, dom, hs::position{c.cutoff[0], c.cutoff[1], c.cutoff[2]}, x,
            {.mode = mode, .shared_memory = shared_memory, .background = sweep::background(configurations)});
        REQUIRE(plan.owned() == mine.size());
        CHECK(plan.reach() == hs::offset{c.reach[0], c.reach[1], c.reach[2]});

        // Arrays of structs: positions shifted, the rest copied.
        std::vector<particle> atoms(plan.size());
        std::copy(mine.begin(), mine.end(), atoms.begin());
        plan.forward_positions(std::span<particle>(atoms), &particle::x);
        CHECK(compare(atoms, mine.size(), want, rank) == "");
        {  // a plan repeats; here split phase: progress() once, then wait()
          auto pending = plan.start_forward_positions(std::span<particle>(atoms), &particle::x);
          pending.progress();
          pending.wait();
        }
        CHECK(compare(atoms, mine.size(), want, rank) == "");

        // Separate arrays: ids unshifted, positions shifted, and the plan's own copy of the positions.
        std::vector<std::int64_t> ids(plan.size());
        std::vector<hs::position> xs(plan.size());
        for (std::size_t i = 0; i < mine.size(); ++i) ids[i] = mine[i].id, xs[i] = mine[i].x;
        {  // split phase, test() until done; then the blocking call for positions
          auto pending = plan.start_forward(std::span<std::int64_t>(ids));
          while (!pending.test()) {
          }
        }
        plan.forward_positions(xs);
        {  // a vector of positions with a companion: both in one exchange, as separately
          std::vector<hs::position> xs2(plan.size());
          std::vector<std::int64_t> ids3(plan.size());
          for (std::size_t i = 0; i < mine.size(); ++i) xs2[i] = mine[i].x, ids3[i] = mine[i].id;
          plan.forward_positions(xs2, ids3);
          CHECK(ids3 == ids);
          CHECK((xs.empty() || std::memcmp(xs2.data(), xs.data(), xs.size() * sizeof(hs::position)) == 0));
        }
        bool same = ids.size() == mine.size() + want.size();
        for (std::size_t i = 0; same && i < want.size(); ++i)
          same = ids[mine.size() + i] == want[i].id &&
                 std::memcmp(&xs[mine.size() + i], &want[i].x, sizeof(hs::position)) == 0 &&
                 std::memcmp(&plan.positions()[mine.size() + i], &want[i].x, sizeof(hs::position)) == 0;
        CHECK(same);

        // Blocks: contiguous, canonical, sources and images as the oracle says.
        std::size_t next = mine.size();
        for (const auto& b : plan.blocks()) {
          CHECK(b.first == next);
          next += b.count;
        }
        CHECK(next == plan.size());

        // Reverse: every holder's contribution reaches the owner once.
        std::vector<double> f(plan.size());
        for (std::size_t i = 0; i < mine.size(); ++i) f[i] = static_cast<double>(mine[i].id);
        for (std::size_t i = mine.size(); i < f.size(); ++i) f[i] = contribution(rank, ids[i]);
        {
          auto pending = plan.start_reverse(std::span<double>(f));
          while (!pending.test()) {
          }
        }
        std::map<std::int64_t, double> sum;
        for (const particle& p : mine) sum[p.id] = static_cast<double>(p.id);
        for (int holder = 0; holder < size; ++holder)
          for (const particle& p : expected_ghosts(c, holder, all))
            if (sum.count(p.id)) sum[p.id] += contribution(holder, p.id);
        bool sums = true;
        for (std::size_t i = 0; i < mine.size(); ++i) sums = sums && f[i] == sum[mine[i].id];
        CHECK(sums);

        // A structure of arrays in one exchange: the same ghosts as separate exchanges (ids, the
        // unshifted positions, a 4-byte type), and the same sums back (two arrays at once).
        std::vector<std::int64_t> ids2(plan.size());
        std::vector<hs::position> raw(plan.size()), raw_alone(plan.size());
        std::vector<std::int32_t> type(plan.size());
        for (std::size_t i = 0; i < mine.size(); ++i)
          ids2[i] = mine[i].id, raw[i] = raw_alone[i] = mine[i].x, type[i] = static_cast<std::int32_t>(mine[i].id % 5);
        {
          auto pending = plan.start_forward(std::span<std::int64_t>(ids2), std::span<hs::position>(raw),
                                            std::span<std::int32_t>(type));
          pending.progress();
          pending.wait();
        }
        plan.forward(raw_alone);
        bool soa = ids2 == ids && (raw.empty() || std::memcmp(raw.data(), raw_alone.data(),
                                                              raw.size() * sizeof(hs::position)) == 0);
        for (std::size_t i = mine.size(); soa && i < plan.size(); ++i) soa = type[i] == static_cast<std::int32_t>(ids[i] % 5);
        CHECK(soa);
        std::vector<double> f2(plan.size()), g(plan.size(), 1.0), g_alone(plan.size(), 1.0);
        for (std::size_t i = 0; i < mine.size(); ++i) f2[i] = static_cast<double>(mine[i].id);
        for (std::size_t i = mine.size(); i < plan.size(); ++i) f2[i] = contribution(rank, ids[i]);
        plan.reverse(f2, g);  // several arrays, the op left out: std::plus<>
        plan.reverse(g_alone);
        bool both = true;
        for (std::size_t i = 0; i < mine.size(); ++i) both = both && f2[i] == f[i] && g[i] == g_alone[i];
        CHECK(both);

        // Where each ghost comes from: the owner's particle at the owner's index.
        const std::vector<hs::ghost_origin> origins = plan.ghost_origins();
        bool origin = origins.size() == want.size();
        for (std::size_t i = 0; origin && i < want.size(); ++i)
          origin = origins[i].rank >= 0 && origins[i].rank < size &&
                   origins[i].index < all[static_cast<std::size_t>(origins[i].rank)].size() &&
                   all[static_cast<std::size_t>(origins[i].rank)][origins[i].index].id == want[i].id;
        CHECK(origin);
        // Send lists: with one round (SingleHop, NeighborAlltoall) each names exactly the owned
        // particles within the cutoff of the receiving box, in order; every strategy's lie in the arrays.
        for (const hs::send_list& l : plan.send_lists()) {
          bool inside = l.rank < 0 || !l.indices.empty();
          for (std::size_t i : l.indices) inside = inside && i < plan.size();
          CHECK(inside);
          if (l.rank < 0 || (!std::is_same_v<Strategy, hs::SingleHop> && !std::is_same_v<Strategy, hs::NeighborAlltoall>))
            continue;
          oracle::coords to{};
          for (int d = 0; d < 3; ++d) to[d] = me[d] + l.direction[d];
          const auto rlo = c.box_lo(to), rhi = c.box_hi(to);
          std::vector<std::size_t> near;
          for (std::size_t i = 0; i < mine.size(); ++i) {
            bool in = true;
            for (int d = 0; d < c.ndims; ++d)
              in = in && rlo[d] - mine[i].x[d] <= c.cutoff[d] && mine[i].x[d] - rhi[d] <= c.cutoff[d];
            if (in) near.push_back(i);
          }
          CHECK(l.indices == near);
        }
        // The receive side: a fill loop of the code's own over the lists lands every ghost as forward does.
        CHECK(fill_by_send_lists(plan, mine) == ids);
        // Positions and companions in every layout, float and double, written in place; reverse sums
        // (both protocols: rendezvous sends and receives in place too).
        {
          std::map<std::int64_t, particle> by_id;
          for (const auto& r : all)
            for (const particle& p : r) by_id[p.id] = p;
          // Per owned particle: the contributions of its ghosts (reverse) and how many there are.
          std::map<std::int64_t, std::pair<double, std::size_t>> held;
          for (const particle& p : mine) held[p.id] = {0.0, 0};
          for (int holder = 0; holder < size; ++holder)
            for (const particle& p : expected_ghosts(c, holder, all))
              if (held.count(p.id)) held[p.id].first += contribution(holder, p.id), ++held[p.id].second;
          check_layouts<double>(plan, c, mine, want, by_id, rank, held);
          // The executor is the same for every element type: float once, on Shift's schedule.
          if (std::is_same_v<Strategy, hs::Shift> && mode == hs::protocol::overlapping)
            check_layouts<float>(plan, c, mine, want, by_id, rank, held);
        }

        // Re-neighbouring: other particles (another seed, another count) through rebuild(), exact
        // against the oracle like a new plan; twice (on the shared-memory path the second rebuild
        // finds the window the first made or kept: shared_window::refit).
        for (int again = 1; again <= 2 && mode == hs::protocol::overlapping; ++again) {
          const std::vector<particle> next_mine =
              particle_world::make(rank, c.box_lo(me), c.box_hi(me), c.ndims, seed + 7919 * again);
          const auto next_all = particle_world::gather(next_mine, MPI_COMM_WORLD);
          std::vector<hs::position> next_x;
          for (const particle& p : next_mine) next_x.push_back(p.x);
          plan.rebuild(next_x);
          REQUIRE(plan.owned() == next_mine.size());
          std::vector<particle> next_atoms(plan.size());
          std::copy(next_mine.begin(), next_mine.end(), next_atoms.begin());
          plan.forward_positions(std::span<particle>(next_atoms), &particle::x);
          CHECK(compare(next_atoms, next_mine.size(), expected_ghosts(c, rank, next_all), rank) == "");
        }
        ++configurations;
      }
    }
  }
  CHECK(configurations > 0);
}

}  // namespace

using particle_strategies = std::tuple<hs::Shift, hs::SingleHop, hs::TtlMultiHop, hs::NeighborAlltoall>;

TEMPLATE_LIST_TEST_CASE("particle ghosts, shifts and reverse sums match the oracle", "[particles][oracle]",
                        particle_strategies) {
  sweep_particles<TestType>();
}

TEMPLATE_LIST_TEST_CASE("particle ghosts and reverse sums through the shared-memory path inside pretend nodes",
                        "[particles][oracle][nodes]", particle_strategies) {
  sweep_particles<TestType>(true);
}

TEST_CASE("particle plans reject bad input on every rank", "[particles][errors]") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, false}});
  const hs::domain dom{{0, 0, 0}, {2, 2, 1}};
  const auto [lo, hi] = hs::box_of(grid, dom);
  std::vector<hs::position> x{{(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, 0}};

  SECTION("a particle outside its box, on rank 0 only") {
    std::vector<hs::position> bad = x;
    if (rank == 0) bad[0][0] = hi[0] + 0.1;
    CHECK_THROWS_WITH(hs::make_particle_plan<hs::Shift>(grid, dom, 0.3, bad),
                      Catch::Contains("particle 0") && Catch::Contains("call migrate first"));
  }
  SECTION("a negative cutoff") {
    CHECK_THROWS_WITH(hs::make_particle_plan<hs::Shift>(grid, dom, -0.5, x), Catch::Contains("cutoff[0]"));
  }
  SECTION("rebuild with a particle outside its box on rank 0 only, or during an exchange") {
    auto plan = hs::make_particle_plan<hs::SingleHop>(grid, dom, 0.3, x);
    std::vector<hs::position> bad = x;
    if (rank == 0) bad[0][1] = hi[1];  // the upper bound belongs to the next box
    CHECK_THROWS_WITH(plan.rebuild(bad), Catch::Contains("particle 0") && Catch::Contains("call migrate first"));
    std::vector<double> values(plan.size(), 1.0);
    {
      auto pending = plan.start_forward(std::span<double>(values));
      CHECK_THROWS_WITH(plan.rebuild(x), Catch::Contains("rebuild") && Catch::Contains("in flight"));
      pending.wait();
    }
    plan.rebuild(x);  // and then it works
    CHECK(plan.owned() == x.size());
  }
  SECTION("a cutoff that differs between ranks") {
    if (size > 1)
      CHECK_THROWS_WITH(hs::make_particle_plan<hs::Shift>(grid, dom, rank == 0 ? 0.25 : 0.3, x),
                        Catch::Contains("cutoff[0] must be the same on all ranks"));
  }
  SECTION("an empty domain") {
    CHECK_THROWS_WITH(hs::make_particle_plan<hs::Shift>(grid, {{0, 0, 0}, {0, 2, 1}}, 0.3, x),
                      Catch::Contains("domain: lo[0]"));
  }
  SECTION("strategies and protocols that cannot select") {
    CHECK_THROWS_WITH(
        hs::make_particle_plan<hs::NeighborAlltoall>(grid, dom, 0.3, x, {.mode = hs::protocol::rendezvous}),
        Catch::Contains("only protocol::overlapping applies"));
    // Refused whatever the team size: with teams of one it would be Shift under another name.
    CHECK_THROWS_WITH(hs::make_particle_plan<hs::TeamShift>(grid, dom, 0.3, x, {.team = {grid.dim(0), 1, 1}}),
                      Catch::Contains("TeamShift carries block payloads only"));
    CHECK_THROWS_WITH(hs::make_particle_plan(grid, "teamshift", dom, hs::position{0.3, 0.3, 0.3}, x),
                      Catch::Contains("TeamShift carries block payloads only"));
  }
  SECTION("an array of the wrong length, on every rank") {
    auto plan = hs::make_particle_plan<hs::Shift>(grid, dom, 0.3, x);
    std::vector<double> short_array(plan.owned());
    if (plan.ghosts() > 0) CHECK_THROWS_WITH(plan.forward(short_array), Catch::Contains("owned and ghosts"));
    // Views in the code's layout: room for the ghosts, a companion as long, writable storage. Too
    // short on rank 0 only: with agreed checks every rank raises.
    auto agreed = hs::make_particle_plan<hs::Shift>(grid, dom, 0.3, x, {.checks = hs::argument_checks::collective});
    std::vector<double> flat(4 * agreed.size()), room(agreed.size());
    std::vector<int> types(agreed.size());
    int rank0_ghosts = agreed.ghosts() > 0;
    MPI_Bcast(&rank0_ghosts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    const std::size_t shorter = rank == 0 ? agreed.owned() : agreed.size();
    if (rank0_ghosts) {
      CHECK_THROWS_WITH(agreed.forward_positions(hs::strided_positions<double>(flat.data(), shorter, 4)),
                        Catch::Contains("forward_positions: the positions hold") && Catch::Contains("room for ghosts"));
      CHECK_THROWS_WITH(agreed.reverse(hs::strided_positions<double>(flat.data(), shorter, 4)),
                        Catch::Contains("reverse: the positions hold"));
      std::span<int> few(types.data(), shorter);
      CHECK_THROWS_WITH(agreed.forward_positions(hs::strided_positions<double>(flat.data(), agreed.size(), 4), few),
                        Catch::Contains("companion 1 holds"));
    }
    const std::vector<double>& read_only = flat;
    CHECK_THROWS_WITH(agreed.forward_positions(hs::strided_positions<double>(read_only.data(), agreed.size(), 4), room),
                      Catch::Contains("the positions was made from const storage"));
  }
}

TEST_CASE("particle plans with Auto give the same ghosts as Shift", "[particles][auto]") {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, false, true}});
  const hs::domain dom{{0, 0, 0}, {3, 2, 4}};
  const auto [lo, hi] = hs::box_of(grid, dom);
  std::vector<particle> mine = particle_world::make(rank, lo, hi, 3, 99);
  std::vector<hs::position> x;
  for (const particle& p : mine) x.push_back(p.x);
  auto chosen = hs::make_particle_plan<hs::Auto>(grid, dom, 0.7, x);
  auto shift = hs::make_particle_plan<hs::Shift>(grid, dom, 0.7, x);
  CHECK((chosen.strategy() == "Shift" || chosen.strategy() == "SingleHop" || chosen.strategy() == "TtlMultiHop"));
  std::vector<std::int64_t> a(chosen.size()), b(shift.size());
  for (std::size_t i = 0; i < mine.size(); ++i) a[i] = b[i] = mine[i].id;
  chosen.forward(a);
  shift.forward(b);
  CHECK(a == b);
  CHECK(std::memcmp(chosen.positions().data(), shift.positions().data(), a.size() * sizeof(hs::position)) == 0);
  // Auto takes every position layout, as every strategy does: its choice and plan are those of the vector.
  std::vector<std::array<double, 4>> padded;
  std::vector<double> flat;  // x[i*4 + d], the fourth a charge
  for (const hs::position& p : x) {
    padded.push_back({p[0], p[1], p[2], 0.5});
    flat.insert(flat.end(), {p[0], p[1], p[2], 0.5});
  }
  auto same_as_chosen = [&](const hs::particle_plan& from_layout) {
    CHECK(from_layout.strategy() == chosen.strategy());
    CHECK(from_layout.size() == chosen.size());
    CHECK(std::memcmp(from_layout.positions().data(), chosen.positions().data(),
                      chosen.size() * sizeof(hs::position)) == 0);
  };
  same_as_chosen(hs::make_particle_plan<hs::Auto>(grid, dom, 0.7, hs::array_positions<std::array<double, 4>>(padded)));
  same_as_chosen(hs::make_particle_plan<hs::Auto>(grid, dom, hs::position{0.7, 0.7, 0.7},
                                                  hs::strided_positions<double>(flat.data(), x.size(), 4)));
}

TEST_CASE("NeighborAlltoall keeps its graph communicators across rebuilds", "[particles][rebuild]") {
  // Creating the graphs is collective and costs more than the rest of a small rebuild. The peers
  // are the neighbours that receive some particle: unchanged when the particles near each face,
  // edge and corner stay there, whatever else moves.
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, false}});
  const hs::domain dom{{0, 0, 0}, {2, 2, 1}};
  const auto box = hs::box_of(grid, dom);  // not a structured binding: the lambda below captures it
  const hs::position &lo = box.first, &hi = box.second;
  auto corners = [&](double in) {  // one particle `in` inside each corner of the box: every neighbour needs one
    std::vector<hs::position> x;
    for (double px : {lo[0] + in, hi[0] - in})
      for (double py : {lo[1] + in, hi[1] - in}) x.push_back({px, py, 0});
    return x;
  };
  int created = 0;
  const auto previous = hs::set_log_sink([&](hs::log_level, std::string_view text) {
    if (text.find("NeighborAlltoall: graph communicators created") != std::string_view::npos) ++created;
  });
  hs::set_verbose(true);
  // The cutoff is below the narrowest box (2 / 8): only the adjacent boxes are peers.
  auto plan = hs::make_particle_plan<hs::NeighborAlltoall>(grid, dom, 0.2, corners(0.01));
  CHECK(created == 1);
  for (int step = 1; step <= 3; ++step) {
    std::vector<hs::position> x = corners(0.01 + 0.01 * step);  // moved, still within the cutoff of the faces
    for (int extra = 0; extra < step; ++extra) x.push_back({(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, 0});
    plan.rebuild(x);
    CHECK(plan.owned() == x.size());
  }
  CHECK(created == 1);
  // Neighbours that receive nothing drop out of the graph: with no particles at all every edge
  // goes (x is periodic, so even one rank had some), and the graphs are made anew.
  plan.rebuild(std::vector<hs::position>{});
  CHECK(plan.ghosts() == 0);
  CHECK(created == 2);
  hs::set_verbose(false);
  hs::set_log_sink(previous);
}

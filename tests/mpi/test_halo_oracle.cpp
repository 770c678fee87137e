// SPDX-License-Identifier: BSD-3-Clause
// Every strategy, every configuration of the sweep: forward halos equal the
// oracle bit for bit, reverse sums equal a serial sum over all holders.

#include "../support/driving.hpp"
#include "../support/catch.hpp"
#include <cstring>
#include <haloshift/haloshift.hpp>
#include <sstream>
#include <tuple>

#include "../../examples/custom_strategy/zyx_shift.hpp"
#include "../support/oracle.hpp"
#include "../support/sweep.hpp"

namespace hs = haloshift;

namespace {

double value_of(int rank, std::size_t i) { return rank * 1000.0 + static_cast<double>(i) + 0.25; }
// Integer-valued, so sums are exact whatever the order of combination.
double contribution(int holder, const oracle::coords& o, std::size_t i) {
  return holder * 100003.0 + oracle::offset_code(o) * 11.0 + static_cast<double>(i);
}

hs::offset as_offset(const oracle::coords& c) { return {c[0], c[1], c[2]}; }

oracle::grid oracle_grid(const sweep::shape& s) {
  oracle::grid g;
  for (std::size_t d = 0; d < s.dims.size(); ++d) {
    g.dims[d] = s.dims[d];
    g.periodic[d] = s.periodic[d];
  }
  return g;
}

oracle::coords range_of(const sweep::shape& s, int k) {
  oracle::coords r{0, 0, 0};
  for (std::size_t d = 0; d < s.dims.size(); ++d) r[d] = k;
  return r;
}

/// Empty when `got` equals the oracle, else a description of the first difference.
/// A plan's shell and halo pattern, as the oracle takes them.
struct neighbourhood {
  hs::shell kind = hs::shell::full;
  hs::halo_pattern pattern = hs::halo_pattern::full;
  /// Ranks numbered x fastest (grid_options::order): a lighter sweep (two k, one payload, one protocol and team).
  bool x_fastest = false;
  bool eighth() const { return kind == hs::shell::eighth; }
  /// The most dimensions an imported offset may differ from 0 in (counted here, not by the library).
  int separated() const {
    return pattern == hs::halo_pattern::faces ? 1 : pattern == hs::halo_pattern::faces_and_edges ? 2 : 3;
  }
  std::string name() const {
    return std::string(x_fastest ? " x-fastest" : "") + (eighth() ? " eighth" : " full") +
           (pattern == hs::halo_pattern::faces             ? " faces"
            : pattern == hs::halo_pattern::faces_and_edges ? " faces_and_edges"
                                                           : "");
  }
};

std::string compare_forward(const hs::halo<double>& got, const oracle::grid& g, int me, const oracle::coords& k,
                            const neighbourhood& n, sweep::payload pl) {
  const auto want = oracle::halo_of(g, me, k, n.eighth(), n.separated());
  std::ostringstream why;
  if (got.size() != want.size()) {
    why << "rank " << me << ": " << got.size() << " blocks, expected " << want.size();
    return why.str();
  }
  std::size_t i = 0;
  for (const auto& b : got) {
    const auto& w = want[i++];
    if (b.offset != w.offset || b.source != w.source || b.image != w.image) {
      why << "rank " << me << " block " << i - 1 << ": offset " << hs::to_string(b.offset) << " source " << b.source
          << " image " << hs::to_string(b.image) << ", expected offset " << hs::to_string(as_offset(w.offset))
          << " source " << w.source << " image " << hs::to_string(as_offset(w.image));
      return why.str();
    }
    std::vector<double> data(sweep::count_of(pl, w.source));
    for (std::size_t e = 0; e < data.size(); ++e) data[e] = value_of(w.source, e);
    if (b.data.size() != data.size() ||
        (!data.empty() && std::memcmp(b.data.data(), data.data(), data.size() * sizeof(double)) != 0)) {
      why << "rank " << me << " block " << hs::to_string(b.offset) << ": data differs (" << b.data.size()
          << " elements, expected " << data.size() << ")";
      return why.str();
    }
  }
  return {};
}


std::string run_reverse_and_compare(hs::plan<double>& plan, const oracle::grid& g, int me, const oracle::coords& k,
                                    const neighbourhood& n, sweep::payload pl, driving how) {
  hs::halo<double> contributions = plan.make_halo();
  for (auto b : contributions)
    for (std::size_t e = 0; e < b.data.size(); ++e) b.data[e] = contribution(me, b.offset, e);
  std::vector<double> own(sweep::count_of(pl, me));
  for (std::size_t e = 0; e < own.size(); ++e) own[e] = value_of(me, e);
  if (how == driving::blocking)
    plan.reverse(contributions, std::span<double>(own));
  else
    drive(plan.start_reverse(contributions, std::span<double>(own)), how);

  std::vector<double> want(own.size());
  for (std::size_t e = 0; e < want.size(); ++e) want[e] = value_of(me, e);
  for (int holder = 0; holder < g.size(); ++holder)
    for (const auto& b : oracle::halo_of(g, holder, k, n.eighth(), n.separated()))
      if (b.source == me)
        for (std::size_t e = 0; e < want.size(); ++e) want[e] += contribution(holder, b.offset, e);
  for (std::size_t e = 0; e < want.size(); ++e)
    if (own[e] != want[e]) {
      std::ostringstream why;
      why << "rank " << me << " reverse element " << e << ": " << own[e] << ", expected " << want[e];
      return why.str();
    }
  return {};
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

template <class Strategy>
void sweep_strategy(const neighbourhood& n) {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::size_t configurations = 0;
  for (const sweep::shape& s : sweep::shapes(size)) {
    using order = hs::grid_options::rank_order;
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims,
                                             .periodic = s.periodic,
                                             .order = n.x_fastest ? order::first_fastest : order::last_fastest});
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
            if (sweep::reduced() && mode == hs::protocol::rendezvous && k > 1) continue;
            const std::string where = std::string(Strategy::name) + " " + s.name() + " k=" + std::to_string(k) + " " +
                                      sweep::to_string(pl) + n.name() +
                                      (mode == hs::protocol::rendezvous ? " rendezvous" : " overlapping") + " team " +
                                      hs::to_string(team);
            INFO(where);
            std::vector<double> mine(sweep::count_of(pl, rank));
            for (std::size_t e = 0; e < mine.size(); ++e) mine[e] = value_of(rank, e);
            auto plan = hs::make_plan<Strategy, double>(
                grid, k, mine.size(), {.mode = mode, .kind = n.kind, .pattern = n.pattern, .team = team});
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

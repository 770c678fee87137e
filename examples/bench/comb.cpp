// SPDX-License-Identifier: BSD-3-Clause
// haloshift_bench_comb: the halo exchange LLNL's Comb benchmark times (github.com/LLNL/Comb),
// run with the library's field plans on the same mesh, split, ghost widths and variables, timed
// the way Comb times it. examples/bench/comb_compare runs both side by side (docs/performance.md,
// "Against Comb").
//
//   mpiexec -n 2 ./haloshift_bench_comb 64_32_32 -divide 2_1_1 -periodic 1_1_1 -ghost 1_1_1 -vars 3 -cycles 100
//   ./haloshift_bench_comb --quick             a small check and timing at any rank count
//   ./haloshift_bench_comb --help              all options
//
// Comb's command line is taken as it is: the global mesh `X_Y_Z` (or `N` for N^3), `-divide`
// (boxes per dimension, their product the number of ranks; Comb's `0_0_0` is not taken: give the
// split), `-periodic`, `-ghost`, `-vars`, `-cycles`. Comb's layout is reproduced exactly:
//  - ranks: MPI_Cart_create's order (the last dimension fastest), which cartesian_grid follows;
//  - split: box c of P along N cells starts at c (N / P) + min(c, N % P) (the remainder goes to
//    the first boxes), given to the library as cell_cuts;
//  - one array per variable, x fastest, the ghost layers around the interior (Comb's MeshData), and
//    all variables in one exchange (several field_views: one message per neighbour carries them all);
//  - the whole halo: faces, edges and corners.
// One difference in what moves, not in the result: on a non-periodic dimension Comb counts the
// ghost cells beyond the domain as owned by the box at the border and sends them along with its
// faces; the library leaves them alone (docs/grids.md), so its messages are smaller there.
//
// Timing, per strategy, as Comb's do_cycles does: every cycle sets the interior of each variable
// ("pre-comm"), runs the exchange, then writes every cell ("post-comm"), so each exchange starts
// from the same cache state as Comb's; only the exchange is timed, per rank, with no barrier
// between cycles, and the figures are means over ranks and cycles (Comb's "avg"). Variants, round
// robin within each cycle:
//  - split:    start_forward (pack + send: Comb's post-recv + post-send) and wait (wait + unpack:
//              Comb's wait-recv + wait-send), timed separately;
//  - blocking: forward;
//  - pack:     the plan's own packing and unpacking code over the plan's messages, without MPI
//              (what Comb's `mock` communication times: pack, then unpack, no message).
// Before timing, each strategy's forward and start_forward/wait are checked once against a
// brute-force expectation: cells hold (global cell index + variable number) as in Comb; every
// ghost cell inside the domain (wrapped on periodic dimensions) must hold its owner's value, the
// ghost cells beyond a non-periodic border and the interior must be untouched. Exit status 1
// otherwise.
//
// Output, one line per strategy (rank 0), times in microseconds per cycle: means over ranks and
// cycles (Comb's avg), then the smallest over ranks and cycles of each phase (Comb's min; split is
// the sum of start's and wait's, as Comb's phases add up), messages and bytes sent per rank:
//   result strategy=Shift start= wait= split= blocking= pack= min_start= ... min_pack= messages= bytes= check=ok
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <haloshift/auto.hpp>  // --strategy Auto: the model picks the strategy and, for several variables, the messages
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "round_robin.hpp"

namespace hs = haloshift;

namespace {

constexpr int max_vars = 8;

/// double, whatever I is (to expand one array type per variable).
template <std::size_t>
using as_double = double;

struct options {
  hs::offset size{0, 0, 0}, divide{0, 0, 0}, periodic{0, 0, 0}, ghost{1, 1, 1};
  int vars = 1, cycles = 5;  // Comb's defaults
  std::vector<std::string> strategies{"Shift", "SingleHop"};
  /// How the variables travel (plan_options::messages); --messages per_neighbor,per_field times both.
  std::vector<hs::field_messages> messages{hs::field_messages::per_neighbor};
  bool split = true, blocking = true, pack = true;  ///< --variants: which to time (a profile takes one)
};

const char* help =
    "usage: haloshift_bench_comb X_Y_Z -divide A_B_C [-periodic P_Q_R] [-ghost G_H_I] [-vars V] [-cycles C]\n"
    "                            [--strategy Shift,SingleHop,...] [--messages per_neighbor,per_field]\n"
    "                            [--variants split,blocking,pack] | --quick | --help\n"
    "  Comb's mesh options (global cells, boxes per dimension, periodicity, ghost widths; `N` for N_N_N),\n"
    "  vars 1 to 8; --strategy: the field plans to time (any registered name); --variants: which to time (0 for the\n"
    "  others; one alone for a profiler); --messages: the variables as one message per neighbour, one per\n"
    "  neighbour and variable, or automatic (Auto's model decides; with --strategy Auto); --quick: 12_12_12 cells\n"
    "  split over the ranks along x, periodic, ghost 1_2_1, 3 variables, 20 cycles.\n";

/// "4_2_1" -> {4, 2, 1}; "4" -> {4, 4, 4} (Comb's forms).
hs::offset triple(const char* text) {
  hs::offset o{0, 0, 0};
  const int n = std::sscanf(text, "%d_%d_%d", &o[0], &o[1], &o[2]);
  if (n == 1) return {o[0], o[0], o[0]};
  if (n != 3) throw bench::usage_error{std::string("expected N or N_N_N, got ") + text};
  return o;
}

std::vector<std::string> names(const char* text) {
  std::vector<std::string> out;
  for (std::string s = text; !s.empty();) {
    const std::size_t comma = s.find(',');
    out.push_back(s.substr(0, comma));
    s = comma == std::string::npos ? "" : s.substr(comma + 1);
  }
  return out;
}

options parse(int argc, char** argv) {
  options o;
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) throw bench::usage_error{a + " needs a value"};
      return argv[++i];
    };
    if (a == "--help" || a == "-h") throw bench::usage_error{};
    if (a == "--quick") {
      o.size = {12 * ranks, 12, 12};
      o.divide = {ranks, 1, 1};
      o.periodic = {1, 1, 1};
      o.ghost = {1, 2, 1};
      o.vars = 3;
      o.cycles = 20;
    } else if (a == "-divide")
      o.divide = triple(value());
    else if (a == "-periodic")
      o.periodic = triple(value());
    else if (a == "-ghost")
      o.ghost = triple(value());
    else if (a == "-vars")
      o.vars = std::atoi(value());
    else if (a == "-cycles")
      o.cycles = std::atoi(value());
    else if (a == "--strategy")
      o.strategies = names(value());
    else if (a == "--messages") {
      o.messages.clear();
      for (const std::string& n : names(value())) {
        if (n == "per_neighbor")
          o.messages.push_back(hs::field_messages::per_neighbor);
        else if (n == "per_field")
          o.messages.push_back(hs::field_messages::per_field);
        else if (n == "automatic")
          o.messages.push_back(hs::field_messages::automatic);
        else
          throw bench::usage_error{"--messages takes per_neighbor, per_field or automatic, got " + n};
      }
    } else if (a == "--variants") {
      const std::string v = std::string(",") + value() + ",";
      o.split = v.find(",split,") != std::string::npos;
      o.blocking = v.find(",blocking,") != std::string::npos;
      o.pack = v.find(",pack,") != std::string::npos;
    } else if (!a.empty() && a[0] >= '0' && a[0] <= '9')
      o.size = triple(a.c_str());
    else
      throw bench::usage_error{"unknown option " + a};
  }
  if (o.size[0] < 1 || o.size[1] < 1 || o.size[2] < 1) throw bench::usage_error{"the mesh size is missing"};
  if (o.divide[0] * o.divide[1] * o.divide[2] != ranks)
    throw bench::usage_error{"-divide must multiply to the " + std::to_string(ranks) + " ranks"};
  if (o.vars < 1 || o.vars > max_vars) throw bench::usage_error{"-vars must be 1 to 8"};
  if (o.cycles < 1) throw bench::usage_error{"-cycles must be >= 1"};
  return o;
}

/// Comb's split (MeshInfo.hpp, GlobalMeshInfo::set_divisions): the remainder to the first boxes.
hs::cell_cuts comb_cuts(const options& o) {
  hs::cell_cuts cuts;
  for (int d = 0; d < 3; ++d)
    for (int c = 0; c <= o.divide[d]; ++c)
      cuts[d].push_back(c * (o.size[d] / o.divide[d]) + std::min(c, o.size[d] % o.divide[d]));
  return cuts;
}

/// The mesh: Comb's variables, each its own padded array, x fastest.
struct mesh {
  hs::field_shape shape;
  std::vector<std::vector<double>> vars;
  const options* o;

  /// The value cell `at` (local, ghosts included) of variable `v` holds after an exchange, or -1
  /// when no rank owns it (beyond a non-periodic border): Comb's zone_global + var_i.
  double expected(int v, const hs::offset& at) const {
    long index = 0, scale = 1;
    for (int d = 0; d < 3; ++d) {
      int g = shape.lo[d] + at[d];
      if (g < 0 || g >= o->size[d]) {
        if (!o->periodic[d]) return -1;
        g = ((g % o->size[d]) + o->size[d]) % o->size[d];
      }
      index += g * scale;
      scale *= o->size[d];
    }
    return static_cast<double>(index + v + 1);
  }
  /// Calls f(storage index, local cell) for every cell, ghosts included.
  template <class F>
  void each_cell(F&& f) const {
    for (int k = -shape.ghost[2]; k < shape.interior[2] + shape.ghost_high[2]; ++k)
      for (int j = -shape.ghost[1]; j < shape.interior[1] + shape.ghost_high[1]; ++j)
        for (int i = -shape.ghost[0]; i < shape.interior[0] + shape.ghost_high[0]; ++i)
          f(shape.index(i, j, k), hs::offset{i, j, k});
  }
  bool inside(const hs::offset& at) const {
    for (int d = 0; d < 3; ++d)
      if (at[d] < 0 || at[d] >= shape.interior[d]) return false;
    return true;
  }
  /// Interior cells hold their values, ghosts -1 (Comb's initial value).
  void fill() {
    for (int v = 0; v < o->vars; ++v)
      each_cell([&](std::size_t e, const hs::offset& at) { vars[v][e] = inside(at) ? expected(v, at) : -1; });
  }
  /// Cells that differ from the expectation after an exchange.
  long wrong() const {
    long bad = 0;
    for (int v = 0; v < o->vars; ++v)
      each_cell([&](std::size_t e, const hs::offset& at) { bad += vars[v][e] != expected(v, at); });
    return bad;
  }
  /// Comb's pre-comm: the interior of every variable set to 1.
  void pre_comm() {
    for (auto& a : vars)
      for (int k = 0; k < shape.interior[2]; ++k)
        for (int j = 0; j < shape.interior[1]; ++j) {
          double* row = a.data() + shape.index(0, j, k);
          for (int i = 0; i < shape.interior[0]; ++i) row[i] = 1.0;
        }
  }
  /// pre_comm, f() timed, post_comm: one cycle as Comb's do_cycles runs it.
  template <class F>
  double timed(F&& f) {
    pre_comm();
    const double t0 = MPI_Wtime();
    f();
    const double t = MPI_Wtime() - t0;
    post_comm();
    return t;
  }
  /// Comb's post-comm: every cell of every variable set to 1.
  void post_comm() {
    for (auto& a : vars)
      for (double& x : a) x = 1.0;
  }
};

/// The library's packing and unpacking of one exchange without MPI (Comb's `mock`): every message
/// the plan sends is packed and every message it receives unpacked, by the executor's own code,
/// with the same decisions the executor takes (one array's contiguous messages go in place, copies
/// to the rank itself go cell to cell).
template <class Data>
void pack_only(const hs::detail::program& p, const Data& data, std::vector<std::byte>& staging) {
  namespace d = hs::detail;
  for (const d::round_program& r : p.rounds) {
    if (data.single() && r.direct) {  // a Shift round: everything in place, only copies to itself
      for (const d::local_copy& c : r.direct->copies) data.copy(c.from, c.to, c.count);
      continue;
    }
    for (const d::transfer_program& t : r.transfers) {
      if (t.self) {
        if (t.send.exists())
          d::copy_to_self(
              p.layout, t.send, t.recv, [&](std::size_t a, std::size_t b) { data.copy_one(a, b); },
              [&](std::size_t a, std::size_t b, std::size_t n) { data.copy(a, b, n); },
              [&](std::size_t a, std::size_t b) { data.prefetch(a, b); });
        continue;
      }
      const std::size_t need = std::max(t.send.count, t.recv.count) * data.element_bytes();
      if (staging.size() < need) staging.resize(need);
      if (t.send.exists() && !(data.single() && t.send.contiguous)) data.gather(p.layout, t.send, staging.data());
      if (t.recv.exists() && !(data.single() && t.recv.contiguous)) data.scatter(p.layout, t.recv, staging.data());
    }
  }
}

/// The timed phases: start, wait (split phase), blocking, pack.
enum phase { start_phase, wait_phase, blocking_phase, pack_phase, phase_count };

/// Per rank, the sum and the smallest time of each phase over the cycles (seconds). Comb prints
/// both (avg and min, over ranks and cycles); on a busy machine the minimum is the steadier one.
struct phases {
  double sum[phase_count] = {}, min[phase_count] = {1e300, 1e300, 1e300, 1e300};
  void add(phase p, double t) {
    sum[p] += t;
    min[p] = std::min(min[p], t);
  }
};

/// Checks, then times one strategy on `V` variables (the views go to the plan as one exchange).
template <std::size_t... I>
phases run_plan(mesh& m, hs::field_plan& plan, std::index_sequence<I...>, long& wrong) {
  using views = std::array<hs::field_view<double>, sizeof...(I)>;
  const views v{hs::make_field_view(m.vars[I].data(), m.shape)...};
  auto forward = [&] {
    if constexpr (sizeof...(I) == 1)
      plan.forward(v[0]);
    else
      plan.forward(v[I]...);
  };
  auto start = [&] {
    if constexpr (sizeof...(I) == 1)
      return plan.start_forward(v[0]);
    else
      return plan.start_forward(v[I]...);
  };
  m.fill();
  forward();
  wrong += m.wrong();
  m.fill();
  start().wait();
  wrong += m.wrong();

  const hs::detail::arrays<as_double<I>...> data{{m.vars[I].data()...}};
  std::vector<std::byte> staging;
  phases t, warm_up;
  const int warm = std::max(1, m.o->cycles / 10);  // Comb's test cycles come first too
  for (int c = -warm; c < m.o->cycles; ++c) {
    phases& into = c < 0 ? warm_up : t;
    if (m.o->split) {
      m.pre_comm();
      const double t0 = MPI_Wtime();
      auto pending = start();
      const double t1 = MPI_Wtime();
      pending.wait();
      into.add(start_phase, t1 - t0);
      into.add(wait_phase, MPI_Wtime() - t1);
      m.post_comm();
    }
    if (m.o->blocking) into.add(blocking_phase, m.timed(forward));
    if (m.o->pack) into.add(pack_phase, m.timed([&] { pack_only(plan.details(), data, staging); }));
  }
  return t;
}

template <std::size_t... N>
phases dispatch(mesh& m, hs::field_plan& plan, long& wrong, std::index_sequence<N...>) {
  phases t;
  ((m.o->vars == static_cast<int>(N) + 1 ? (t = run_plan(m, plan, std::make_index_sequence<N + 1>{}, wrong), 0) : 0),
   ...);
  return t;
}

int run(const options& o) {
  std::vector<bool> wraps{o.periodic[0] != 0, o.periodic[1] != 0, o.periodic[2] != 0};
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {o.divide[0], o.divide[1], o.divide[2]}, .periodic = wraps});
  mesh m{hs::field_shape(grid.shape(), grid.coords(), comb_cuts(o), o.ghost), {}, &o};
  m.vars.assign(static_cast<std::size_t>(o.vars), std::vector<double>(m.shape.size(), -1.0));
  const int ranks = grid.size();
  if (grid.rank() == 0)
    std::printf("mesh %d_%d_%d divide %d_%d_%d periodic %d_%d_%d ghost %d_%d_%d vars %d cycles %d ranks %d\n",
                o.size[0], o.size[1], o.size[2], o.divide[0], o.divide[1], o.divide[2], o.periodic[0], o.periodic[1],
                o.periodic[2], o.ghost[0], o.ghost[1], o.ghost[2], o.vars, o.cycles, ranks);
  long total_wrong = 0;
  for (const std::string& name : o.strategies)
    for (const hs::field_messages messages : o.messages) {
      hs::field_plan plan =
          hs::make_field_plan(grid, name, m.shape, {.messages = messages}, sizeof(double) * o.vars, o.vars);
      long wrong = 0;
      phases t = dispatch(m, plan, wrong, std::make_index_sequence<max_vars>{});
      MPI_Allreduce(MPI_IN_PLACE, t.sum, phase_count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, t.min, phase_count, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
      for (double& x : t.min) x = x > 1e299 ? 0 : x;  // a variant not timed (--variants)
      MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      const bool apart = plan.messages() == hs::field_messages::per_field && o.vars > 1;
      unsigned long traffic[2] = {plan.details().messages_sent * (apart ? o.vars : 1),
                                  plan.details().elements_sent * sizeof(double) * o.vars};
      MPI_Allreduce(MPI_IN_PLACE, traffic, 2, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
      total_wrong += wrong;
      if (grid.rank() == 0) {
        const double mean = 1e6 / (static_cast<double>(ranks) * o.cycles);  // Comb's avg: over ranks and cycles
        std::printf("result strategy=%s fields=%s", std::string(plan.strategy()).c_str(),
                    apart ? "per_field" : "per_neighbor");
        for (auto [prefix, v, scale] : {std::tuple{"", t.sum, mean}, std::tuple{"min_", t.min, 1e6}})
          std::printf(" %sstart=%.3f %swait=%.3f %ssplit=%.3f %sblocking=%.3f %spack=%.3f", prefix, v[0] * scale,
                      prefix, v[1] * scale, prefix, (v[0] + v[1]) * scale, prefix, v[2] * scale, prefix, v[3] * scale);
        std::printf(" messages=%.1f bytes=%.0f check=%s\n", static_cast<double>(traffic[0]) / ranks,
                    static_cast<double>(traffic[1]) / ranks, wrong ? "FAILED" : "ok");
      }
    }
  if (grid.rank() == 0 && total_wrong)
    std::printf("check FAILED: %ld cells differ from the expectation\n", total_wrong);
  return total_wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  return bench::main_of(
      argc, argv, "haloshift_bench_comb", help, [&] { o = parse(argc, argv); }, [&] { return run(o); });
}

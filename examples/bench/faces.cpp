// SPDX-License-Identifier: BSD-3-Clause
// haloshift_bench_faces: the library's faces-only field plan (plan_options::pattern
// = halo_pattern::faces, a field_view of the caller's array) against a face
// exchange written by hand as stencil kernels write it (raw_faces.hpp), on the
// same padded x-fastest array of doubles, periodic, 2D and 3D, n cells per
// dimension per rank, ghost width w.
//
//   mpiexec -n 4 ./haloshift_bench_faces      2D n = 2000, 4000 and 3D n = 128, w = 1..4
//   ./haloshift_bench_faces --help            all options
//   mpiexec -n 1 ./haloshift_bench_faces --dims 3 --width 1,2,3 --strategies Shift --pack-threads 1,2
//                                             the same plan packing on 1 and 2 host threads (issue 34)
//
// Each configuration first checks that the hand-written exchange and every
// library plan (forward and start_forward/wait) leave the array bit for bit
// the same, and that the ghost cells hold the owners' values (edges and
// corners untouched); exit status 1 otherwise. Then, round robin (each
// repetition a barrier and one call timed as the maximum over ranks):
//  - blocking: one exchange (hand-written; each strategy's forward);
//  - split phase: start the exchange, the interior update (the cells whose
//    star stencil of radius w reads no ghost) in chunks with a progress call
//    (MPI_Testall, exchange_handle::progress) between them, wait, the rim
//    update (the cells within w of a face);
//  - the same updates without an exchange ("compute").
// The interior update sweeps as many layers of the inner cells (along the
// slowest dimension) as take about --factor times the slowest blocking
// exchange (at most all of them), so that the exchange could be hidden and the
// difference below is not lost in the noise of a much longer sweep.
//   hidden = 1 - median(split phase - compute) / median(blocking),
// per variant, over the repetitions (split phase and compute run next to each
// other in every round). Target (issue 37): library / hand-written <= 1.05
// blocking, hidden >= 70 %.
#include <mpi.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <haloshift/haloshift.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "raw_faces.hpp"
#include "round_robin.hpp"

namespace hs = haloshift;

namespace {

struct options {
  std::vector<long> dims{2, 3}, n2{2000, 4000}, n3{128}, widths{1, 2, 3, 4};
  std::vector<std::string> strategies{"SingleHop", "Shift"};  ///< after parse: one label per plan
  std::vector<long> pack_threads{1};                          ///< --pack-threads
  std::vector<std::string> background{"off"};                 ///< --background: off, on or both
  /// Per plan: its strategy and plan_options::pack_threads (each strategy once per --pack-threads count).
  std::vector<std::string> plan_strategy;
  std::vector<int> plan_threads;
  std::vector<bool> plan_background;
  bool self_copy = false;  ///< --raw-self copy
  std::string loop;        ///< --loop: the variant whose exchange runs alone (for a profiler)
  bool loop_split = false;  ///< --loop-phase split: that variant's split-phase step instead of its blocking exchange
  double budget = 1.5;     ///< timed seconds per configuration, all variants
  int min_reps = 5, max_reps = 2001;
  double factor = 3;  ///< interior update / slowest blocking exchange
  int chunks = 8;     ///< progress calls during the interior update
};

using bench::usage_error;

const char* help =
    "usage: haloshift_bench_faces [options]\n"
    "  --dims LIST        2, 3 or both (default 2,3)\n"
    "  --n2 LIST          interior cells per dimension per rank in 2D (default 2000,4000)\n"
    "  --n3 LIST          the same in 3D (default 128)\n"
    "  --width LIST       ghost widths (default 1,2,3,4)\n"
    "  --strategies LIST  library strategies (default SingleHop,Shift; also TtlMultiHop, NeighborAlltoall)\n"
    "  --pack-threads LIST  each strategy's plan once per count: plan_options::pack_threads (default 1;\n"
    "                     a plan of N > 1 threads is labelled STRATEGY/Nt, e.g. Shift/2t)\n"
    "  --background LIST  each strategy's plan with plan_options::background off, on or both (off,on;\n"
    "                     default off; a plan with it on is labelled STRATEGY/bg)\n"
    "  --budget SECONDS   timed seconds per configuration, all variants together (default 1.5)\n"
    "  --min-reps N       repetitions per variant, at least (default 5)\n"
    "  --max-reps N       repetitions per variant, at most (default 2001)\n"
    "  --factor F         interior update / slowest blocking exchange (default 3)\n"
    "  --chunks N         progress calls during the interior update (default 8)\n"
    "  --raw-self MODE    the hand-written exchange with the rank itself (a periodic dimension of one box):\n"
    "                     mpi = MPI_Irecv/MPI_Isend like every face (default), copy = slab to ghosts directly\n"
    "  --loop VARIANT     after each check, only VARIANT's exchange (hand-written or a strategy of\n"
    "                     --strategies) for --budget seconds, no table: for perf record\n"
    "  --loop-phase P     what --loop runs: blocking (default) or split (the timed split-phase step:\n"
    "                     start, the interior update with progress calls, wait, the rim update)\n"
    "  --quick            a smoke run: 2D n = 48, 3D n = 12, widths 1,3, budget 0.05 s\n";

std::vector<std::string> names(std::string_view list) {
  std::vector<std::string> out;
  for (std::size_t comma; !list.empty();
       list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1)) {
    comma = list.find(',');
    out.emplace_back(list.substr(0, comma));
  }
  return out;
}

double number(const std::string& option, const std::string& text, double low, double high) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !(v >= low && v <= high))
    throw usage_error{option + ": expected a number in [" + std::to_string(low) + ", " + std::to_string(high) +
                      "], got '" + text + "'"};
  return v;
}

std::vector<long> integers(const std::string& option, const std::string& text, long low, long high) {
  std::vector<long> out;
  for (const std::string& part : names(text)) {
    long v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v < low || v > high)
      throw usage_error{option + ": expected integers in [" + std::to_string(low) + ", " + std::to_string(high) +
                        "], got '" + text + "'"};
    out.push_back(v);
  }
  if (out.empty()) throw usage_error{option + ": expected at least one value"};
  return out;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") throw usage_error{""};
    if (a == "--quick") {
      o.n2 = {48};
      o.n3 = {12};
      o.widths = {1, 3};
      o.budget = 0.05;
      o.min_reps = 3;
      o.max_reps = 25;
      continue;
    }
    if (i + 1 >= argc) throw usage_error{a + (a.rfind("--", 0) == 0 ? " needs a value" : ": unknown argument")};
    const std::string v = argv[++i];
    if (a == "--dims")
      o.dims = integers(a, v, 2, 3);
    else if (a == "--n2")
      o.n2 = integers(a, v, 1, 1 << 20);
    else if (a == "--n3")
      o.n3 = integers(a, v, 1, 1 << 12);
    else if (a == "--width")
      o.widths = integers(a, v, 1, 64);
    else if (a == "--strategies")
      o.strategies = names(v);
    else if (a == "--pack-threads")
      o.pack_threads = integers(a, v, 1, 256);
    else if (a == "--background")
      o.background = names(v);
    else if (a == "--budget")
      o.budget = number(a, v, 0, 3600);
    else if (a == "--min-reps")
      o.min_reps = static_cast<int>(integers(a, v, 1, 1 << 20).front());
    else if (a == "--max-reps")
      o.max_reps = static_cast<int>(integers(a, v, 1, 1 << 20).front());
    else if (a == "--factor")
      o.factor = number(a, v, 0, 1000);
    else if (a == "--loop")
      o.loop = v;
    else if (a == "--loop-phase" && (v == "blocking" || v == "split"))
      o.loop_split = v == "split";
    else if (a == "--loop-phase")
      throw usage_error{"--loop-phase: expected blocking or split, got '" + v + "'"};
    else if (a == "--raw-self" && (v == "mpi" || v == "copy"))
      o.self_copy = v == "copy";
    else if (a == "--raw-self")
      throw usage_error{"--raw-self: expected mpi or copy, got '" + v + "'"};
    else if (a == "--chunks")
      o.chunks = static_cast<int>(integers(a, v, 1, 1 << 20).front());
    else
      throw usage_error{"unknown option '" + a + "'"};
  }
  if (o.strategies.empty()) throw usage_error{"--strategies: expected at least one name"};
  std::vector<std::string> labels;
  for (const std::string& b : o.background)
    if (b != "off" && b != "on")
      throw usage_error{"--background: expected off or on (off,on for both), got '" + b + "'"};
  for (const std::string& name : o.strategies)
    for (long t : o.pack_threads)
      for (const std::string& b : o.background) {
        labels.push_back((t == 1 ? name : name + "/" + std::to_string(t) + "t") + (b == "on" ? "/bg" : ""));
        o.plan_strategy.push_back(name);
        o.plan_threads.push_back(static_cast<int>(t));
        o.plan_background.push_back(b == "on");
      }
  o.strategies = labels;
  if (!o.loop.empty() && o.loop != "hand-written" &&
      std::find(o.strategies.begin(), o.strategies.end(), o.loop) == o.strategies.end())
    throw usage_error{"--loop: expected hand-written or one of --strategies, got '" + o.loop + "'"};
  return o;
}

[[noreturn]] void fail(const std::string& what) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "\n*** haloshift_bench_faces FAILED on rank %d: %s ***\n\n", rank, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

/// Raises on every rank when `problem` is not empty on some rank.
void agree(const std::string& problem) {
  int bad = problem.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!problem.empty()) fail(problem);
  if (bad) fail("a check failed on another rank");
}

/// One configuration: the library's grid, a Cartesian communicator of the same split for the
/// hand-written exchange, the padded array and the field shape describing it.
struct setup {
  hs::cartesian_grid grid;
  MPI_Comm cart = MPI_COMM_NULL;
  bench::padded_mesh mesh;
  hs::field_shape shape;

  setup(int ndims, int n, int w)
      : grid(MPI_COMM_WORLD, {.dims = std::vector<int>(static_cast<std::size_t>(ndims), 0),
                              .periodic = std::vector<bool>(static_cast<std::size_t>(ndims), true)}),
        mesh(ndims, n, w) {
    hs::offset global{1, 1, 1}, ghost{0, 0, 0};
    std::vector<int> dims(static_cast<std::size_t>(ndims)), periods(dims.size(), 1);
    for (int d = 0; d < ndims; ++d) {
      dims[static_cast<std::size_t>(d)] = grid.dim(d);
      global[d] = n * grid.dim(d);  // the even split: n cells per rank
      ghost[d] = w;
    }
    shape = hs::field_shape(grid.shape(), grid.coords(), global, ghost);
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims.data(), periods.data(), 0, &cart);
  }
  ~setup() { MPI_Comm_free(&cart); }
  setup(const setup&) = delete;
  setup& operator=(const setup&) = delete;

  /// The value of global cell (x, y, z), wrapped: distinct per cell, exact in a double.
  double value(hs::offset g) const {
    double v = 0;
    for (int d = 2; d >= 0; --d) v = v * shape.global[d] + (g[d] % shape.global[d] + shape.global[d]) % shape.global[d];
    return v;
  }
  /// The array before an exchange: interior cells hold their value, every ghost cell -1. Made once
  /// (a run checks several copies; values run up by one along a row of the interior).
  const std::vector<double>& initial() {
    if (!initial_.empty()) return initial_;
    initial_.assign(mesh.size(), -1.0);
    const bench::cell_box in = bench::interior_of(mesh);
    for (int k = in.lo[2]; k < in.hi[2]; ++k)
      for (int j = in.lo[1]; j < in.hi[1]; ++j) {
        const double first = value(global_of(in.lo[0], j, k));
        double* row = &initial_[mesh.at(0, j, k)];
        for (int i = in.lo[0]; i < in.hi[0]; ++i) row[i] = first + (i - in.lo[0]);
      }
    return initial_;
  }
  void fill(std::vector<double>& a) { a = initial(); }
  /// Global (unwrapped) coordinates of padded cell (i, j, k).
  hs::offset global_of(int i, int j, int k) const {
    const int at[3] = {i, j, k};
    hs::offset g{0, 0, 0};
    for (int d = 0; d < 3; ++d) g[d] = shape.lo[d] + at[d] - shape.ghost[d];
    return g;
  }
  /// Empty when every cell of `a` holds what a faces-only exchange leaves: the owner's value in the
  /// interior and in ghost cells outside the interior along one dimension, -1 in the others.
  std::string check(const std::vector<double>& a) const {
    for (int k = 0; k < mesh.extent[2]; ++k)
      for (int j = 0; j < mesh.extent[1]; ++j)
        for (int i = 0; i < mesh.extent[0]; ++i) {
          const int at[3] = {i, j, k};
          int outside = 0;
          for (int d = 0; d < mesh.ndims; ++d) outside += at[d] < mesh.w || at[d] >= mesh.w + mesh.n;
          const double want = outside <= 1 ? value(global_of(i, j, k)) : -1.0;
          if (a[mesh.at(i, j, k)] != want)
            return "padded cell (" + std::to_string(i) + "," + std::to_string(j) + "," + std::to_string(k) +
                   ") holds " + std::to_string(a[mesh.at(i, j, k)]) + ", expected " + std::to_string(want);
        }
    return {};
  }

 private:
  std::vector<double> initial_;
};

/// The star stencil of radius w over the cells of box `b` of `a` into `v` (it reads up to w cells
/// away along each dimension of the mesh): the timed update, nothing is checked.
void sweep(const bench::padded_mesh& m, const double* a, double* v, const bench::cell_box& b) {
  const double c = 0.5 / (2.0 * m.ndims * m.w);
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (std::size_t x = m.at(b.lo[0], j, k), end = m.at(b.hi[0], j, k); x < end; ++x) {
        double sum = 0;
        for (int d = 0; d < m.ndims; ++d)
          for (std::size_t r = 1, step = m.stride[static_cast<std::size_t>(d)]; r <= static_cast<std::size_t>(m.w); ++r)
            sum += a[x - r * step] + a[x + r * step];
        v[x] = 0.5 * a[x] + c * sum;
      }
}

/// The boxes a split-phase step updates: `inner`, cells whose stencil reads no ghost (at least w
/// from every face), in chunks along the slowest dimension, a progress call after each; then `rim`,
/// the cells within w of a face.
struct updates {
  std::vector<bench::cell_box> inner, rim;
};

/// `layers` of the n - 2w inner layers along the slowest dimension, in at most `chunks` chunks.
updates make_updates(const bench::padded_mesh& m, int layers, int chunks) {
  const bench::cell_box interior = bench::interior_of(m);
  bench::cell_box inner = interior;
  for (int d = 0; d < m.ndims; ++d) {
    inner.lo[static_cast<std::size_t>(d)] = 2 * m.w;
    inner.hi[static_cast<std::size_t>(d)] = m.n;
  }
  updates u;
  const std::size_t slow = static_cast<std::size_t>(m.ndims - 1);
  chunks = std::min(chunks, layers);
  for (int c = 0; c < chunks; ++c) {
    bench::cell_box b = inner;
    b.lo[slow] = 2 * m.w + layers * c / chunks;
    b.hi[slow] = 2 * m.w + layers * (c + 1) / chunks;
    u.inner.push_back(b);
  }
  // The shell between the inner box and the interior: below and above it along each dimension,
  // spanning the inner box along the dimensions after it and the interior along those before it.
  for (std::size_t d = 0; d < static_cast<std::size_t>(m.ndims); ++d)
    for (int side = 0; side < 2; ++side) {
      bench::cell_box b = interior;
      for (std::size_t e = d + 1; e < static_cast<std::size_t>(m.ndims); ++e)
        b.lo[e] = inner.lo[e], b.hi[e] = inner.hi[e];
      b.lo[d] = side == 0 ? m.w : m.n;
      b.hi[d] = b.lo[d] + m.w;
      u.rim.push_back(b);
    }
  return u;
}

/// One split-phase step: `begin()` starts the exchange and returns what has progress() and wait().
template <class Begin>
void split_step(const bench::padded_mesh& m, const updates& u, const double* a, double* v, Begin&& begin) {
  auto&& pending = begin();
  for (const bench::cell_box& b : u.inner) {
    sweep(m, a, v, b);
    pending.progress();
  }
  pending.wait();
  for (const bench::cell_box& b : u.rim) sweep(m, a, v, b);
}

/// The hand-written exchange in flight, as split_step drives it.
struct raw_pending {
  bench::raw_faces& raw;
  double* a;
  void progress() { raw.progress(); }
  void wait() { raw.finish(a); }
};

/// No exchange: the compute-only step.
struct no_exchange {
  void progress() {}
  void wait() {}
};

/// Checks the neighbours, then that the hand-written exchange leaves what a faces-only exchange
/// must and that every plan, blocking and split phase, leaves the same array bit for bit.
void verify(setup& s, bench::raw_faces& raw, std::vector<hs::field_plan>& plans, const options& o) {
  std::string problem;
  for (int d = 0; d < s.mesh.ndims && problem.empty(); ++d)
    if (raw.peer(d, 0) != s.grid.neighbor_at(-hs::unit(d))->rank ||
        raw.peer(d, 1) != s.grid.neighbor_at(hs::unit(d))->rank)
      problem = "MPI_Cart_create's neighbours along dimension " + std::to_string(d) + " differ from the library's";
  std::vector<double> want(s.mesh.size()), got(s.mesh.size());
  s.fill(want);
  raw.forward(want.data());
  if (problem.empty()) problem = s.check(want);
  if (!problem.empty()) problem = "hand-written exchange: " + problem;
  for (std::size_t p = 0; p < plans.size() && problem.empty(); ++p)
    for (const bool split : {false, true}) {
      s.fill(got);
      const auto view = hs::make_field_view(got.data(), s.shape);
      if (split)
        plans[p].start_forward(view).wait();
      else
        plans[p].forward(view);
      if (std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) != 0) {
        problem = o.strategies[p] + (split ? " start_forward/wait" : " forward") +
                  ": the array differs from the hand-written exchange's (" + s.check(got) + ")";
        break;
      }
    }
  agree(problem);
}

/// The layers of the interior update: about `factor` times the slowest of `exchanges`, from a
/// pilot (medians of maxima over ranks: the same on every rank).
int interior_layers(const bench::padded_mesh& m, double* a, double* v,
                    const std::vector<std::function<void()>>& exchanges, double factor) {
  auto pilot = [](const std::function<void()>& f) {
    std::vector<double> t;
    for (int r = 0; r < 5; ++r) t.push_back(bench::timed(MPI_COMM_WORLD, f));
    return bench::median(t);
  };
  double slowest = 0;
  for (const auto& f : exchanges) slowest = std::max(slowest, pilot(f));
  const int all = m.n - 2 * m.w;
  const bench::cell_box whole = make_updates(m, all, 1).inner[0];
  const double per_layer = pilot([&] { sweep(m, a, v, whole); }) / all;
  return static_cast<int>(std::clamp(std::ceil(factor * slowest / std::max(per_layer, 1e-12)), 1.0, double(all)));
}

/// --loop: one variant's step, blocking or (--loop-phase split) split phase, back to back for
/// --budget seconds (rank 0's clock).
void loop(setup& s, bench::raw_faces& raw, std::vector<hs::field_plan>& plans, const options& o) {
  const bench::padded_mesh& m = s.mesh;
  std::vector<double> a(m.size()), v(m.size());
  s.fill(a);
  const auto view = hs::make_field_view(a.data(), s.shape);
  const auto p = std::find(o.strategies.begin(), o.strategies.end(), o.loop);
  hs::field_plan* plan = p == o.strategies.end() ? nullptr : &plans[static_cast<std::size_t>(p - o.strategies.begin())];
  const std::function<void()> blocking = [&] { plan ? plan->forward(view) : raw.forward(a.data()); };
  std::function<void()> step = blocking;
  updates u;
  if (o.loop_split) {
    u = make_updates(m, interior_layers(m, a.data(), v.data(), {blocking}, o.factor), o.chunks);
    step = [&] {
      if (plan)
        split_step(m, u, a.data(), v.data(), [&] { return plan->start_forward(view); });
      else
        split_step(m, u, a.data(), v.data(), [&] {
          raw.start(a.data());
          return raw_pending{raw, a.data()};
        });
    };
  }
  const double start = MPI_Wtime();
  for (int more = 1; more;) {
    for (int r = 0; r < 64; ++r) step();
    more = MPI_Wtime() - start < o.budget;
    MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
}

/// A configuration's medians, in seconds, and the hidden shares.
struct row {
  int reps = 0, layers = 0;
  std::vector<double> blocking, hidden;  ///< hand-written first, then each strategy
  double compute = 0;
};

/// Times the variants round robin (see the file comment).
row measure(setup& s, bench::raw_faces& raw, std::vector<hs::field_plan>& plans, const options& o) {
  const bench::padded_mesh& m = s.mesh;
  std::vector<double> a(m.size()), v(m.size());
  s.fill(a);
  const auto view = hs::make_field_view(a.data(), s.shape);
  std::vector<std::function<void()>> blocking{[&] { raw.forward(a.data()); }};
  for (hs::field_plan& p : plans) blocking.emplace_back([plan = &p, &view] { plan->forward(view); });
  row out;
  out.layers = interior_layers(m, a.data(), v.data(), blocking, o.factor);
  const updates u = make_updates(m, out.layers, o.chunks);

  std::vector<std::function<void()>> run = blocking;
  run.emplace_back([&] { split_step(m, u, a.data(), v.data(), [] { return no_exchange{}; }); });
  run.emplace_back([&] {
    split_step(m, u, a.data(), v.data(), [&] {
      raw.start(a.data());
      return raw_pending{raw, a.data()};
    });
  });
  for (hs::field_plan& p : plans)
    run.emplace_back(
        [&, plan = &p] { split_step(m, u, a.data(), v.data(), [&] { return plan->start_forward(view); }); });
  const auto t = bench::round_robin(MPI_COMM_WORLD, run, o.budget, o.min_reps, o.max_reps);
  const std::size_t variants = blocking.size(), compute = variants;
  out.reps = static_cast<int>(t[0].size());
  out.compute = bench::median(t[compute]);
  for (std::size_t x = 0; x < variants; ++x) {
    out.blocking.push_back(bench::median(t[x]));
    std::vector<double> exposed;
    for (std::size_t r = 0; r < t[x].size(); ++r) exposed.push_back(t[compute + 1 + x][r] - t[compute][r]);
    out.hidden.push_back(1 - bench::median(exposed) / out.blocking.back());
  }
  return out;
}

void print_header(const options& o, int ranks) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  std::printf("# haloshift %d.%d.%d faces-only field plan vs a hand-written face exchange\n\n", HALOSHIFT_VERSION_MAJOR,
              HALOSHIFT_VERSION_MINOR, HALOSHIFT_VERSION_PATCH);
  std::printf(
      "%d ranks, periodic, %s; n interior cells per dimension per rank, ghost width w, doubles; "
      "median over repetitions of the max over ranks; timed budget %.2f s per row; interior update "
      "about %.1fx the slowest blocking exchange, %d progress calls; hand-written faces to the rank itself: %s. "
      "Every row was first checked bit for bit (hand-written = every plan, blocking and split phase; "
      "ghosts = the owners' values).\n\n",
      ranks, bench::mpi_library().substr(0, bench::mpi_library().find(',')).c_str(), o.budget, o.factor, o.chunks,
      o.self_copy ? "copied" : "MPI");
  std::string head = "| dims | n | w | grid | reps | hand-written us |", rule = "|---:|---:|---:|:---:|---:|---:|";
  for (const std::string& name : o.strategies) {
    head += " " + name + " us | ratio |";
    rule += "---:|---:|";
  }
  head += " interior update us (layers) | hidden: hand-written |";
  rule += "---:|---:|";
  for (const std::string& name : o.strategies) {
    head += " " + name + " |";
    rule += "---:|";
  }
  std::printf("%s\n%s\n", head.c_str(), rule.c_str());
  std::fflush(stdout);
}

void print_row(const setup& s, const row& r) {
  std::string grid = std::to_string(s.grid.dim(0));
  for (int d = 1; d < s.mesh.ndims; ++d) grid += "x" + std::to_string(s.grid.dim(d));
  std::printf("| %dD | %d | %d | %s | %d | %.1f |", s.mesh.ndims, s.mesh.n, s.mesh.w, grid.c_str(), r.reps,
              r.blocking[0] * 1e6);
  for (std::size_t p = 1; p < r.blocking.size(); ++p)
    std::printf(" %.1f | %.3f |", r.blocking[p] * 1e6, r.blocking[p] / r.blocking[0]);
  std::printf(" %.1f (%d) |", r.compute * 1e6, r.layers);
  for (const double h : r.hidden) std::printf(" %.0f %% |", 100 * h);
  std::printf("\n");
  std::fflush(stdout);
}

void print_footer(const options& o, const std::vector<double>& worst_ratio, const std::vector<double>& least_hidden) {
  std::printf(
      "\nratio = library / hand-written, blocking; hidden = 1 - median(split-phase step - compute-only step) / "
      "blocking exchange, per variant (negative: the split phase cost more than the blocking exchange). "
      "Target (issue 37): ratio <= 1.05, hidden >= 70 %% (where ranks exchange: at 1 rank every message is a "
      "copy that cannot be hidden).\n");
  std::printf("worst ratio:");
  for (std::size_t p = 0; p < o.strategies.size(); ++p)
    std::printf(" %s %.3f;", o.strategies[p].c_str(), worst_ratio[p]);
  std::printf(" least hidden: hand-written %.0f %%;", 100 * least_hidden[0]);
  for (std::size_t p = 0; p < o.strategies.size(); ++p)
    std::printf(" %s %.0f %%;", o.strategies[p].c_str(), 100 * least_hidden[p + 1]);
  std::printf("\n");
}

/// Every configuration: checked, then timed (or looped, --loop), a row each.
void run(const options& o) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  print_header(o, size);
  std::vector<double> worst_ratio(o.strategies.size(), 0), least_hidden(o.strategies.size() + 1, 1e9);
  for (long ndims : o.dims)
    for (long n : ndims == 2 ? o.n2 : o.n3)
      for (long w : o.widths) {
        if (n < 2 * w + 1) {
          if (rank == 0) std::printf("| %ldD | %ld | %ld | skipped: n < 2w + 1 |\n", ndims, n, w);
          continue;
        }
        setup s(static_cast<int>(ndims), static_cast<int>(n), static_cast<int>(w));
        bench::raw_faces raw(s.cart, s.mesh, o.self_copy);
        hs::plan_options po;
        po.pattern = hs::halo_pattern::faces;
        std::vector<hs::field_plan> plans;
        for (std::size_t p = 0; p < o.plan_strategy.size(); ++p) {
          po.pack_threads = o.plan_threads[p];
          po.background = o.plan_background[p];
          plans.push_back(hs::make_field_plan(s.grid, o.plan_strategy[p], s.shape, po));
        }
        verify(s, raw, plans, o);
        if (!o.loop.empty()) {
          loop(s, raw, plans, o);
          continue;
        }
        const row r = measure(s, raw, plans, o);
        if (rank == 0) print_row(s, r);
        for (std::size_t p = 0; p < plans.size(); ++p)
          worst_ratio[p] = std::max(worst_ratio[p], r.blocking[p + 1] / r.blocking[0]);
        for (std::size_t x = 0; x < r.hidden.size(); ++x) least_hidden[x] = std::min(least_hidden[x], r.hidden[x]);
      }
  if (rank == 0 && o.loop.empty()) print_footer(o, worst_ratio, least_hidden);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;  // plan_options::background calls MPI from the plan's thread
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  options o;
  int status = bench::parse_or_usage(help, [&] { o = parse(argc, argv); });
  if (status < 0) {
    try {
      run(o);
    } catch (const std::exception& e) {
      fail(e.what());  // aborts: the other ranks may be waiting in an exchange
    }
    status = 0;
  }
  MPI_Finalize();
  return status;
}

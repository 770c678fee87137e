// SPDX-License-Identifier: BSD-3-Clause
// haloshift_bench_pack_threads: packing the two x faces of a field of n^3 doubles (ghost width w
// around it, x fastest) into staging, as a batched exchange's pack launch does, on 1, 2, ...
// host threads (detail/batch/host_threads.hpp: the std::thread pool, and OpenMP's team where this
// file is compiled with OpenMP), against today's serial packing (detail::gather of the same two
// messages, detail/exchange/executor.hpp) and the batched loop on the calling thread alone
// (run_all). One process, no MPI communication (issue 34: target 2 threads >= 1.6x the best
// serial path at n = 128).
//
//   ./haloshift_bench_pack_threads                  n = 128, w = 1,2,3, threads 1,2
//   ./haloshift_bench_pack_threads --help           all options
//
// Every variant's staging is first checked bit for bit against gather's (exit status 1 if not).
// Then the variants run round robin (so load from other processes hits them alike), --reps
// times; the table gives each one's median and best time per pack and the speed-up of its
// median over the best serial median (gather or run_all). The serial variants run again with
// each team (std::thread pool, OpenMP), in a group of its own.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <haloshift/detail/batch/host_threads.hpp>
#include <haloshift/detail/exchange/executor.hpp>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace hd = haloshift::detail;
namespace hb = haloshift::detail::batch;

struct options {
  long n = 128;
  std::vector<long> widths{1, 2, 3}, threads{1, 2};
  int reps = 400;
};

std::vector<long> integers(const char* option, const char* text) {
  std::vector<long> out;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    const long v = std::strtol(p, &end, 10);
    if (end == p || v < 1 || (*end && *end != ',')) {
      std::fprintf(stderr, "%s: expected positive integers separated by commas, got '%s'\n", option, text);
      std::exit(2);
    }
    out.push_back(v);
    p = *end ? end + 1 : end;
  }
  return out;
}

const char* help =
    "usage: haloshift_bench_pack_threads [options]\n"
    "  --n N            interior cells per dimension (default 128)\n"
    "  --width LIST     ghost widths = x face widths (default 1,2,3)\n"
    "  --threads LIST   thread counts of the threaded executors (default 1,2)\n"
    "  --reps N         repetitions per variant (default 400)\n"
    "  --quick          a smoke run: n = 24, widths 1,3, threads 1,2,3, 5 repetitions\n";

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") std::fputs(help, stdout), std::exit(0);
    if (a == "--quick") {
      o = {24, {1, 3}, {1, 2, 3}, 5};
      continue;
    }
    if (i + 1 >= argc || (a != "--n" && a != "--width" && a != "--threads" && a != "--reps"))
      std::fprintf(stderr, "unknown or incomplete argument '%s'\n%s", a.c_str(), help), std::exit(2);
    const std::vector<long> v = integers(a.c_str(), argv[++i]);
    if (a == "--n") o.n = v.front();
    if (a == "--width") o.widths = v;
    if (a == "--threads") o.threads = v;
    if (a == "--reps") o.reps = static_cast<int>(v.front());
  }
  return o;
}

/// The field, its two x-face messages (as a field plan selects them) and the same copies as a
/// pack launch's segment table (as detail/batch/compile.hpp builds it: one segment per group).
struct setup {
  long n, w, side;
  std::vector<double> field;
  std::vector<hd::message> faces;
  std::vector<hb::segment> table;
  hb::launch l;
  std::size_t bytes = 0;

  setup(long n_, long w_) : n(n_), w(w_), side(n_ + 2 * w_) {
    field.resize(static_cast<std::size_t>(side * side * side));
    for (std::size_t i = 0; i < field.size(); ++i) field[i] = static_cast<double>(i) * 0.5;
    for (long x0 : {w, n}) {  // the interior's first and last w columns
      std::vector<hd::element_run> runs;
      for (long k = w; k < w + n; ++k)
        for (long j = w; j < w + n; ++j)
          runs.push_back({static_cast<std::size_t>(x0 + side * (j + side * k)), static_cast<std::size_t>(w)});
      hd::message m;
      m.peer = 0;
      hd::select_pieces(m, runs);
      for (const hd::strided_run& g : m.strided) {
        hb::segment s;
        s.from = static_cast<std::int64_t>(g.first * sizeof(double));
        s.to = static_cast<std::int64_t>(bytes);
        s.from_stride = static_cast<std::int64_t>(g.stride * sizeof(double));
        s.to_stride = s.row_bytes = static_cast<std::uint32_t>(g.count * sizeof(double));
        s.repeat = static_cast<std::uint32_t>(g.repeat);
        s.first_word = bytes / sizeof(double);
        s.to_base = 1;
        table.push_back(s);
        bytes += g.count * g.repeat * sizeof(double);
      }
      faces.push_back(std::move(m));
    }
    l = {0, table.size(), bytes / sizeof(double), sizeof(double), hb::batch_op::copy, hb::scalar_kind::none};
  }
  hb::bases bases(std::byte* staging) {
    hb::bases b;
    b.at[0] = reinterpret_cast<std::byte*>(field.data());
    b.at[1] = staging;
    return b;
  }
  void gather(std::byte* staging) const {
    const hd::block_layout layout;  // unused by selected messages
    for (const hd::message& m : faces) {
      hd::gather(layout, m, field.data(), staging);
      staging += m.count * sizeof(double);
    }
  }
};

struct variant {
  std::string name;
  std::function<void(std::byte*)> pack;
  std::vector<double> seconds{};
  double median() {
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
  }
};

/// The variants of `v` checked against gather's bytes, then timed round robin and printed;
/// false if one packed other bytes.
bool time_group(const options& o, setup& s, std::vector<variant>& v) {
  std::vector<std::byte> expected(s.bytes), staging(s.bytes);
  s.gather(expected.data());
  bool same = true;
  for (variant& x : v) {
    std::fill(staging.begin(), staging.end(), std::byte{0xff});
    x.pack(staging.data());
    if (staging != expected) std::printf("MISMATCH: %s packed other bytes than gather\n", x.name.c_str());
    same = same && staging == expected;
  }
  for (int r = 0; r < o.reps; ++r)
    for (variant& x : v) {
      const auto t0 = std::chrono::steady_clock::now();
      x.pack(staging.data());
      x.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  const double serial = std::min(v[0].median(), v[1].median());
  for (variant& x : v)
    std::printf("%4ld %3ld %-32s %9.1f %9.1f %7.2f %6.2f\n", o.n, s.w, x.name.c_str(), x.median() * 1e6,
                x.seconds.front() * 1e6, static_cast<double>(s.bytes) / x.median() * 1e-9, serial / x.median());
  return same;
}

/// One width: the serial variants and one team's executors timed together, a group per team
/// (the idle threads of one team, spinning, would take the cores from the other's).
template <class Team>
bool run(const options& o, setup& s) {
  std::vector<std::unique_ptr<hb::executor>> executors;
  std::vector<variant> v;
  v.push_back({"gather (serial)", [&](std::byte* out) { s.gather(out); }});
  v.push_back({"run_all (serial)", [&](std::byte* out) { hb::run_all(s.table.data(), s.l, s.bases(out)); }});
  for (long t : o.threads) {
    executors.push_back(std::make_unique<hb::host_threads<Team>>(static_cast<int>(t)));
    hb::executor* e = executors.back().get();
    v.push_back({std::string(e->name()) + " x" + std::to_string(t),
                 [&s, e](std::byte* out) { e->run(s.table.data(), s.l, s.bases(out)); }});
  }
  return time_group(o, s, v);
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  std::printf("x faces (both sides) of a %ld^3 field of doubles packed, %d repetitions per variant, round robin\n",
              o.n, o.reps);
  std::printf("%4s %3s %-32s %9s %9s %7s %6s\n", "n", "w", "variant", "median_us", "best_us", "GB/s", "speedup");
  bool same = true;
  for (long w : o.widths) {
    setup s(o.n, w);
    same = run<hb::thread_pool>(o, s) && same;
#if defined(_OPENMP)
    same = run<hb::openmp_team>(o, s) && same;
#endif
  }
  std::printf("check %s\n", same ? "identical" : "FAILED");
  return same ? 0 : 1;
}

// SPDX-License-Identifier: BSD-3-Clause
// The device executor on a real GPU (memory::device, CUDA or HIP), without a test framework (a GPU
// machine may have neither Catch2 nor a way to fetch it): hand-made segment tables, copies of every
// word size and combines of every scalar kind, run by the executor and by the host loop
// (detail/batch/host_run.hpp) and compared byte for byte; the staging copies; the MPI path decision.
// Every rank runs them (ranks sharing one GPU); rank 0 prints `N passed, M failed`. Built and run
// by scripts/gpu_run (docs/gpu.md); compiled for AMD in CI (ctest label hip-compile).
#include <haloshift/detail/batch/host_run.hpp>
#include <haloshift/haloshift.hpp>
#include <haloshift/memory/device.hpp>

#include "gpu_tables.hpp"
// The hip-compile stage leaves the sweeps out (HALOSHIFT_TEST_GPU_NO_SWEEPS): they triple its time, and
// examples/bench/gpu_pack.cu already compiles a field plan's exchange of device views as HIP.
#if !defined(HALOSHIFT_TEST_GPU_NO_SWEEPS)
#include "particle_sweeps.hpp"
#include "space_sweeps.hpp"
#define HALOSHIFT_TEST_SWEEPS 1
#endif

#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace hs = haloshift;
namespace batch = hs::detail::batch;

struct tally {
  int passed = 0, failed = 0;
  void check(bool ok, const std::string& what) {
    ok ? ++passed : ++failed;
    if (!ok) std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  }
  // Runs `body`; an exception is a failure of `what`.
  void guard(const std::string& what, const std::function<void()>& body) {
    try {
      body();
    } catch (const std::exception& e) {
      check(false, what + ": " + e.what());
    }
  }
};

// Device memory freed on scope exit.
struct device_bytes {
  void* p = nullptr;
  explicit device_bytes(std::size_t n) : p(hs::memory::device::allocate<std::byte>(n)) {}
  ~device_bytes() { hs::memory::device::deallocate(p); }
  device_bytes(const device_bytes&) = delete;
  device_bytes& operator=(const device_bytes&) = delete;
};

using gpu_tables::area;
using gpu_tables::values;

// One launch of `op` on kind `k` with `wb`-byte words: the executor's result against the host loop's,
// waited for with synchronize(), or with `by_mark` as a stream-ordered exchange waits: mark(), then
// marked_done() polled (bounded) and wait_mark().
void compare(tally& t, batch::executor& ex, batch::batch_op op, batch::scalar_kind k, std::uint32_t wb,
             std::mt19937_64& rng, bool by_mark = false, int segments = 40) {
  batch::launch l;
  l.op = op;
  l.scalar = k;
  const std::vector<batch::segment> table = gpu_tables::table_of(wb, segments, rng, l);
  std::vector<std::byte> host[4] = {values(k, rng), values(k, rng), values(k, rng), values(k, rng)};
  device_bytes dev[4] = {device_bytes(area), device_bytes(area), device_bytes(area), device_bytes(area)};
  device_bytes dev_table(table.size() * sizeof(batch::segment));
  ex.upload(dev_table.p, table.data(), table.size() * sizeof(batch::segment));
  batch::bases on_host, on_device;
  for (int i = 0; i < 4; ++i) {
    hs::memory::device::copy_to_device(dev[i].p, host[i].data(), area);
    on_host.at[i] = host[i].data();
    on_device.at[i] = static_cast<std::byte*>(dev[i].p);
  }
  ex.run(static_cast<const batch::segment*>(dev_table.p), l, on_device);
  if (by_mark) {
    ex.mark();
    for (int polls = 0; polls < 1000 && !ex.marked_done(); ++polls) {
    }
    ex.wait_mark();
    t.check(ex.marked_done(), "marked_done() false after wait_mark()");
  } else {
    ex.synchronize();
  }
  batch::run_all(table.data(), l, on_host);
  const std::string what = "op " + std::to_string(int(op)) + ", kind " + std::to_string(int(k)) + ", " +
                           std::to_string(wb) + "-byte words, " + std::to_string(l.words) + " words";
  std::vector<std::byte> back(area);
  for (int i = 1; i < 4; i += 2) {
    hs::memory::device::copy_to_host(back.data(), dev[i].p, area);
    t.check(back == host[i], what + ": target " + std::to_string(i) + " differs from the host loop's");
  }
}

// Copies of every word size, combines of every kind and operation.
void launches(tally& t, batch::executor& ex, std::mt19937_64& rng) {
  using batch::scalar_kind;
  for (std::uint32_t wb : {1u, 2u, 4u, 8u})
    for (int repeat = 0; repeat < 3; ++repeat)
      t.guard("copy", [&] { compare(t, ex, batch::batch_op::copy, scalar_kind::none, wb, rng); });
  for (auto [k, wb] : gpu_tables::combine_kinds)
    for (auto op : {batch::batch_op::plus, batch::batch_op::min, batch::batch_op::max})
      t.guard("combine", [&, k = k, wb = wb] { compare(t, ex, op, k, wb, rng); });
  // Tables too long for the kernel's shared copy of their first_word values (gpu_kernel.hpp, shared_starts).
  t.guard("long copy", [&] { compare(t, ex, batch::batch_op::copy, scalar_kind::none, 8, rng, false, 2000); });
  t.guard("long combine", [&] { compare(t, ex, batch::batch_op::plus, scalar_kind::i32, 4, rng, false, 2000); });
}

// Stream-ordered: launches on the caller's stream (use_stream), waited for by mark; then back to the
// executor's own stream.
void stream_ordered(tally& t, batch::executor& ex, std::mt19937_64& rng) {
  batch::gpu::stream s{};
  batch::gpu::check(HALOSHIFT_GPU(StreamCreate)(&s), "StreamCreate");
  ex.use_stream(s);
  compare(t, ex, batch::batch_op::copy, batch::scalar_kind::none, 8, rng, true);
  compare(t, ex, batch::batch_op::plus, batch::scalar_kind::f64, 8, rng, true);
  ex.use_stream(nullptr);
  compare(t, ex, batch::batch_op::copy, batch::scalar_kind::none, 4, rng, true);
  static_cast<void>(HALOSHIFT_GPU(StreamDestroy)(s));
}

// Staging: device -> pinned host -> device, enqueued on the executor's stream.
void staging(tally& t, batch::executor& ex, std::mt19937_64& rng) {
  const std::vector<std::byte> data = values(batch::scalar_kind::none, rng);
  device_bytes a(area), b(area);
  hs::memory::device::copy_to_device(a.p, data.data(), area);
  void* pinned = ex.allocate_pinned(area);
  ex.to_host(pinned, a.p, area);
  ex.to_device(b.p, pinned, area);
  ex.synchronize();
  t.check(std::memcmp(pinned, data.data(), area) == 0, "to_host: pinned copy differs");
  std::vector<std::byte> back(area);
  hs::memory::device::copy_to_host(back.data(), b.p, area);
  t.check(back == data, "to_device: device copy differs");
  ex.deallocate_pinned(pinned, area);
}

// What the executor says of itself, and the errors it raises.
void identity(tally& t) {
  auto staged = hs::memory::device::make_executor(hs::memory::mpi_path::staged);
  auto direct = hs::memory::device::make_executor(hs::memory::mpi_path::direct);
  t.check(!staged->mpi_reaches_memory() && direct->mpi_reaches_memory(), "mpi_path staged/direct not obeyed");
  t.check(!staged->host_accessible(), "device memory claimed host-accessible");
  t.check(std::string(staged->name()) == HALOSHIFT_GPU_RUNTIME, std::string("name() is ") + staged->name());
  batch::launch bad;
  bad.words = 1;
  bad.word_bytes = 3;
  bool raised = false;
  try {
    staged->run(nullptr, bad, batch::bases{});
  } catch (const hs::error& e) {
    raised = std::string(e.what()).find("word_bytes is 3") != std::string::npos;
  }
  t.check(raised, "a launch of 3-byte words did not raise haloshift::error naming word_bytes");
}

// A particle plan's arrays in device memory, outside the sweeps so that the hip-compile stage
// compiles the particle path too: float x, y, z with an id companion forwarded and shifted across
// the periodic borders by the executor, then summed back, against the same exchanges on the host.
void particles(tally& t) {
  using dev = hs::memory::device;
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, true}});
  const hs::domain dom{{0, 0, 0}, {2.0, 1.5, 1.0}};
  std::vector<hs::position> x;
  for (int k = 0; k < 5; ++k) {
    hs::position p{0.5, 0.5, 0.5};
    for (int d = 0; d < 2; ++d)
      p[d] = dom.length(d) * (grid.coords()[d] + (k + 0.5) / 5.0) / grid.shape().dims()[d];
    x.push_back(p);
  }
  hs::particle_plan plan = hs::make_particle_plan<hs::Shift>(grid, dom, 0.7, x);
  const std::size_t n = plan.size();
  std::vector<float> c[3];
  std::vector<std::int64_t> id(n, -1);
  for (int d = 0; d < 3; ++d) c[d].assign(n, -1.0f);
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (int d = 0; d < 3; ++d) c[d][i] = static_cast<float>(x[i][d]) + 1e-4f;
    id[i] = grid.rank() * 100 + static_cast<std::int64_t>(i);
  }
  std::vector<float> got[3];
  device_bytes on[4] = {device_bytes(n * 4 + 4), device_bytes(n * 4 + 4), device_bytes(n * 4 + 4),
                        device_bytes(n * 8 + 8)};
  for (int d = 0; d < 3; ++d) dev::copy_to_device(on[d].p, c[d].data(), n * 4);
  dev::copy_to_device(on[3].p, id.data(), n * 8);
  auto span = [&](int k) { return std::span<float>(static_cast<float*>(on[k].p), n); };
  const std::span<std::int64_t> ids(static_cast<std::int64_t*>(on[3].p), n);
  plan.forward_positions(dev{}, span(0), span(1), span(2), ids);
  plan.forward_positions(hs::split_positions<float>(c[0], c[1], c[2]), std::span<std::int64_t>(id));
  plan.reverse(dev{}, span(0), span(1), span(2));
  plan.reverse(std::span<float>(c[0]), std::span<float>(c[1]), std::span<float>(c[2]));
  bool same = true;
  for (int d = 0; d < 3; ++d) {
    got[d].resize(n);
    dev::copy_to_host(got[d].data(), on[d].p, n * 4);
    same = same && std::memcmp(got[d].data(), c[d].data(), n * 4) == 0;
  }
  std::vector<std::int64_t> got_id(n);
  dev::copy_to_host(got_id.data(), on[3].p, n * 8);
  t.check(same && got_id == id, "particle positions in device memory differ from host memory");
}

#if defined(HALOSHIFT_TEST_SWEEPS)
// The sweeps over device memory: each configuration that matches is a pass, each mismatch a failure.
void sweeps(tally& t) {
  std::vector<hs::plan_options> variants(1);
  variants[0].device_mpi = hs::memory::mpi_path::staged;
  if (batch::decide_mpi_reach(hs::memory::mpi_path::detect, batch::gpu::this_runtime).direct) {
    variants.push_back(variants[0]);
    variants[1].device_mpi = hs::memory::mpi_path::direct;
  }
  for (std::size_t i = 0, n = variants.size(); i < n; ++i)  // and through the node's window
    variants.push_back(space_sweeps::with_shared_memory(variants[i]));
  const space_sweeps::result r = space_sweeps::run<hs::memory::device>(MPI_COMM_WORLD, variants);
  t.passed += static_cast<int>(r.configurations);
  t.failed += static_cast<int>(r.mismatches);
  if (!r.failures.empty()) std::fprintf(stderr, "FAILED (sweeps):\n%s", r.failures.c_str());
  t.check(r.configurations > 0 && r.cells > 0, "the sweeps ran no configuration");
  const space_sweeps::result p = particle_sweeps::run<hs::memory::device>(MPI_COMM_WORLD, variants);
  t.passed += static_cast<int>(p.configurations);
  t.failed += static_cast<int>(p.mismatches);
  if (!p.failures.empty()) std::fprintf(stderr, "FAILED (particle sweeps):\n%s", p.failures.c_str());
  t.check(p.configurations > 0 && p.cells > 0, "the particle sweeps ran no configuration");
}
#endif

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  hs::set_log_sink(stderr);  // with HALOSHIFT_VERBOSE=1: the staging decision (and Auto's choices)
  std::mt19937_64 rng(1234 + static_cast<std::uint64_t>(rank));
  // The sweeps first: a kernel fault is sticky (every later call of the process fails), so a fault in
  // the hand-made launches must not hide the sweeps' result; each part is counted on its own line.
  tally parts[2];
#if defined(HALOSHIFT_TEST_SWEEPS)
  parts[0].guard("sweeps", [&] { sweeps(parts[0]); });
#endif
  tally& t = parts[1];
  t.guard("identity", [&] { identity(t); });
  t.guard("particles", [&] { particles(t); });
  t.guard("launches", [&] {
    auto ex = hs::memory::device::make_executor(hs::memory::mpi_path::detect);
    launches(t, *ex, rng);
    staging(t, *ex, rng);
    stream_ordered(t, *ex, rng);
  });
  int counts[4] = {parts[0].passed, parts[0].failed, parts[1].passed, parts[1].failed};
  MPI_Allreduce(MPI_IN_PLACE, counts, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const int passed = counts[0] + counts[2], failed = counts[1] + counts[3];
  if (rank == 0) {
    std::printf("  field- and particle-plan sweeps: %d passed, %d failed\n", counts[0], counts[1]);
    std::printf("  hand-made launches, staging, streams, errors: %d passed, %d failed\n", counts[2], counts[3]);
    std::printf("test_gpu (%s, %d ranks): %d passed, %d failed\n", HALOSHIFT_GPU_RUNTIME, size, passed, failed);
  }
  MPI_Finalize();
  return failed == 0 && passed > 0 ? 0 : 1;
}

// SPDX-License-Identifier: BSD-3-Clause
// gpu_pack: the device executor (memory::device, CUDA or HIP) packing the six faces of a 128^3 double
// field (one ghost layer, 130^3 allocated) into one staging buffer, all six faces' segments in one
// launch, against cudaMemcpy device to device of the same bytes; then unpacking them into the ghost
// layers. Bandwidth counts bytes read plus bytes written; the target of issue #34 is a pack at least
// 70 % of the copy's. The packed faces are checked byte for byte against the host loop
// (detail/batch/host_run.hpp) before anything is timed. Then a forward exchange of a 128^3 field per
// rank (periodic, Shift) on device memory staged through pinned host memory, against the same plan
// on host memory, the ghosts compared after. Between them, rank 0 measures the cost model's device
// terms and prints them as a calibration file's "device" object.
//
//   mpiexec -n 2 gpu_pack [n] [iterations] [calibration]
//
// (defaults 128 and 2000 packs, a twentieth as many exchanges; `calibration`: a calibration file that
// haloshift-calibrate made, to which the device terms are added)
//
// Built and run by scripts/gpu_run (docs/gpu.md, "Figures"); compiled for AMD by the hip-compile stage.
#include <haloshift/detail/batch/host_run.hpp>
#include <haloshift/haloshift.hpp>
#include <haloshift/memory/device.hpp>
#include <haloshift/model/calibration/calibration_file.hpp>
#include <haloshift/model/calibration/measure_device.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

namespace hs = haloshift;
namespace batch = hs::detail::batch;

// The segments of the six interior faces of an n^3 field stored x fastest with one ghost layer
// (extent n + 2), from base 0 (the field) to base 1 (the staging, faces one after another); or, with
// `unpack`, from the staging into the six ghost layers. Word size 8 (doubles).
std::vector<batch::segment> faces(std::int64_t n, bool unpack, batch::launch& l) {
  const std::int64_t e = n + 2, x = 8, y = e * x, z = e * y;  // byte strides of i, j, k
  std::vector<batch::segment> t;
  std::int64_t packed = 0;
  auto add = [&](std::int64_t cell, std::int64_t stride, std::uint32_t row_bytes, std::uint32_t repeat) {
    batch::segment g;
    g.from = cell;
    g.from_stride = stride;
    g.to = packed;
    g.to_stride = row_bytes;
    g.row_bytes = row_bytes;
    g.repeat = repeat;
    g.to_base = 1;
    if (unpack) {
      std::swap(g.from, g.to);
      std::swap(g.from_stride, g.to_stride);
      std::swap(g.from_base, g.to_base);
    }
    g.first_word = l.words;
    l.words += std::uint64_t(repeat) * row_bytes / 8;
    packed += std::int64_t(repeat) * row_bytes;
    t.push_back(g);
  };
  const auto row = static_cast<std::uint32_t>(n * 8), count = static_cast<std::uint32_t>(n);
  for (std::int64_t side : {0, 1}) {
    // Interior layer 1 or n when packing, ghost layer 0 or n + 1 when unpacking.
    const std::int64_t layer = unpack ? side * (n + 1) : 1 + side * (n - 1);
    for (std::int64_t k = 1; k <= n; ++k) add(layer * x + y + k * z, y, 8, count);  // x face: a column per k
    add(layer * y + x + z, z, row, count);                                          // y face: rows of i, by k
    add(layer * z + x + y, y, row, count);                                          // z face: rows of i, by j
  }
  l.first = 0;
  l.count = t.size();
  l.word_bytes = 8;
  return t;
}

// Seconds per call of `body`, over `iterations` calls enqueued back to back, then `sync`.
template <class Body, class Sync>
double seconds_each(int iterations, Body body, Sync sync) {
  body();
  sync();  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) body();
  sync();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iterations;
}

struct device_buffer {
  std::byte* p;
  explicit device_buffer(std::size_t bytes) : p(hs::memory::device::allocate<std::byte>(bytes)) {}
  ~device_buffer() { hs::memory::device::deallocate(p); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
};

// The packed faces on the device against the host loop's, byte for byte.
bool check_pack(batch::executor& ex, const std::vector<batch::segment>& table, const batch::launch& l,
                const std::vector<double>& field, const device_buffer& staging, std::size_t bytes) {
  std::vector<std::byte> expected(bytes), got(bytes);
  batch::bases host;
  host.at[0] = reinterpret_cast<std::byte*>(const_cast<double*>(field.data()));
  host.at[1] = expected.data();
  batch::run_all(table.data(), l, host);
  ex.synchronize();
  hs::memory::device::copy_to_host(got.data(), staging.p, bytes);
  return got == expected;
}

// The pack figures: the six faces packed and unpacked by the executor against cudaMemcpy.
bool pack_figures(std::int64_t n, int iterations) {
  auto ex = hs::memory::device::make_executor(hs::memory::mpi_path::staged);
  const std::size_t cells = std::size_t((n + 2) * (n + 2) * (n + 2)), face_bytes = std::size_t(6 * n * n * 8);
  std::vector<double> field(cells);
  for (std::size_t c = 0; c < cells; ++c) field[c] = double(c) * 0.5 - 1e6;
  device_buffer f(cells * 8), staging(face_bytes), copy(face_bytes);
  hs::memory::device::copy_to_device(f.p, field.data(), cells * 8);
  batch::launch pack, unpack;
  const std::vector<batch::segment> pack_table = faces(n, false, pack), unpack_table = faces(n, true, unpack);
  device_buffer tables((pack_table.size() + unpack_table.size()) * sizeof(batch::segment));
  auto* pack_on_device = reinterpret_cast<batch::segment*>(tables.p);
  auto* unpack_on_device = pack_on_device + pack_table.size();
  ex->upload(pack_on_device, pack_table.data(), pack_table.size() * sizeof(batch::segment));
  ex->upload(unpack_on_device, unpack_table.data(), unpack_table.size() * sizeof(batch::segment));
  batch::bases b;
  b.at[0] = f.p;
  b.at[1] = staging.p;
  ex->run(pack_on_device, pack, b);
  const bool same = check_pack(*ex, pack_table, pack, field, staging, face_bytes);
  auto sync = [&] { ex->synchronize(); };
  const double t_pack = seconds_each(
      iterations, [&] { ex->run(pack_on_device, pack, b); }, sync);
  const double t_unpack = seconds_each(
      iterations, [&] { ex->run(unpack_on_device, unpack, b); }, sync);
  const double t_memcpy = seconds_each(
      iterations,
      [&] {
        batch::gpu::check(
            HALOSHIFT_GPU(MemcpyAsync)(copy.p, staging.p, face_bytes, HALOSHIFT_GPU(MemcpyDeviceToDevice)),
            HALOSHIFT_GPU_RUNTIME "MemcpyAsync (device to device)");
      },
      [] { batch::gpu::check(HALOSHIFT_GPU(DeviceSynchronize)(), HALOSHIFT_GPU_RUNTIME "DeviceSynchronize"); });
  const double moved = 2.0 * double(face_bytes);
  std::printf("gpu_pack: %lld^3 doubles, six faces, %zu segments, %zu bytes per pack, %d iterations (%s)\n",
              static_cast<long long>(n), pack_table.size(), face_bytes, iterations, ex->name());
  std::printf("  packed faces against the host loop: %s\n", same ? "identical" : "DIFFERENT");
  std::printf("  pack   %8.2f us  %7.1f GB/s\n", t_pack * 1e6, moved / t_pack * 1e-9);
  std::printf("  unpack %8.2f us  %7.1f GB/s\n", t_unpack * 1e6, moved / t_unpack * 1e-9);
  std::printf("  memcpy %8.2f us  %7.1f GB/s (device to device, same bytes)\n", t_memcpy * 1e6,
              moved / t_memcpy * 1e-9);
  std::printf("  pack / memcpy bandwidth: %.0f %% (target 70 %%), unpack: %.0f %%\n", 100 * t_memcpy / t_pack,
              100 * t_memcpy / t_unpack);
  return same;
}

// The exchange figures: forward of an n^3 field per rank (periodic, Shift, one ghost layer) on device
// memory staged through the host, synchronous and stream-ordered (memory::device{stream}, the stream
// synchronized after each), against the same plan on host memory; the ghosts compared after.
bool exchange_figures(std::int64_t n, int iterations) {
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0, 0}, .periodic = {true, true, true}});
  const int m = static_cast<int>(n);
  const hs::offset global{m * grid.shape().dim(0), m * grid.shape().dim(1), m * grid.shape().dim(2)};
  const hs::field_shape shape(grid.shape(), grid.coords(), global, hs::offset{1, 1, 1});
  hs::plan_options options;
  options.device_mpi = hs::memory::mpi_path::staged;
  hs::field_plan plan = hs::make_field_plan<hs::Shift>(grid, shape, options);
  const std::size_t cells = std::size_t((n + 2) * (n + 2) * (n + 2));
  std::vector<double> host(cells), back(cells);
  for (std::size_t c = 0; c < cells; ++c) host[c] = double(c) + 1e7 * grid.rank();
  device_buffer dev(cells * 8), ordered(cells * 8);
  hs::memory::device::copy_to_device(dev.p, host.data(), cells * 8);
  hs::memory::device::copy_to_device(ordered.p, host.data(), cells * 8);
  batch::gpu::stream s{};
  batch::gpu::check(HALOSHIFT_GPU(StreamCreate)(&s), HALOSHIFT_GPU_RUNTIME "StreamCreate");
  const auto on_host = hs::make_field_view(host.data(), shape);
  const auto on_device = hs::make_field_view(hs::memory::device{}, reinterpret_cast<double*>(dev.p), shape);
  const auto on_stream = hs::make_field_view(hs::memory::device{s}, reinterpret_cast<double*>(ordered.p), shape);
  auto barrier = [] { MPI_Barrier(MPI_COMM_WORLD); };
  const double t_host = seconds_each(
      iterations, [&] { plan.forward(on_host); }, barrier);
  const double t_device = seconds_each(
      iterations, [&] { plan.forward(on_device); }, barrier);
  const double t_stream = seconds_each(
      iterations,
      [&] {
        plan.forward(on_stream);
        batch::gpu::check(HALOSHIFT_GPU(StreamSynchronize)(s), HALOSHIFT_GPU_RUNTIME "StreamSynchronize");
      },
      barrier);
  hs::memory::device::copy_to_host(back.data(), dev.p, cells * 8);
  int same = back == host, all = 0;
  hs::memory::device::copy_to_host(back.data(), ordered.p, cells * 8);
  same = same && back == host;
  static_cast<void>(HALOSHIFT_GPU(StreamDestroy)(s));
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (grid.rank() == 0) {
    std::printf("exchange: forward of a %lld^3 double field per rank, %d ranks (%d x %d x %d), Shift, ghost 1\n",
                static_cast<long long>(n), grid.shape().size(), grid.shape().dim(0), grid.shape().dim(1),
                grid.shape().dim(2));
    std::printf("  device memory, staged through pinned host memory: %8.1f us\n", t_device * 1e6);
    std::printf("  the same, stream-ordered (then the stream synced): %8.1f us\n", t_stream * 1e6);
    std::printf("  host memory:                                      %8.1f us  (device / host %.2f)\n", t_host * 1e6,
                t_device / t_host);
    std::printf("  device ghosts against host ghosts: %s\n", all ? "identical" : "DIFFERENT");
  }
  return all != 0;
}

// The device terms of the cost model (model/calibration/measure_device.hpp: a launch, packing per byte,
// copies to the host and back), measured through the device executor, printed as the "device" object
// of a calibration file (docs/model.md, "Device data"), for Auto to weigh staging and launches; and
// added to the calibration file `calibration` when one is named (haloshift-calibrate made it).
bool device_terms(const char* calibration) {
  const auto x = hs::memory::device::make_executor(hs::memory::mpi_path::staged);
  const hs::hockney::device_terms d = hs::detail::measure_device_terms(*x);
  if (calibration) {
    hs::calibration c = hs::load_calibration(calibration);
    c.cost = c.cost.with_device(d);
    hs::save_calibration(c, calibration);
    std::printf("device terms added to %s\n", calibration);
  }
  std::printf("device terms: launch %.2f us, pack %.4f ns/B, copy %.2f us + %.4f ns/B\n", d.launch * 1e6,
              d.pack_beta * 1e9, d.copy_alpha * 1e6, d.copy_beta * 1e9);
  std::printf("  calibration: \"device\": {\"launch_s\": %.6g, \"pack_s_per_byte\": %.6g, \"copy_alpha_s\": %.6g, "
              "\"copy_s_per_byte\": %.6g}\n",
              d.launch, d.pack_beta, d.copy_alpha, d.copy_beta);
  return d.launch > 0 && d.pack_beta > 0 && d.copy_alpha > 0 && d.copy_beta > 0;
}

// Runs `phase` on this rank, then agrees on every rank's success: a rank that failed (no device, say)
// must not leave the others waiting in a collective.
template <class Phase>
bool agreed(const char* name, Phase phase) {
  int ok = 0, all = 0;
  try {
    ok = phase() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_pack, %s: %s\n", name, e.what());
  }
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 128;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 2000;
  const char* calibration = argc > 3 ? argv[3] : nullptr;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs::set_log_sink(stderr);  // with HALOSHIFT_VERBOSE=1 (scripts/gpu_run sets it): the staging decision
  // Rank 0 alone times the pack: ranks sharing a GPU would time each other.
  const bool ok = agreed("pack", [&] { return rank != 0 || pack_figures(n, iterations); }) &&
                  agreed("device terms", [&] { return rank != 0 || device_terms(calibration); }) &&
                  agreed("exchange", [&] { return exchange_figures(n, std::max(1, iterations / 20)); });
  MPI_Finalize();
  return ok ? 0 : 1;
}

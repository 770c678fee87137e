// SPDX-License-Identifier: BSD-3-Clause
// haloshift_bench_pack: how fast the executor packs (gather) and unpacks
// (scatter) the faces, edges and corners of a grid field, against memcpy of
// the same number of bytes. Messages are built exactly as a relocated field
// plan builds them (one run per cell in storage order, merged), so this
// measures the code every grid exchange runs, and MPI_Pack / MPI_Unpack with
// a derived datatype of the same cells (the alternative). Google Benchmark;
// one process.
//
//   haloshift_bench_pack [--benchmark_filter=...] [--benchmark_min_time=...]
//
// Sizes: a 32^3 interior (padded array 314 KB, faces in cache) and a 256^3
// one (137 MB). At 256^3 each iteration moves the next of many copies of the
// region spread through the array, so the data comes from memory.

#include <benchmark/benchmark.h>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <haloshift/haloshift.hpp>
#include <string>
#include <vector>

namespace hs = haloshift;

namespace {

struct region {
  const char* name;
  /// Cells as [from, to) per dimension for an interior of n cells and ghost 1;
  /// `layer` moves the region along its normal (to spread it through memory).
  std::array<int, 6> (*cells)(int n, int layer);
};

// What a Shift exchange sends: x faces, then y faces with their x ghosts,
// then z faces with x and y ghosts; and what SingleHop adds: edges, corners.
const region regions[] = {
    {"x_face", [](int n, int l) { return std::array<int, 6>{l, l + 1, 0, n, 0, n}; }},
    {"y_face_with_x_ghosts", [](int n, int l) { return std::array<int, 6>{-1, n + 1, l, l + 1, 0, n}; }},
    {"z_face_with_xy_ghosts", [](int n, int l) { return std::array<int, 6>{-1, n + 1, -1, n + 1, l, l + 1}; }},
    {"z_face_interior", [](int n, int l) { return std::array<int, 6>{0, n, 0, n, l, l + 1}; }},
    {"x_edge", [](int n, int l) { return std::array<int, 6>{0, n, l, l + 1, l, l + 1}; }},
    {"y_edge", [](int n, int l) { return std::array<int, 6>{l, l + 1, 0, n, l, l + 1}; }},
    {"z_edge", [](int n, int l) { return std::array<int, 6>{l, l + 1, l, l + 1, 0, n}; }},
    {"corner", [](int, int l) { return std::array<int, 6>{l, l + 1, l, l + 1, l, l + 1}; }},
};

/// A field of n^3 interior doubles with one ghost layer and the messages of a region at several layers.
struct setup {
  hs::field_shape shape;
  std::vector<double> field;
  std::vector<hs::detail::message> messages;
  std::vector<double> buffer;
  std::vector<MPI_Datatype> types;
  hs::detail::block_layout layout;  // unused by selected messages

  setup(int n, const region& r) {
    const hs::grid_shape grid({1, 1, 1}, std::vector<bool>{true, true, true});
    shape = hs::field_shape(grid, {0, 0, 0}, {n, n, n}, {1, 1, 1});
    field.assign(shape.size(), 1.5);
    // At 256^3, enough copies of the region (spread along its normal) that together they touch
    // about 128 MiB of cache lines: each iteration then reads from memory, as memcpy's does.
    const hs::detail::message first = make(r.cells(n, 0));
    std::size_t lines = 0;
    for (const hs::detail::strided_run& g : first.strided) lines += g.repeat * ((g.count * sizeof(double) + 63) / 64 + 1);
    if (first.contiguous) lines = first.count * sizeof(double) / 64 + 1;
    const std::size_t copies = n < 128 ? 1 : std::min<std::size_t>(n, (std::size_t{128} << 20) / (64 * lines) + 1);
    for (std::size_t c = 0; c < copies; ++c) messages.push_back(make(r.cells(n, static_cast<int>(c * n / copies))));
    buffer.assign(messages.front().count, 0.0);
    for (const hs::detail::message& m : messages) types.push_back(datatype(m));
  }
  ~setup() {
    for (MPI_Datatype& t : types) MPI_Type_free(&t);
  }
  setup(const setup&) = delete;
  setup& operator=(const setup&) = delete;

  hs::detail::message make(const std::array<int, 6>& b) const {
    std::vector<hs::detail::element_run> runs;
    for (int k = b[4]; k < b[5]; ++k)
      for (int j = b[2]; j < b[3]; ++j)
        for (int i = b[0]; i < b[1]; ++i) runs.push_back({shape.index(i, j, k), 1});
    hs::detail::message m;
    m.peer = 0;
    hs::detail::select_pieces(m, runs);
    return m;
  }
  /// The MPI derived datatype of the same cells: one hvector per strided group.
  static MPI_Datatype datatype(const hs::detail::message& m) {
    std::vector<hs::detail::strided_run> groups = m.strided;
    if (m.contiguous) groups = {{m.first, m.count, 0, 1}};
    std::vector<MPI_Datatype> parts;
    std::vector<int> ones(groups.size(), 1);
    std::vector<MPI_Aint> at;
    for (const hs::detail::strided_run& g : groups) {
      MPI_Datatype row, rows;
      MPI_Type_contiguous(static_cast<int>(g.count), MPI_DOUBLE, &row);
      MPI_Type_create_hvector(static_cast<int>(g.repeat), 1, static_cast<MPI_Aint>(g.stride * sizeof(double)), row, &rows);
      MPI_Type_free(&row);
      parts.push_back(rows);
      at.push_back(static_cast<MPI_Aint>(g.first * sizeof(double)));
    }
    MPI_Datatype t;
    MPI_Type_create_struct(static_cast<int>(parts.size()), ones.data(), at.data(), parts.data(), &t);
    MPI_Type_commit(&t);
    for (MPI_Datatype& p : parts) MPI_Type_free(&p);
    return t;
  }
  std::size_t bytes() const { return messages.front().count * sizeof(double); }
};

enum class op { pack, unpack, mpi_pack, mpi_unpack, copy };

void run(benchmark::State& state, int n, const region& r, op what) {
  setup s(n, r);
  std::size_t next = 0, source = 0;
  const std::size_t count = s.messages.front().count;
  for (auto _ : state) {
    const hs::detail::message& m = s.messages[next];
    switch (what) {
      case op::pack:
        if (m.contiguous)
          std::memcpy(s.buffer.data(), s.field.data() + m.first, s.bytes());  // what the executor does: send in place
        else
          hs::detail::gather(s.layout, m, s.field.data(), s.buffer.data());
        break;
      case op::unpack:
        if (m.contiguous)
          std::memcpy(s.field.data() + m.first, s.buffer.data(), s.bytes());
        else
          hs::detail::scatter(s.layout, m, s.buffer.data(), s.field.data());
        break;
      case op::mpi_pack: {
        int position = 0;
        MPI_Pack(s.field.data(), 1, s.types[next], s.buffer.data(), static_cast<int>(s.bytes()), &position,
                 MPI_COMM_SELF);
        break;
      }
      case op::mpi_unpack: {
        int position = 0;
        MPI_Unpack(s.buffer.data(), static_cast<int>(s.bytes()), &position, s.field.data(), 1, s.types[next],
                   MPI_COMM_SELF);
        break;
      }
      case op::copy:  // memcpy of the same bytes, walking through the whole array (from memory at 256^3)
        std::memcpy(s.buffer.data(), s.field.data() + source, s.bytes());
        source = (source + count) % (s.field.size() - count);
        break;
    }
    benchmark::DoNotOptimize(s.buffer.data());
    benchmark::DoNotOptimize(s.field.data());
    benchmark::ClobberMemory();
    next = (next + 1) % s.messages.size();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(s.bytes()));
  state.counters["pieces"] = static_cast<double>(s.messages.front().pieces.size());
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);  // for MPI_Pack with derived datatypes (the alternative to the library's packing)
  for (int n : {32, 256})
    for (const region& r : regions)
      for (auto [what, name] : {std::pair{op::pack, "pack"}, {op::unpack, "unpack"}, {op::mpi_pack, "MPI_Pack"},
                                {op::mpi_unpack, "MPI_Unpack"}, {op::copy, "memcpy"}}) {
        const std::string label = std::string(r.name) + "/" + name + "/n" + std::to_string(n);
        benchmark::RegisterBenchmark(label.c_str(), [n, &r, what = what](benchmark::State& st) { run(st, n, r, what); });
      }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  MPI_Finalize();
}

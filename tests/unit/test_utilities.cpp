// SPDX-License-Identifier: BSD-3-Clause
// The library's small utilities: the one floor division, positive modulo and hash
// (detail/arithmetic.hpp, detail/hash.hpp) against independent definitions (exact floor by
// search, the FNV-1a test vectors of the reference implementation), and the owners of MPI
// handles: move-only, a moved-from owner empty; and the split of a field's interior for overlap
// (detail/payload/interior_partition.hpp) against its definition, cell by cell.
#include "../support/catch.hpp"
#include "../device/gpu_tables.hpp"
#include <haloshift/detail/arithmetic.hpp>
#include <haloshift/detail/batch/gpu_aware.hpp>
#include <haloshift/detail/batch/gpu_words.hpp>
#include <haloshift/detail/batch/host_run.hpp>
#include <haloshift/detail/exchange/strided_rows.hpp>
#include <haloshift/detail/hash.hpp>
#include <haloshift/detail/payload/interior_partition.hpp>
#include <haloshift/haloshift.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hs = haloshift;
namespace hsd = haloshift::detail;

namespace {
/// floor(a / b) for b > 0 by its definition: the q with q b <= a < (q + 1) b, found by walking
/// from 0 (small operands only; no division involved).
long long floor_by_search(long long a, long long b) {
  long long q = 0;
  while (q * b > a) --q;
  while ((q + 1) * b <= a) ++q;
  return q;
}
}  // namespace

// Evaluated at compile time too: the helpers are constexpr.
static_assert(hsd::floor_div(-7, 2) == -4 && hsd::floor_div(7, 2) == 3 && hsd::floor_div(0, 5) == 0);
static_assert(hsd::positive_mod(-7, 3) == 2 && hsd::positive_mod(7, 3) == 1 && hsd::positive_mod(0, 3) == 0);

TEST_CASE("floor_div and positive_mod round toward minus infinity, int and int64", "[detail][arithmetic]") {
  for (int b = 1; b <= 9; ++b)
    for (int a = -40; a <= 40; ++a) {
      CAPTURE(a, b);
      const long long q = floor_by_search(a, b), r = a - q * b;
      CHECK(hsd::floor_div(a, b) == q);
      CHECK(hsd::positive_mod(a, b) == r);
      CHECK(hsd::floor_div(std::int64_t{a}, std::int64_t{b}) == q);
      CHECK(hsd::positive_mod(std::int64_t{a}, std::int64_t{b}) == r);
    }
  // Negative, zero and positive, exact multiples and not, near the int64 limits (no overflow).
  constexpr std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  CHECK(hsd::floor_div(lo, std::int64_t{1}) == lo);
  CHECK(hsd::positive_mod(lo, std::int64_t{1}) == 0);
  CHECK(hsd::floor_div(lo, std::int64_t{2}) == lo / 2);  // exact
  CHECK(hsd::floor_div(lo + 1, std::int64_t{2}) == lo / 2);
  CHECK(hsd::positive_mod(lo + 1, std::int64_t{2}) == 1);
  CHECK(hsd::floor_div(lo, hi) == -2);  // lo = -2 hi + (hi - 1)
  CHECK(hsd::positive_mod(lo, hi) == hi - 1);
  CHECK(hsd::floor_div(hi, hi) == 1);
  CHECK(hsd::positive_mod(hi, hi) == 0);
  CHECK(hsd::floor_div(std::int64_t{-1}, hi) == -1);
  CHECK(hsd::positive_mod(std::int64_t{-1}, hi) == hi - 1);
  constexpr int ilo = std::numeric_limits<int>::min();
  CHECK(hsd::floor_div(ilo, 3) == -715827883);  // -2147483648 = -715827883 * 3 + 1
  CHECK(hsd::positive_mod(ilo, 3) == 1);
}

TEST_CASE("fnv1a gives the reference FNV-1a 64 values", "[detail][hash]") {
  // The FNV authors' test vectors (offset basis 14695981039346656037, prime 1099511628211).
  CHECK(hsd::fnv1a_of("") == 0xcbf29ce484222325ull);
  CHECK(hsd::fnv1a_of("a") == 0xaf63dc4c8601ec8cull);
  CHECK(hsd::fnv1a_of("foobar") == 0x85944171f73967e8ull);
  // value() hashes the object representation: a 4-byte int is its 4 bytes in memory order.
  const std::uint32_t word = 0x61626364u;  // "abcd" or "dcba" in memory, by endianness
  unsigned char bytes[4];
  std::memcpy(bytes, &word, 4);
  haloshift::detail::fnv1a by_bytes;
  for (unsigned char b : bytes) by_bytes.byte(b);
  CHECK(haloshift::detail::fnv1a{}.value(word).get() == by_bytes.get());
  CHECK(hsd::fnv1a_of("abc") != hsd::fnv1a_of("acb"));
}

// Copying an owner of a communicator would be a hidden collective (a duplicate) or a double
// free; moving it must be cheap and leave the source empty.
template <class T>
constexpr bool move_only = !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
                           std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>;
static_assert(move_only<haloshift::mpi::communicator>);
static_assert(move_only<haloshift::detail::neighbor_graph>);
static_assert(move_only<haloshift::detail::selected_neighbor_engine>);
static_assert(!std::is_copy_constructible_v<haloshift::detail::neighbor_engine>);
static_assert(!std::is_copy_constructible_v<haloshift::local_exchange<int>>);
static_assert(!std::is_copy_constructible_v<haloshift::msn_announce<int>>);
static_assert(!std::is_copy_constructible_v<haloshift::ttl_local_exchange<int>>);

TEST_CASE("owners of communicators move, leave the source empty and free once", "[detail][mpi]") {
  haloshift::mpi::communicator a(MPI_COMM_SELF);
  REQUIRE(a.get() != MPI_COMM_NULL);
  const MPI_Comm held = a.get();
  haloshift::mpi::communicator b(std::move(a));
  CHECK(a.get() == MPI_COMM_NULL);
  CHECK(b.get() == held);
  haloshift::mpi::communicator c(MPI_COMM_SELF);
  c = std::move(b);  // frees c's own duplicate, takes b's
  CHECK(b.get() == MPI_COMM_NULL);
  CHECK(c.get() == held);
  CHECK((c.rank() == 0 && c.size() == 1));

  haloshift::detail::neighbor_graph g;
  g.sources = {0};
  g.destinations = {0};
  g.create(MPI_COMM_SELF);
  REQUIRE(g.comm.get() != MPI_COMM_NULL);
  const MPI_Comm graph = g.comm.get();
  haloshift::detail::neighbor_graph h(std::move(g));
  CHECK(g.comm.get() == MPI_COMM_NULL);
  CHECK(g.sources.empty());
  CHECK(h.comm.get() == graph);
  CHECK(h.sources == std::vector<int>{0});
  haloshift::detail::neighbor_graph k;
  k = std::move(h);
  CHECK(h.comm.get() == MPI_COMM_NULL);
  CHECK(k.comm.get() == graph);
  int size = 0;  // the graph communicator is alive and usable after the moves
  REQUIRE(MPI_Comm_size(k.comm.get(), &size) == MPI_SUCCESS);
  CHECK(size == 1);

  MPI_Comm freed = MPI_COMM_NULL;
  REQUIRE(MPI_Comm_dup(MPI_COMM_SELF, &freed) == MPI_SUCCESS);
  haloshift::mpi::free_unless_finalized(freed, MPI_COMM_NULL, MPI_Comm_free);
  CHECK(freed == MPI_COMM_NULL);
  haloshift::mpi::free_unless_finalized(freed, MPI_COMM_NULL, MPI_Comm_free);  // a null handle: nothing to do
  CHECK(freed == MPI_COMM_NULL);
}

TEST_CASE("partition_interior covers every interior cell once, inner stencils inside", "[detail][overlap]") {
  // Every interior of 0-4 cells per dimension (1D, 2D and 3D ones among them: a dimension of 1
  // cell and no shrink is a dimension the grid lacks), every shrink 0-2 per side and dimension
  // (0: a side without ghosts). A cell is inner exactly when its stencil, `low[d]` cells below and
  // `high[d]` above along each d, stays inside the interior; the rim is every other cell.
  int partitions = 0;
  std::vector<int> cover;
  for (int nz = 0; nz <= 4; ++nz)
    for (int ny = 0; ny <= 4; ++ny)
      for (int nx = 0; nx <= 4; ++nx)
        for (int shrinks = 0; shrinks < 729; ++shrinks) {  // 3^6: low and high per dimension
          const hs::offset interior{nx, ny, nz};
          hs::offset low, high;
          for (int d = 0, s = shrinks; d < 3; ++d, s /= 9) low[d] = s % 3, high[d] = s / 3 % 3;
          CAPTURE(interior, low, high);
          const hsd::interior_partition p = hsd::partition_interior(interior, low, high);
          cover.assign(static_cast<std::size_t>(nx * ny * nz), 0);
          int wrong = 0;  // cells outside the interior, covered other than once, inner or not by mistake
          auto count = [&](const hsd::cell_box& b) {
            for (int k = b.lo[2]; k < b.hi[2]; ++k)
              for (int j = b.lo[1]; j < b.hi[1]; ++j)
                for (int i = b.lo[0]; i < b.hi[0]; ++i) {
                  if (i < 0 || j < 0 || k < 0 || i >= nx || j >= ny || k >= nz)
                    ++wrong;
                  else
                    ++cover[static_cast<std::size_t>((k * ny + j) * nx + i)];
                }
          };
          count(p.inner);
          std::size_t rim_cells = 0;
          for (const hsd::cell_box& b : p.rim) {
            CHECK_FALSE(b.empty());
            CHECK(b.cells() > 0);
            rim_cells += b.cells();
            count(b);
          }
          CHECK(p.rim.size() <= 6);
          CHECK(p.inner.cells() + rim_cells == cover.size());
          for (int k = 0; k < nz; ++k)
            for (int j = 0; j < ny; ++j)
              for (int i = 0; i < nx; ++i) {
                const hs::offset c{i, j, k};
                bool stencil_inside = true;
                for (int d = 0; d < 3; ++d)
                  stencil_inside = stencil_inside && c[d] - low[d] >= 0 && c[d] + high[d] < interior[d];
                wrong += cover[static_cast<std::size_t>((k * ny + j) * nx + i)] != 1;
                wrong += p.inner.contains(c) != stencil_inside;
              }
          CHECK(wrong == 0);
          ++partitions;
        }
  CHECK(partitions == 125 * 729);
}

// The staging decision of a device executor (detail/batch/gpu_aware.hpp, plain C++ so that it is
// tested here without a GPU): the option first, then HALOSHIFT_GPU_AWARE, then the MPI's own query.
TEST_CASE("device executors: the MPI path decision obeys the option, then HALOSHIFT_GPU_AWARE, then the MPI",
          "[detail][gpu]") {
  namespace batch = hsd::batch;
  using hs::memory::mpi_path;
  const char* saved = std::getenv("HALOSHIFT_GPU_AWARE");
  const std::string before = saved ? saved : "";
  const auto restore = [&] {
    saved ? setenv("HALOSHIFT_GPU_AWARE", before.c_str(), 1) : unsetenv("HALOSHIFT_GPU_AWARE");
  };
  for (auto runtime : {batch::gpu_runtime::cuda, batch::gpu_runtime::rocm}) {
    setenv("HALOSHIFT_GPU_AWARE", "0", 1);  // the option beats the variable
    CHECK(batch::decide_mpi_reach(mpi_path::direct, runtime).direct);
    CHECK(batch::decide_mpi_reach(mpi_path::direct, runtime).why == "plan_options::device_mpi = mpi_path::direct");
    setenv("HALOSHIFT_GPU_AWARE", "1", 1);
    CHECK_FALSE(batch::decide_mpi_reach(mpi_path::staged, runtime).direct);
    CHECK(batch::decide_mpi_reach(mpi_path::detect, runtime).direct);
    CHECK(batch::decide_mpi_reach(mpi_path::detect, runtime).why == "environment: HALOSHIFT_GPU_AWARE=1");
    setenv("HALOSHIFT_GPU_AWARE", "0", 1);
    CHECK_FALSE(batch::decide_mpi_reach(mpi_path::detect, runtime).direct);
    CHECK_THROWS_WITH(batch::decide_mpi_reach(static_cast<mpi_path>(7), runtime),
                      Catch::Contains("plan_options.device_mpi: invalid value 7"));
    setenv("HALOSHIFT_GPU_AWARE", "yes", 1);
    CHECK_THROWS_WITH(batch::decide_mpi_reach(mpi_path::detect, runtime),
                      Catch::Contains("HALOSHIFT_GPU_AWARE is 'yes'") &&
                          Catch::Contains("set it to 1"));
    // Unset (or empty): the MPI says. Debian's Open MPI and MPICH (CI's) are built without GPU support.
    for (const char* value : {static_cast<const char*>(nullptr), ""}) {
      value ? setenv("HALOSHIFT_GPU_AWARE", value, 1) : unsetenv("HALOSHIFT_GPU_AWARE");
      const batch::mpi_reach r = batch::decide_mpi_reach(mpi_path::detect, runtime);
      CAPTURE(r.why);
      CHECK_FALSE(r.direct);
      CHECK((r.why.rfind("MPI", 0) == 0 || r.why.rfind("default: this MPI has no query", 0) == 0));
    }
  }
  // The decision is logged (info) by rank 0 of MPI_COMM_WORLD, naming the executor and the reason.
  setenv("HALOSHIFT_GPU_AWARE", "0", 1);
  const bool was_verbose = hsd::verbose();
  std::vector<std::string> lines;
  auto previous = hs::set_log_sink([&](hs::log_level, std::string_view text) { lines.emplace_back(text); });
  hs::set_verbose(true);
  CHECK_FALSE(batch::mpi_reaches_device(mpi_path::detect, batch::gpu_runtime::cuda, "cuda"));
  hs::set_verbose(was_verbose);
  hs::set_log_sink(std::move(previous));
  restore();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    CHECK(lines == std::vector<std::string>{"cuda executor: messages are staged through pinned host memory "
                                            "(environment: HALOSHIFT_GPU_AWARE=0)"});
}

namespace {
/// A launch as the device kernel runs it (detail/batch/gpu_words.hpp, the code its threads run for
/// each word), word by word on the host: segments found in the table, or in a copy of their first
/// words as each block's shared memory holds them.
void kernel_on_host(const std::vector<hsd::batch::segment>& table, const hsd::batch::launch& l,
                    const hsd::batch::bases& b, bool shared) {
  namespace gpu = hsd::batch::gpu;
  std::vector<std::uint64_t> starts;
  for (std::size_t s = l.first; s < l.first + l.count; ++s) starts.push_back(table[s].first_word);
  const gpu::segment_finder find{table.data(), shared ? starts.data() : nullptr, l.first, l.count};
  const auto all = [&](auto word) {
    for (std::uint64_t w = 0; w < l.words; ++w) word(find(w), w);
  };
  if (l.op == hsd::batch::batch_op::copy)
    gpu::with_copy_type(l, [&]<class W>(W*) {
      all([&](const auto& g, std::uint64_t w) { gpu::copy_word<W>(g, b, w); });
    });
  else
    gpu::with_scalar_type(l, [&]<class T>(T*) {
      all([&](const auto& g, std::uint64_t w) { gpu::combine_word<T>(g, b, w, l.op); });
    });
}
}  // namespace

// The device kernel's arithmetic, where CI has no GPU: the same tables as tests/device/test_gpu.cu
// (every word size, every element type and operation, misaligned combines, empty segments), the
// kernel's word code against the host loop, byte for byte; the tables short (searched in a shared
// copy) and long (searched in the table).
TEST_CASE("device kernel: its word code matches the host loop byte for byte", "[detail][gpu]") {
  namespace batch = hsd::batch;
  std::mt19937_64 rng(99);
  std::vector<std::pair<batch::batch_op, std::pair<batch::scalar_kind, std::uint32_t>>> cases;
  for (std::uint32_t wb : {1u, 2u, 4u, 8u}) cases.push_back({batch::batch_op::copy, {batch::scalar_kind::none, wb}});
  for (const auto& kind : gpu_tables::combine_kinds)
    for (auto op : {batch::batch_op::plus, batch::batch_op::min, batch::batch_op::max}) cases.push_back({op, kind});
  for (const auto& [op, kind] : cases)
    for (int segments : {40, 1100}) {
      batch::launch l;
      l.op = op;
      l.scalar = kind.first;
      const std::vector<batch::segment> table = gpu_tables::table_of(kind.second, segments, rng, l);
      std::vector<std::byte> host[4], kernel[4];
      batch::bases on_host, on_kernel;
      for (int i = 0; i < 4; ++i) {
        host[i] = gpu_tables::values(kind.first, rng);
        kernel[i] = host[i];
        on_host.at[i] = host[i].data();
        on_kernel.at[i] = kernel[i].data();
      }
      batch::run_all(table.data(), l, on_host);
      kernel_on_host(table, l, on_kernel, segments < 1000);
      CAPTURE(int(op), int(kind.first), kind.second, segments, l.words);
      CHECK(l.words > 0);
      CHECK((kernel[1] == host[1] && kernel[3] == host[3]));
    }
  batch::launch bad;
  bad.word_bytes = 3;
  CHECK_THROWS_WITH(batch::gpu::with_copy_type(bad, [](auto*) { return 0; }), Catch::Contains("word_bytes is 3"));
  bad.op = batch::batch_op::plus;
  bad.scalar = batch::scalar_kind::f64;
  CHECK_THROWS_WITH(batch::gpu::with_scalar_type(bad, [](auto*) { return 0; }),
                    Catch::Contains("word_bytes is 3 for a combine of 8-byte elements"));
}

// A particle plan's periodic shift (detail/payload/particle_spaces.hpp): the launch its table builder
// makes, run by the host loop and by the kernel's word code, against shift_by_image, the host path's
// shift, bit for bit. Along z the length is 2^-24 + 2^-50 and odd particles sit at 1: the exact sum
// rounds to the float above 1, a shift added in float (2^-24, a tie) would leave 1.
TEST_CASE("device kernel: the periodic shift launch matches the host loop and shift_by_image", "[detail][gpu]") {
  namespace batch = hsd::batch;
  struct block {
    hs::offset image;
    std::size_t first, count;
  };
  const std::vector<block> blocks = {{{0, 0, 0}, 0, 3}, {{1, 0, 0}, 3, 2}, {{-1, 1, 0}, 5, 4},
                                     {{0, 0, -2}, 9, 0}, {{2, -1, 1}, 9, 3}, {{0, 0, 3}, 12, 2}};
  const hs::position length{4.0, 3.0, std::ldexp(1.0, -24) + std::ldexp(1.0, -50)};
  auto check = [&]<class F, std::size_t N>(std::array<F, N>*) {
    using P = std::array<F, N>;
    std::vector<P> want(14);
    for (std::size_t i = 0; i < want.size(); ++i)
      for (std::size_t d = 0; d < N; ++d)
        want[i][d] = d == 2 && i % 2 ? F(1) : static_cast<F>(0.37 * static_cast<double>(i) - 1.1 + 0.01 * d);
    std::vector<P> host = want, kernel = want;
    for (const block& b : blocks)
      for (std::size_t i = b.first; i < b.first + b.count; ++i) hsd::shift_by_image(want[i], b.image, length);
    const hsd::shift_layout s{1, {sizeof(P)}, {N}, {0}, sizeof(F), batch::scalar_kind_of<F>()};
    auto [bytes, l] = hsd::shift_launch_of(std::span<const block>(blocks), length, s);
    std::vector<batch::segment> table(l.count);
    std::memcpy(table.data(), bytes.data(), l.count * sizeof(batch::segment));
    batch::bases on_host, on_kernel;
    on_host.at[0] = reinterpret_cast<std::byte*>(host.data());
    on_kernel.at[0] = reinterpret_cast<std::byte*>(kernel.data());
    on_host.at[1] = on_kernel.at[1] = bytes.data();
    batch::run_all(table.data(), l, on_host);
    kernel_on_host(table, l, on_kernel, true);
    CAPTURE(sizeof(F), N, l.count, l.words);
    CHECK(l.words == 2 * 1 + 4 * 2 + 3 * 3 + 2 * 1);  // each wrapped coordinate of each ghost, once
    CHECK(std::memcmp(host.data(), want.data(), want.size() * sizeof(P)) == 0);
    CHECK(std::memcmp(kernel.data(), want.data(), want.size() * sizeof(P)) == 0);
  };
  check(static_cast<std::array<float, 3>*>(nullptr));
  check(static_cast<std::array<float, 4>*>(nullptr));
  check(static_cast<std::array<double, 3>*>(nullptr));
}

TEST_CASE("copy_strided_rows copies every row size on every path: in cache, prefetched, far apart", "[detail][rows]") {
  // Row sizes of each fixed-size case, the generic short rows, and the vector rows with and without a
  // tail; pitches of packed rows, in cache, prefetched (under a page, spread past prefetch_span) and a
  // page or more apart (far_word_rows for whole 8-byte words); packing, unpacking and both strided.
  for (const std::size_t bytes : {1, 2, 3, 4, 8, 12, 16, 20, 24, 32, 40, 72})
    for (const std::size_t pitch : {std::size_t{0}, std::size_t{80}, std::size_t{1040}, std::size_t{4104}}) {
      const std::size_t stride = std::max(pitch, bytes);  // 0: packed, one row after another
      const std::size_t repeat =
          stride * 600 > hs::detail::prefetch_span ? 600 : hs::detail::prefetch_span / stride + 2;
      INFO("bytes " << bytes << " stride " << stride << " repeat " << repeat);
      std::vector<unsigned char> strided(stride * repeat + 64), packed(bytes * repeat), back(stride * repeat + 64, 0);
      for (std::size_t i = 0; i < strided.size(); ++i) strided[i] = static_cast<unsigned char>(i * 131 + 7);
      const auto s = static_cast<std::ptrdiff_t>(stride), b = static_cast<std::ptrdiff_t>(bytes);
      hs::detail::copy_strided_rows(packed.data(), strided.data() + 5, bytes, repeat, b, s);  // pack
      std::size_t wrong = 0;
      for (std::size_t r = 0; r < repeat; ++r)
        wrong += std::memcmp(packed.data() + r * bytes, strided.data() + 5 + r * stride, bytes) != 0;
      CHECK(wrong == 0);
      hs::detail::copy_strided_rows(back.data() + 5, packed.data(), bytes, repeat, s, b);  // unpack
      for (std::size_t i = 0; i < back.size(); ++i) {
        const bool in_row = i >= 5 && (i - 5) / stride < repeat && (i - 5) % stride < bytes;
        wrong += back[i] != (in_row ? strided[i] : 0);
      }
      CHECK(wrong == 0);
      std::vector<unsigned char> copy(stride * repeat + 64, 0);
      hs::detail::copy_strided_rows(copy.data() + 5, strided.data() + 5, bytes, repeat, s, s);  // both strided
      CHECK(std::memcmp(copy.data(), back.data(), copy.size()) == 0);
    }
}

// SPDX-License-Identifier: BSD-3-Clause
// The host loop over a batched launch (detail/batch/host_run.hpp: run_words, run_all) and the
// host-threads executor (detail/batch/host_threads.hpp, its std::thread pool; the OpenMP team in
// test_host_threads_openmp.cpp) against a word-by-word reference from the definition of a
// segment (support/segment_tables.hpp): odd row sizes, word sizes 1, 2, 4 and 8, ranges cut
// mid-row, the combining operations, rows far apart (the prefetching loops). Catch2 tag
// [threads] (ctest label threads).
#include "../support/catch.hpp"
#include "../support/segment_tables.hpp"

#include <haloshift/detail/batch/host_threads.hpp>
#include <haloshift/haloshift.hpp>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

namespace hb = haloshift::detail::batch;
namespace st = segment_tables;

/// Runs words [begin, end) of a copy of `c` with run_words and compares with the reference.
void check_range(const st::launch_case& c, std::uint64_t begin, std::uint64_t end) {
  st::launch_case got = c;
  hb::run_words(got.table.data(), got.l, got.b(), begin, end);
  CAPTURE(begin, end, c.l.words, c.l.word_bytes, static_cast<int>(c.l.op), static_cast<int>(c.l.scalar));
  CHECK(got.arrays == st::reference(c, begin, end));
}

/// Launches far apart enough for the prefetching loops (rows spread over more than
/// detail::prefetch_span = 2 MiB): an x face's 8-byte rows at a 1040-byte pitch and a y face's
/// 40-byte rows at a page pitch, packed (`pack`: the source strides) or unpacked (the target
/// strides), copied or summed as doubles.
st::launch_case far_rows(hb::batch_op op, bool pack) {
  st::recipe r{8, op, op == hb::batch_op::copy ? hb::scalar_kind::none : hb::scalar_kind::f64};
  std::mt19937 rng(7);
  st::launch_case c;
  c.arrays.assign(4, std::vector<std::byte>(std::size_t{2100} * 1040 + 64));
  c.arrays[2].resize(38000);  // the staging: the packed rows, consecutive
  c.arrays[3].resize(38000);
  for (auto& a : c.arrays) st::fill(a, r.scalar, 8, rng);
  if (pack)
    c.table = {{8, 0, 1040, 8, 0, 8, 2100, 0, 2}, {16, 16800, 4096, 40, 0, 40, 530, 0, 2}};
  else  // into two arrays: the x face's rows and the y face's would overlap in one
    c.table = {{0, 8, 8, 1040, 0, 8, 2100, 3, 1}, {16800, 16, 40, 4096, 0, 40, 530, 3, 0}};
  std::uint64_t words = 0;
  for (hb::segment& s : c.table) {
    s.first_word = words;
    words += s.row_bytes / 8 * s.repeat;
  }
  c.l = {0, c.table.size(), words, 8, r.op, r.scalar};
  return c;
}

/// The cases every test runs: each recipe a few times, and the far rows.
std::vector<st::launch_case> cases() {
  std::vector<st::launch_case> out;
  std::mt19937 rng(2024);
  for (const st::recipe& r : st::recipes())
    for (int i = 0; i < 3; ++i) out.push_back(st::draw(r, rng));
  for (bool pack : {true, false}) {
    out.push_back(far_rows(hb::batch_op::copy, pack));
    out.push_back(far_rows(hb::batch_op::plus, pack));
  }
  return out;
}

}  // namespace

TEST_CASE("run_words: any range of a launch gives the reference's bytes", "[detail][batch][threads]") {
  std::mt19937 rng(11);
  for (const st::launch_case& c : cases()) {
    const std::uint64_t n = c.l.words;
    check_range(c, 0, n);
    check_range(c, n, n);
    for (int i = 0; i < 6; ++i) {  // ranges cut anywhere, mostly mid-row
      std::uint64_t a = std::uniform_int_distribution<std::uint64_t>(0, n)(rng);
      std::uint64_t b = std::uniform_int_distribution<std::uint64_t>(0, n)(rng);
      check_range(c, std::min(a, b), std::max(a, b));
    }
  }
}

TEST_CASE("run_words: a launch split in shares run in any order is run_all", "[detail][batch][threads]") {
  for (const st::launch_case& c : cases())
    for (std::uint64_t k : {2u, 3u, 7u}) {
      st::launch_case got = c;
      for (std::uint64_t t = k; t-- > 0;)
        hb::run_words(got.table.data(), got.l, got.b(), c.l.words * t / k, c.l.words * (t + 1) / k);
      CAPTURE(k, c.l.words, c.l.word_bytes);
      CHECK(got.arrays == st::reference(c, 0, c.l.words));
      st::launch_case all = c;
      hb::run_all(all.table.data(), all.l, all.b());
      CHECK(all.arrays == got.arrays);
    }
}

TEST_CASE("host_threads (std::thread pool): launches on 1-4 threads give the reference's bytes",
          "[detail][batch][threads]") {
  const std::vector<st::launch_case> all = cases();
  for (int n = 1; n <= 4; ++n) {
    hb::host_threads<hb::thread_pool> e(n, 0);  // every launch threaded, however small
    CAPTURE(n);
    CHECK(std::string(e.name()) == "host threads (std::thread)");
    for (int round = 0; round < 2; ++round)  // the pool woken many times over
      for (const st::launch_case& c : all) {
        st::launch_case got = c;
        e.run(got.table.data(), got.l, got.b());
        e.synchronize();
        CHECK(got.arrays == st::reference(c, 0, c.l.words));
      }
    st::launch_case tiny = all.front();  // fewer words than threads: some shares empty
    tiny.table.resize(1);
    tiny.table[0].repeat = 1;
    tiny.table[0].row_bytes = tiny.l.word_bytes * 2;
    tiny.l.count = 1;
    tiny.l.words = 2;
    st::launch_case got = tiny;
    e.run(got.table.data(), got.l, got.b());
    CHECK(got.arrays == st::reference(tiny, 0, 2));
  }
}

TEST_CASE("host_threads: host memory, copies that are memcpy", "[detail][batch][threads]") {
  const auto e = hb::make_host_threads(2);
  CHECK(e->host_accessible());
  CHECK(e->mpi_reaches_memory());
  void* a = e->allocate(1000);
  void* p = e->allocate_pinned(1000);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % 64 == 0);
  CHECK(reinterpret_cast<std::uintptr_t>(p) % 64 == 0);
  std::vector<unsigned char> in(1000), out(1000);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7);
  e->upload(a, in.data(), 1000);
  e->to_host(p, a, 1000);
  e->to_device(a, p, 0);  // nothing, with no memcpy of a null pointer either
  e->to_device(a, p, 1000);
  e->synchronize();
  e->to_host(out.data(), a, 1000);
  CHECK(out == in);
  e->deallocate(a, 1000);
  e->deallocate_pinned(p, 1000);
}

TEST_CASE("host_threads: pack_threads below 1 is an error naming the option and the value",
          "[detail][batch][threads]") {
  for (int n : {0, -3, 1025}) {
    CAPTURE(n);
    CHECK_THROWS_WITH(hb::make_host_threads(n), Catch::Contains("plan_options::pack_threads is " + std::to_string(n)));
    CHECK_THROWS_AS(hb::thread_pool(n), haloshift::error);
  }
}

TEST_CASE("host_threads: HALOSHIFT_PACK_THREADS_MIN_BYTES and _SPIN_US set the smallest threaded launch and the spin",
          "[detail][batch][threads]") {
  CHECK(hb::threaded_bytes_from_environment() == hb::min_threaded_bytes);
  CHECK(haloshift::detail::spin_from_environment().count() == 1000);
  ::setenv("HALOSHIFT_PACK_THREADS_MIN_BYTES", "0", 1);
  ::setenv("HALOSHIFT_PACK_THREADS_SPIN_US", "0", 1);  // workers block at once
  CHECK(hb::threaded_bytes_from_environment() == 0);
  CHECK(haloshift::detail::spin_from_environment().count() == 0);
  {
    hb::host_threads<hb::thread_pool> e(3);
    for (const st::launch_case& c : cases()) {
      st::launch_case got = c;
      e.run(got.table.data(), got.l, got.b());
      CHECK(got.arrays == st::reference(c, 0, c.l.words));
    }
  }
  ::setenv("HALOSHIFT_PACK_THREADS_MIN_BYTES", "4096", 1);
  CHECK(hb::threaded_bytes_from_environment() == 4096);
  for (const char* bad : {"-1", "12k", " 3", "x"}) {
    ::setenv("HALOSHIFT_PACK_THREADS_MIN_BYTES", bad, 1);
    CHECK_THROWS_WITH(hb::make_host_threads(2),
                      Catch::Contains("HALOSHIFT_PACK_THREADS_MIN_BYTES is '" + std::string(bad) + "'"));
    ::setenv("HALOSHIFT_PACK_THREADS_SPIN_US", bad, 1);
    CHECK_THROWS_WITH(hb::thread_pool(2),
                      Catch::Contains("HALOSHIFT_PACK_THREADS_SPIN_US is '" + std::string(bad) + "'"));
  }
  ::unsetenv("HALOSHIFT_PACK_THREADS_MIN_BYTES");
  ::unsetenv("HALOSHIFT_PACK_THREADS_SPIN_US");
}

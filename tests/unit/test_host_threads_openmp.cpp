// SPDX-License-Identifier: BSD-3-Clause
// The host-threads executor's OpenMP team (detail/batch/host_threads.hpp compiled with -fopenmp:
// tests/CMakeLists.txt compiles this file alone with OpenMP, where the compiler has it) against
// the word-by-word reference of support/segment_tables.hpp; the std::thread pool and run_words
// are tested in test_host_run.cpp, in the same program. Catch2 tag [threads].
#include "../support/catch.hpp"
#include "../support/segment_tables.hpp"

#include <haloshift/detail/batch/host_threads.hpp>
#include <haloshift/haloshift.hpp>

#include <cstdint>
#include <random>
#include <string>

#if !defined(_OPENMP)
#error "this file is compiled with OpenMP (tests/CMakeLists.txt)"
#endif

namespace hb = haloshift::detail::batch;
namespace st = segment_tables;

TEST_CASE("host_threads (OpenMP): make_host_threads picks OpenMP's team, launches give the reference's bytes",
          "[detail][batch][threads]") {
  CHECK(std::string(hb::make_host_threads(2)->name()) == "host threads (OpenMP)");
  CHECK_THROWS_WITH(hb::make_host_threads(0), Catch::Contains("plan_options::pack_threads is 0"));
  std::mt19937 rng(5);
  for (int n = 1; n <= 3; ++n) {
    hb::host_threads<hb::openmp_team> e(n, 0);  // every launch threaded, however small
    for (const st::recipe& r : st::recipes()) {
      const st::launch_case c = st::draw(r, rng);
      st::launch_case got = c;
      e.run(got.table.data(), got.l, got.b());
      CAPTURE(n, r.word_bytes, static_cast<int>(r.op));
      CHECK(got.arrays == st::reference(c, 0, c.l.words));
    }
  }
}

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Catch2 v2 or v3 for the test sources: include this instead of <catch2/catch.hpp>.
// tests/CMakeLists.txt defines HALOSHIFT_CATCH2_V3 when it found Catch2 3. The tests use
// TEST_CASE, SECTION, CHECK/REQUIRE, CHECK_THROWS_AS/WITH, INFO, CAPTURE, TEMPLATE_LIST_TEST_CASE,
// Approx, Catch::Contains (a string matcher) and Catch::Detail::stringify; v3 moved or renamed
// the last three, so they are brought back here under their v2 names.

#if defined(HALOSHIFT_CATCH2_V3)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/catch_tostring.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>

using Catch::Approx;

namespace Catch {
/// v2's string matcher Catch::Contains is Catch::Matchers::ContainsSubstring in v3.
inline Matchers::StringContainsMatcher Contains(const std::string& text,
                                                CaseSensitive sensitivity = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(text, sensitivity);
}
}  // namespace Catch
#else
#include <catch2/catch.hpp>
#endif

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The test programs' operator new counts its calls while `counting` is on (counting_new.cpp): how the
// zero-allocation tests see every allocation of the code they run, the library's and the standard library's.
#include <atomic>

namespace allocations {
extern std::atomic<bool> counting;
extern std::atomic<long> count;
}  // namespace allocations

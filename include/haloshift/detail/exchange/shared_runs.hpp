// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file shared_runs.hpp
/// @brief The exchange runs most codes instantiate, compiled once in libhaloshift: a selective
/// plan's run (fields, particles) of one array of float, double, int or long elements,
/// forwards or combining with std::plus<>, take_min or take_max, and of particle positions
/// forwards. With HALOSHIFT_COMPILED they are `extern template` (their members that run rounds
/// are not inline there: exchange_run_rounds.hpp), so a code's file generates none of them;
/// header-only, nothing here.

#include "../../payload/reductions.hpp"
#include "../compiled.hpp"
#include "arrays.hpp"
#include "exchange_run.hpp"
#include "run_markers.hpp"
#include "selected_neighbor_engine.hpp"

#if HALOSHIFT_SHARES_INSTANCES
#include <array>
#include <functional>

namespace haloshift::detail {

/// One element type, forwards and with each reduction libhaloshift compiles.
#define HALOSHIFT_SHARED_RUNS(T)                                                                   \
  HALOSHIFT_INSTANCE class exchange_run<arrays<T>, store_arrivals, selected_neighbor_engine>;      \
  HALOSHIFT_INSTANCE class exchange_run<arrays<T>, std::plus<>, selected_neighbor_engine>;         \
  HALOSHIFT_INSTANCE class exchange_run<arrays<T>, take_min, selected_neighbor_engine>;            \
  HALOSHIFT_INSTANCE class exchange_run<arrays<T>, take_max, selected_neighbor_engine>;
HALOSHIFT_SHARED_RUNS(float)
HALOSHIFT_SHARED_RUNS(double)
HALOSHIFT_SHARED_RUNS(int)
HALOSHIFT_SHARED_RUNS(long)
#undef HALOSHIFT_SHARED_RUNS
HALOSHIFT_INSTANCE class exchange_run<arrays<std::array<double, 3>>, store_arrivals, selected_neighbor_engine>;

}  // namespace haloshift::detail
#endif

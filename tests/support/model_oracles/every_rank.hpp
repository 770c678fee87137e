// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file every_rank.hpp
/// @brief Test oracle: the max-plus engine with every rank its own class, the
/// reference simulate()'s classes of ranks are tested against
/// (tests/unit/test_model_classes.cpp).

#include <haloshift/auto.hpp>

namespace haloshift::detail {

/// Every rank simulated on its own, each message's bytes summed block by block and every
/// rendezvous transfer on the general path (no per-dimension tables, no runs of one colouring): the
/// reference the classes and the table transfers are tested against.
inline simulation_result simulate_every_rank(const grid_shape& grid, const schedule& s, const simulation_setup& setup) {
  check_simulation_setup("simulate", grid, setup);
  return maxplus_engine(grid, s, setup, rank_classes::each_rank(grid), -1).run();
}
}  // namespace haloshift::detail

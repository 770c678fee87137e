// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file tags.hpp
/// @brief The message tags haloshift uses on a grid's communicator.

namespace haloshift::detail {

/// A plan's transfers are tagged 0 to 32765: each plan claims, when it is
/// built, a range as wide as its schedule's widest round after the range of
/// the plan built before it (grid_context::claim_plan_tags; ranges wrap
/// around), and tags a round's transfer `i` with the range's `i`-th tag. So
/// the exchanges of different plans in flight at the same time (split phase)
/// never take each other's messages, and the rounds of one plan are kept
/// apart by MPI's non-overtaking order. The sparse exchange (migrate's NBX,
/// which receives from any source) uses 32766 and 32767 in turn, so a rank
/// that has finished one sparse exchange and starts the next can never feed a
/// rank still draining the previous one, and no plan message can be taken for
/// a sparse one. All within the 32767 that every MPI guarantees (MPI_TAG_UB).
inline constexpr int plan_tag_count = 32766;
/// The first of the sparse exchange's two alternating tags.
inline constexpr int sparse_exchange_tag = 32766;

}  // namespace haloshift::detail

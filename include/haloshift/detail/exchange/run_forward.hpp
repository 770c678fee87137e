// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file run_forward.hpp
/// @brief A blocking forward exchange of one array, as plan builds run them.

#include <mpi.h>

#include <cstring>

#include "exchange_run.hpp"

namespace haloshift::detail {

/// A blocking forward exchange inside a plan build (the counts, the keys):
/// `own` is copied into its slot of `buffer`, then every round runs.
template <class T>
void run_forward(const program& p, MPI_Comm comm, const T* own, T* buffer, exchange_resources& res) {
  const block_slot& own_slot = p.layout.slots()[p.layout.own()];
  if (own_slot.count) std::memcpy(buffer + own_slot.first, own, own_slot.count * sizeof(T));
  exchange_run<arrays<T>>(p, comm, protocol::overlapping, res, arrays<T>{{buffer}}, false).advance(true);
}
}  // namespace haloshift::detail

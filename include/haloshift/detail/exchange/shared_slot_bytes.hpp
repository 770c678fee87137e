// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file shared_slot_bytes.hpp
/// @brief The largest message the shared-memory path carries (shared_window.hpp), apart, so that
/// the model (which prices larger ones as MPI messages) needs no MPI header for it.

#include <cstddef>

namespace haloshift::detail {

/// Bytes a message may have to go through the window: larger ones go by MPI
/// (whose single copy through its own shared memory costs as much by then), so
/// a window holds a few MiB per rank at most. Both ends of a message know its
/// size, so they decide alike without telling each other.
inline constexpr std::size_t shared_slot_bytes = 64 * 1024;

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file argument_checks.hpp
/// @brief How an exchange call checks its arguments: on the calling rank, or
/// agreed with its peers so that a mistake on one rank raises on every rank.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../detail/mpi/agreement.hpp"

namespace haloshift {

/// How `forward`, `reverse` and `start_*` of a plan check their arguments
/// (lengths, the halo, an exchange already in flight, a field's shape).
enum class argument_checks {
  /// The environment variable `HALOSHIFT_CHECKS` decides: `collective` or
  /// `local`; unset or empty means `local`.
  from_environment = 0,
  /// On the calling rank, before it communicates: free, but only the rank
  /// with the wrong argument raises; its peers cannot be told and wait for it.
  local = 1,
  /// Agreed per call (one `MPI_Allreduce` on the plan's communicator): a
  /// mistake on one rank raises the same haloshift::error on every rank. For
  /// debugging and for codes that cannot afford a hang.
  collective = 2,
};

namespace detail {

/// The mode `requested` resolves to (the environment read for
/// from_environment), as an agreed integer; -1 for an invalid request, which
/// check_argument_checks() then reports. Never throws: it feeds the values a
/// plan's first agreement compares.
inline std::int64_t resolved_checks(argument_checks requested) noexcept {
  switch (requested) {
    case argument_checks::local:
    case argument_checks::collective:
      return static_cast<std::int64_t>(requested);
    case argument_checks::from_environment: {
      const char* env = std::getenv("HALOSHIFT_CHECKS");
      if (!env || !*env || std::string_view(env) == "local") return static_cast<std::int64_t>(argument_checks::local);
      if (std::string_view(env) == "collective") return static_cast<std::int64_t>(argument_checks::collective);
      return -1;
    }
  }
  return -1;
}

/// Raises naming the option or the environment variable when `requested` does not resolve.
inline void check_argument_checks(argument_checks requested) {
  if (resolved_checks(requested) >= 0) return;
  if (requested == argument_checks::from_environment)
    throw error("HALOSHIFT_CHECKS = \"" + std::string(std::getenv("HALOSHIFT_CHECKS")) +
                "\" is not a mode: use local or collective (or leave it unset)");
  throw error("plan_options.checks: invalid value " + std::to_string(static_cast<long long>(requested)) +
              " (use argument_checks::from_environment, local or collective)");
}

/// Runs `local` (a call's argument checks, raising haloshift::error): on this
/// rank alone, or with `collective` inside an agreement on `comm`, so that a
/// failure on any rank raises on all of them. Nonempty `element_sizes` (the
/// bytes per element of each array the call moves, which a plan that moves
/// any type cannot know when built) must then also agree, array by array
/// (mpi::append_element_sizes): one collective per call in all.
template <class Local>
void check_call(MPI_Comm comm, bool collective, Local&& local, std::span<const std::size_t> element_sizes = {}) {
  if (!collective) {
    local();
  } else if (element_sizes.empty()) {
    mpi::agree(comm, std::forward<Local>(local));
  } else {
    std::vector<mpi::agreed_value> values;
    mpi::append_element_sizes(element_sizes, values,
                              {"the number of arrays", "the element size (bytes)", "the element size (bytes) of array"});
    mpi::agree(comm, std::forward<Local>(local), values);
  }
}

}  // namespace detail
}  // namespace haloshift

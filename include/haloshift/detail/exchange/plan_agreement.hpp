// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file plan_agreement.hpp
/// @brief What every plan kind's first collective agrees: the requested
/// strategy (by name, without regard to case), the options and the element size.

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../../error.hpp"
#include "../../exchange/argument_checks.hpp"
#include "../../exchange/plan_options.hpp"
#include "../../strategy_registry.hpp"
#include "../batch/gpu_aware.hpp"
#include "../batch/host_threads.hpp"
#include "../compiled.hpp"
#include "../mpi/agreement.hpp"
#include "../mpi/check.hpp"

namespace haloshift::detail {

/// The strategy a plan is built from: a registry entry, or a name looked up
/// (inside the build's first collective check, so that an unknown name on one
/// rank raises the same error on all).
struct strategy_request {
  std::string_view name;
  std::optional<detail::strategy_entry> known;
  /// The entry; `selective` for a particle, field or selective plan (what an unknown name's error lists).
  detail::strategy_entry resolve(bool selective = false) const {
    return known ? *known : detail::strategy_registry::instance().find(name, selective);
  }
};

/// Hash of a requested strategy name without regard to case: what ranks agree on.
inline std::int64_t requested_hash(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name_hash(lower);
}
/// A requested strategy as an agreed value: compared without regard to case,
/// named as requested when ranks differ ("got Shift on rank 0 and SingleHop
/// on rank 1"). `name` must outlive the agreement.
inline mpi::agreed_value strategy_value(std::string_view name) {
  return mpi::text_value("strategy", name, requested_hash(name));
}

/// Raises unless MPI was initialized for calls from a plan's background thread (plan_options::background).
inline void check_background_thread_level() {
  int provided = MPI_THREAD_SINGLE;
  mpi::check(MPI_Query_thread(&provided), "MPI_Query_thread");
  if (provided >= MPI_THREAD_SERIALIZED) return;
  throw error(std::string("plan_options::background is true, but MPI provides thread level ") +
              (provided == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE" : "MPI_THREAD_FUNNELED") +
              ": a background exchange calls MPI from a thread of the plan's own; initialize MPI with "
              "MPI_Init_thread at MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE, or leave background false");
}

/// Raises haloshift::error naming the option and its value when an enum of
/// `options` holds a value outside its enumerators.
inline void check_plan_options(const plan_options& options) {
  if (options.mode != protocol::overlapping && options.mode != protocol::rendezvous)
    throw error("plan_options.mode: invalid protocol value " + std::to_string(static_cast<long long>(options.mode)) +
                " (use protocol::overlapping or protocol::rendezvous)");
  if (options.kind != shell::full && options.kind != shell::eighth)
    throw error("plan_options.kind: invalid shell value " + std::to_string(static_cast<long long>(options.kind)) +
                " (use shell::full or shell::eighth)");
  check_pattern(options.pattern, "plan_options.pattern");
  check_argument_checks(options.checks);
  batch::check_pack_threads(options.pack_threads);
  batch::check_mpi_path(options.device_mpi);
  if (options.messages != field_messages::automatic && options.messages != field_messages::per_neighbor &&
      options.messages != field_messages::per_field)
    throw error("plan_options.messages: invalid field_messages value " +
                std::to_string(static_cast<long long>(options.messages)) +
                " (use field_messages::automatic, field_messages::per_neighbor or field_messages::per_field)");
  if (options.background) check_background_thread_level();
}

/// What must be equal on all ranks for a plan: checked collectively when it is built.
HALOSHIFT_BUILDER std::vector<mpi::agreed_value> agreed_plan_values(const offset& k, const plan_options& options,
                                                                    std::string_view strategy,
                                                                    std::size_t element_size);
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER std::vector<mpi::agreed_value> agreed_plan_values(const offset& k, const plan_options& options,
                                                                    std::string_view strategy,
                                                                    std::size_t element_size) {
  return {{"k[0]", k[0]},
          {"k[1]", k[1]},
          {"k[2]", k[2]},
          {"shell", static_cast<std::int64_t>(options.kind)},
          {"pattern", static_cast<std::int64_t>(options.pattern)},
          {"protocol", static_cast<std::int64_t>(options.mode)},
          strategy_value(strategy),
          {"sizeof(T)", static_cast<std::int64_t>(element_size)},
          {"team[0]", options.team[0]},
          {"team[1]", options.team[1]},
          {"team[2]", options.team[2]},
          {"checks", resolved_checks(options.checks)},
          {"shared_memory", static_cast<std::int64_t>(options.shared_memory)},
          {"messages", static_cast<std::int64_t>(options.messages)}};
}
#endif

}  // namespace haloshift::detail

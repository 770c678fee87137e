// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file plan_base.hpp
/// @brief What every plan kind holds (block plans, selective plans, and the
/// particle and field plans built on these): the grid's communicator, the
/// strategy's name, the options, whether calls agree their arguments, the
/// in-flight state, and the moved-from and per-call checks over them.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

#include "../../exchange/argument_checks.hpp"
#include "../../exchange/exchange_handle.hpp"
#include "../../exchange/plan_options.hpp"
#include "../../exchange/protocol.hpp"
#include "../../grid/cartesian_grid.hpp"
#include "exchange_run.hpp"

namespace haloshift::detail {

/// The state and checks common to every plan kind. A plan kind derives from
/// it and makes public what its users may call (`using`).
class plan_base {
 public:
  /// Name of the strategy whose schedule the plan runs (for Auto: the one it chose).
  std::string_view strategy() const noexcept { return strategy_; }

 protected:
  plan_base(const cartesian_grid& grid, std::string_view strategy, const plan_options& options)
      : context_(grid.context()),
        strategy_(strategy),
        options_(options),
        collective_checks_(resolved_checks(options.checks) == static_cast<std::int64_t>(argument_checks::collective)) {
    if (options.background) resources_->background = std::make_unique<background_thread>();
  }
  /// An empty plan, never built (a plan kind's default constructor): it holds no state, so every
  /// call that needs one raises as for a moved-from plan, naming `builder`, the call that builds
  /// one, until a built plan is assigned to it.
  explicit plan_base(const char* builder) : resources_(nullptr), builder_(builder) {}

  /// The protocol the plan was built with.
  protocol mode() const noexcept { return options_.mode; }
  /// Whether an exchange of this plan is in flight (started, not yet waited for).
  bool busy() const noexcept { return resources_ && resources_->busy; }

  /// Runs `local`, a call's argument checks: on this rank, or agreed with
  /// every rank when the plan was built with collective argument checks
  /// (plan_options::checks), so that a failure anywhere raises everywhere.
  /// `element_sizes`, the bytes per element of each of the call's arrays,
  /// are agreed too, array by array. Raises if the plan was moved from or never
  /// built (on this rank only: it has no peers left).
  template <class Local>
  void check_call(const char* call, Local&& local, std::initializer_list<std::size_t> element_sizes = {}) const {
    check_built(call);
    detail::check_call(communicator(), collective_checks_, std::forward<Local>(local),
                       std::span<const std::size_t>(element_sizes.begin(), element_sizes.size()));
  }
  /// Raises naming `call` when the plan was moved from (its in-flight state went with it) or never built.
  void check_built(const char* call) const { check_not_moved(resources_ != nullptr, call, builder_); }

  /// The grid's duplicate communicator, unchecked (see check_built).
  MPI_Comm communicator() const noexcept { return context_->comm.get(); }

  std::shared_ptr<grid_context> context_;  ///< the grid's communicator, shared: no duplicate per plan
  std::string_view strategy_;
  plan_options options_;
  bool collective_checks_ = false;  ///< agree the arguments of every call (plan_options::checks)
  /// Busy flag, requests and staging, sized at build; behind a pointer so that moving the plan
  /// keeps what an exchange in flight uses in place.
  std::unique_ptr<exchange_resources> resources_ = std::make_unique<exchange_resources>();
  /// Set only in an empty plan (never built): the call that builds one, for check_built's message.
  /// Assigning a built plan over it clears it; a plan moved from keeps its own (none).
  const char* builder_ = nullptr;
};

}  // namespace haloshift::detail

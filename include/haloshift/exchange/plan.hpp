// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file plan.hpp
/// @brief Plans: build once (collective, validated on all ranks), then
/// exchange cheaply and repeatedly with forward / reverse.

#include <algorithm>
#include <cctype>
#include <cstring>
#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "../grid/cartesian_grid.hpp"
#include "../detail/checked_size.hpp"
#include "../grid/neighborhood.hpp"
#include "../grid/nodes.hpp"
#include "../detail/mpi/agreement.hpp"
#include "../detail/mpi/communicator.hpp"
#include "../strategy.hpp"
#include "../strategy_registry.hpp"
#include "../auto_hook.hpp"
#include "argument_checks.hpp"
#include "exchange_handle.hpp"
#include "../detail/exchange/exchange_run.hpp"
#include "halo.hpp"
#include "../detail/exchange/neighbor_collective.hpp"
#include "../detail/exchange/plan_base.hpp"
#include "../detail/exchange/plan_builder.hpp"
#include "../detail/exchange/own_block_copies.hpp"
#include "../detail/exchange/program.hpp"
#include "../detail/batch/ops.hpp"
#include "../memory/spaces.hpp"
#include "plan_options.hpp"
#include "protocol.hpp"

namespace haloshift {

namespace detail {
/// A reverse's last step: the combined own block back into the caller's array.
template <class T>
struct copy_back {
  const T* from;
  std::span<T> to;
  void operator()() const noexcept {
    if (!to.empty()) std::memcpy(to.data(), from, to.size_bytes());
  }
};
}  // namespace detail

/// A compiled exchange for one rank: which blocks travel where, with which
/// sizes. Built collectively by make_plan; forward and reverse may then be
/// called any number of times (collectively, in the same order on all ranks).
template <transferable T>
class plan : public detail::plan_base {
 public:
  /// The neighbourhood the plan imports.
  const haloshift::range& range() const noexcept { return range_; }
  /// The protocol the plan was built with.
  using plan_base::mode;
  /// Elements this rank contributes (fixed for the plan's lifetime; 0 once moved from).
  std::size_t local_count() const noexcept {
    return program_ ? program_->layout.slots()[program_->layout.own()].count : 0;
  }
  /// The compiled program: message peers, slots and counts (for inspection and tests).
  const detail::program& details() const {
    check_built("details");
    return *program_;
  }

  /// An empty halo shaped for this plan, to be filled by forward.
  halo<T> make_halo() const {
    check_built("make_halo");
    return halo<T>(program_);
  }

  /// An empty halo in node-shared memory (as a shared_array): on the shared-memory path
  /// (plan_options::shared_memory) the ranks of this rank's node copy the blocks it sends them
  /// straight out of it, and it packs nothing (zero copy; docs/node-aware.md). Collective over
  /// the grid, as destroying it is: make and destroy such halos in one order on every rank.
  halo<T> make_shared_halo() const {
    check_built("make_shared_halo");
    const std::size_t bytes = detail::checked_mul(program_->layout.total(), sizeof(T), "make_shared_halo");
    return halo<T>(program_, std::make_unique<detail::node_segment>(detail::nodes_of(*context_), bytes));
  }

  /// The handle start_forward returns.
  using forward_handle =
      exchange_handle<detail::exchange_run<detail::arrays<T>, detail::store_arrivals, detail::neighbor_engine>>;
  /// The handle start_reverse returns.
  template <class Op>
  using reverse_handle =
      exchange_handle<detail::exchange_run<detail::arrays<T>, Op, detail::neighbor_engine>, detail::copy_back<T>>;

  /// Starts a ghost fill: every rank's `mine` is copied into `out`'s own
  /// block and sent on its way; wait() on the handle leaves every neighbour's
  /// block in `out`. `out` is off-limits until then (`mine` is not: it was copied).
  forward_handle start_forward(std::span<const T> mine, halo<T>& out) {
    check_call("start_forward", [&] {
      detail::check_idle(resources_->busy, "start_forward");
      check_mine(mine.size());
      check_halo(out);
    });
    T* buffer = out.buffer_.data();
    if (!mine.empty()) std::memcpy(buffer + own_slot().first, mine.data(), mine.size_bytes());
    return forward_handle(
        {*program_, comm(), options_.mode, *resources_, detail::arrays<T>{{buffer}}, false, {}, engine_.get()},
        *resources_);
  }
  /// Ghost fill: every rank's `mine` reaches every rank within range (start_forward(...).wait()).
  void forward(std::span<const T> mine, halo<T>& out) { start_forward(mine, out).wait(); }
  /// Ghost fill into a new halo (make_halo() then forward(mine, halo)).
  halo<T> forward(std::span<const T> mine) {
    check_built("forward");
    halo<T> out = make_halo();
    forward(mine, out);
    return out;
  }

  /// Starts sending contributions back (see reverse); wait() on the handle
  /// leaves the combined values in `own`. `contributions` and `own` are
  /// off-limits until then.
  template <detail::reduction_for<T> Op = std::plus<>>
  reverse_handle<Op> start_reverse(halo<T>& contributions, std::span<T> own, Op op = {}, const T& identity = T{}) {
    check_call("start_reverse", [&] {
      detail::check_idle(resources_->busy, "start_reverse");
      check_mine(own.size());
      check_halo(contributions);
    });
    T* buffer = contributions.buffer_.data();
    const auto& slots = program_->layout.slots();
    for (std::size_t s = 0; s < slots.size(); ++s)
      if (!slots[s].visible && static_cast<int>(s) != program_->layout.own())
        std::fill_n(buffer + slots[s].first, slots[s].count, identity);
    std::copy(own.begin(), own.end(), buffer + own_slot().first);
    return reverse_handle<Op>({*program_, comm(), options_.mode, *resources_, detail::arrays<T>{{buffer}}, true,
                               std::move(op), engine_.get()},
                              *resources_, detail::copy_back<T>{buffer + own_slot().first, own});
  }
  /// An empty halo whose buffer lives in device space `space` (allocated there, released there
  /// when the halo goes), for forward and reverse with the same space.
  template <detail::device_space Space>
  halo<T> make_halo(const Space&) const {
    check_built("make_halo");
    return halo<T>(program_, detail::memory_of<Space>());
  }
  /// start_forward of `mine` in device memory into a halo made by make_halo(space): every copy
  /// runs on the space's executor, the host touches neither. With a stream in `space`, the copy of
  /// `mine` and the packing wait for the work already on it, and wait() returns with the
  /// unpacking still on it (docs/gpu.md, "Streams"); `mine` is read on the stream before the packing.
  template <detail::device_space Space>
  forward_handle start_forward(const Space& space, std::span<const T> mine, halo<T>& out) {
    check_space_call("start_forward", mine.size(), out, &detail::space_key<Space>);
    const detail::own_block_copies<T> copies(batches<Space>(), program_->layout);
    void* stream = detail::stream_of(space);
    copies.copy_in(mine.data(), out.buffer_.data(), stream);
    if (program_->rounds.empty() && !stream) copies.synchronize();  // no round ends with a wait
    return start_batched<Space>(stream, false, detail::store_arrivals{}, out.buffer_.data());
  }
  /// forward of `mine` in device memory into a halo made by make_halo(space).
  template <detail::device_space Space>
  void forward(const Space& space, std::span<const T> mine, halo<T>& out) {
    start_forward(space, mine, out).wait();
  }
  /// forward of `mine` in device memory into a new halo in `space` (make_halo(space), then forward).
  template <detail::device_space Space>
  halo<T> forward(const Space& space, std::span<const T> mine) {
    check_built("forward");
    halo<T> out = make_halo(space);
    forward(space, mine, out);
    return out;
  }
  /// start_reverse of a halo made by make_halo(space) onto `own` in device memory: the same
  /// result as on the host, every copy and combine on the space's executor. `op` is std::plus<>,
  /// take_min or take_max and `T` arithmetic (what a device combines).
  template <detail::device_space Space, detail::reduction_for<T> Op = std::plus<>>
  auto start_reverse(const Space& space, halo<T>& contributions, std::span<T> own, Op op = {},
                     const T& identity = T{}) {
    static_assert(detail::batch::executor_combines<Op, T>(),
                  "reverse in device memory combines arithmetic element types with std::plus<>, take_min or take_max");
    check_space_call("start_reverse", own.size(), contributions, &detail::space_key<Space>);
    detail::own_block_copies<T> copies(batches<Space>(), program_->layout);
    void* stream = detail::stream_of(space);
    T* buffer = contributions.buffer_.data();
    copies.fill_transit(buffer, identity, stream);
    copies.copy_in(own.data(), buffer, stream);
    return start_batched<Space>(stream, true, std::move(op), buffer,
                                detail::own_block_out<T>{copies, buffer, own.data(), stream});
  }
  /// reverse of a halo made by make_halo(space) onto `own` in device memory.
  template <detail::device_space Space, detail::reduction_for<T> Op = std::plus<>>
  void reverse(const Space& space, halo<T>& contributions, std::span<T> own, Op op = {}, const T& identity = T{}) {
    start_reverse(space, contributions, own, std::move(op), identity).wait();
  }

  /// Contributions back: `contributions` (a halo of this plan whose blocks
  /// hold values for the boxes they came from) is summed with `op` onto the
  /// owners: on return every rank's `own[i]` is its old value op every
  /// holder's contribution for element `i`. Forwarders combine on the way,
  /// so `contributions` is used as the accumulator and is left holding
  /// partial sums. `op` must be associative and commutative, and `identity`
  /// its neutral element (strategies that move blocks beyond the range, like
  /// TeamShift, start those transit blocks at `identity`).
  template <detail::reduction_for<T> Op = std::plus<>>
  void reverse(halo<T>& contributions, std::span<T> own, Op op = {}, const T& identity = T{}) {
    start_reverse(contributions, own, std::move(op), identity).wait();
  }

 private:
  friend struct detail::plan_builder;

  plan(const cartesian_grid& grid, std::string_view strategy, const haloshift::range& r, const plan_options& options)
      : plan_base(grid, strategy, options), range_(r) {}

  MPI_Comm comm() const noexcept { return communicator(); }

  const detail::block_slot& own_slot() const { return program_->layout.slots()[program_->layout.own()]; }
  void check_mine(std::size_t n) const {
    if (n != local_count())
      throw error("forward/reverse: the local data has " + std::to_string(n) + " elements but the plan was built for " +
                  std::to_string(local_count()));
  }
  /// Raises unless `h` was made by this plan in memory space `space` (its key; null: host memory).
  void check_halo(const halo<T>& h, const void* space = nullptr) const {
    if (h.program_ != program_)
      throw error("forward/reverse: the halo was not made by this plan (use plan.make_halo())");
    if (h.buffer_.space() == space) return;
    if (!space)
      throw error(
          "forward/reverse: the halo lives in device memory (plan.make_halo(space)): pass its space first, "
          "forward(space, mine, halo)");
    throw error(std::string("forward/reverse: the call names a device space but the halo lives in ") +
                (h.buffer_.space() ? "another one" : "host memory") + ": make it with plan.make_halo(space)");
  }
  /// The checks of a call in a device space (`call`: its name; `n`: the own block's elements).
  void check_space_call(const char* call, std::size_t n, const halo<T>& h, const void* space) {
    check_call(call, [&] {
      detail::check_idle(resources_->busy, call);
      check_mine(n);
      check_halo(h, space);
    });
  }
  /// The batch cache of `Space`'s executor (made on the plan's first exchange in it).
  template <class Space>
  detail::batch::batch_cache& batches() {
    static constexpr char key = 0;  // one per space type
    return resources_->batches(&key, 0, [&] { return Space::make_executor(options_.device_mpi); });
  }
  /// Starts the program on `buffer` through `Space`'s executor, forwards or `backward` (combining
  /// with `op`), ordered on `stream` when it is not null; `then` runs once it completes.
  template <class Space, class Op, class Then = detail::no_epilogue>
  exchange_handle<detail::exchange_run<detail::arrays<T>, Op, detail::neighbor_engine>, Then> start_batched(
      void* stream, bool backward, Op op, T* buffer, Then then = {}) {
    const detail::batch::array_shape shape[] = {{sizeof(T), alignof(T)}};
    detail::batch::batch_run b = batches<Space>().prepare(*program_, backward, shape, engine_ != nullptr,
                                                                   resources_->window != nullptr);
    b.at.at[0] = reinterpret_cast<std::byte*>(buffer);
    b.kinds[0] = detail::batch::scalar_kind_of<T>();
    if constexpr (!std::is_same_v<Op, detail::store_arrivals>) b.op = detail::batch::op_kind<Op>::value;
    b.stream = stream;
    detail::exchange_run<detail::arrays<T>, Op, detail::neighbor_engine> run(*program_, comm(), options_.mode,
                                                                             *resources_, detail::arrays<T>{{buffer}},
                                                                             backward, std::move(op), engine_.get());
    run.batched(b);
    return {std::move(run), *resources_, std::move(then)};
  }

  haloshift::range range_;
  std::shared_ptr<const detail::program> program_;
  std::unique_ptr<detail::neighbor_engine> engine_;  ///< set for NeighborAlltoall
};

/// Builds a plan of strategy `S` for `local_count` elements of `T` per rank
/// and range `k` per dimension (0 along dimensions the grid lacks). Collective:
/// checks on every rank that the arguments are valid and that `k`, the
/// strategy, the options and `sizeof(T)` agree, and raises the same
/// haloshift::error on all ranks otherwise. Then exchanges the element counts
/// once (skipped when all ranks give the same count).
template <strategy S, transferable T>
plan<T> make_plan(const cartesian_grid& grid, const offset& k, std::size_t local_count,
                  const plan_options& options = {}) {
  return detail::plan_builder::build<T>(
      grid, {k, [&] { return make_range(grid.shape(), k, options.kind, options.pattern); }, local_count}, options,
      {S::name, detail::entry_of<S>()});
}

/// Range `k >= 1` along every dimension of the grid.
template <strategy S, transferable T>
plan<T> make_plan(const cartesian_grid& grid, int k, std::size_t local_count, const plan_options& options = {}) {
  const offset kk{k, k, k};
  return detail::plan_builder::build<T>(
      grid, {kk, [&] { return make_range(grid.shape(), k, options.kind, options.pattern); }, local_count}, options,
      {S::name, detail::entry_of<S>()});
}

/// The strategy named at run time (any registered name, without regard to
/// case: "shift", "SingleHop", ...; "Auto" once `<haloshift/auto.hpp>` is
/// included). The plan's type does not depend on the strategy, so this
/// instantiates the plan code once. Collective like `make_plan<S>`; an unknown
/// or differing name raises the same error on every rank.
template <transferable T>
plan<T> make_plan(const cartesian_grid& grid, std::string_view strategy, const offset& k, std::size_t local_count,
                  const plan_options& options = {}) {
  auto make = [&] { return make_range(grid.shape(), k, options.kind, options.pattern); };
  if (detail::strategy_registry::same_name(strategy, "Auto"))
    return detail::plan_builder::build_auto<T>(grid, k, make, local_count, options);
  return detail::plan_builder::build<T>(grid, {k, make, local_count}, options, {strategy, std::nullopt});
}
/// The strategy named at run time, the same `k` along every dimension.
template <transferable T>
plan<T> make_plan(const cartesian_grid& grid, std::string_view strategy, int k, std::size_t local_count,
                  const plan_options& options = {}) {
  auto make = [&] { return make_range(grid.shape(), k, options.kind, options.pattern); };
  if (detail::strategy_registry::same_name(strategy, "Auto"))
    return detail::plan_builder::build_auto<T>(grid, offset{k, k, k}, make, local_count, options);
  const offset kk{k, k, k};
  return detail::plan_builder::build<T>(grid, {kk, make, local_count}, options, {strategy, std::nullopt});
}

/// One-shot exchange: builds a plan and runs forward once. `S` is a strategy or Auto.
template <detail::strategy_or_auto S, transferable T>
halo<T> exchange(const cartesian_grid& grid, int k, std::span<const T> data, const plan_options& options = {}) {
  return make_plan<S, T>(grid, k, data.size(), options).forward(data);
}
/// One-shot exchange with `k` per dimension.
template <detail::strategy_or_auto S, transferable T>
halo<T> exchange(const cartesian_grid& grid, const offset& k, std::span<const T> data,
                 const plan_options& options = {}) {
  return make_plan<S, T>(grid, k, data.size(), options).forward(data);
}
/// One-shot exchange of a block in device memory: the halo returned lives in `space` too.
template <detail::strategy_or_auto S, transferable T, detail::device_space Space>
halo<T> exchange(const Space& space, const cartesian_grid& grid, int k, std::span<const T> data,
                 const plan_options& options = {}) {
  return make_plan<S, T>(grid, k, data.size(), options).forward(space, data);
}
/// One-shot exchange of a vector's elements.
template <detail::strategy_or_auto S, transferable T>
halo<T> exchange(const cartesian_grid& grid, int k, const std::vector<T>& data, const plan_options& options = {}) {
  return exchange<S, T>(grid, k, std::span<const T>(data), options);
}

}  // namespace haloshift

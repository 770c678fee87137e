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

#include "../grid/cartesian_grid.hpp"
#include "../detail/checked_size.hpp"
#include "../grid/neighborhood.hpp"
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
#include "../detail/exchange/program.hpp"
#include "protocol.hpp"

namespace haloshift {

namespace detail {
struct plan_builder;

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

/// Options of a plan; they must be equal on all ranks.
struct plan_options {
  /// Point-to-point protocol: overlapping (MPI_Isend/MPI_Irecv) or rendezvous (MPI_Ssend).
  protocol mode = protocol::overlapping;
  /// Full neighbourhood or eighth shell.
  shell kind = shell::full;
  /// TeamShift's team size per dimension (0: TeamShift chooses); ignored by the other strategies.
  offset team{0, 0, 0};
  /// How forward, reverse and start check their arguments: locally, or agreed
  /// per call so that a mistake on one rank raises on all (argument_checks.hpp).
  argument_checks checks = argument_checks::from_environment;
};

/// A compiled exchange for one rank: which blocks travel where, with which
/// sizes. Built collectively by make_plan; forward and reverse may then be
/// called any number of times (collectively, in the same order on all ranks).
template <transferable T>
class plan {
 public:
  /// Name of the strategy whose schedule this plan runs.
  std::string_view strategy() const noexcept { return strategy_; }
  /// The neighbourhood the plan imports.
  const haloshift::range& range() const noexcept { return range_; }
  /// The protocol the plan was built with.
  protocol mode() const noexcept { return options_.mode; }
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
    check_built("start_forward");
    detail::check_call(comm(), collective_checks_, [&] {
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
    check_built("start_reverse");
    detail::check_call(comm(), collective_checks_, [&] {
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

  plan(const cartesian_grid& grid, std::string_view strategy, const haloshift::range& r, plan_options options)
      : context_(grid.context()),
        strategy_(strategy),
        range_(r),
        options_(options),
        collective_checks_(detail::resolved_checks(options.checks) ==
                           static_cast<std::int64_t>(argument_checks::collective)) {}

  MPI_Comm comm() const noexcept { return context_->comm.get(); }

  const detail::block_slot& own_slot() const { return program_->layout.slots()[program_->layout.own()]; }
  void check_built(const char* call) const {
    detail::check_not_moved(program_ != nullptr, call);
  }
  void check_mine(std::size_t n) const {
    if (n != local_count())
      throw error("forward/reverse: the local data has " + std::to_string(n) + " elements but the plan was built for " +
                  std::to_string(local_count()));
  }
  void check_halo(const halo<T>& h) const {
    if (h.program_ != program_)
      throw error("forward/reverse: the halo was not made by this plan (use plan.make_halo())");
  }

  std::shared_ptr<detail::grid_context> context_;  ///< the grid's communicator, shared: no duplicate per plan
  std::string_view strategy_;
  haloshift::range range_;
  plan_options options_;
  bool collective_checks_ = false;  ///< agree the arguments of every call (plan_options::checks)
  std::shared_ptr<const detail::program> program_;
  /// Staging and requests, sized at build; behind a pointer so that moving the plan keeps them in place.
  std::unique_ptr<detail::exchange_resources> resources_ = std::make_unique<detail::exchange_resources>();
  std::unique_ptr<detail::neighbor_engine> engine_;  ///< set for NeighborAlltoall
};

namespace detail {
template <class S>
inline constexpr bool uses_neighbor_collective = requires {
  requires S::neighbor_collective;
};

/// The strategy a plan is built from: a registry entry, or a name looked up
/// (inside the build's first collective check, so that an unknown name on one
/// rank raises the same error on all).
struct strategy_request {
  std::string_view name;
  std::optional<detail::strategy_entry> known;
  detail::strategy_entry resolve() const { return known ? *known : detail::strategy_registry::instance().find(name); }
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

/// Raises haloshift::error naming the option and its value when an enum of
/// `options` holds a value outside its enumerators.
inline void check_plan_options(const plan_options& options) {
  if (options.mode != protocol::overlapping && options.mode != protocol::rendezvous)
    throw error("plan_options.mode: invalid protocol value " + std::to_string(static_cast<long long>(options.mode)) +
                " (use protocol::overlapping or protocol::rendezvous)");
  if (options.kind != shell::full && options.kind != shell::eighth)
    throw error("plan_options.kind: invalid shell value " + std::to_string(static_cast<long long>(options.kind)) +
                " (use shell::full or shell::eighth)");
  check_argument_checks(options.checks);
}

/// What must be equal on all ranks for a plan: checked collectively when it is built.
inline std::vector<mpi::agreed_value> agreed_plan_values(const offset& k, const plan_options& options,
                                                         std::string_view strategy, std::size_t element_size) {
  return {{"k[0]", k[0]},
          {"k[1]", k[1]},
          {"k[2]", k[2]},
          {"shell", static_cast<std::int64_t>(options.kind)},
          {"protocol", static_cast<std::int64_t>(options.mode)},
          strategy_value(strategy),
          {"sizeof(T)", static_cast<std::int64_t>(element_size)},
          {"team[0]", options.team[0]},
          {"team[1]", options.team[1]},
          {"team[2]", options.team[2]},
          {"checks", resolved_checks(options.checks)}};
}

struct plan_builder {
  /// What a block plan's first agreement reduces besides the agreed values
  /// (see build): the element count, blocks in this rank's halo, blocks in its
  /// largest message.
  struct plan_spreads {
    mpi::spread all[3];
    explicit plan_spreads(std::size_t local_count) { all[0].mine = static_cast<std::int64_t>(local_count); }
  };

  /// Checks a block plan's arguments on every rank and that they agree (the
  /// same agreement as build's, values and spreads alike, so a rank asking
  /// Auto and one asking a strategy meet in the same collective and both
  /// raise). Returns the range and the largest element count of any rank.
  static std::pair<range, std::size_t> validate(const cartesian_grid& grid, const offset& k,
                                                const std::function<range()>& make, std::size_t local_count,
                                                std::size_t element_size, plan_options options,
                                                std::string_view requested) {
    range r;
    plan_spreads spreads(local_count);
    mpi::agree(
        grid.comm(),
        [&] {
          check_plan_options(options);
          r = make();
          check_local_count(local_count, element_size);
        },
        agreed_plan_values(k, options, requested, element_size), spreads.all);
    return {r, static_cast<std::size_t>(spreads.all[0].high)};
  }

  static void check_local_count(std::size_t local_count, std::size_t element_size) {
    if (local_count > static_cast<std::size_t>(INT64_MAX) / element_size)
      throw error("local_count " + std::to_string(local_count) + " is too large");
  }

  template <transferable T>
  static plan<T> build(const cartesian_grid& grid, const offset& k, const std::function<range()>& make,
                       std::size_t local_count, plan_options options, const strategy_request& request) {
    const grid_shape& shape = grid.shape();
    const offset coords = grid.coords();
    detail::program unit;  // the program with one element per block: the structure
    schedule sched;
    detail::strategy_entry s;
    range checked;
    auto values = agreed_plan_values(k, options, request.name, sizeof(T));
    // What may differ across ranks, reduced in the same collective: the element count (equal
    // everywhere: no count exchange) and the structure's extremes (the size checks below).
    plan_spreads spreads(local_count);
    // References, not a structured binding: clang before 16 cannot capture bindings in the lambda below.
    auto& count = spreads.all[0];
    auto& blocks = spreads.all[1];
    auto& message_blocks = spreads.all[2];
    // The first collective of every plan kind is this check, on the grid's communicator: ranks that
    // disagree (even one asking Auto) meet here and raise together before any other communication.
    mpi::agree(grid.comm(),
               [&] {
                 check_plan_options(options);
                 s = request.resolve();
                 checked = make();
                 check_local_count(local_count, sizeof(T));
                 if (s.neighbor_collective && options.mode != protocol::overlapping)
                   throw error(std::string(s.name) +
                               " runs MPI_Neighbor_alltoallv: only protocol::overlapping applies");
                 sched = s.make_schedule(shape, checked, strategy_parameters{options.team});
                 unit = detail::compile(
                     sched, shape, coords, checked, [](const offset&) { return std::size_t{1}; }, s.name);
                 blocks.mine = static_cast<std::int64_t>(unit.layout.total());
                 message_blocks.mine = static_cast<std::int64_t>(largest_message(unit));
               },
               values, spreads.all);
    plan<T> p(grid, s.name, checked, options);
    MPI_Comm comm = p.comm();
    const int tags = grid.context()->claim_plan_tags(widest_round(sched));
    auto compiled = std::make_shared<detail::program>();
    if (count.low == count.high) {
      // Every rank holds local_count elements: the sizes follow from the structure, and the size
      // checks from the extremes every rank now knows (so they fail on all ranks or on none).
      check_sizes<T>(static_cast<std::size_t>(blocks.high), static_cast<std::size_t>(message_blocks.high),
                     local_count);
      *compiled = detail::compile(sched, shape, coords, p.range_, [&](const offset&) { return local_count; }, s.name);
      shift_tags(*compiled, tags);
    } else {
      // Uneven counts travel once along the schedule itself; the sizes then differ per rank, so
      // their checks are agreed.
      std::vector<std::uint64_t> counts(unit.layout.total());
      const std::uint64_t mine = local_count;
      shift_tags(unit, tags);
      run_forward(unit, comm, &mine, counts.data(), *p.resources_);
      auto count_of = [&](const offset& o) -> std::size_t {
        return counts[unit.layout.slots()[unit.layout.find(o)].first];
      };
      mpi::agree(comm, [&] {
        *compiled = detail::compile(sched, shape, coords, p.range_, count_of, s.name);
        check_sizes<T>(compiled->layout.total(), largest_message(*compiled), 1);
      });
      shift_tags(*compiled, tags);
    }
    p.resources_->reserve(*compiled, sizeof(T));
    p.program_ = std::move(compiled);
    if (s.neighbor_collective) {
      mpi::agree(comm, [&] { p.engine_ = std::make_unique<neighbor_engine>(*p.program_, sizeof(T)); });
      p.engine_->connect(comm);
      p.resources_->template staging<std::byte>(p.engine_->staging_bytes(*p.program_, sizeof(T)));
    }
    return p;
  }

  /// Elements in the largest message of `p` (one per block in a unit program).
  static std::size_t largest_message(const detail::program& p) {
    std::size_t largest = 0;
    for (const detail::round_program& r : p.rounds)
      for (const detail::transfer_program& t : r.transfers) largest = std::max({largest, t.send.count, t.recv.count});
    return largest;
  }

  /// Raises when a halo of `elements * per_element` elements of T overflows size_t or a message of
  /// `message * per_element` elements exceeds MPI's int count of bytes.
  template <transferable T>
  static void check_sizes(std::size_t elements, std::size_t message, std::size_t per_element) {
    checked_mul(checked_mul(elements, per_element, "halo size (elements)"), sizeof(T), "halo size (bytes)");
    const std::size_t bytes = checked_mul(checked_mul(message, per_element, "message size (elements)"), sizeof(T),
                                          "message size (bytes)");
    if (bytes > static_cast<std::size_t>(INT_MAX))
      throw error("a message of " + std::to_string(bytes) + " bytes exceeds MPI's int count; reduce local_count or k");
  }

  /// Auto: validate (agreeing on the name "Auto"), let the model layer choose
  /// (collective; rank 0 decides), then build the chosen strategy.
  template <transferable T>
  static plan<T> build_auto(const cartesian_grid& grid, const offset& k, const std::function<range()>& make,
                            std::size_t local_count, plan_options options) {
    const auto [r, largest] = validate(grid, k, make, local_count, sizeof(T), options, "Auto");
    const detail::strategy_choice choice = detail::choose_automatically(
        grid, {.grid = grid.shape(), .r = r, .bytes = static_cast<double>(largest * sizeof(T)), .mode = options.mode,
               .payload = detail::payload_kind::block});
    options.team = choice.team;
    return build<T>(grid, k, make, local_count, options, {choice.entry.name, choice.entry});
  }
};
}  // namespace detail

/// Builds a plan of strategy `S` for `local_count` elements of `T` per rank
/// and range `k` per dimension (0 along dimensions the grid lacks). Collective:
/// checks on every rank that the arguments are valid and that `k`, the
/// strategy, the options and `sizeof(T)` agree, and raises the same
/// haloshift::error on all ranks otherwise. Then exchanges the element counts
/// once (skipped when all ranks give the same count).
template <strategy S, transferable T>
plan<T> make_plan(const cartesian_grid& grid, const offset& k, std::size_t local_count, plan_options options = {}) {
  return detail::plan_builder::build<T>(
      grid, k, [&] { return make_range(grid.shape(), k, options.kind); }, local_count, options,
      {S::name, detail::entry_of<S>()});
}

/// Range `k >= 1` along every dimension of the grid.
template <strategy S, transferable T>
plan<T> make_plan(const cartesian_grid& grid, int k, std::size_t local_count, plan_options options = {}) {
  return detail::plan_builder::build<T>(
      grid, offset{k, k, k}, [&] { return make_range(grid.shape(), k, options.kind); }, local_count, options,
      {S::name, detail::entry_of<S>()});
}

/// The strategy named at run time (any registered name, without regard to
/// case: "shift", "SingleHop", ...; "Auto" once `<haloshift/auto.hpp>` is
/// included). The plan's type does not depend on the strategy, so this
/// instantiates the plan code once. Collective like `make_plan<S>`; an unknown
/// or differing name raises the same error on every rank.
template <transferable T>
plan<T> make_plan(const cartesian_grid& grid, std::string_view strategy, const offset& k, std::size_t local_count,
                  plan_options options = {}) {
  auto make = [&] { return make_range(grid.shape(), k, options.kind); };
  if (detail::strategy_registry::same_name(strategy, "Auto"))
    return detail::plan_builder::build_auto<T>(grid, k, make, local_count, options);
  return detail::plan_builder::build<T>(grid, k, make, local_count, options, {strategy, std::nullopt});
}
/// The strategy named at run time, the same `k` along every dimension.
template <transferable T>
plan<T> make_plan(const cartesian_grid& grid, std::string_view strategy, int k, std::size_t local_count,
                  plan_options options = {}) {
  auto make = [&] { return make_range(grid.shape(), k, options.kind); };
  if (detail::strategy_registry::same_name(strategy, "Auto"))
    return detail::plan_builder::build_auto<T>(grid, offset{k, k, k}, make, local_count, options);
  return detail::plan_builder::build<T>(grid, offset{k, k, k}, make, local_count, options, {strategy, std::nullopt});
}

/// One-shot exchange: builds a plan and runs forward once. `S` is a strategy or Auto.
template <detail::strategy_or_auto S, transferable T>
halo<T> exchange(const cartesian_grid& grid, int k, std::span<const T> data, plan_options options = {}) {
  return make_plan<S, T>(grid, k, data.size(), options).forward(data);
}
/// One-shot exchange with `k` per dimension.
template <detail::strategy_or_auto S, transferable T>
halo<T> exchange(const cartesian_grid& grid, const offset& k, std::span<const T> data, plan_options options = {}) {
  return make_plan<S, T>(grid, k, data.size(), options).forward(data);
}
/// One-shot exchange of a vector's elements.
template <detail::strategy_or_auto S, transferable T>
halo<T> exchange(const cartesian_grid& grid, int k, const std::vector<T>& data, plan_options options = {}) {
  return exchange<S, T>(grid, k, std::span<const T>(data), options);
}

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file plan_builder.hpp
/// @brief How make_plan builds a block plan: one agreement that settles the
/// strategy and the structure, then the sized program, its tags and resources.

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../../auto_hook.hpp"
#include "../../exchange/halo.hpp"
#include "../../exchange/plan_options.hpp"
#include "../../grid/cartesian_grid.hpp"
#include "../../grid/neighborhood.hpp"
#include "../../grid/nodes.hpp"
#include "../../strategy.hpp"
#include "../checked_size.hpp"
#include "../mpi/agreement.hpp"
#include "exchange_run.hpp"
#include "run_forward.hpp"
#include "neighbor_collective.hpp"
#include "plan_agreement.hpp"
#include "program.hpp"

namespace haloshift {

template <transferable T>
class plan;

namespace detail {

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
                                                std::size_t element_size, const plan_options& options,
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

  /// What a block plan's first collective settles: the strategy, the range, its schedule, the
  /// program with one element per block (the structure) and the spreads reduced alongside.
  struct agreed_structure {
    detail::strategy_entry strategy;
    range checked;
    schedule sched;
    detail::program unit;
    plan_spreads spreads;
  };

  /// The first collective of every plan kind, on the grid's communicator: ranks that disagree (even
  /// one asking Auto) meet here and raise together before any other communication. What may differ
  /// across ranks is reduced in the same collective: the element count (equal everywhere: no count
  /// exchange) and the structure's extremes (the size checks of build).
  static agreed_structure agree_structure(const cartesian_grid& grid, const offset& k,
                                          const std::function<range()>& make, std::size_t local_count,
                                          std::size_t element_size, const plan_options& options,
                                          const strategy_request& request) {
    agreed_structure a{{}, {}, {}, {}, plan_spreads(local_count)};
    mpi::agree(grid.comm(),
               [&] {
                 check_plan_options(options);
                 a.strategy = request.resolve();
                 a.checked = make();
                 check_local_count(local_count, element_size);
                 if (a.strategy.neighbor_collective && options.mode != protocol::overlapping)
                   throw error(std::string(a.strategy.name) +
                               " runs MPI_Neighbor_alltoallv: only protocol::overlapping applies");
                 if (!a.strategy.needs_nodes) make_structure(a, grid, options, {});
               },
               agreed_plan_values(k, options, request.name, element_size), a.spreads.all);
    // A node-aware strategy's schedule needs the grid's nodes, which take collectives of their own:
    // computed only now that every rank knows the strategy, then the structure agreed once more.
    if (a.strategy.needs_nodes) {
      const auto node_of = nodes_of(*grid.context()).node_of;
      mpi::agree(grid.comm(), [&] { make_structure(a, grid, options, node_of); }, {}, a.spreads.all);
    }
    return a;
  }

  /// The schedule of `a`'s strategy and its program with one element per block, with their spreads.
  static void make_structure(agreed_structure& a, const cartesian_grid& grid, const plan_options& options,
                             std::shared_ptr<const std::vector<int>> node_of) {
    a.sched = a.strategy.make_schedule(grid.shape(), a.checked,
                                       strategy_parameters{.team = options.team, .node_of = std::move(node_of)});
    a.unit = detail::compile(
        a.sched, grid.shape(), grid.coords(), a.checked, [](const offset&) { return std::size_t{1}; },
        a.strategy.name);
    a.spreads.all[1].mine = static_cast<std::int64_t>(a.unit.layout.total());
    a.spreads.all[2].mine = static_cast<std::int64_t>(largest_message(a.unit));
  }

  /// The program for `local_count` elements of T per block of this rank, its tags shifted by `tags`.
  template <transferable T>
  static detail::program sized_program(agreed_structure& a, const cartesian_grid& grid, std::size_t local_count,
                                       int tags, exchange_resources& resources) {
    const auto& count = a.spreads.all[0];
    const grid_shape& shape = grid.shape();
    detail::program compiled;
    if (count.low == count.high) {
      // Every rank holds local_count elements: the sizes follow from the structure, and the size
      // checks from the extremes every rank now knows (so they fail on all ranks or on none).
      check_sizes<T>(static_cast<std::size_t>(a.spreads.all[1].high), static_cast<std::size_t>(a.spreads.all[2].high),
                     local_count);
      compiled = detail::compile(a.sched, shape, grid.coords(), a.checked, [&](const offset&) { return local_count; },
                                 a.strategy.name);
    } else {
      // Uneven counts travel once along the schedule itself; the sizes then differ per rank, so
      // their checks are agreed.
      std::vector<std::uint64_t> counts(a.unit.layout.total());
      const std::uint64_t mine = local_count;
      shift_tags(a.unit, tags);
      run_forward(a.unit, grid.comm(), &mine, counts.data(), resources);
      auto count_of = [&](const offset& o) -> std::size_t {
        return counts[a.unit.layout.slots()[a.unit.layout.find(o)].first];
      };
      mpi::agree(grid.comm(), [&] {
        compiled = detail::compile(a.sched, shape, grid.coords(), a.checked, count_of, a.strategy.name);
        check_sizes<T>(compiled.layout.total(), largest_message(compiled), 1);
      });
    }
    shift_tags(compiled, tags);
    return compiled;
  }

  /// A block plan's range and element count, in one argument: one by one, with the returned plan,
  /// build's call from an inlined make_plan passed one on the stack, and GCC then gives the user's
  /// function a frame pointer (docs/performance.md, "Including the headers").
  struct blocks {
    const offset& k;
    const std::function<range()>& make;
    std::size_t local_count;
  };

  template <transferable T>
  static plan<T> build(const cartesian_grid& grid, const blocks& b, const plan_options& options,
                       const strategy_request& request) {
    const auto& [k, make, local_count] = b;
    agreed_structure a = agree_structure(grid, k, make, local_count, sizeof(T), options, request);
    plan<T> p(grid, a.strategy.name, a.checked, options);
    MPI_Comm comm = p.comm();
    const int tags = grid.context()->claim_plan_tags(widest_round(a.sched));
    auto compiled = std::make_shared<detail::program>(sized_program<T>(a, grid, local_count, tags, *p.resources_));
    p.resources_->reserve(*compiled, sizeof(T));
    p.program_ = std::move(compiled);
    if (!a.strategy.neighbor_collective) share_node_memory(p.resources_->window, *p.program_, *grid.context(), options);
    if (a.strategy.neighbor_collective) {
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
  /// (collective; rank 0 decides), then build the chosen strategy, on the
  /// shared-memory path where Auto chose it.
  template <transferable T>
  static plan<T> build_auto(const cartesian_grid& grid, const offset& k, const std::function<range()>& make,
                            std::size_t local_count, const plan_options& options) {
    const auto [r, largest] = validate(grid, k, make, local_count, sizeof(T), options, "Auto");
    const detail::strategy_choice choice = detail::choose_automatically(
        grid, {.grid = grid.shape(), .r = r, .bytes = static_cast<double>(largest * sizeof(T)), .mode = options.mode,
               .payload = detail::payload_kind::block, .shared_memory_asked = options.shared_memory});
    plan_options chosen = options;
    chosen.team = choice.team;
    chosen.shared_memory = options.shared_memory || choice.shared_memory;  // the user's request stays
    return build<T>(grid, {k, make, local_count}, chosen, {choice.entry.name, choice.entry});
  }
};

}  // namespace detail
}  // namespace haloshift

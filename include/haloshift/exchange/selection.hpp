// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file selection.hpp
/// @brief Selective exchange: each box receives only those elements of its
/// neighbours that it needs (particles within a cutoff, grid cells within a
/// ghost width), moved along the schedule of any strategy whose blocks travel
/// away from their source: the selector concept and the build (the plan it
/// builds is selective_plan.hpp). The payload modes build on it.

#include <mpi.h>

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../grid/cartesian_grid.hpp"
#include "../grid/offset_box.hpp"
#include "../detail/mpi/agreement.hpp"
#include "../detail/mpi/communicator.hpp"
#include "../schedule/single_hop.hpp"
#include "../strategy.hpp"
#include "../strategy_registry.hpp"
#include "exchange_handle.hpp"
#include "../detail/exchange/exchange_run.hpp"
#include "../detail/exchange/run_forward.hpp"
#include "../detail/exchange/geometric_selection.hpp"
#include "halo.hpp"
#include "../detail/exchange/neighbor_collective.hpp"
#include "../detail/exchange/selected_neighbor_engine.hpp"
#include "plan.hpp"
#include "../detail/exchange/program.hpp"
#include "selective_plan.hpp"

namespace haloshift {

/// `needs(source, rel, key)`: whether the box at grid position `source + rel`
/// needs the element `key` of the box at `source`. `rel` is unwrapped: a
/// position outside `[0, P)` along a periodic dimension is a periodic image,
/// and `key` is in the source's frame. The library proves its exchange exact
/// for *geometric* selectors: the needed set is a product over dimensions of
/// conditions that, for an element of the source box, hold for the source box
/// itself and only shrink as the box moves away from the source (a cutoff
/// around the box, a ghost width). A selector that is not geometric raises the
/// same haloshift::error on every rank when the plan is built. A selector that
/// declares itself geometric (`static constexpr bool geometric = true` and
/// `prepare(coords, box)` returning an object whose `interval(d, source_d,
/// rel_d)` is the detail::key_interval of `key[d]` needed along one dimension)
/// is evaluated per dimension: two comparisons per dimension for a key deep
/// inside its box.
template <class F, class Key>
concept selector = std::predicate<const F&, const offset&, const offset&, const Key&>;

namespace detail {
/// A selective payload may only ride on schedules whose blocks move away from
/// their source along every dimension (`direction[d] * offset[d] <= 0`): then
/// every box on a block's path lies between the source and each later holder,
/// and for a geometric selector whatever a later holder needs, this box needs
/// too. Forwarding "what the receiver needs of what I hold" is then exact.
inline void check_away_from_source(const schedule& s, std::string_view strategy) {
  for (std::size_t r = 0; r < s.rounds.size(); ++r)
    for (const transfer& t : s.rounds[r].transfers)
      for (const offset& o : t.blocks)
        for (int d = 0; d < max_dims; ++d)
          if (t.direction[d] * o[d] > 0)
            throw error("strategy " + std::string(strategy) +
                        " cannot carry particle or grid payloads: round " + std::to_string(r) + " moves the block " +
                        to_string(o) + " back towards its source (direction " + to_string(t.direction) +
                        "); use " + strategy_registry::instance().names(true, strategy));
}
}  // namespace detail

namespace detail {

/// What a selective build decides before it looks at the keys (the strategy,
/// its schedule, the boxes a block can reach, the count exchange, the
/// selector prepared for this rank): a plan that rebuilds from new keys
/// keeps it and skips all of that, and its tags.
template <class Needs>
struct selective_recipe {
  grid_shape shape;
  offset coords{0, 0, 0};
  Needs needs;
  detail::strategy_entry strategy{};
  range r{};
  schedule sched{};
  detail::offset_box box{};  ///< positions relative to a source where its block can be held, on any rank
  int tags = 0;
  program counting{};  ///< the count exchange: `box.volume()` counts per block, in the plan's tags
  std::optional<prepared_selector<Needs>> prepared{};
  detail::owned_classes classes{};  ///< of the owned keys, by the last count (a geometric selector)
};

struct selective_builder {
  /// Spreads reduced in the build's first agreement (a caller that agrees in its place reduces as many).
  static constexpr std::size_t spread_count = 2 * max_dims;

  /// Range `k` given: k, the options, the strategy and sizeof(Key) are agreed.
  template <transferable Key, class Needs>
  static std::pair<selective_plan, std::vector<Key>> build(const cartesian_grid& grid, const offset& k,
                                                           std::span<const Key> own, const Needs& needs,
                                                           const plan_options& options,
                                                           const strategy_request& request) {
    return build<Key>(
        grid, [&] { return k; }, agreed_plan_values(k, options, request.name, sizeof(Key)), own, needs, options,
        request);
  }

  /// `range_k` runs first inside the build's one agreement (it checks the caller's arguments and
  /// returns the range); `values` are what must agree on all ranks. Collectives: that agreement,
  /// the count exchange and the key exchange (along the schedule), and for a selector that is not
  /// geometric two more agreements.
  template <transferable Key, class Needs>
  static std::pair<selective_plan, std::vector<Key>> build(const cartesian_grid& grid,
                                                           const std::function<offset()>& range_k,
                                                           const std::vector<mpi::agreed_value>& values,
                                                           std::span<const Key> own, const Needs& needs,
                                                           const plan_options& options,
                                                           const strategy_request& request) {
    selective_recipe<Needs> recipe = prepare(grid, range_k, values, needs, options, request);
    selective_plan p = new_plan(grid, recipe.strategy.name, options);
    std::vector<Key> keys;
    fill(p, recipe, own, keys);
    return {std::move(p), std::move(keys)};
  }

  /// A plan with no program yet, for fill().
  static selective_plan new_plan(const cartesian_grid& grid, std::string_view strategy, const plan_options& options) {
    return selective_plan(grid, strategy, options);
  }

  /// The part of a build that does not depend on the keys, in its one agreement.
  template <class Needs>
  static selective_recipe<Needs> prepare(const cartesian_grid& grid, const std::function<offset()>& range_k,
                                         const std::vector<mpi::agreed_value>& values, const Needs& needs,
                                         const plan_options& options, const strategy_request& request) {
    const grid_shape& shape = grid.shape();
    const offset coords = grid.coords();
    selective_recipe<Needs> rc{.shape = shape, .coords = coords, .needs = needs};
    // Which positions relative to a source can hold its block: minus every held offset, on any
    // rank. Reduced in the agreement: per dimension the lowest and the highest of -offset.
    mpi::spread spreads[spread_count];
    mpi::agree(
        grid.comm(),
        [&] {
          check_plan_options(options);
          const offset k = range_k();
          rc.strategy = request.resolve(true);
          if (!rc.strategy.selective_payloads)
            throw error("strategy " + std::string(rc.strategy.name) +
                        " carries block payloads only (its schedule moves blocks back towards their source: "
                        "TeamShift's team rounds, NodeAggregate's gathers at a node's leaders; a particle or "
                        "field selection cannot follow them); use " +
                        strategy_registry::instance().names(true) + " or Auto");
          if (rc.strategy.neighbor_collective && options.mode != protocol::overlapping)
            throw error(std::string(rc.strategy.name) +
                        " runs MPI_Neighbor_alltoallv: only protocol::overlapping applies");
          rc.r = make_range(shape, k, options.kind, options.pattern);
          rc.sched = rc.strategy.make_schedule(shape, rc.r, strategy_parameters{.team = options.team});
          check_away_from_source(rc.sched, rc.strategy.name);
          const detail::program unit = detail::compile(
              rc.sched, shape, coords, rc.r, [](const offset&) { return std::size_t{1}; }, rc.strategy.name);
          for (const detail::block_slot& b : unit.layout.slots())
            for (int d = 0; d < max_dims; ++d) {
              spreads[d].mine = std::min<std::int64_t>(spreads[d].mine, -b.off[d]);
              spreads[max_dims + d].mine = std::max<std::int64_t>(spreads[max_dims + d].mine, -b.off[d]);
            }
        },
        values, spreads);
    rc.tags = grid.context()->claim_plan_tags(widest_round(rc.sched));
    for (int d = 0; d < max_dims; ++d) {
      rc.box.lo[d] = static_cast<int>(spreads[d].low);
      rc.box.hi[d] = static_cast<int>(spreads[max_dims + d].high);
    }
    const std::size_t volume = rc.box.volume();
    rc.counting = detail::compile(
        rc.sched, shape, coords, rc.r, [&](const offset&) { return volume; }, rc.strategy.name);
    shift_tags(rc.counting, rc.tags);
    if constexpr (is_geometric<Needs>) rc.prepared.emplace(rc.needs.prepare(coords, rc.box));
    return rc;
  }

  /// What the holder at position `q` from the source of the block at `o` holds of it: the counts
  /// every source sent along the counting program.
  struct needed_counts {
    const detail::program& counting;
    const offset_box& box;
    const std::vector<std::uint64_t>& counts;
    std::size_t operator()(const offset& o, const offset& q) const {
      return counts[counting.layout.slots()[counting.layout.find(o)].first + box.index(q)];
    }
  };

  /// The part of a build that depends on the keys: this rank owns `own`; `p` (built before, or
  /// new) gets the program, `keys` the keys of all elements (owned, then ghosts), its capacity
  /// reused. Collective over `p`'s communicator; the arguments were checked already.
  template <transferable Key, class Needs, class Source>
  static void fill(selective_plan& p, selective_recipe<Needs>& rc, const Source& source, std::vector<Key>& keys) {
    // The owned keys first, read from the caller's layout once: the count and the rounds use them.
    // A rebuild keeps the old keys' length: growing it again to owned + ghosts would zero the ghosts.
    const std::size_t owned = source.size();
    if (keys.size() < owned) keys.resize(owned);
    for (std::size_t i = 0; i < owned; ++i) keys[i] = source[i];
    const std::span<const Key> own(keys.data(), owned);
    MPI_Comm comm = p.comm();
    // The window's routes are the old program's: none until share_node_memory refits it (below).
    if (p.resources_->window) p.resources_->window->retire();
    // Every source counts what each holder position needs of it; the counts travel as a block exchange.
    const std::vector<std::uint64_t> mine = count_by_position<Key>(rc, own, rc.classes);
    std::vector<std::uint64_t> counts(rc.counting.layout.total());
    run_forward(rc.counting, comm, mine.data(), counts.data(), *p.resources_);
    const needed_counts needed{rc.counting, rc.box, counts};
    detail::program& program = *p.program_;
    program = detail::compile(
        rc.sched, rc.shape, rc.coords, rc.r,
        [&](const offset& o) { return o == zero_offset ? own.size() : needed(o, -o); }, rc.strategy.name,
        detail::own_place::first);
    shift_tags(program, rc.tags);
    if constexpr (!is_geometric<Needs>) check_counts_follow_the_schedule(comm, rc, own.size(), needed);
    const std::optional<std::string> not_geometric = send_keys<Key>(p, rc, needed, keys);
    // A geometric selector picks what it counted by construction (the same one-dimensional tests):
    // no agreement needed.
    if constexpr (!is_geometric<Needs>)
      mpi::agree(comm, [&] {
        if (not_geometric) throw error(*not_geometric);
      });
    const auto& slots = program.layout.slots();
    p.blocks_.clear();
    for (std::size_t slot = 0; slot < slots.size(); ++slot)
      if (static_cast<int>(slot) != program.layout.own()) p.blocks_.push_back(slots[slot]);
    p.storage_ = program.layout.total();
    // NeighborAlltoall: SingleHop's single round of selected messages, run as one neighbourhood collective.
    // A rebuild keeps the graph communicators when every rank's peers are unchanged (agreed: creating
    // them is collective).
    if (rc.strategy.neighbor_collective) {
      int keep = p.engine_ && p.engine_->serves(program) ? 1 : 0;
      mpi::check(MPI_Allreduce(MPI_IN_PLACE, &keep, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
      if (!keep) p.engine_ = std::make_unique<selected_neighbor_engine>(program, comm);
    } else {
      share_node_memory(p.resources_->window, program, *p.context_, p.options_);
    }
    p.reserve(sizeof(Key));
  }

  /// How many of `own` each holder position of the recipe's box needs. A geometric selector (the
  /// library's own: a particle cutoff, a ghost width) is a product over dimensions of conditions
  /// that only shrink away from the source, so per key and dimension the positions that need it
  /// form an interval around 0, found by walking out to the first refusal of the one-dimensional
  /// test (its `interval`), and the key counts for every position in the product of its intervals:
  /// a key deep inside the box costs two comparisons per dimension, as LAMMPS's borders bins atoms
  /// by box layer. A user's selector is tested at every position, so that one which is not
  /// geometric is caught (the keys' journey recounts, and the final agreement reports it).
  template <transferable Key, class Needs>
  static std::vector<std::uint64_t> count_by_position(const selective_recipe<Needs>& rc, std::span<const Key> own,
                                                      owned_classes& classes) {
    const offset_box& box = rc.box;
    std::vector<std::uint64_t> mine(box.volume(), 0);
    if constexpr (is_geometric<Needs>) {
      count_needed<Key>(*rc.prepared, rc.coords, box, rc.shape.ndims(), own, mine, classes);
    } else {
      for (int z = box.lo[2]; z <= box.hi[2]; ++z)
        for (int y = box.lo[1]; y <= box.hi[1]; ++y)
          for (int x = box.lo[0]; x <= box.hi[0]; ++x) {
            const offset q{x, y, z};
            std::uint64_t n = 0;
            for (const Key& key : own) n += rc.needs(rc.coords, q, key) ? 1 : 0;
            mine[box.index(q)] = n;
          }
      mine[box.index(zero_offset)] = own.size();
    }
    return mine;
  }

  /// A user's selector that is not geometric can want, at a box further on, elements a box on the
  /// way never got: its sender then has no message while the receiver waits for one. Found from
  /// the counts alone, on every rank together, before any key moves.
  template <class Needs>
  static void check_counts_follow_the_schedule(MPI_Comm comm, const selective_recipe<Needs>& rc, std::size_t owned,
                                               const needed_counts& needed) {
    mpi::agree(comm, [&] {
      for (std::size_t round = 0; round < rc.sched.rounds.size(); ++round)
        for (const transfer& t : rc.sched.rounds[round].transfers) {
          if (!detail::sends(rc.shape, rc.coords, t)) continue;
          for (const offset& o : t.blocks) {
            if (!rc.shape.exists(rc.coords, o)) continue;
            const std::size_t held = o == zero_offset ? owned : needed(o, -o);
            const std::size_t wanted = needed(o, t.direction - o);
            if (wanted > held)
              throw error("strategy " + std::string(rc.strategy.name) + ": the selector is not geometric: the box at " +
                          to_string(t.direction - o) + " from a source wants " + std::to_string(wanted) +
                          " of its elements, the box at " + to_string(-o) + " on the way holds " +
                          std::to_string(held) + " (round " + std::to_string(round) + ")");
          }
        }
    });
  }

  /// The keys travel round by round: each send carries, of every block it names, what the receiver
  /// needs. A selector found not geometric is reported by the caller's final agreement, not thrown
  /// here (the other ranks are mid-exchange): the first such finding is returned. Meanwhile no
  /// message grows beyond the size its receiver expects.
  template <transferable Key, class Needs>
  static std::optional<std::string> send_keys(selective_plan& p, const selective_recipe<Needs>& rc,
                                              const needed_counts& needed, std::vector<Key>& keys) {
    detail::program& program = *p.program_;
    keys.resize(program.layout.total());  // the owned keys stay in front
    const auto& slots = program.layout.slots();
    std::optional<std::string> not_geometric;
    std::vector<send_part> parts;
    std::vector<detail::element_run> runs;
    for (std::size_t round = 0; round < program.rounds.size(); ++round) {
      round_program& rp = program.rounds[round];
      parts.clear();
      for (std::size_t k = 0; k < rp.transfers.size(); ++k)
        if (rp.transfers[k].send.exists())
          for (int slot : rp.transfers[k].send.slots) {
            const offset off = slots[static_cast<std::size_t>(slot)].off, rel = rp.transfers[k].direction - off;
            parts.push_back({k, slot, rel, needed(off, rel), 0, {}});
          }
      if constexpr (is_geometric<Needs>) {
        select_geometric(parts, slots, rc.shape, *rc.prepared, std::span<const Key>(keys), rc.classes);
      } else {
        for (send_part& part : parts) {
          const block_slot& b = slots[static_cast<std::size_t>(part.slot)];
          const offset source = rc.shape.coords_of(b.source.rank);
          for (std::size_t e = b.first; e < b.first + b.count; ++e)
            if (rc.needs(source, part.rel, keys[e])) part.pick(e);
        }
      }
      assemble_messages(rp, parts, slots, rc.strategy.name, runs, not_geometric);
      detail::assign_staging(program);
      exchange_run<arrays<Key>>(program, p.comm(), protocol::overlapping, *p.resources_, arrays<Key>{{keys.data()}},
                                false, {}, nullptr, round, round + 1)
          .advance(true);
    }
    return not_geometric;
  }

  /// Each transfer's message of a round: its parts in its slots' order (the order they were listed
  /// in). Notes in `not_geometric` the first part that picked other than its receiver counted.
  static void assemble_messages(round_program& rp, const std::vector<send_part>& parts,
                                const std::vector<block_slot>& slots, std::string_view strategy,
                                std::vector<detail::element_run>& runs, std::optional<std::string>& not_geometric) {
    for (std::size_t i = 0, next = 0; i < parts.size(); i = next) {
      transfer_program& t = rp.transfers[parts[i].transfer];
      runs.clear();
      std::size_t receiver_expects = 0;
      for (next = i; next < parts.size() && parts[next].transfer == parts[i].transfer; ++next) {
        const send_part& part = parts[next];
        receiver_expects += part.expected;
        runs.insert(runs.end(), part.runs.begin(), part.runs.end());
        if (part.picked != part.expected && !not_geometric)
          not_geometric = "strategy " + std::string(strategy) + ": the selector is not geometric: block " +
                          to_string(slots[static_cast<std::size_t>(part.slot)].off) + " holds " +
                          std::to_string(part.picked) + " elements for the box at " + to_string(part.rel) +
                          " from its source, which counted " + std::to_string(part.expected);
      }
      detail::select_pieces(t.send, runs);
      // No message where the receiver expects none; where it expects some, a message even if this
      // rank found nothing to put in it (a selector that is not geometric), so nobody waits forever.
      if (receiver_expects == 0) t.send.peer = -1;
    }
  }
};

}  // namespace detail

/// Builds a selective exchange of strategy `S` with range `k` boxes per
/// dimension: this rank owns the elements `own` (their keys: positions, cell
/// indices), and each box receives the elements of the boxes within `k`
/// that `needs` selects for it. Collective; arguments are validated on every
/// rank. Returns the plan and the keys of all elements (owned, then ghosts).
template <strategy S, transferable Key, selector<Key> Needs>
std::pair<selective_plan, std::vector<Key>> make_selective_plan(const cartesian_grid& grid, const offset& k,
                                                               std::span<const Key> own, const Needs& needs,
                                                               const plan_options& options = {}) {
  return detail::selective_builder::build<Key>(grid, k, own, needs, options, {S::name, detail::entry_of<S>()});
}

/// The same with the strategy named at run time (a registered name, any case).
template <transferable Key, selector<Key> Needs>
std::pair<selective_plan, std::vector<Key>> make_selective_plan(const cartesian_grid& grid, std::string_view strategy,
                                                               const offset& k, std::span<const Key> own,
                                                               const Needs& needs, const plan_options& options = {}) {
  return detail::selective_builder::build<Key>(grid, k, own, needs, options, {strategy, std::nullopt});
}

}  // namespace haloshift

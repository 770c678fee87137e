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
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../grid/cartesian_grid.hpp"
#include "../grid/offset_box.hpp"
#include "../mpi/agreement.hpp"
#include "../mpi/communicator.hpp"
#include "../schedule/single_hop.hpp"
#include "../strategy.hpp"
#include "exchange_handle.hpp"
#include "exchange_run.hpp"
#include "halo.hpp"
#include "neighbor_collective.hpp"
#include "plan.hpp"
#include "program.hpp"
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
/// same haloshift::error on every rank when the plan is built.
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
                        "); use Shift, SingleHop or TtlMultiHop");
}
}  // namespace detail

namespace detail {

struct selective_builder {
  /// Spreads reduced in the build's first agreement (a caller that agrees in its place reduces as many).
  static constexpr std::size_t spread_count = 2 * max_dims;

  /// Range `k` given: k, the options, the strategy and sizeof(Key) are agreed.
  template <transferable Key, class Needs>
  static std::pair<selective_plan, std::vector<Key>> build(const cartesian_grid& grid, const offset& k,
                                                           std::span<const Key> own, const Needs& needs,
                                                           plan_options options, const strategy_request& request) {
    return build<Key>(
        grid, [&] { return k; }, agreed_plan_values(k, options, request.name, sizeof(Key)), own, needs, options,
        request);
  }

  /// `range_k` runs first inside the build's one agreement (it checks the caller's arguments and
  /// returns the range); `values` are what must agree on all ranks. Collectives: that agreement,
  /// the count exchange, the key exchange (along the schedule) and a final agreement.
  template <transferable Key, class Needs>
  static std::pair<selective_plan, std::vector<Key>> build(const cartesian_grid& grid,
                                                           const std::function<offset()>& range_k,
                                                           const std::vector<mpi::agreed_value>& values,
                                                           std::span<const Key> own, const Needs& needs,
                                                           plan_options options, const strategy_request& request) {
    const grid_shape& shape = grid.shape();
    const offset coords = grid.coords();
    range r;
    schedule sched;
    detail::program unit;
    strategy_entry s;
    // Which positions relative to a source can hold its block: minus every held offset, on any
    // rank. Reduced in the agreement: per dimension the lowest and the highest of -offset.
    mpi::spread spreads[spread_count];
    mpi::agree(
        grid.comm(),
        [&] {
          check_plan_options(options);
          const offset k = range_k();
          s = request.resolve();
          if (s.neighbor_collective && options.mode != protocol::overlapping)
            throw error(std::string(s.name) + " runs MPI_Neighbor_alltoallv: only protocol::overlapping applies");
          r = make_range(shape, k, options.kind);
          sched = s.make_schedule(shape, r, strategy_parameters{options.team});
          check_away_from_source(sched, s.name);
          unit = detail::compile(
              sched, shape, coords, r, [](const offset&) { return std::size_t{1}; }, s.name);
          for (const detail::block_slot& b : unit.layout.slots())
            for (int d = 0; d < max_dims; ++d) {
              spreads[d].mine = std::min<std::int64_t>(spreads[d].mine, -b.off[d]);
              spreads[max_dims + d].mine = std::max<std::int64_t>(spreads[max_dims + d].mine, -b.off[d]);
            }
        },
        values, spreads);
    selective_plan p(grid, s.name, options.mode);
    MPI_Comm comm = p.comm();
    const int tags = grid.context()->claim_plan_tags(widest_round(sched));
    offset_box box;  // positions relative to a source where its block can be held
    for (int d = 0; d < max_dims; ++d) {
      box.lo[d] = static_cast<int>(spreads[d].low);
      box.hi[d] = static_cast<int>(spreads[max_dims + d].high);
    }

    // Every source counts what each holder position needs of it; the counts travel as a block
    // exchange. The library's own selectors (a particle cutoff, a ghost width: `geometric` members)
    // are geometric by construction: one pass over the keys, as LAMMPS's borders bins atoms by box
    // layer. Such a selector is a product over dimensions of conditions that only shrink away from
    // the source, so per key and dimension the positions that need it form an interval around 0,
    // found by walking out to the first refusal, and the key counts for every position in the
    // product of its intervals: a key deep inside the box costs two refusals per dimension, where
    // testing every position costs 3^3 = 27 calls at reach 1 (125 at reach 2). A user's selector
    // is tested at every position, so that one which is not geometric is caught (the keys' journey
    // below recounts, and the final agreement reports it).
    const std::size_t volume = box.volume();
    std::vector<std::uint64_t> mine(volume, 0);
    if constexpr (requires { requires Needs::geometric; }) {
      for (const Key& key : own) {
        offset lo = zero_offset, hi = zero_offset;
        for (int d = 0; d < max_dims; ++d) {
          offset q = zero_offset;
          for (q[d] = 1; q[d] <= box.hi[d] && needs(coords, q, key); ++q[d]) hi[d] = q[d];
          for (q[d] = -1; q[d] >= box.lo[d] && needs(coords, q, key); --q[d]) lo[d] = q[d];
        }
        for (int z = lo[2]; z <= hi[2]; ++z)
          for (int y = lo[1]; y <= hi[1]; ++y)
            for (int x = lo[0]; x <= hi[0]; ++x) ++mine[box.index(offset{x, y, z})];
      }
    } else {
      for (int z = box.lo[2]; z <= box.hi[2]; ++z)
        for (int y = box.lo[1]; y <= box.hi[1]; ++y)
          for (int x = box.lo[0]; x <= box.hi[0]; ++x) {
            const offset q{x, y, z};
            std::uint64_t n = 0;
            for (const Key& key : own) n += needs(coords, q, key) ? 1 : 0;
            mine[box.index(q)] = n;
          }
      mine[box.index(zero_offset)] = own.size();
    }
    detail::program counting = detail::compile(
        sched, shape, coords, r, [&](const offset&) { return volume; }, s.name);
    shift_tags(counting, tags);
    std::vector<std::uint64_t> counts(counting.layout.total());
    run_forward(counting, comm, mine.data(), counts.data(), *p.resources_);
    // What the holder at position `q` from the source of the block at `o` holds of it.
    auto needed = [&](const offset& o, const offset& q) -> std::size_t {
      return counts[counting.layout.slots()[counting.layout.find(o)].first + box.index(q)];
    };
    detail::program& program = *p.program_;
    program = detail::compile(
        sched, shape, coords, r,
        [&](const offset& o) { return o == zero_offset ? own.size() : needed(o, -o); }, s.name,
        detail::own_place::first);
    shift_tags(program, tags);

    // A user's selector that is not geometric can want, at a box further on, elements a box on the
    // way never got: its sender then has no message while the receiver waits for one. Found from
    // the counts alone, on every rank together, before any key moves.
    if constexpr (!requires { requires Needs::geometric; }) {
      mpi::agree(comm, [&] {
        for (std::size_t round = 0; round < sched.rounds.size(); ++round)
          for (const transfer& t : sched.rounds[round].transfers) {
            if (!detail::sends(shape, coords, t)) continue;
            for (const offset& o : t.blocks) {
              if (!shape.exists(coords, o)) continue;
              const std::size_t held = o == zero_offset ? own.size() : needed(o, -o);
              const std::size_t wanted = needed(o, t.direction - o);
              if (wanted > held)
                throw error("strategy " + std::string(s.name) + ": the selector is not geometric: the box at " +
                            to_string(t.direction - o) + " from a source wants " + std::to_string(wanted) +
                            " of its elements, the box at " + to_string(-o) + " on the way holds " +
                            std::to_string(held) + " (round " + std::to_string(round) + ")");
            }
          }
      });
    }

    // The keys travel round by round: each send carries, of every block it names, what the receiver
    // needs. A selector found not geometric is reported by the final agreement, not thrown here (the
    // other ranks are mid-exchange); meanwhile no message grows beyond the size its receiver expects.
    std::vector<Key> keys(program.layout.total());
    std::copy(own.begin(), own.end(), keys.begin());
    const auto& slots = program.layout.slots();
    std::optional<std::string> not_geometric;
    for (std::size_t round = 0; round < program.rounds.size(); ++round) {
      for (detail::transfer_program& t : program.rounds[round].transfers) {
        if (!t.send.exists()) continue;
        std::vector<detail::element_run> runs;
        std::size_t receiver_expects = 0;
        for (int slot : t.send.slots) {
          const detail::block_slot& b = slots[slot];
          const offset source = shape.coords_of(b.source.rank);
          const offset rel = t.direction - b.off;
          const std::size_t expected = needed(b.off, rel);
          receiver_expects += expected;
          std::size_t picked = 0;
          for (std::size_t e = b.first; e < b.first + b.count; ++e)
            if (needs(source, rel, keys[e]) && picked++ < expected) runs.push_back({e, 1});
          if (picked != expected && !not_geometric)
            not_geometric = "strategy " + std::string(s.name) + ": the selector is not geometric: block " +
                            to_string(b.off) + " holds " + std::to_string(picked) + " elements for the box at " +
                            to_string(rel) + " from its source, which counted " + std::to_string(expected);
        }
        detail::select_pieces(t.send, runs);
        // No message where the receiver expects none; where it expects some, a message even if this
        // rank found nothing to put in it (a selector that is not geometric), so nobody waits forever.
        if (receiver_expects == 0) t.send.peer = -1;
      }
      detail::assign_staging(program);
      exchange_run<arrays<Key>>(program, comm, protocol::overlapping, *p.resources_, arrays<Key>{{keys.data()}}, false,
                                {}, nullptr, round, round + 1)
          .advance(true);
    }
    mpi::agree(comm, [&] {
      if (not_geometric) throw error(*not_geometric);
    });
    for (std::size_t s = 0; s < slots.size(); ++s)
      if (static_cast<int>(s) != program.layout.own()) p.blocks_.push_back(slots[s]);
    p.storage_ = program.layout.total();
    // NeighborAlltoall: SingleHop's single round of selected messages, run as one neighbourhood collective.
    if (s.neighbor_collective) p.engine_ = std::make_unique<selected_neighbor_engine>(program, comm);
    p.reserve(sizeof(Key));
    return {std::move(p), std::move(keys)};
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
                                                               plan_options options = {}) {
  return detail::selective_builder::build<Key>(grid, k, own, needs, options, {S::name, entry_of<S>()});
}

/// The same with the strategy named at run time (a registered name, any case).
template <transferable Key, selector<Key> Needs>
std::pair<selective_plan, std::vector<Key>> make_selective_plan(const cartesian_grid& grid, std::string_view strategy,
                                                               const offset& k, std::span<const Key> own,
                                                               const Needs& needs, plan_options options = {}) {
  return detail::selective_builder::build<Key>(grid, k, own, needs, options, {strategy, std::nullopt});
}

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file geometric_selection.hpp
/// @brief How a selective build evaluates a geometric selector: per key and
/// dimension, how many boxes up and down need it (axis_reach), the count of
/// what each holder position needs (count_needed), and one round's picks, one
/// pass per block for all the transfers that send it (select_geometric).
/// selection.hpp runs the build.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../grid/grid_shape.hpp"
#include "../../grid/offset_box.hpp"
#include "key_interval.hpp"
#include "layout.hpp"
#include "program.hpp"

namespace haloshift::detail {

/// A geometric selector: `geometric` set, and `prepare(coords, box)` gives `interval(d, source,
/// rel)`, the key_interval of coordinate `d` of the keys that the box `rel` boxes from the source
/// at `source` needs along `d`; the selector is the conjunction over the grid's dimensions.
template <class Needs>
constexpr bool is_geometric = requires { requires Needs::geometric; };
template <class Needs>
struct prepared_of {
  using type = int;  // a selector tested whole: nothing to prepare
};
template <class Needs>
  requires is_geometric<Needs>
struct prepared_of<Needs> {
  using type = std::remove_cvref_t<decltype(std::declval<const Needs&>().prepare(offset{}, detail::offset_box{}))>;
};
template <class Needs>
using prepared_selector = typename prepared_of<Needs>::type;

/// How far along one dimension the boxes that need a key reach, up and down from its source:
/// the number of the selector's intervals (`1, 2, ...` boxes up, and down) that hold its
/// coordinate. They are nested (a box farther away needs fewer), so the count is the walk to the
/// first refusal, taken without branches; and a key of the source box lies on the near side of
/// every other box, so only each interval's near bound can refuse it: one comparison each.
template <class T>
struct axis_reach {
  int d = 0;
  std::vector<T> up, down;  ///< near bounds: the lowest coordinate needed `j + 1` boxes up, the first refused below
  /// Classes of keys along this dimension: (boxes down, boxes up).
  std::size_t classes() const noexcept { return (up.size() + 1) * (down.size() + 1); }
  /// The class of `key`: `down * (up.size() + 1) + up`.
  template <class Key>
  std::size_t class_of(const Key& key) const noexcept {
    const auto x = key[static_cast<std::size_t>(d)];
    if (near_) return near_test().class_of(x);  // one box each way at most: two comparisons, no loop
    std::size_t u = 0, w = 0;
    for (const T& bound : up) u += x >= bound ? 1 : 0;
    for (const T& bound : down) w += x < bound ? 1 : 0;
    return w * (up.size() + 1) + u;
  }
  /// The intervals of a prepared selector `per_dim` for keys from the source at `source`,
  /// `boxes_up` up and `boxes_down` down.
  /// At most one box up and one down (a cutoff within a box): the class is two comparisons.
  bool near() const noexcept { return near_; }
  /// The two comparisons of a near axis, as values a loop keeps in registers.
  struct near_classes {
    std::size_t d;
    T up1, down1;
    std::size_t up_width;
    std::size_t class_of(T x) const noexcept { return (x < down1 ? up_width : 0) + (x >= up1 ? 1 : 0); }
  };
  near_classes near_test() const noexcept { return {static_cast<std::size_t>(d), up1_, down1_, up_width_}; }
  template <class Prepared>
  axis_reach(const Prepared& per_dim, int dim, int source, int boxes_up, int boxes_down) : d(dim) {
    for (int j = 1; j <= boxes_up; ++j) up.push_back(per_dim.interval(d, source, j).lo);
    for (int j = 1; j <= boxes_down; ++j) down.push_back(per_dim.interval(d, source, -j).hi);
    near_ = up.size() <= 1 && down.size() <= 1;
    up_width_ = up.size() + 1;
    // A missing side never counts: no coordinate reaches +max up, none lies below -max down.
    up1_ = up.empty() ? std::numeric_limits<T>::max() : up[0];
    down1_ = down.empty() ? std::numeric_limits<T>::lowest() : down[0];
    if constexpr (std::numeric_limits<T>::has_infinity) {
      if (up.empty()) up1_ = std::numeric_limits<T>::infinity();
      if (down.empty()) down1_ = -std::numeric_limits<T>::infinity();
    }
  }

 private:
  bool near_ = false;
  std::size_t up_width_ = 1;
  T up1_{}, down1_{};
};
template <class Prepared>
using bound_type = decltype(std::declval<const Prepared&>().interval(0, 0, 0).lo);

/// The bin count_needed found for every owned key, kept for the rounds that send the own block
/// (select_geometric): a byte per key read there instead of its coordinates compared again.
struct owned_classes {
  std::vector<std::uint8_t> code;  ///< per owned key; empty where there are more than 256 bins
  std::size_t stride[max_dims] = {1, 1, 1}, classes[max_dims] = {1, 1, 1}, up[max_dims] = {0, 0, 0};
  std::size_t bins = 0;
  /// How many boxes up (first) and down along `d` need a key of bin `bin`.
  std::pair<int, int> reach(std::size_t bin, int d) const noexcept {
    const std::size_t c = bin / stride[d] % classes[d];
    return {static_cast<int>(c % (up[d] + 1)), static_cast<int>(c / (up[d] + 1))};
  }
};

/// For a geometric selector: per holder position in `box` (relative to this rank, the source),
/// how many of the keys `own` it needs, added to `mine` (indexed by box.index): keys are binned
/// by their classes along every dimension (axis_reach), and each bin adds to the product of
/// its ranges. Each key's bin goes to `kept`.
template <class Key, class Prepared>
inline void count_needed(const Prepared& per_dim, const offset& coords, const detail::offset_box& box, int ndims,
                         std::span<const Key> own, std::vector<std::uint64_t>& mine, owned_classes& kept) {
  std::vector<axis_reach<bound_type<Prepared>>> axes;
  std::size_t bins = 1, stride[max_dims] = {0, 0, 0};
  for (int d = 0; d < ndims; ++d) {
    axes.emplace_back(per_dim, d, coords[d], box.hi[d], -box.lo[d]);
    stride[d] = bins;
    bins *= axes.back().classes();
    kept.stride[d] = stride[d];
    kept.classes[d] = axes.back().classes();
    kept.up[d] = axes.back().up.size();
  }
  kept.bins = bins;
  kept.code.resize(bins <= 256 ? own.size() : 0);
  std::uint8_t* const code = kept.code.empty() ? nullptr : kept.code.data();
  // Four interleaved histograms: most keys fall in one bin (deep inside), and consecutive
  // increments of one counter would wait on each other.
  std::vector<std::uint64_t> binned(4 * bins, 0);
  const bool near = std::all_of(axes.begin(), axes.end(), [](const auto& a) { return a.near(); });
  if (near && ndims == 3) {  // the usual case, its six thresholds in registers
    const auto x = axes[0].near_test(), y = axes[1].near_test(), z = axes[2].near_test();
    for (std::size_t i = 0; i < own.size(); ++i) {
      const Key& k = own[i];
      const std::size_t bin = x.class_of(k[0]) + y.class_of(k[1]) * stride[1] + z.class_of(k[2]) * stride[2];
      ++binned[(i % 4) * bins + bin];
      if (code) code[i] = static_cast<std::uint8_t>(bin);
    }
  } else {
    for (std::size_t i = 0; i < own.size(); ++i) {
      std::size_t bin = 0;
      for (int d = 0; d < ndims; ++d) bin += axes[static_cast<std::size_t>(d)].class_of(own[i]) * stride[d];
      ++binned[(i % 4) * bins + bin];
      if (code) code[i] = static_cast<std::uint8_t>(bin);
    }
  }
  for (std::size_t bin = 0; bin < bins; ++bin) {
    const std::uint64_t keys = binned[bin] + binned[bins + bin] + binned[2 * bins + bin] + binned[3 * bins + bin];
    if (keys == 0) continue;
    offset lo = zero_offset, hi = zero_offset;
    for (int d = 0; d < ndims; ++d) {
      const axis_reach<bound_type<Prepared>>& axis = axes[static_cast<std::size_t>(d)];
      const std::size_t c = bin / stride[d] % axis.classes();
      hi[d] = static_cast<int>(c % (axis.up.size() + 1));
      lo[d] = -static_cast<int>(c / (axis.up.size() + 1));
    }
    for (int z = lo[2]; z <= hi[2]; ++z)
      for (int y = lo[1]; y <= hi[1]; ++y)
        for (int x = lo[0]; x <= hi[0]; ++x) mine[box.index(offset{x, y, z})] += keys;
  }
}

/// What one transfer of a key round sends of one block: the keys the receiver, `rel` from the
/// block's source, needs (it counted `expected` of them).
struct send_part {
  std::size_t transfer = 0;
  int slot = 0;
  offset rel{0, 0, 0};
  std::size_t expected = 0, picked = 0;
  std::vector<element_run> runs;
  /// Adds element `e` (in increasing order); never more than the receiver expects.
  void pick(std::size_t e) {
    if (picked++ >= expected) return;
    if (!runs.empty() && runs.back().first + runs.back().count == e) ++runs.back().count;
    else runs.push_back({e, 1});
  }
};

/// A key some transfers of a round take: its element and the transfers' bits.
struct taker_hit {
  std::size_t element;
  std::uint64_t take;
};

/// The keys `[first, first + count)` that any transfer takes, with the transfers (a bit each, per
/// class and axis in `takers`), into `hits`; returns how many. No call in the loop: the picks,
/// which allocate, come after, for the few keys near a face.
template <class Key, class T>
std::size_t mark_takers(std::span<const Key> keys, std::size_t first, std::size_t count,
                        const std::vector<axis_reach<T>>& axes, const std::vector<std::uint64_t>* takers,
                        taker_hit* out) {
  const std::size_t moved = axes.size();
  std::size_t found = 0;
  if (std::all_of(axes.begin(), axes.end(), [](const axis_reach<T>& a) { return a.near(); })) {
    typename axis_reach<T>::near_classes test[max_dims];
    const std::uint64_t* take_of[max_dims];
    for (std::size_t i = 0; i < moved; ++i) {
      test[i] = axes[i].near_test();
      take_of[i] = takers[i].data();
    }
    if (moved == 1) {  // a round along one dimension (every Shift round): one lookup per key
      const auto along = test[0];
      const std::uint64_t* const take = take_of[0];
      for (std::size_t e = first; e < first + count; ++e) {
        out[found] = {e, take[along.class_of(keys[e][along.d])]};
        found += out[found].take != 0 ? 1 : 0;
      }
      return found;
    }
    for (std::size_t e = first; e < first + count; ++e) {
      std::uint64_t take = ~std::uint64_t{0};
      for (std::size_t i = 0; i < moved; ++i) take &= take_of[i][test[i].class_of(keys[e][test[i].d])];
      out[found] = {e, take};
      found += take != 0 ? 1 : 0;
    }
    return found;
  }
  for (std::size_t e = first; e < first + count; ++e) {
    std::uint64_t take = ~std::uint64_t{0};
    for (std::size_t i = 0; i < moved; ++i) take &= takers[i][axes[i].class_of(keys[e])];
    out[found] = {e, take};
    found += take != 0 ? 1 : 0;
  }
  return found;
}

/// mark_takers for the own block's keys `[0, count)` from their bins (owned_classes): per bin the
/// transfers that take it, then one lookup per key.
template <class T>
std::size_t mark_by_class(const owned_classes& owned, std::size_t count, const std::vector<axis_reach<T>>& axes,
                          const std::vector<std::uint64_t>* takers, std::size_t group, taker_hit* out) {
  std::uint64_t take_of[256];
  const std::uint64_t all = group >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << group) - 1;
  for (std::size_t bin = 0; bin < owned.bins; ++bin) {
    std::uint64_t take = all;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      // This group reaches fewer boxes than the count's box at most: a key reaching further
      // reaches the group's farthest.
      const auto [u, w] = owned.reach(bin, axes[i].d);
      const std::size_t up = axes[i].up.size(), down = axes[i].down.size();
      take &= takers[i][std::min<std::size_t>(static_cast<std::size_t>(w), down) * (up + 1) +
                        std::min<std::size_t>(static_cast<std::size_t>(u), up)];
    }
    take_of[bin] = take;
  }
  const std::uint8_t* code = owned.code.data();
  std::size_t found = 0;
  for (std::size_t e = 0; e < count; ++e) {
    out[found] = {e, take_of[code[e]]};
    found += out[found].take != 0 ? 1 : 0;
  }
  return found;
}

/// The hits of a group of parts (`group[m]` the part of bit m, each part in one group) as their
/// runs: as send_part::pick, with each part's current run kept in locals and stored when it breaks.
inline void pick_hits(std::span<const taker_hit> hits, std::vector<send_part>& parts,
                      std::span<const std::size_t> group) {
  struct building {
    std::size_t first = 0, count = 0, hits = 0, room = 0;
  };
  building now[64];
  for (std::size_t m = 0; m < group.size(); ++m) {
    const send_part& part = parts[group[m]];
    now[m].room = part.expected > part.picked ? part.expected - part.picked : 0;
  }
  // A block no dimension tests (every key taken) comes with every bit set: only the group's count.
  const std::uint64_t group_bits = group.size() >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << group.size()) - 1;
  for (const taker_hit& hit : hits)
    for (std::uint64_t take = hit.take & group_bits; take != 0; take &= take - 1) {
      const auto m = static_cast<std::size_t>(std::countr_zero(take));
      building& b = now[m];
      if (b.hits++ >= b.room) continue;  // never more than the receiver expects
      if (b.count != 0 && b.first + b.count == hit.element) {
        ++b.count;
        continue;
      }
      if (b.count != 0) parts[group[m]].runs.push_back({b.first, b.count});
      b.first = hit.element;
      b.count = 1;
    }
  for (std::size_t m = 0; m < group.size(); ++m) {
    send_part& part = parts[group[m]];
    part.picked += now[m].hits;
    if (now[m].count != 0) part.runs.push_back({now[m].first, now[m].count});
  }
}

/// A geometric selector's picks for one round, one pass over each block however many transfers
/// send it (SingleHop sends the own block to every neighbour). This rank holds every key of a
/// block, so its own position `-off` needed it along every dimension; along the dimensions a
/// transfer moves, a key's class (axis_reach) decides, through a bit set per class and
/// dimension, which of the block's transfers take it.
template <class Key, class Prepared>
inline void select_geometric(std::vector<send_part>& parts, const std::vector<block_slot>& slots,
                             const grid_shape& shape, const Prepared& per_dim, std::span<const Key> keys,
                             const owned_classes& owned) {
  std::vector<std::size_t> order(parts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return parts[a].slot < parts[b].slot; });
  std::vector<axis_reach<bound_type<Prepared>>> axes;
  std::vector<std::uint64_t> takers[max_dims];
  // Room for the largest block's hits, not zeroed (written before read).
  std::size_t largest = 0;
  for (send_part& part : parts) {
    largest = std::max(largest, slots[static_cast<std::size_t>(part.slot)].count);
    part.runs.reserve(part.expected);  // never more (pick): no growth while picking
  }
  const std::unique_ptr<taker_hit[]> hits = std::make_unique_for_overwrite<taker_hit[]>(largest);
  // A group: up to 64 parts (transfers) sending the same block, one bit each.
  for (std::size_t g = 0, end = 0; g < order.size(); g = end) {
    for (end = g; end < order.size() && end - g < 64 && parts[order[end]].slot == parts[order[g]].slot; ++end) {}
    const block_slot& b = slots[static_cast<std::size_t>(parts[order[g]].slot)];
    const offset source = shape.coords_of(b.source.rank);
    // Per dimension moved: how far up and down the transfers reach, and per class the
    // transfers that take a key of that class. A dimension along which every transfer's receiver
    // lies where this rank does (rel == -off: a block of an earlier round, sent on along another
    // dimension) is not tested: every key of the block passed that very test to come here.
    axes.clear();
    for (int d = 0; d < shape.ndims(); ++d) {
      int up = 0, down = 0;
      bool as_here = true;
      for (std::size_t m = g; m < end; ++m) {
        up = std::max(up, parts[order[m]].rel[d]);
        down = std::max(down, -parts[order[m]].rel[d]);
        as_here = as_here && parts[order[m]].rel[d] == -b.off[d];
      }
      if ((up == 0 && down == 0) || as_here) continue;
      const axis_reach<bound_type<Prepared>>& axis = axes.emplace_back(per_dim, d, source[d], up, down);
      std::vector<std::uint64_t>& take = takers[axes.size() - 1];
      take.assign(axis.classes(), 0);
      for (int w = 0; w <= down; ++w)
        for (int u = 0; u <= up; ++u)
          for (std::size_t m = g; m < end; ++m) {
            const int r = parts[order[m]].rel[d];
            if (r <= u && -r <= w) take[static_cast<std::size_t>(w * (up + 1) + u)] |= std::uint64_t{1} << (m - g);
          }
    }
    const bool by_class =
        b.off == zero_offset && b.first == 0 && owned.bins <= 256 && b.count == owned.code.size();
    const std::size_t found = by_class ? mark_by_class(owned, b.count, axes, takers, end - g, hits.get())
                                       : mark_takers(keys, b.first, b.count, axes, takers, hits.get());
    pick_hits(std::span<const taker_hit>(hits.get(), found), parts, std::span<const std::size_t>(order).subspan(g, end - g));
  }
}

}  // namespace haloshift::detail

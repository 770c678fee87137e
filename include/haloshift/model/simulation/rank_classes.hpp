// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file rank_classes.hpp
/// @brief The ranks of a grid that a schedule cannot tell apart: the
/// simulator's symmetry classes (docs/model.md, "Simulation at any scale").
///
/// What a rank does in a schedule, and when, depends on the coordinates only
/// through a few properties per dimension: which transfers it sends in
/// (TeamShift's members, the coordinate modulo the team size), its rendezvous
/// colour (sends_first), and which boxes exist around it (non-periodic
/// borders). In the max-plus simulation a rank's times after the whole
/// schedule depend on those properties of the ranks within a bounded
/// distance: a round of posted messages couples a rank with its partners one
/// direction away, a synchronous transfer with the ranks up to three steps
/// along its chains (two on a properly coloured chain, three across the seam
/// of an odd ring). So two coordinates along a dimension whose properties
/// agree within that distance (their "windows") hold ranks with equal times,
/// in every round; and since the properties are per dimension, so do two
/// ranks whose coordinates agree in that sense along every dimension.
///
/// Classes are products of per-dimension classes. On a periodic dimension
/// whose properties repeat with a period p dividing its length, the class is
/// the coordinate modulo p (exact: translating by p maps the ring and the
/// schedule onto themselves); otherwise coordinates are grouped by their
/// windows: the bulk of a non-periodic dimension collapses into a few
/// classes, only the coordinates near its borders (or near the seam of an odd
/// ring under the rendezvous colouring) stay classes of their own. A uniform
/// periodic 100 x 100 x 100 grid is one class for Shift, SingleHop and
/// TtlMultiHop (eight in rendezvous mode, the colours), `c^3` for TeamShift.

#include "../../detail/arithmetic.hpp"
#include "../../detail/hash.hpp"
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <vector>

#include "../../grid/grid_shape.hpp"
#include "../../detail/schedule/colouring.hpp"
#include "../../schedule/schedule.hpp"
#include "../cost/node_placement.hpp"

namespace haloshift::detail {

/// Whether a transfer of `s` names its senders (sender_class::only: NodeAggregate's, whose node
/// membership is no property of one coordinate): then every rank is a class of its own.
inline bool names_senders(const schedule& s) {
  for (const schedule_round& r : s.rounds)
    for (const transfer& t : r.transfers)
      if (!t.senders.only.empty()) return true;
  return false;
}

/// A partition of a grid's ranks into classes of equal simulated times, with
/// one representative rank per class and the number of ranks it stands for.
class rank_classes {
 public:
  /// Every rank a class of its own (non-uniform blocks or links).
  static rank_classes each_rank(const grid_shape& grid) {
    rank_classes out;
    for (int d = 0; d < max_dims; ++d) out.axes_[d] = axis::identity(grid.dim(d));
    return out;
  }

  /// The classes of schedule `s` on `grid`, for blocks of the same size on
  /// every rank and the same message time on every link. `colours`: the
  /// ranks run the rendezvous protocol, whose colouring tells ranks apart
  /// and whose synchronous chains couple ranks further than a round does.
  /// `also`, when given, tells ranks apart as well: its class along a
  /// dimension counts as one more property of the coordinate (a part of a
  /// schedule whose packing follows the whole schedule's classes). `nodes`,
  /// when given: two levels, and whether each transfer stays inside a node
  /// (along each dimension) tells ranks apart too. Named senders: every rank.
  static rank_classes of(const grid_shape& grid, const schedule& s, bool colours, const rank_classes* also = nullptr,
                         const node_boxes* nodes = nullptr) {
    if (names_senders(s)) return each_rank(grid);
    rank_classes out;
    for (int d = 0; d < max_dims; ++d) out.axes_[d] = along(grid, s, d, colours, also, false, nodes);
    return out;
  }

  /// Coarser classes on which `values` (one per class, in class order) are still constant: along each
  /// dimension the classes whose values agree bit for bit on every class along the other dimensions
  /// become one, unless they lie in different classes of `keep_apart` along that dimension. Equal
  /// values along d for (.., i, ..) and (.., j, ..), and along e likewise, make the products of the
  /// merged classes hold one value, so every dimension merges at once.
  rank_classes merged_where_equal(const std::vector<double>& values, const rank_classes* keep_apart) const {
    std::array<std::vector<int>, max_dims> joins;  // per class along d: the class along d it joins
    bool merged = false;
    for (int d = 0; d < max_dims; ++d) merged = equal_slices(values, d, keep_apart, joins[d]) || merged;
    if (!merged) return *this;
    rank_classes out;
    for (int d = 0; d < max_dims; ++d) {
      std::vector<int> key;
      for (const int j : axes_[d].of) key.push_back(joins[d][static_cast<std::size_t>(j)]);
      out.axes_[d] = axis::grouped(key);
    }
    return out;
  }

  /// The classes of the ranks' compiled programs (which blocks each message
  /// carries, from where in the layout): coarser than of(): a program
  /// depends on the properties and the boxes within one transfer's reach,
  /// not on how far the schedule couples times.
  static rank_classes programs(const grid_shape& grid, const schedule& s) {
    if (names_senders(s)) return each_rank(grid);
    rank_classes out;
    for (int d = 0; d < max_dims; ++d) out.axes_[d] = along(grid, s, d, false, nullptr, true);
    return out;
  }

  /// Per rank of `grid` (indexed by rank_of: the grid's rank order), the value of its class in `values`.
  std::vector<double> per_rank(const grid_shape& grid, const std::vector<double>& values) const {
    std::vector<double> out(static_cast<std::size_t>(grid.size()));
    for (int x = 0; x < grid.dim(0); ++x)
      for (int y = 0; y < grid.dim(1); ++y)
        for (int z = 0; z < grid.dim(2); ++z)
          out[static_cast<std::size_t>(grid.rank_of({x, y, z}))] = values[static_cast<std::size_t>(class_of({x, y, z}))];
    return out;
  }
  /// Number of classes.
  int size() const noexcept { return axes_[0].classes() * axes_[1].classes() * axes_[2].classes(); }
  /// The class of the rank at `coords`.
  int class_of(const offset& coords) const noexcept {
    int c = 0;
    for (int d = 0; d < max_dims; ++d) c = c * axes_[d].classes() + axes_[d].of[coords[d]];
    return c;
  }
  /// Coordinates of the representative of class `c` (a real rank of the class).
  offset representative(int c) const noexcept {
    offset out{};
    for (int d = max_dims - 1; d >= 0; --d) {
      out[d] = axes_[d].first[static_cast<std::size_t>(c % axes_[d].classes())];
      c /= axes_[d].classes();
    }
    return out;
  }
  /// How many ranks class `c` stands for.
  std::int64_t members(int c) const noexcept {
    std::int64_t out = 1;
    for (int d = max_dims - 1; d >= 0; --d) {
      out *= axes_[d].count[static_cast<std::size_t>(c % axes_[d].classes())];
      c /= axes_[d].classes();
    }
    return out;
  }
  /// Classes along dimension `d`: a class is `class_of` the product of one class per dimension.
  int classes_along(int d) const noexcept { return axes_[d].classes(); }
  /// The class along `d` of coordinate `x`.
  int class_along(int d, int x) const noexcept { return axes_[d].of[static_cast<std::size_t>(x)]; }
  /// The representative coordinate along `d` of class `j` along `d`.
  int first_along(int d, int j) const noexcept { return axes_[d].first[static_cast<std::size_t>(j)]; }
  /// How many coordinates along `d` class `j` along `d` holds.
  int count_along(int d, int j) const noexcept { return axes_[d].count[static_cast<std::size_t>(j)]; }

 private:
  /// The classes along one dimension: of[coordinate], and per class its first coordinate and size.
  struct axis {
    std::vector<int> of, first, count;
    int classes() const noexcept { return static_cast<int>(first.size()); }
    static axis identity(int n) {
      axis a;
      for (int x = 0; x < n; ++x) {
        a.of.push_back(x);
        a.first.push_back(x);
        a.count.push_back(1);
      }
      return a;
    }
    /// Groups coordinates by a key per coordinate (classes numbered in order of first appearance).
    template <class Key>
    static axis grouped(const std::vector<Key>& key) {
      axis a;
      std::map<Key, int> id;
      for (std::size_t x = 0; x < key.size(); ++x) {
        const auto [it, added] = id.emplace(key[x], static_cast<int>(a.first.size()));
        if (added) {
          a.first.push_back(static_cast<int>(x));
          a.count.push_back(0);
        }
        a.of.push_back(it->second);
        ++a.count[static_cast<std::size_t>(it->second)];
      }
      return a;
    }
  };

  /// What tells coordinate x along `d` apart, per transfer: whether it sends (its sender class) and,
  /// with colours, whether it sends first; with `nodes`, whether its partners ahead and behind lie in its
  /// node's segment; then its class in `also`; interned to one number per coordinate.
  static std::vector<int> properties(const grid_shape& grid, const schedule& s, int d, bool colours,
                                     const rank_classes* also, const node_boxes* nodes) {
    const auto inside = [&](int x, long long w) {  // the box w away along d is in x's node segment
      long long y = x + w;
      if (y < 0 || y >= grid.dim(d)) {
        if (!grid.periodic(d)) return 2;  // no box there
        y = detail::positive_mod(y, static_cast<long long>(grid.dim(d)));
      }
      return int{nodes->segment(d, x) == nodes->segment(d, static_cast<int>(y))};
    };
    std::vector<const transfer*> by_sender, by_colour;
    for (const schedule_round& r : s.rounds)
      for (const transfer& t : r.transfers) {
        if (t.senders.dim == d) by_sender.push_back(&t);
        if (colours && colour_dimension(grid, t.direction) == d) by_colour.push_back(&t);
      }
    std::vector<std::vector<int>> rows(static_cast<std::size_t>(grid.dim(d)));
    for (int x = 0; x < grid.dim(d); ++x) {
      offset coords{0, 0, 0};
      coords[d] = x;
      auto& row = rows[static_cast<std::size_t>(x)];
      for (const transfer* t : by_sender) row.push_back(t->senders.contains(coords));
      for (const transfer* t : by_colour) row.push_back(sends_first(grid, coords, t->direction));
      if (nodes)
        for (const schedule_round& r : s.rounds)
          for (const transfer& t : r.transfers)
            if (t.direction[d] != 0) row.insert(row.end(), {inside(x, t.direction[d]), inside(x, -t.direction[d])});
      if (also) row.push_back(also->axes_[d].of[static_cast<std::size_t>(x)]);
    }
    return axis::grouped(rows).of;
  }

  /// How far along `d` a rank's simulated times can depend on other ranks' properties: the distance
  /// the schedule couples ranks over (a round: its longest direction; a synchronous transfer: three
  /// steps of its chains), plus how far the existence of partners and blocks reaches from a rank.
  /// `reach_only`: the latter alone, what a rank's program depends on.
  static long long window(const schedule& s, int d, bool colours, bool reach_only) {
    long long coupled = 0, reach = 0;
    for (const schedule_round& r : s.rounds) {
      long long longest = 0;
      for (const transfer& t : r.transfers) {
        const long long step = std::abs(static_cast<long long>(t.direction[d]));
        longest = std::max(longest, step);
        if (colours) coupled += 3 * step;
        long long block = 0;
        for (const offset& o : t.blocks) block = std::max(block, std::abs(static_cast<long long>(o[d])));
        reach = std::max(reach, step + block);
      }
      if (!colours) coupled += longest;
    }
    return (reach_only ? 0 : coupled) + reach + 1;
  }

  /// The classes along `d`.
  static axis along(const grid_shape& grid, const schedule& s, int d, bool colours, const rank_classes* also,
                    bool reach_only, const node_boxes* nodes = nullptr) {
    const int n = grid.dim(d);
    if (n == 1) return axis::identity(1);
    const std::vector<int> property = properties(grid, s, d, colours, also, nodes);
    if (grid.periodic(d)) {
      const int p = cyclic_period(property);
      if (p < n) {
        std::vector<int> residue(static_cast<std::size_t>(n));
        for (int x = 0; x < n; ++x) residue[static_cast<std::size_t>(x)] = x % p;
        return axis::grouped(residue);
      }
    }
    const long long w = window(s, d, colours, reach_only);
    // A window as wide as the dimension tells every coordinate apart (or costs more than it saves).
    if (2 * w + 1 >= n || static_cast<long long>(n) * (2 * w + 1) > (std::int64_t{1} << 26)) return axis::identity(n);
    std::vector<std::vector<int>> windows(static_cast<std::size_t>(n));
    for (int x = 0; x < n; ++x) {
      auto& row = windows[static_cast<std::size_t>(x)];
      row.reserve(static_cast<std::size_t>(2 * w + 1));
      for (long long j = x - w; j <= x + w; ++j) {
        long long y = j;
        if (grid.periodic(d))
          y = detail::positive_mod(j, static_cast<long long>(n));
        else if (j < 0 || j >= n) {
          row.push_back(-1);  // no box there
          continue;
        }
        row.push_back(property[static_cast<std::size_t>(y)]);
      }
    }
    return axis::grouped(windows);
  }

  /// merged_where_equal along `d`: `joins[j]` is the first class along d whose slice of `values` (the
  /// classes with j along d, in class order) equals class j's bit for bit and which lies in j's class of
  /// `keep_apart`; j itself if none. True when some class joins another.
  bool equal_slices(const std::vector<double>& values, int d, const rank_classes* keep_apart,
                    std::vector<int>& joins) const {
    const int n = axes_[d].classes();
    std::size_t inner = 1, outer = 1;  // classes along the later and the earlier dimensions
    for (int e = d + 1; e < max_dims; ++e) inner *= static_cast<std::size_t>(axes_[e].classes());
    for (int e = 0; e < d; ++e) outer *= static_cast<std::size_t>(axes_[e].classes());
    const std::size_t stride = inner * static_cast<std::size_t>(n);
    const auto bits = [&](int j, std::size_t o, std::size_t i) {
      return std::bit_cast<std::uint64_t>(values[o * stride + static_cast<std::size_t>(j) * inner + i]);
    };
    const auto same_slices = [&](int j, int k) {
      for (std::size_t o = 0; o < outer; ++o)
        for (std::size_t i = 0; i < inner; ++i)
          if (bits(j, o, i) != bits(k, o, i)) return false;
      return true;
    };
    const auto apart = [&](int j) {
      return keep_apart ? keep_apart->class_along(d, axes_[d].first[static_cast<std::size_t>(j)]) : 0;
    };
    joins.resize(static_cast<std::size_t>(n));
    std::unordered_map<std::uint64_t, std::vector<int>> by_hash;  // a slice's hash: the first classes with it
    bool merged = false;
    for (int j = 0; j < n; ++j) {
      detail::fnv1a h;  // over the class kept apart, then the bits
      h.word(static_cast<std::uint64_t>(apart(j)));
      for (std::size_t o = 0; o < outer; ++o)
        for (std::size_t i = 0; i < inner; ++i) h.word(static_cast<std::uint64_t>(bits(j, o, i)));
      std::vector<int>& firsts = by_hash[h.get()];
      joins[static_cast<std::size_t>(j)] = j;
      for (const int first : firsts)
        if (apart(first) == apart(j) && same_slices(first, j)) {
          joins[static_cast<std::size_t>(j)] = first;
          merged = true;
          break;
        }
      if (joins[static_cast<std::size_t>(j)] == j) firsts.push_back(j);
    }
    return merged;
  }

  /// The smallest p dividing n with property[x] == property[(x + p) mod n] for all x (n: none smaller):
  /// a sequence is a power of a block exactly when its shortest period (the prefix function's) divides n.
  static int cyclic_period(const std::vector<int>& property) {
    const std::size_t n = property.size();
    std::vector<std::size_t> border(n, 0);
    for (std::size_t i = 1; i < n; ++i) {
      std::size_t k = border[i - 1];
      while (k > 0 && property[i] != property[k]) k = border[k - 1];
      if (property[i] == property[k]) ++k;
      border[i] = k;
    }
    const std::size_t p = n - border[n - 1];
    return static_cast<int>(n % p == 0 ? p : n);
  }

  std::array<axis, max_dims> axes_;
};

}  // namespace haloshift::detail

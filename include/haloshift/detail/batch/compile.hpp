// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file compile.hpp
/// @brief A program (one rank's compiled schedule) turned into what a batched
/// exchange runs: per round, the launches that pack its departures (with its
/// copies to the rank itself) and unpack its arrivals, over one table of
/// strided copies, and the MPI calls on the staging. Messages carry the same
/// bytes in the same order as the plan's own host path, so ranks packing on a
/// device, on threads or serially exchange with each other unchanged.
///
/// A launch runs its segments in parallel. Where the host path would order
/// two copies that touch the same element (a copy to the rank itself that
/// writes a cell a later departure reads; two arrivals combined into one
/// cell), the later copy goes into a later launch (a wave), so the result is
/// bit for bit the host path's.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "../compiled.hpp"
#include "../exchange/executor.hpp"
#include "../exchange/program.hpp"
#include "segment.hpp"

namespace haloshift::detail::batch {

/// One array a batched exchange moves: its element's bytes and alignment.
struct array_shape {
  std::size_t bytes = 0, align = 1;
};

/// One message of a batched round: `bytes` at `offset` of the round's staging, to or from `peer`,
/// of the round's transfer number `transfer` (its route through a node's window: shared_window).
struct staged_post {
  std::size_t offset = 0, bytes = 0;
  int peer = -1, tag = 0;
  std::size_t transfer = 0;
};

/// A round: its pack launches, then (once its messages have arrived) its unpack launches. The
/// staging holds the arrivals at [0, arrivals) and the departures after them.
struct batched_round {
  std::vector<launch> pack, unpack;
  std::vector<staged_post> receives, sends;
  std::size_t arrivals = 0, departures = 0;
};

/// A program in one direction, for one set of arrays.
struct compiled_program {
  std::vector<batched_round> rounds;
  std::vector<segment> table;
  std::size_t staging = 0;  ///< bytes of staging the largest round needs
};

/// Collects the copies of one phase in host order and turns them into launches.
class phase_builder {
 public:
  phase_builder(std::span<const array_shape> arrays) : arrays_(arrays) {}

  /// A copy of `repeat` rows (`count` elements of array `a` each) between elements
  /// `first + r * stride` of `a` and, `to_array` = -1: consecutive staging bytes from `packed`,
  /// else elements `to_first + r * to_stride` of `to_array`. `pack`: array -> staging, else
  /// staging -> array; `combine`: the target is combined, not stored.
  HALOSHIFT_BUILDER void add(int a, std::size_t first, std::size_t count, std::size_t stride, std::size_t repeat,
                             std::size_t packed, bool pack, bool combine);
  /// A copy to the rank itself inside array `a`: rows from `from` to `to`.
  HALOSHIFT_BUILDER void add_local(int a, std::size_t from, std::size_t from_stride, std::size_t to,
                                   std::size_t to_stride, std::size_t count, std::size_t repeat, bool combine);

  /// Appends the phase's segments to `table` in launch order and returns its launches.
  HALOSHIFT_BUILDER std::vector<launch> finish(std::vector<segment>& table);

 private:
  struct item {
    segment s;
    bool combine = false;
  };
  int staging_base() const noexcept { return static_cast<int>(arrays_.size()); }

  /// The bytes of every base a launch's segments touch, and their strides, share this power of two.
  HALOSHIFT_BUILDER std::uint32_t word_bytes(std::span<const std::size_t> which) const;

  HALOSHIFT_BUILDER launch make_launch(std::vector<segment>& table, std::span<const std::size_t> which) const;

  /// Each item's wave: after every earlier item that writes what it reads or writes, or reads
  /// what it writes, in the user's arrays (the staging areas of a round never overlap).
  HALOSHIFT_BUILDER std::vector<int> waves() const;

  std::span<const array_shape> arrays_;
  std::vector<item> items_;
};

/// Calls `f(first, count, stride, repeat)` for the groups of elements message `m` carries, in
/// message order (strided groups where the program has them, else runs).
template <class F>
void for_each_group(const block_layout& layout, const message& m, F&& f) {
  if (m.selected && !m.contiguous && m.list.empty()) {
    for (const strided_run& g : m.strided) f(g.first, g.count, g.stride, g.repeat);
    return;
  }
  std::size_t first = 0, count = 0;  // consecutive elements of a send list merge into one run
  for_each_run(layout, m, [&](std::size_t at, std::size_t n) {
    if (count && first + count == at) {
      count += n;
      return;
    }
    if (count) f(first, count, std::size_t{0}, std::size_t{1});
    first = at;
    count = n;
  });
  if (count) f(first, count, std::size_t{0}, std::size_t{1});
}

/// Turns `p`, forwards or `backward`, over `arrays` (each message carrying every array's
/// elements in turn) into a compiled_program. `collective`: the program's one round runs as a
/// neighbourhood collective, whose edges are every transfer's messages, the rank's own included,
/// departures and arrivals each in transfer order (selected_neighbor_engine's order).
class program_compiler {
 public:
  program_compiler(const program& p, bool backward, std::span<const array_shape> arrays, bool collective)
      : p_(p), backward_(backward), arrays_(arrays), collective_(collective) {
    for (const array_shape& a : arrays) element_bytes_ += a.bytes;
  }

  HALOSHIFT_BUILDER compiled_program run();

 private:
  const message& outgoing(const transfer_program& t) const { return backward_ ? t.recv : t.send; }
  const message& incoming(const transfer_program& t) const { return backward_ ? t.send : t.recv; }
  static std::size_t index(const round_program& r, const transfer_program& t) {
    return static_cast<std::size_t>(&t - r.transfers.data());
  }

  /// Every array's elements of message `m`, packed at `at` (`pack`) or unpacked from it.
  HALOSHIFT_BUILDER void stage(phase_builder& b, const message& m, std::size_t at, bool pack, bool combine) const;

  /// A transfer to the rank itself: `from`'s elements onto `to`'s, pairing them as copy_to_self does.
  HALOSHIFT_BUILDER void local(phase_builder& b, const message& from, const message& to, bool combine) const;

  HALOSHIFT_BUILDER batched_round round(const round_program& r, std::vector<segment>& table) const;

  const program& p_;
  bool backward_;
  std::span<const array_shape> arrays_;
  bool collective_;
  std::size_t element_bytes_ = 0;
};

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER void phase_builder::add(int a, std::size_t first, std::size_t count, std::size_t stride,
                                          std::size_t repeat, std::size_t packed, bool pack, bool combine) {
  if (!count || !repeat) return;
  const std::int64_t eb = static_cast<std::int64_t>(arrays_[a].bytes);
  segment s;
  const std::int64_t cells = static_cast<std::int64_t>(first) * eb, at = static_cast<std::int64_t>(packed);
  const std::int64_t cell_stride = static_cast<std::int64_t>(stride) * eb, row = static_cast<std::int64_t>(count) * eb;
  s.from = pack ? cells : at;
  s.to = pack ? at : cells;
  s.from_stride = pack ? cell_stride : row;
  s.to_stride = pack ? row : cell_stride;
  s.row_bytes = static_cast<std::uint32_t>(row);
  s.repeat = static_cast<std::uint32_t>(repeat);
  s.from_base = static_cast<std::uint16_t>(pack ? a : staging_base());
  s.to_base = static_cast<std::uint16_t>(pack ? staging_base() : a);
  items_.push_back({s, combine});
}

HALOSHIFT_BUILDER void phase_builder::add_local(int a, std::size_t from, std::size_t from_stride, std::size_t to,
                                                std::size_t to_stride, std::size_t count, std::size_t repeat,
                                                bool combine) {
  if (!count || !repeat) return;
  const std::int64_t eb = static_cast<std::int64_t>(arrays_[a].bytes);
  segment s;
  s.from = static_cast<std::int64_t>(from) * eb;
  s.to = static_cast<std::int64_t>(to) * eb;
  s.from_stride = static_cast<std::int64_t>(from_stride) * eb;
  s.to_stride = static_cast<std::int64_t>(to_stride) * eb;
  s.row_bytes = static_cast<std::uint32_t>(static_cast<std::int64_t>(count) * eb);
  s.repeat = static_cast<std::uint32_t>(repeat);
  s.from_base = s.to_base = static_cast<std::uint16_t>(a);
  items_.push_back({s, combine});
}

HALOSHIFT_BUILDER std::vector<launch> phase_builder::finish(std::vector<segment>& table) {
  const std::vector<int> wave = waves();
  std::vector<std::size_t> order(items_.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // A launch: one wave; copies apart from combines, and combines one target array each (the
  // element type they add).
  auto key = [&](std::size_t i) {
    const item& t = items_[i];
    return std::tuple(wave[i], t.combine, t.combine ? int{t.s.to_base} : 0);
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  std::vector<launch> out;
  for (std::size_t n = 0; n < order.size();) {
    std::size_t end = n;
    while (end < order.size() && key(order[end]) == key(order[n])) ++end;
    out.push_back(make_launch(table, std::span(order).subspan(n, end - n)));
    n = end;
  }
  return out;
}

HALOSHIFT_BUILDER std::uint32_t phase_builder::word_bytes(std::span<const std::size_t> which) const {
  std::uint64_t g = 8;
  auto fold = [&g](std::uint64_t v) { g = std::gcd(g, v); };
  for (std::size_t i : which) {
    const segment& s = items_[i].s;
    for (std::int64_t v : {s.from, s.to, s.from_stride, s.to_stride, std::int64_t{s.row_bytes}})
      fold(static_cast<std::uint64_t>(v < 0 ? -v : v));
    for (int b : {int{s.from_base}, int{s.to_base}})
      if (b < staging_base()) fold(arrays_[b].align);
  }
  return static_cast<std::uint32_t>(g ? g : 8);
}

HALOSHIFT_BUILDER launch phase_builder::make_launch(std::vector<segment>& table,
                                                    std::span<const std::size_t> which) const {
  launch l;
  l.first = table.size();
  l.count = which.size();
  const item& head = items_[which.front()];
  if (head.combine) {
    l.op = batch_op::plus;  // a placeholder: the exchange sets its operation and element type
    l.word_bytes = static_cast<std::uint32_t>(arrays_[head.s.to_base].bytes);
  } else {
    l.word_bytes = word_bytes(which);
  }
  for (std::size_t i : which) {
    segment s = items_[i].s;
    s.first_word = l.words;
    l.words += std::uint64_t{s.repeat} * (s.row_bytes / l.word_bytes);
    table.push_back(s);
  }
  return l;
}

HALOSHIFT_BUILDER std::vector<int> phase_builder::waves() const {
  struct span_of {
    std::int64_t lo, hi;
    std::size_t item;
    bool writes;
  };
  std::vector<std::vector<span_of>> by_base(arrays_.size());
  for (std::size_t i = 0; i < items_.size(); ++i) {
    const segment& s = items_[i].s;
    auto rows = [&](int base, std::int64_t first, std::int64_t stride, bool writes) {
      if (base >= staging_base()) return;
      for (std::uint32_t r = 0; r < s.repeat; ++r)
        by_base[base].push_back({first + r * stride, first + r * stride + s.row_bytes, i, writes});
    };
    rows(s.from_base, s.from, s.from_stride, false);
    rows(s.to_base, s.to, s.to_stride, true);
  }
  std::vector<std::vector<std::size_t>> before(items_.size());  // earlier items each must follow
  for (auto& spans : by_base) {
    std::sort(spans.begin(), spans.end(), [](const span_of& a, const span_of& b) { return a.lo < b.lo; });
    std::vector<const span_of*> open;
    for (const span_of& s : spans) {
      std::erase_if(open, [&](const span_of* o) { return o->hi <= s.lo; });
      for (const span_of* o : open)
        if (o->item != s.item && (o->writes || s.writes))
          before[std::max(o->item, s.item)].push_back(std::min(o->item, s.item));
      open.push_back(&s);
    }
  }
  std::vector<int> wave(items_.size(), 0);
  for (std::size_t i = 0; i < items_.size(); ++i)
    for (std::size_t e : before[i]) wave[i] = std::max(wave[i], wave[e] + 1);
  return wave;
}

HALOSHIFT_BUILDER compiled_program program_compiler::run() {
  compiled_program out;
  const std::size_t n = p_.rounds.size();
  for (std::size_t i = 0; i < n; ++i) out.rounds.push_back(round(p_.rounds[backward_ ? n - 1 - i : i], out.table));
  for (const batched_round& r : out.rounds) out.staging = std::max(out.staging, r.arrivals + r.departures);
  return out;
}

HALOSHIFT_BUILDER void program_compiler::stage(phase_builder& b, const message& m, std::size_t at, bool pack,
                                               bool combine) const {
  for (std::size_t a = 0; a < arrays_.size(); ++a) {
    for_each_group(p_.layout, m, [&](std::size_t first, std::size_t count, std::size_t stride, std::size_t repeat) {
      b.add(static_cast<int>(a), first, count, stride, repeat, at, pack, combine);
      at += count * repeat * arrays_[a].bytes;
    });
  }
}

HALOSHIFT_BUILDER void program_compiler::local(phase_builder& b, const message& from, const message& to,
                                               bool combine) const {
  for (std::size_t a = 0; a < arrays_.size(); ++a) {
    const int array = static_cast<int>(a);
    if (alike_groups(from, to)) {
      for (std::size_t g = 0; g < from.strided.size(); ++g) {
        const strided_run &x = from.strided[g], &y = to.strided[g];
        b.add_local(array, x.first, x.stride, y.first, y.stride, x.count, x.repeat, combine);
      }
      continue;
    }
    std::size_t x = 0, y = 0, n = 0;  // single elements that follow each other merge into runs
    auto flush = [&] {
      if (n) b.add_local(array, x, 0, y, 0, n, 1, combine);
      n = 0;
    };
    auto runs = [&](std::size_t f, std::size_t t, std::size_t count) {
      if (n && x + n == f && y + n == t) {
        n += count;
        return;
      }
      flush();
      x = f, y = t, n = count;
    };
    copy_to_self(
        p_.layout, from, to, [&](std::size_t f, std::size_t t) { runs(f, t, 1); }, runs,
        [](std::size_t, std::size_t) {});
    flush();
  }
}

HALOSHIFT_BUILDER batched_round program_compiler::round(const round_program& r, std::vector<segment>& table) const {
  batched_round out;
  phase_builder pack(arrays_), unpack(arrays_);
  for (const transfer_program& t : r.transfers) {  // arrivals first, in transfer order
    const message& in = incoming(t);
    if ((t.self && !collective_) || !in.exists()) continue;
    out.receives.push_back({out.arrivals, in.count * element_bytes_, in.peer, t.tag, index(r, t)});
    stage(unpack, in, out.arrivals, false, backward_);
    out.arrivals += in.count * element_bytes_;
  }
  for (const transfer_program& t : r.transfers) {
    const message& out_m = outgoing(t);
    if (!out_m.exists()) continue;
    if (t.self && !collective_) {
      local(pack, out_m, incoming(t), backward_);
      continue;
    }
    const std::size_t at = out.arrivals + out.departures;
    out.sends.push_back({at, out_m.count * element_bytes_, out_m.peer, t.tag, index(r, t)});
    stage(pack, out_m, at, true, false);
    out.departures += out_m.count * element_bytes_;
  }
  out.pack = pack.finish(table);
  out.unpack = unpack.finish(table);
  return out;
}
#endif

}  // namespace haloshift::detail::batch

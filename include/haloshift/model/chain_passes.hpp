// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file chain_passes.hpp
/// @brief A rendezvous transfer whose chains alternate, simulated in passes
/// over the classes instead of a recursion (class_simulation's inner loop).
///
/// Where the colouring is sends_first()'s, sender-first and receiver-first
/// classes alternate along each chain, except that two sender-first classes
/// meet at the seam of an odd cycle. A class's send then waits for at most
/// two other sends, in a fixed order: (1) a sender-first class's send waits
/// for its partner's time before the transfer, or at the seam for its
/// partner's send; (2) a receiver-first class's send waits for the send it
/// receives and for its partner's send, both from (1); (3) a class ends with
/// its send or its receive. Three passes whose iterations are independent,
/// where the recursion waits on one send after another; the same sums as
/// class_simulation::sent() and received(), term for term. The passes run
/// row by row (a, b) with z innermost: a row's partners lie in one row each,
/// so their index is a row base plus the z table, and along x or y the colour
/// is the row's.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../grid/offset.hpp"
#include "table_view.hpp"
#include "transfer_links.hpp"

namespace haloshift::detail {

/// A class's place in its chains along the colour dimension.
enum chain_kind : char {
  sender,   ///< sends first, to a receiver-first class or beyond a border
  seam,     ///< sends first, to a sender-first class whose own partner receives first
  receiver  ///< receives first, between sender-first classes or borders
};

/// The kind of each class along the colour dimension of `l`, into `kinds`. False for any other
/// colouring (a custom strategy's chains), which takes the recursion.
inline bool classify_chains(const transfer_links& l, std::vector<char>& kinds) {
  const int cd = l.colour_dim;
  if (cd < 0) return false;
  const std::vector<int>&ahead = l.ahead[cd], &behind = l.behind[cd];
  const auto sends_first = [&l](int j) { return j >= 0 && l.first[static_cast<std::size_t>(j)] != 0; };
  kinds.resize(l.first.size());
  for (std::size_t j = 0; j < l.first.size(); ++j) {
    const int to = ahead[j], from = behind[j];
    if (l.first[j] && !sends_first(to))
      kinds[j] = sender;
    else if (l.first[j] && !sends_first(ahead[static_cast<std::size_t>(to)]))
      kinds[j] = seam;
    else if (!l.first[j] && (to < 0 || sends_first(to)) && (from < 0 || sends_first(from)))
      kinds[j] = receiver;
    else
      return false;
  }
  return true;
}

/// Every class's staging bits in one transfer, where they differ between classes: read off the classes
/// of programs (rank_classes::programs) that the simulated classes are parts of.
struct staging_lookup {
  std::array<std::vector<int>, max_dims> program_along;  ///< per class along d: its class of programs along d
  std::vector<unsigned char> bits;                       ///< per class of programs
  std::size_t programs1 = 0, programs2 = 0;              ///< classes of programs along y and z
  /// Writes the bits of the classes of row (a, b), z innermost, to `out`.
  void row(int a, int b, unsigned char* out) const {
    const std::size_t base =
        (std::size_t(program_along[0][std::size_t(a)]) * programs1 + std::size_t(program_along[1][std::size_t(b)])) *
        programs2;
    for (std::size_t z = 0; z < program_along[2].size(); ++z) out[z] = bits[base + std::size_t(program_along[2][z])];
  }
};

/// What the passes need besides the tables: the classes along x (the view has y and z), each class's
/// kind along the colour dimension (classify_chains), and where each class's time after the transfer goes.
struct chain_pass_target {
  int along0;
  const char* kinds;
  double* next;
};

/// An alike transfer (every class sends all blocks to a partner that is there, table_view<true>) in the
/// three passes; `v.by_count[v.blocks]` is every message's cost.
inline void alike_chain_passes(const table_view<true>& view, const chain_pass_target& out) {
  const table_view<true> v = view;  // a local copy: the stores to done and next cannot alias it
  const int cd = v.colour_dim;
  const message_cost& x = v.by_count[v.blocks];
  const double pack = x.pack, unpack = x.unpack, time = x.seconds, delta = v.delta;
  const double* now = v.now;
  double* done = v.done;
  double* next = out.next;
  const char* kinds = out.kinds;
  // sent()'s sum: max(ready + packing, partner) + time + delta (adding 0 is exact and skipped)
  const auto sum = [pack, time, delta](double ready, double partner) {
    const double packed = pack != 0 ? ready + pack : ready;
    const double t = std::max(packed, partner) + time;
    return delta != 0 ? t + delta : t;
  };
  const auto row = [&v](int a, int b) { return (std::size_t(a) * v.along1 + std::size_t(b)) * v.along2; };
  const int along_z = static_cast<int>(v.along2), along_y = static_cast<int>(v.along1);
  const int *ahead_z = v.ahead[2], *behind_z = v.behind[2];
  for (int a = 0; a < out.along0; ++a)  // (1)
    for (int b = 0; b < along_y; ++b) {
      const std::size_t here = row(a, b), to = row(v.ahead[0][a], v.ahead[1][b]);
      const char row_kind = cd == 0 ? kinds[a] : cd == 1 ? kinds[b] : static_cast<char>(sender);
      if (cd != 2 && row_kind == receiver) continue;
      const std::size_t after = row(v.ahead[0][v.ahead[0][a]], v.ahead[1][v.ahead[1][b]]);
      for (int z = 0; z < along_z; ++z) {
        const char kind = cd == 2 ? kinds[z] : row_kind;
        if (kind == receiver) continue;
        const int tz = ahead_z[z];
        double partner = now[to + std::size_t(tz)];
        if (kind == seam) partner = sum(partner, now[after + std::size_t(ahead_z[tz])]);
        done[here + std::size_t(z)] = sum(now[here + std::size_t(z)], partner);
      }
    }
  for (int a = 0; a < out.along0; ++a)  // (2)
    for (int b = 0; b < along_y; ++b) {
      const char row_kind = cd == 0 ? kinds[a] : cd == 1 ? kinds[b] : static_cast<char>(receiver);
      if (row_kind != receiver) continue;
      const std::size_t here = row(a, b), to = row(v.ahead[0][a], v.ahead[1][b]),
                        from = row(v.behind[0][a], v.behind[1][b]);
      for (int z = 0; z < along_z; ++z) {
        if (cd == 2 && kinds[z] != receiver) continue;
        const double received = done[from + std::size_t(behind_z[z])] + unpack;
        done[here + std::size_t(z)] = sum(received, done[to + std::size_t(ahead_z[z])]);
      }
    }
  for (int a = 0; a < out.along0; ++a)  // (3)
    for (int b = 0; b < along_y; ++b) {
      const std::size_t here = row(a, b), from = row(v.behind[0][a], v.behind[1][b]);
      const char row_kind = cd == 0 ? kinds[a] : cd == 1 ? kinds[b] : static_cast<char>(sender);
      for (int z = 0; z < along_z; ++z) {
        const bool receives_last = (cd == 2 ? kinds[z] : row_kind) == receiver;
        next[here + std::size_t(z)] =
            receives_last ? done[here + std::size_t(z)] : done[from + std::size_t(behind_z[z])] + unpack;
      }
    }
}

/// Scratch space of border_chain_passes, kept between transfers.
struct chain_pass_scratch {
  std::vector<int> counts;                ///< the blocks each class sends
  std::vector<std::uint64_t> row_held;    ///< the blocks held along a row's first two dimensions
  std::vector<unsigned char> class_bits;  ///< each class's staging bits, where they vary
};
/// Messages and bytes a transfer sends, every member of a class counted.
struct pass_totals {
  std::int64_t messages = 0;
  double bytes = 0;
};

/// A transfer with borders (partners or blocks missing, table_view<false>): the three passes after a
/// pass (0) that counts each class's blocks once (0: it sends nothing, beyond a border or with no block
/// there). A class then sends or receives only where those counts say, and each send costs what its own
/// count does. With `staged`, pass 0 also reads each class's staging bits, and a class packs its send
/// and unpacks its receive by its own bits (`v.by_count` charging both); without, `v.by_count` charges
/// what every class does. `members[d][j]`: the ranks of class j along d.
inline pass_totals border_chain_passes(const table_view<false>& view, const chain_pass_target& out,
                                       const std::array<std::vector<std::int64_t>, max_dims>& members,
                                       const staging_lookup* staged, chain_pass_scratch& scratch) {
  const table_view<false> v = view;  // a local copy: the stores to done and next cannot alias it
  const int cd = v.colour_dim;
  const std::size_t n = std::size_t(out.along0) * v.along1 * v.along2;
  scratch.counts.resize(n);
  int* counts = scratch.counts.data();
  const double* now = v.now;
  double* done = v.done;
  double* next = out.next;
  const char* kinds = out.kinds;
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  const auto row = [&v](int a, int b) {
    if (a < 0 || b < 0) return none;
    return (std::size_t(a) * v.along1 + std::size_t(b)) * v.along2;
  };
  const auto in_row = [](std::size_t base, int z) { return base == none || z < 0 ? none : base + std::size_t(z); };
  const int along_z = static_cast<int>(v.along2), along_y = static_cast<int>(v.along1);
  const int *ahead_z = v.ahead[2], *behind_z = v.behind[2];
  const std::size_t words = v.words;
  std::vector<std::uint64_t>& row_held = scratch.row_held;
  row_held.resize(words);
  scratch.class_bits.resize(staged ? n : 0);
  unsigned char* class_bits = scratch.class_bits.data();
  pass_totals totals;
  for (int a = 0; a < out.along0; ++a)  // (0) the blocks each class sends
    for (int b = 0; b < along_y; ++b) {
      const std::size_t here = row(a, b), to = row(v.ahead[0][a], v.ahead[1][b]);
      for (std::size_t w = 0; w < words; ++w)
        row_held[w] = v.held[0][std::size_t(a) * words + w] & v.held[1][std::size_t(b) * words + w];
      const std::int64_t row_members = members[0][std::size_t(a)] * members[1][std::size_t(b)];
      if (staged) staged->row(a, b, class_bits + here);
      for (int z = 0; z < along_z; ++z) {
        int count = 0;
        if (to != none && ahead_z[z] >= 0) {
          if (words == 0) count = v.blocks;
          for (std::size_t w = 0; w < words; ++w)
            count += std::popcount(row_held[w] & v.held[2][std::size_t(z) * words + w]);
        }
        counts[here + std::size_t(z)] = count;
        if (count == 0) continue;
        const std::int64_t m = row_members * members[2][std::size_t(z)];
        totals.messages += m;
        totals.bytes += static_cast<double>(m) * v.by_count[count].bytes;
      }
    }
  // A class's bits: its own where they vary, else all, by_count having charged the common ones.
  const auto bits = [staged, class_bits](std::size_t c) { return staged ? unsigned(class_bits[c]) : 3u; };
  // sent()'s sum for class c sending `count` blocks
  const auto sum = [&](std::size_t c, int count, double ready, double partner) {
    const message_cost& x = v.by_count[count];
    return std::max(ready + (bits(c) & 1u ? x.pack : 0.0), partner) + x.seconds + v.delta;
  };
  // when class c's receive from class `from` completes
  const auto received = [&](std::size_t c, std::size_t from) {
    return done[from] + (bits(c) & 2u ? v.by_count[counts[from]].unpack : 0.0);
  };
  const auto row_kind = [&](int a, int b) {
    return cd == 0 ? kinds[std::size_t(a)] : cd == 1 ? kinds[std::size_t(b)] : static_cast<char>(sender);
  };
  for (int a = 0; a < out.along0; ++a)  // (1) sender-first classes
    for (int b = 0; b < along_y; ++b) {
      const char kind_ab = row_kind(a, b);
      if (cd != 2 && kind_ab == receiver) continue;
      const int ta = v.ahead[0][a], tb = v.ahead[1][b];
      const std::size_t here = row(a, b), to_row = row(ta, tb);
      if (to_row == none) continue;  // no partner along this row
      const std::size_t after_row = row(v.ahead[0][ta], v.ahead[1][tb]);
      for (int z = 0; z < along_z; ++z) {
        const std::size_t c = here + std::size_t(z);
        const char kind = cd == 2 ? kinds[std::size_t(z)] : kind_ab;
        if (kind == receiver || counts[c] == 0) continue;
        const int tz = ahead_z[z];
        const std::size_t to = to_row + std::size_t(tz);
        double partner = now[to];
        if (kind == seam && counts[to] > 0)
          partner = sum(to, counts[to], now[to], now[after_row + std::size_t(ahead_z[tz])]);
        done[c] = sum(c, counts[c], now[c], partner);
      }
    }
  for (int a = 0; a < out.along0; ++a)  // (2) receiver-first classes
    for (int b = 0; b < along_y; ++b) {
      const char kind_ab = row_kind(a, b);
      if (cd != 2 && kind_ab != receiver) continue;
      const std::size_t here = row(a, b), to_row = row(v.ahead[0][a], v.ahead[1][b]),
                        from_row = row(v.behind[0][a], v.behind[1][b]);
      if (to_row == none) continue;
      for (int z = 0; z < along_z; ++z) {
        const std::size_t c = here + std::size_t(z);
        if ((cd == 2 && kinds[std::size_t(z)] != receiver) || counts[c] == 0) continue;
        const std::size_t from = in_row(from_row, behind_z[z]), to = to_row + std::size_t(ahead_z[z]);
        const double ready = from != none && counts[from] > 0 ? received(c, from) : now[c];
        done[c] = sum(c, counts[c], ready, counts[to] > 0 ? done[to] : now[to]);
      }
    }
  for (int a = 0; a < out.along0; ++a)  // (3) as complete(): a class ends with its send or its receive
    for (int b = 0; b < along_y; ++b) {
      const char kind_ab = row_kind(a, b);
      const std::size_t here = row(a, b), from_row = row(v.behind[0][a], v.behind[1][b]);
      for (int z = 0; z < along_z; ++z) {
        const std::size_t c = here + std::size_t(z), from = in_row(from_row, behind_z[z]);
        const bool sends = counts[c] > 0, receives = from != none && counts[from] > 0;
        const bool receives_first = (cd == 2 ? kinds[std::size_t(z)] : kind_ab) == receiver;
        if (sends && (!receives || !receives_first))
          next[c] = receives ? received(c, from) : done[c];
        else if (receives)
          next[c] = sends ? done[c] : received(c, from);
        else
          next[c] = now[c];
      }
    }
  return totals;
}

}  // namespace haloshift::detail

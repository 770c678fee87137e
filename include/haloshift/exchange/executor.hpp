// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file executor.hpp
/// @brief Runs any compiled schedule over MPI point-to-point, forwards
/// (ghost fill) or backwards (combining contributions onto the owners).

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "../mpi/check.hpp"
#include "program.hpp"
#include "protocol.hpp"

namespace haloshift::detail {

/// Reusable MPI state of one plan: staging space and request handles.
template <class T>
struct executor_state {
  std::vector<T> scratch;
  std::vector<MPI_Request> requests;
};

/// Calls `run(first, count)` for each range of the buffer that message `m`
/// carries, in message order: its one range, its selected pieces, or its slots.
template <class Run>
void for_each_run(const block_layout& layout, const message& m, Run&& run) {
  if (m.contiguous) {
    if (m.count) run(m.first, m.count);
    return;
  }
  if (m.selected) {
    for (const element_run& r : m.pieces) run(r.first, r.count);
    return;
  }
  for (int s : m.slots) run(layout.slots()[s].first, layout.slots()[s].count);
}

/// Walks the ranges a message carries one at a time (see for_each_run),
/// without allocating: pairs the two sides of a copy to the rank itself.
class run_cursor {
 public:
  run_cursor(const block_layout& layout, const message& m) : layout_(layout), m_(m) {}
  /// The next non-empty range, or a range of count 0 at the end.
  element_run next() {
    if (m_.contiguous) return i_++ == 0 ? element_run{m_.first, m_.count} : element_run{};
    if (m_.selected) return i_ < m_.pieces.size() ? m_.pieces[i_++] : element_run{};
    while (i_ < m_.slots.size()) {
      const block_slot& b = layout_.slots()[m_.slots[i_++]];
      if (b.count) return {b.first, b.count};
    }
    return {};
  }

 private:
  const block_layout& layout_;
  const message& m_;
  std::size_t i_ = 0;
};

/// `repeat` rows of `bytes` bytes (at least 32) from `from` to `to`, advancing
/// by the given strides. A row is copied in vector moves of a compile-time
/// size (`Chunk`: 64 bytes with AVX-512, 32 with AVX2, 16 otherwise, picked at
/// run time) plus one last, overlapping move for the tail: a handful of loads
/// and stores, not a memcpy call, whose per-call cost halved the speed of
/// 272-byte rows (a y face of a 32^3 box). `Prefetch` names the side that
/// strides (the cells; the packed side is consecutive): its next row is
/// prefetched while this one copies, for rows spread too far apart to be in
/// cache, which the hardware prefetcher does not follow (they lie pages
/// apart). In cache the prefetches only take load slots, so they are off
/// there. The body is a macro because each ISA needs its own function.
template <int Prefetch>  // 0: none, 1: the source strides, 2: the target strides
struct long_rows {
#define HALOSHIFT_COPY_ROWS_BODY                                                                 \
  for (std::size_t r = 0; r < repeat; ++r, to += to_stride, from += from_stride) {               \
    if (Prefetch != 0 && r + 1 < repeat)                                                         \
      for (std::size_t b = 0; b < bytes; b += 64) {                                              \
        if (Prefetch == 1) __builtin_prefetch(from + from_stride + b, 0);                        \
        if (Prefetch == 2) __builtin_prefetch(to + to_stride + b, 1);                            \
      }                                                                                          \
    std::size_t b = 0;                                                                           \
    for (; b + Chunk <= bytes; b += Chunk) __builtin_memcpy(to + b, from + b, Chunk);            \
    if (b < bytes) __builtin_memcpy(to + bytes - Chunk, from + bytes - Chunk, Chunk);            \
  }
  template <std::size_t Chunk>
  static void generic(char* to, const char* from, std::size_t bytes, std::size_t repeat, std::size_t to_stride,
                      std::size_t from_stride) {
    HALOSHIFT_COPY_ROWS_BODY
  }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  /// The same with 256-bit and 512-bit moves, chosen at run time: the header needs no -m flags.
  __attribute__((target("avx2"))) static void avx2(char* to, const char* from, std::size_t bytes,
                                                   std::size_t repeat, std::size_t to_stride,
                                                   std::size_t from_stride) {
    constexpr std::size_t Chunk = 32;
    HALOSHIFT_COPY_ROWS_BODY
  }
  __attribute__((target("avx512f"))) static void avx512(char* to, const char* from, std::size_t bytes,
                                                        std::size_t repeat, std::size_t to_stride,
                                                        std::size_t from_stride) {
    constexpr std::size_t Chunk = 64;
    if (bytes < Chunk) return avx2(to, from, bytes, repeat, to_stride, from_stride);
    HALOSHIFT_COPY_ROWS_BODY
  }
#endif
#undef HALOSHIFT_COPY_ROWS_BODY
  static void copy(char* to, const char* from, std::size_t bytes, std::size_t repeat, std::size_t to_stride,
                   std::size_t from_stride) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static const bool has_avx512 = __builtin_cpu_supports("avx512f");
    static const bool has_avx2 = __builtin_cpu_supports("avx2");
    if (has_avx512) return avx512(to, from, bytes, repeat, to_stride, from_stride);
    if (has_avx2) return avx2(to, from, bytes, repeat, to_stride, from_stride);
#endif
    generic<16>(to, from, bytes, repeat, to_stride, from_stride);
  }
};

/// Rows spread over more than this many bytes are taken to be out of cache (about an L2).
inline constexpr std::size_t prefetch_span = std::size_t{2} << 20;

/// Copies the rows of strided run `g` between the buffer at `cells` and the
/// consecutive `packed`; `Pack` gathers into `packed`, otherwise scatters.
/// `Bytes`, when not 0, is the row size known at compile time: single cells
/// (x faces) then copy as plain loads and stores, not one memcpy call each.
template <std::size_t Bytes, bool Pack, class Cell, class Packed>
void copy_rows(const strided_run& g, Cell* cells, Packed* packed) {
  const std::size_t bytes = Bytes ? Bytes : g.count * sizeof(*cells);
  if (Bytes == 0 && bytes >= 32) {
    const std::size_t stride = g.stride * sizeof(*cells);
    const bool far = stride * g.repeat > prefetch_span;
    if constexpr (Pack) {
      char* to = reinterpret_cast<char*>(packed);
      const char* from = reinterpret_cast<const char*>(cells);
      return far ? long_rows<1>::copy(to, from, bytes, g.repeat, bytes, stride)
                 : long_rows<0>::copy(to, from, bytes, g.repeat, bytes, stride);
    } else {
      char* to = reinterpret_cast<char*>(cells);
      const char* from = reinterpret_cast<const char*>(packed);
      return far ? long_rows<2>::copy(to, from, bytes, g.repeat, stride, bytes)
                 : long_rows<0>::copy(to, from, bytes, g.repeat, stride, bytes);
    }
  }
  for (std::size_t r = 0; r < g.repeat; ++r) {
    Cell* c = cells + r * g.stride;
    Packed* p = packed + r * g.count;
    if constexpr (Pack)
      std::memcpy(p, c, bytes);
    else
      std::memcpy(c, p, bytes);
  }
}

/// Packs (`Pack`) or unpacks the selected pieces of a message, group by group.
template <bool Pack, class Cell, class Packed>
void copy_selected(const message& m, Cell* buffer, Packed* packed) {
  using T = std::remove_const_t<Cell>;
  for (const strided_run& g : m.strided) {
    const std::size_t bytes = g.count * sizeof(T);
    if (g.count == 1)
      copy_rows<sizeof(T), Pack>(g, buffer + g.first, packed);
    else if (bytes == 8)  // a double or int64 of a field bundle's byte program
      copy_rows<8, Pack>(g, buffer + g.first, packed);
    else if (bytes == 4)
      copy_rows<4, Pack>(g, buffer + g.first, packed);
    else
      copy_rows<0, Pack>(g, buffer + g.first, packed);
    packed += g.count * g.repeat;
  }
}

template <class T>
void gather(const block_layout& layout, const message& m, const T* buffer, T* out) {
  if (m.selected) return copy_selected<true>(m, buffer, out);
  for (int s : m.slots) {
    const block_slot& b = layout.slots()[s];
    if (b.count) std::memcpy(out, buffer + b.first, b.count * sizeof(T));  // never memcpy a null pointer
    out += b.count;
  }
}

template <class T>
void scatter(const block_layout& layout, const message& m, const T* in, T* buffer) {
  if (m.selected) return copy_selected<false>(m, buffer, in);
  for (int s : m.slots) {
    const block_slot& b = layout.slots()[s];
    if (b.count) std::memcpy(buffer + b.first, in, b.count * sizeof(T));
    in += b.count;
  }
}

/// Runs one round. Forwards, each transfer sends `t.send` and receives
/// `t.recv`; backwards the roles swap and arrivals are combined, not stored.
/// `deliver(in, data)` puts an arrived message that did not land in place;
/// `local(from, to)` moves a transfer to the rank itself (a periodic dimension
/// of one box) slot by slot, with no MPI and no staging.
template <class T, class Deliver, class Local>
void run_round(const round_program& r, bool backward, MPI_Comm comm, protocol mode, T* buffer, executor_state<T>& st,
               const block_layout& layout, Deliver&& deliver, Local&& local) {
  auto outgoing = [&](const transfer_program& t) -> const message& { return backward ? t.recv : t.send; };
  auto incoming = [&](const transfer_program& t) -> const message& { return backward ? t.send : t.recv; };
  // Forwards, a contiguous arrival lands in place; everything else is staged.
  auto lands_in_place = [&](const message& in) { return !backward && in.contiguous; };
  const int dir = backward ? 1 : 0;
  auto in_area = [&](const transfer_program& t) { return st.scratch.data() + t.staged[dir]; };
  auto out_area = [&](const transfer_program& t) { return in_area(t) + t.staged_in[dir]; };
  auto source = [&](const transfer_program& t) -> const T* {
    const message& out = outgoing(t);
    if (out.contiguous) return buffer + out.first;
    gather(layout, out, buffer, out_area(t));
    return out_area(t);
  };
  auto target = [&](const transfer_program& t) -> T* {
    const message& in = incoming(t);
    return lands_in_place(in) ? buffer + in.first : in_area(t);
  };
  auto bytes = [](const message& m) { return static_cast<int>(m.count * sizeof(T)); };  // bounded when compiled
  auto finish = [&](const transfer_program& t) {
    const message& in = incoming(t);
    if (in.exists() && !lands_in_place(in)) deliver(in, in_area(t));
  };

  if (mode == protocol::overlapping) {
    st.requests.clear();
    for (const transfer_program& t : r.transfers) {
      const message& in = incoming(t);
      if (t.self || !in.exists()) continue;
      st.requests.emplace_back();
      mpi::check(MPI_Irecv(target(t), bytes(in), MPI_BYTE, in.peer, t.tag, comm, &st.requests.back()), "MPI_Irecv");
    }
    for (const transfer_program& t : r.transfers) {
      const message& out = outgoing(t);
      if (!out.exists()) continue;
      if (t.self) {
        local(out, incoming(t));
        continue;
      }
      st.requests.emplace_back();
      mpi::check(MPI_Isend(source(t), bytes(out), MPI_BYTE, out.peer, t.tag, comm, &st.requests.back()), "MPI_Isend");
    }
    if (st.requests.empty()) return;  // a round of copies to the rank itself only
    mpi::check(MPI_Waitall(static_cast<int>(st.requests.size()), st.requests.data(), MPI_STATUSES_IGNORE),
               "MPI_Waitall");
    for (const transfer_program& t : r.transfers)
      if (!t.self) finish(t);
    return;
  }

  for (const transfer_program& t : r.transfers) {
    const message& out = outgoing(t);
    const message& in = incoming(t);
    if (t.self) {
      local(out, in);
      continue;
    }
    auto send = [&] {
      if (out.exists()) mpi::check(MPI_Ssend(source(t), bytes(out), MPI_BYTE, out.peer, t.tag, comm), "MPI_Ssend");
    };
    auto receive = [&] {
      if (!in.exists()) return;
      mpi::check(MPI_Recv(target(t), bytes(in), MPI_BYTE, in.peer, t.tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
      finish(t);
    };
    if (t.send_first) {
      send();
      receive();
    } else {
      receive();
      send();
    }
  }
}

/// Applies `per_block(source slot, target slot)` to the blocks of a transfer to the rank itself:
/// the i-th block sent is the i-th block received (same owner, same size).
/// When both sides are contiguous (always for Shift) the blocks pair up as one range.
template <class PerBlock>
void pair_blocks(const block_layout& layout, const message& from, const message& to, PerBlock&& per_block) {
  if (from.contiguous && to.contiguous) return per_block(block_slot{{}, {}, from.count, from.first, false},
                                                         block_slot{{}, {}, to.count, to.first, false});
  if (from.selected || to.selected) {  // selective: pair the two element sequences run by run
    run_cursor a(layout, from), b(layout, to);
    element_run x = a.next(), y = b.next();
    while (x.count && y.count) {
      const std::size_t n = std::min(x.count, y.count);
      per_block(block_slot{{}, {}, n, x.first, false}, block_slot{{}, {}, n, y.first, false});
      x = x.count == n ? a.next() : element_run{x.first + n, x.count - n};
      y = y.count == n ? b.next() : element_run{y.first + n, y.count - n};
    }
    return;
  }
  for (std::size_t i = 0; i < from.slots.size(); ++i)
    per_block(layout.slots()[from.slots[i]], layout.slots()[to.slots[i]]);
}

/// Runs a forward round that needs no packing (see direct_round): receives
/// and sends straight into and out of `buffer`, the copies to the rank itself
/// while the messages travel. No MPI call at all for a round of copies only.
template <class T>
void run_direct(const direct_round& d, MPI_Comm comm, T* buffer, executor_state<T>& st) {
  st.requests.resize(d.receives.size() + d.sends.size());
  MPI_Request* request = st.requests.data();
  auto bytes = [](const direct_post& c) { return static_cast<int>(c.count * sizeof(T)); };  // bounded when compiled
  for (const direct_post& c : d.receives)
    mpi::check(MPI_Irecv(buffer + c.first, bytes(c), MPI_BYTE, c.peer, c.tag, comm, request++), "MPI_Irecv");
  for (const direct_post& c : d.sends)
    mpi::check(MPI_Isend(buffer + c.first, bytes(c), MPI_BYTE, c.peer, c.tag, comm, request++), "MPI_Isend");
  for (const local_copy& c : d.copies) std::memcpy(buffer + c.to, buffer + c.from, c.count * sizeof(T));
  if (!st.requests.empty())
    mpi::check(MPI_Waitall(static_cast<int>(st.requests.size()), st.requests.data(), MPI_STATUSES_IGNORE),
               "MPI_Waitall");
}

/// Forward rounds `[begin, end)` only: `buffer` already holds the own block.
/// Contiguous messages go straight from and into `buffer`; the others are
/// packed once into, or unpacked once from, scratch.
template <class T>
void run_forward_rounds(const program& p, MPI_Comm comm, protocol mode, T* buffer, executor_state<T>& st,
                        std::size_t begin = 0, std::size_t end = SIZE_MAX) {
  const block_layout& layout = p.layout;
  if (st.scratch.size() < p.scratch[0]) st.scratch.resize(p.scratch[0]);  // Shift stages nothing
  auto copy = [&](const message& from, const message& to) {
    pair_blocks(layout, from, to, [&](const block_slot& a, const block_slot& b) {
      if (a.count) std::memcpy(buffer + b.first, buffer + a.first, a.count * sizeof(T));
    });
  };
  for (std::size_t r = begin; r < std::min(end, p.rounds.size()); ++r) {
    if (p.rounds[r].direct && mode == protocol::overlapping) {
      run_direct(*p.rounds[r].direct, comm, buffer, st);
      continue;
    }
    run_round(
        p.rounds[r], false, comm, mode, buffer, st, layout,
        [&](const message& in, const T* data) { scatter(layout, in, data, buffer); }, copy);
  }
}

/// Forward: fills `buffer` (laid out as `p.layout`) with `own` and the
/// neighbours' blocks.
template <class T>
void run_forward(const program& p, MPI_Comm comm, protocol mode, const T* own, T* buffer, executor_state<T>& st) {
  const block_slot& own_slot = p.layout.slots()[p.layout.own()];
  if (own_slot.count) std::memcpy(buffer + own_slot.first, own, own_slot.count * sizeof(T));
  run_forward_rounds(p, comm, mode, buffer, st);
}

/// Backward: the schedule reversed. Each receiver returns its accumulated
/// contributions for the blocks it got, and the sender combines them into its
/// accumulator with `op`. A block reaches each holder along exactly one path,
/// so this is a tree reduction that ends at the block's owner, in slot 0.
template <class T, class Op>
void run_reverse(const program& p, MPI_Comm comm, protocol mode, T* buffer, executor_state<T>& st, Op& op) {
  const block_layout& layout = p.layout;
  if (st.scratch.size() < p.scratch[1]) st.scratch.resize(p.scratch[1]);
  auto combine = [&](const message& in, const T* data) {
    for_each_run(layout, in, [&](std::size_t first, std::size_t count) {
      T* acc = buffer + first;
      for (std::size_t e = 0; e < count; ++e) acc[e] = op(acc[e], data[e]);
      data += count;
    });
  };
  auto local = [&](const message& from, const message& to) {
    pair_blocks(layout, from, to, [&](const block_slot& a, const block_slot& b) {
      for (std::size_t e = 0; e < a.count; ++e) buffer[b.first + e] = op(buffer[b.first + e], buffer[a.first + e]);
    });
  };
  for (auto r = p.rounds.rbegin(); r != p.rounds.rend(); ++r)
    run_round(*r, true, comm, mode, buffer, st, layout, combine, local);
}

}  // namespace haloshift::detail

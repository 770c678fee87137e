#pragma once
/// @file executor.hpp
/// @brief Runs any compiled schedule over MPI point-to-point, forwards
/// (ghost fill) or backwards (combining contributions onto the owners).

#include <mpi.h>

#include <cstring>
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
  std::vector<std::size_t> staged;  ///< per transfer of the current round: its start in scratch
};

template <class T>
void gather(const block_layout& layout, const message& m, const T* buffer, T* out) {
  for (int s : m.slots) {
    const block_slot& b = layout.slots()[s];
    if (b.count) std::memcpy(out, buffer + b.first, b.count * sizeof(T));  // never memcpy a null pointer
    out += b.count;
  }
}

template <class T>
void scatter(const block_layout& layout, const message& m, const T* in, T* buffer) {
  for (int s : m.slots) {
    const block_slot& b = layout.slots()[s];
    if (b.count) std::memcpy(buffer + b.first, in, b.count * sizeof(T));
    in += b.count;
  }
}

/// Runs one round. Forwards, each transfer sends `t.send` and receives
/// `t.recv`; backwards the roles swap and arrivals are combined, not stored.
/// `deliver(in, data)` puts an arrived message that did not land in place.
template <class T, class Deliver>
void run_round(const round_program& r, const block_layout& layout, bool backward, MPI_Comm comm, protocol mode,
               T* buffer, executor_state<T>& st, Deliver&& deliver) {
  st.requests.clear();
  st.staged.resize(r.transfers.size());
  std::size_t next = 0;
  for (std::size_t i = 0; i < r.transfers.size(); ++i) {
    st.staged[i] = next;
    next += r.transfers[i].send.count + r.transfers[i].recv.count;
  }
  auto outgoing = [&](const transfer_program& t) -> const message& { return backward ? t.recv : t.send; };
  auto incoming = [&](const transfer_program& t) -> const message& { return backward ? t.send : t.recv; };
  // Forwards, a contiguous arrival lands in place; everything else is staged.
  auto lands_in_place = [&](const message& in) { return !backward && in.contiguous; };
  auto in_area = [&](std::size_t i) { return st.scratch.data() + st.staged[i]; };
  auto out_area = [&](std::size_t i) { return st.scratch.data() + st.staged[i] + incoming(r.transfers[i]).count; };
  auto source = [&](std::size_t i) -> const T* {
    const message& out = outgoing(r.transfers[i]);
    if (out.contiguous) return buffer + out.first;
    gather(layout, out, buffer, out_area(i));
    return out_area(i);
  };
  auto target = [&](std::size_t i) -> T* {
    const message& in = incoming(r.transfers[i]);
    return lands_in_place(in) ? buffer + in.first : in_area(i);
  };
  auto bytes = [](const message& m) { return static_cast<int>(m.count * sizeof(T)); };  // bounded when compiled
  auto finish = [&](std::size_t i) {
    const message& in = incoming(r.transfers[i]);
    if (in.exists() && !lands_in_place(in)) deliver(in, in_area(i));
  };

  if (mode == protocol::overlapping) {
    for (std::size_t i = 0; i < r.transfers.size(); ++i) {
      const transfer_program& t = r.transfers[i];
      const message& in = incoming(t);
      if (t.self || !in.exists()) continue;
      st.requests.emplace_back();
      mpi::check(MPI_Irecv(target(i), bytes(in), MPI_BYTE, in.peer, t.tag, comm, &st.requests.back()), "MPI_Irecv");
    }
    for (std::size_t i = 0; i < r.transfers.size(); ++i) {
      const transfer_program& t = r.transfers[i];
      const message& out = outgoing(t);
      if (!out.exists()) continue;
      if (t.self) {  // periodic dimension of one rank: the box's own images, no MPI
        gather(layout, out, buffer, in_area(i));
        deliver(incoming(t), in_area(i));
        continue;
      }
      st.requests.emplace_back();
      mpi::check(MPI_Isend(source(i), bytes(out), MPI_BYTE, out.peer, t.tag, comm, &st.requests.back()), "MPI_Isend");
    }
    mpi::check(MPI_Waitall(static_cast<int>(st.requests.size()), st.requests.data(), MPI_STATUSES_IGNORE),
               "MPI_Waitall");
    for (std::size_t i = 0; i < r.transfers.size(); ++i)
      if (!r.transfers[i].self) finish(i);
    return;
  }

  for (std::size_t i = 0; i < r.transfers.size(); ++i) {
    const transfer_program& t = r.transfers[i];
    const message& out = outgoing(t);
    const message& in = incoming(t);
    if (t.self) {
      gather(layout, out, buffer, in_area(i));
      deliver(in, in_area(i));
      continue;
    }
    auto send = [&] {
      if (out.exists()) mpi::check(MPI_Ssend(source(i), bytes(out), MPI_BYTE, out.peer, t.tag, comm), "MPI_Ssend");
    };
    auto receive = [&] {
      if (!in.exists()) return;
      mpi::check(MPI_Recv(target(i), bytes(in), MPI_BYTE, in.peer, t.tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
      finish(i);
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

/// Forward: fills `buffer` (laid out as `p.layout`) with `own` and the
/// neighbours' blocks. Contiguous messages go straight from and into
/// `buffer`; the others are packed once into, or unpacked once from, scratch.
template <class T>
void run_forward(const program& p, MPI_Comm comm, protocol mode, const T* own, T* buffer, executor_state<T>& st) {
  const block_layout& layout = p.layout;
  const block_slot& own_slot = layout.slots()[layout.own()];
  if (own_slot.count) std::memcpy(buffer + own_slot.first, own, own_slot.count * sizeof(T));
  st.scratch.resize(p.scratch);
  for (const round_program& r : p.rounds)
    run_round(r, layout, false, comm, mode, buffer, st,
              [&](const message& in, const T* data) { scatter(layout, in, data, buffer); });
}

/// Backward: the schedule reversed. Each receiver returns its accumulated
/// contributions for the blocks it got, and the sender combines them into its
/// accumulator with `op`. A block reaches each holder along exactly one path,
/// so this is a tree reduction that ends at the block's owner, in slot 0.
template <class T, class Op>
void run_reverse(const program& p, MPI_Comm comm, protocol mode, T* buffer, executor_state<T>& st, Op& op) {
  const block_layout& layout = p.layout;
  st.scratch.resize(p.scratch);
  auto combine = [&](const message& in, const T* data) {
    for (int s : in.slots) {
      const block_slot& b = layout.slots()[s];
      T* acc = buffer + b.first;
      for (std::size_t e = 0; e < b.count; ++e) acc[e] = op(acc[e], data[e]);
      data += b.count;
    }
  };
  for (auto r = p.rounds.rbegin(); r != p.rounds.rend(); ++r)
    run_round(*r, layout, true, comm, mode, buffer, st, combine);
}

}  // namespace haloshift::detail

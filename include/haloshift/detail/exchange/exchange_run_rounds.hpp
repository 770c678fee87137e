// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file exchange_run_rounds.hpp
/// @brief How an exchange_run posts, completes and copies its rounds: the executor's
/// members defined out of the class (exchange_run.hpp includes this file), so that
/// with HALOSHIFT_COMPILED the element types and operations libhaloshift instantiates
/// (detail/exchange/shared_runs.hpp) are declared `extern template` and compiled there once.

#include "exchange_run.hpp"

namespace haloshift::detail {

template <class Data, class Op, class Engine>
HALOSHIFT_BUILDER bool exchange_run<Data, Op, Engine>::advance(bool block, bool hold_last) {
  std::vector<MPI_Request>& requests = res_->requests;
  while (next_ < end_) {
    if (!posted_) {
      requests.clear();
      post();
      posted_ = true;
    }
    if (packing_) {  // a stream-ordered round's departures go once the device has packed them
      if (!batched_.packed(block)) return false;
      packing_ = false;
      send_batched();
    }
    if (hold_last && next_ + 1 == end_) {
      int arrived = 0;  // Testall of completed (null) requests is a no-op
      if (!requests.empty())
        mpi::check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &arrived, MPI_STATUSES_IGNORE),
                   "MPI_Testall");
      return false;
    }
    if (!requests.empty()) {
      const int n = static_cast<int>(requests.size());
      if (block) {
        mpi::check(MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
      } else {
        int arrived = 0;
        mpi::check(MPI_Testall(n, requests.data(), &arrived, MPI_STATUSES_IGNORE), "MPI_Testall");
        if (!arrived) return false;
      }
      requests.clear();
    }
    if (!take_shared(block)) return false;
    finish();
    posted_ = false;
    ++next_;
  }
  if (window_ && !window_->returned(block, comm_)) return false;  // lent arrays are the caller's once copied
  if constexpr (combines)
    if (res_->failure) std::rethrow_exception(std::exchange(res_->failure, nullptr));  // every message is done
  return true;
}

// Inline in every mode: it copies a transfer to the rank itself, element by element through the
// operation, and GCC inlines its loops into their callers only when it is declared inline (reverse
// through a position view at 1 rank with HALOSHIFT_COMPILED: 49 us not inline, 37 us inline).
template <class Data, class Op, class Engine>
inline void exchange_run<Data, Op, Engine>::local(const message& from, const message& to) {
  copy_to_self(
      p_->layout, from, to,
      [&](std::size_t a, std::size_t b) {
        if constexpr (combines)
          data_.combine_one(a, b, op_);
        else
          data_.copy_one(a, b);
      },
      [&](std::size_t a, std::size_t b, std::size_t count) {
        if constexpr (combines)
          data_.combine(a, b, count, op_);
        else
          data_.copy(a, b, count);
      },
      [&](std::size_t a, std::size_t b) { data_.prefetch(a, b); },
      [&](const strided_run& a, const strided_run& b) { return !combines && copy_group_of(data_, a, b); },
      whole_runs_of(data_), [&](const std::uint32_t* list, bool listed_from, std::size_t first, std::size_t count) {
        listed_of<combines>(data_, list, listed_from, first, count, op_);
      });
}

template <class Data, class Op, class Engine>
HALOSHIFT_BUILDER void exchange_run<Data, Op, Engine>::post() {
  std::vector<MPI_Request>& requests = res_->requests;
  if (batched_) return post_batched();
  if constexpr (has_engine)
    if (engine_) {
      if constexpr (combines)
        engine_->post_reverse(*p_, data_, staging_, requests);
      else
        engine_->post_forward(*p_, data_, staging_, requests);
      return;
    }
  const round_program& r = round();
  if (mode_ == protocol::rendezvous) return run_rendezvous(r);
  if (single_ && !backward_ && r.direct && !(window_ && window_->used_in(round_index()))) {
    // Every message one contiguous range both ways (every Shift round): precomputed posts.
    for (const direct_post& c : r.direct->receives) {
      requests.emplace_back();
      mpi::check(MPI_Irecv(data_.place(c.first), bytes(c.count), MPI_BYTE, c.peer, c.tag, comm_, &requests.back()),
                 "MPI_Irecv");
    }
    receives_ = requests.size();
    for (const direct_post& c : r.direct->sends) {
      requests.emplace_back();
      mpi::check(MPI_Isend(data_.place(c.first), bytes(c.count), MPI_BYTE, c.peer, c.tag, comm_, &requests.back()),
                 "MPI_Isend");
    }
    for (const local_copy& c : r.direct->copies) data_.copy(c.from, c.to, c.count);
    return;
  }
  std::size_t cursor = 0;
  for (const transfer_program& t : r.transfers) {
    const message& in = incoming(t);
    if (t.self || !in.exists() || expect_shared(t, in)) continue;
    requests.emplace_back();
    mpi::check(MPI_Irecv(target(t, cursor), bytes(in.count), MPI_BYTE, in.peer, t.tag, comm_, &requests.back()),
               "MPI_Irecv");
  }
  receives_ = requests.size();  // every post puts its receives first: abandon() cancels those
  for (const transfer_program& t : r.transfers) {
    const message& out = outgoing(t);
    if (!out.exists()) continue;
    if (t.self) {
      local(out, incoming(t));
      continue;
    }
    if (const shared_route* s = shared(t, true, out)) {  // through this rank's slot, now or once free
      if (!window_->defer(static_cast<std::size_t>(&t - r.transfers.data()), *s)) depart(out, *s);
      continue;
    }
    requests.emplace_back();
    mpi::check(MPI_Isend(source(t, cursor), bytes(out.count), MPI_BYTE, out.peer, t.tag, comm_, &requests.back()),
               "MPI_Isend");
  }
}

template <class Data, class Op, class Engine>
HALOSHIFT_BUILDER bool exchange_run<Data, Op, Engine>::take_shared(bool block) {
  if (window_ && batched_) return batched_.take(next_, round_index(), block, comm_, data_, op_);
  const std::vector<transfer_program>& ts = round().transfers;
  return !window_ || window_->take(
                         backward_, round_index(), block, comm_,
                         [&](std::size_t j, const shared_route& s) { depart(outgoing(ts[j]), s); },
                         [&](std::size_t j, const shared_route& s) { arrive(incoming(ts[j]), s); });
}

template <class Data, class Op, class Engine>
HALOSHIFT_BUILDER void exchange_run<Data, Op, Engine>::finish() {
  if (batched_) return batched_.unpack(next_, round_index());
  if constexpr (has_engine)
    if (engine_) {
      if constexpr (combines)
        engine_->finish_reverse(*p_, data_, staging_, op_);
      else
        engine_->finish_forward(*p_, data_, staging_);
      return;
    }
  const round_program& r = round();
  if (mode_ == protocol::rendezvous) return;  // delivered as it went
  if (single_ && !backward_ && r.direct) return;  // everything landed in place
  std::size_t cursor = 0;
  for (const transfer_program& t : r.transfers) {
    const message& in = incoming(t);
    if (t.self || !in.exists() || lands_in_place(in) || shared(t, false, in)) continue;
    deliver(in, in_area(t, cursor));
  }
}

template <class Data, class Op, class Engine>
HALOSHIFT_BUILDER void exchange_run<Data, Op, Engine>::send_batched() {
  std::vector<MPI_Request>& requests = res_->requests;
  if constexpr (requires { engine_->start_packed(*p_, true, std::size_t{}, nullptr, nullptr, requests); })
    if (engine_) {
      std::byte* area = batch::message_area(batched_.run());
      return engine_->start_packed(*p_, !backward_, element_bytes, area + batched_.round(next_).arrivals, area,
                                   requests);
    }
  receives_ = batched_.post(next_, round_index(), comm_, requests);
}

template <class Data, class Op, class Engine>
HALOSHIFT_BUILDER void exchange_run<Data, Op, Engine>::run_rendezvous(const round_program& r) {
  for (const transfer_program& t : r.transfers) {
    const message& out = outgoing(t);
    const message& in = incoming(t);
    if (t.self) {
      if (out.exists()) local(out, in);
      continue;
    }
    // One transfer at a time: for several arrays its arrival at the start of the staging, its
    // departure after it.
    std::size_t in_cursor = 0, out_cursor = in.exists() ? in.count * element_bytes : 0;
    auto send = [&] {
      if (out.exists())
        mpi::check(MPI_Ssend(source(t, out_cursor), bytes(out.count), MPI_BYTE, out.peer, t.tag, comm_),
                   "MPI_Ssend");
    };
    auto receive = [&] {
      if (!in.exists()) return;
      void* into = target(t, in_cursor);
      mpi::check(MPI_Recv(into, bytes(in.count), MPI_BYTE, in.peer, t.tag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
      if (!lands_in_place(in)) deliver(in, static_cast<const std::byte*>(into));
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

}  // namespace haloshift::detail

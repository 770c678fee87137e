// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file exchange_run.hpp
/// @brief Runs a compiled schedule over MPI, forwards (ghost fill) or
/// backwards (combining contributions onto the owners), one round at a time
/// and resumable: a round's messages are posted, then the run returns to the
/// caller until they have arrived. Blocking exchanges run it to the end at
/// once; split-phase exchanges (exchange_handle) advance it from test(),
/// progress() and wait(). One code path for both.

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../exchange/protocol.hpp"
#include "../compiled.hpp"
#include "../mpi/check.hpp"
#include "arrays.hpp"
#include "batched_rounds.hpp"
#include "exchange_resources.hpp"
#include "executor.hpp"
#include "program.hpp"
#include "run_markers.hpp"
#include "zero_copy.hpp"

namespace haloshift::detail {

/// One exchange over program `p` on the arrays `data` (laid out as
/// `p.layout`, the own block already in place), forwards or backwards, with
/// the rounds `[begin, end)` (forwards) or all of them (backwards). `Engine`,
/// when given, runs the program's single round as a nonblocking
/// neighbourhood collective instead (its post/finish members).
template <class Data, class Op = store_arrivals, class Engine = point_to_point>
class exchange_run {
 public:
  exchange_run(const program& p, MPI_Comm comm, protocol mode, exchange_resources& res, Data data, bool backward,
               Op op = {}, Engine* engine = nullptr, std::size_t begin = 0, std::size_t end = SIZE_MAX)
      : p_(&p),
        comm_(comm),
        mode_(mode),
        res_(&res),
        data_(data),
        element_bytes(data.element_bytes()),
        single_(data.single()),
        backward_(backward),
        op_(called(std::move(op), res)),
        engine_(engine),
        window_(!engine && mode == protocol::overlapping && res.window && res.window->serves(p) ? res.window.get()
                                                                                                : nullptr),
        own_layout_(window_ && window_->lays_out(p)),
        lend_(lending_of(own_layout_ ? window_ : nullptr, data, backward)) {
    next_ = engine_ ? 0 : begin;  // a collective engine runs the one round
    end_ = engine_ ? 1 : std::min(end, p.rounds.size());
    staging_ = res.staging<std::byte>(engine_ ? engine_->staging_bytes(p, element_bytes)
                                              : staging_elements(p, backward, single_) * element_bytes);
  }

  /// Runs the exchange through an executor instead (batch_cache::prepare): every copy of a
  /// phase in one launch, every message staged. Set before start().
  exchange_run& batched(const batch::batch_run& b) noexcept {
    batched_ = {b, window_, backward_};
    return *this;
  }

  /// Posts the first round's messages (what a split-phase start does before it returns; a
  /// blocking exchange then waits at once, with no test in between).
  void start() {
    if (posted_ || next_ >= end_) return;
    res_->requests.clear();
    post();
    posted_ = true;
  }

  /// Posts and completes rounds until one has messages in flight (returns
  /// false) or all are done (returns true). `block`: wait for arrivals
  /// instead of returning.
  /// `hold_last`: the last round's arrivals stay where they landed (its messages still move): see
  /// exchange_handle::progress.
  HALOSHIFT_BUILDER bool advance(bool block, bool hold_last = false);

  /// Lets go of the messages in flight without waiting for them (an
  /// exception is unwinding the caller; its peers may never answer).
  /// Receives are cancelled and completed (a cancelled receive completes
  /// locally): freed instead, one could still land in arrays the caller is
  /// about to destroy (AddressSanitizer caught exactly that). Sends cannot be
  /// cancelled portably and are freed; they read only the plan's staging or
  /// the caller's own entries.
  void abandon() noexcept {
    if (engine_) engine_->forget_requests();
    std::vector<MPI_Request>& requests = res_->requests;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      MPI_Request& r = requests[i];
      if (r == MPI_REQUEST_NULL) continue;
      if (i < receives_ && !engine_) {
        MPI_Cancel(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      } else {
        MPI_Request_free(&r);
      }
    }
    requests.clear();
    if (window_) window_->forget();
    res_->failure = nullptr;
    next_ = end_;
  }

 private:
  static constexpr bool has_engine = !std::is_same_v<Engine, point_to_point>;
  static constexpr bool combines = !std::is_same_v<Op, store_arrivals>;
  /// The operation as the run calls it: a reduction through completing_op.
  using called_op = std::conditional_t<combines, completing_op<Op>, Op>;
  static called_op called(Op op, exchange_resources& res) {
    if constexpr (combines)
      return {std::move(op), &res.failure};
    else
      return op;
  }

  std::size_t round_index() const { return backward_ ? p_->rounds.size() - 1 - next_ : next_; }
  const round_program& round() const { return p_->rounds[round_index()]; }
  // Forwards a transfer sends `send` and receives `recv`; backwards the roles swap.
  const message& outgoing(const transfer_program& t) const { return backward_ ? t.recv : t.send; }
  const message& incoming(const transfer_program& t) const { return backward_ ? t.send : t.recv; }
  // Forwards, one array's contiguous arrival lands in place, and one array's contiguous departure
  // leaves from place; everything else is staged (backwards arrivals are combined, not stored).
  bool lands_in_place(const message& in) const { return single_ && !backward_ && in.contiguous; }
  bool leaves_in_place(const message& out) const { return single_ && out.contiguous; }
  int bytes(std::size_t count) const { return static_cast<int>(count * element_bytes); }  // bounded when compiled

  /// Where a transfer's arrival is staged. One array: where the program put it. Several: the
  /// round's arrivals one after another from `cursor` (post and finish walk them in one order).
  std::byte* in_area(const transfer_program& t, std::size_t& cursor) const {
    if (single_) return staging_ + t.staged[backward_ ? 1 : 0] * element_bytes;
    std::byte* at = staging_ + cursor;
    cursor += incoming(t).count * element_bytes;
    return at;
  }
  /// Where a transfer's departure is packed (after the round's arrivals, for several arrays).
  std::byte* out_area(const transfer_program& t, std::size_t& cursor) const {
    const int dir = backward_ ? 1 : 0;
    if (single_) return staging_ + (t.staged[dir] + t.staged_in[dir]) * element_bytes;
    std::byte* at = staging_ + cursor;
    cursor += outgoing(t).count * element_bytes;
    return at;
  }

  const void* source(const transfer_program& t, std::size_t& cursor) const {
    const message& out = outgoing(t);
    if (leaves_in_place(out)) return data_.place(out.first);
    std::byte* packed = out_area(t, cursor);
    data_.gather(p_->layout, out, packed);
    return packed;
  }
  void* target(const transfer_program& t, std::size_t& cursor) const {
    const message& in = incoming(t);
    if (lands_in_place(in)) return data_.place(in.first);
    return in_area(t, cursor);
  }

  /// Puts an arrival that did not land in place: stored forwards, combined backwards.
  void deliver(const message& in, const std::byte* packed) {
    if constexpr (combines)
      data_.combine(p_->layout, in, packed, op_);
    else
      data_.scatter(p_->layout, in, packed);
  }
  /// A transfer to the rank itself (a periodic dimension of one box), no MPI (copy_to_self).
  void local(const message& from, const message& to);

  HALOSHIFT_BUILDER void post();

  /// The route of transfer `t`'s message `m` (`out`: the one it sends) through the node's shared
  /// window, or null when it goes by MPI (shared_window.hpp).
  const shared_route* shared(const transfer_program& t, bool out, const message& m) const {
    if (!window_ || !shared_window::fits(m.count * element_bytes)) return nullptr;
    return window_->route(backward_, out, round_index(), static_cast<std::size_t>(&t - round().transfers.data()));
  }
  /// Whether arrival `in` of `t` comes through the window (then take_shared() waits for it).
  bool expect_shared(const transfer_program& t, const message& in) {
    return shared(t, false, in) && window_->expect(static_cast<std::size_t>(&t - round().transfers.data()));
  }
  /// Moves the round's messages through the window that can go (`block`: all); whether all did.
  HALOSHIFT_BUILDER bool take_shared(bool block);
  /// Sends `out` through its free slot `s` (zero_copy.hpp).
  void depart(const message& out, const shared_route& s) { send_shared(*window_, lend_, data_, p_->layout, out, s); }
  /// Takes arrival `in` from its slot `s`: out of the sender's lent array, or unpacked.
  void arrive(const message& in, const shared_route& s) {
    if (const std::byte* packed = take_arrival(*window_, s, data_, op_, own_layout_, in.count * element_bytes))
      deliver(in, packed);
  }

  HALOSHIFT_BUILDER void finish();

  /// A batched round (batched_rounds.hpp): packed in the executor, then its messages posted.
  /// Always nonblocking: a batched rank pairs with a rendezvous one as with any other.
  /// Stream-ordered (batch_run::stream), the packing is enqueued after the caller's work on its
  /// stream and the messages go once it has run (advance() looks): the receives too, since the
  /// previous round's arrivals are still to be unpacked from the same staging until then.
  void post_batched() {
    packing_ = batched_.pack(next_, round_index());
    if (!packing_) send_batched();
  }
  /// Posts a batched round's messages (its departures packed by now).
  HALOSHIFT_BUILDER void send_batched();

  /// The rendezvous protocol: synchronous sends, each transfer's order fixed by
  /// the rank's colour along its direction (see sends_first). It cannot
  /// overlap: the round runs to its end here.
  HALOSHIFT_BUILDER void run_rendezvous(const round_program& r);

  const program* p_;
  MPI_Comm comm_;
  protocol mode_;
  exchange_resources* res_;
  Data data_;
  std::size_t element_bytes;  ///< one element of every array (a strided column's width is known at run time)
  bool single_;               ///< one array, its elements consecutive (Data::single): messages in place
  std::byte* staging_ = nullptr;
  bool backward_;
  called_op op_;
  Engine* engine_;
  std::size_t next_ = 0, end_ = 0;
  bool posted_ = false;
  std::size_t receives_ = 0;  ///< the current round's receives: the first requests (post puts them first)
  shared_window* window_;     ///< set: messages inside the node go through it (plan_options::shared_memory)
  batched_rounds batched_{};  ///< set: the exchange runs batched (post_batched)
  bool packing_ = false;      ///< a stream-ordered round's departures wait for the device to pack them
  bool own_layout_;           ///< p_ is the window's own program (zero copy lends and copies only then)
  lending lend_;              ///< the arrays' node-shared segment, when its messages may be lent (zero copy)
};

}  // namespace haloshift::detail

#include "exchange_run_rounds.hpp"  // the members that run rounds

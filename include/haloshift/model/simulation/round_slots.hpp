// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file round_slots.hpp
/// @brief Where the max-plus engine keeps a round's sends (model/simulation/maxplus_engine.hpp):
/// a slot per class and transfer, or, for a schedule that names its senders, a slot per class
/// and transfer that names it.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "../../schedule/schedule.hpp"
#include "rank_classes.hpp"

namespace haloshift::detail {

/// The slots of one overlapping round. Dense: every class has a slot for every transfer (slot
/// c * transfers + ti), as for schedules whose senders follow the coordinates. Listed: a schedule
/// whose transfers name their senders (NodeAggregate's, simulated with a class per rank) gives
/// each class slots only for the transfers that name it, in transfer order, and lists for each
/// class the slots that send to it: a round then costs its messages, not classes times transfers
/// (a 32^3 grid has thousands of transfers per round, each naming a few hundred ranks).
class round_slots {
 public:
  /// Dense slots for `transfers` transfers per class.
  void dense(std::size_t transfers) {
    listed_ = false;
    transfers_ = transfers;
  }

  /// Listed slots for round `r` on `classes` (a class per rank): each transfer's named senders
  /// (every class where it names none). Returns the number of slots.
  std::size_t list(const rank_classes& classes, const schedule_round& r) {
    listed_ = true;
    transfers_ = r.transfers.size();
    const auto n = static_cast<std::size_t>(classes.size());
    pairs_.clear();  // (class, transfer), transfer by transfer
    for (std::size_t ti = 0; ti < transfers_; ++ti) {
      const transfer& t = r.transfers[ti];
      if (t.senders.only.empty())
        for (std::size_t c = 0; c < n; ++c) pairs_.push_back({static_cast<std::uint32_t>(c), ti});
      else
        for (const offset& x : t.senders.only) pairs_.push_back({static_cast<std::uint32_t>(classes.class_of(x)), ti});
    }
    // A counting sort by class keeps each class's slots in transfer order.
    begin_.assign(n + 1, 0);
    for (const pair& p : pairs_) ++begin_[p.c + 1];
    for (std::size_t c = 0; c < n; ++c) begin_[c + 1] += begin_[c];
    transfer_.resize(pairs_.size());
    by_transfer_.resize(pairs_.size());
    fill_.assign(begin_.begin(), begin_.end() - 1);
    for (std::size_t i = 0; i < pairs_.size(); ++i) {
      const std::size_t slot = fill_[pairs_[i].c]++;
      transfer_[slot] = static_cast<std::uint32_t>(pairs_[i].ti);
      by_transfer_[i] = slot;
    }
    return pairs_.size();
  }

  /// Listed: records, once the round's sends are known, the slots that send to each class (the
  /// `to` of each send that `exists`), in transfer order.
  template <class Send>
  void list_receivers(const std::vector<Send>& sends) {
    const std::size_t n = begin_.size() - 1;
    in_begin_.assign(n + 1, 0);
    for (const Send& x : sends)
      if (x.exists) ++in_begin_[x.to + 1];
    for (std::size_t c = 0; c < n; ++c) in_begin_[c + 1] += in_begin_[c];
    in_.resize(in_begin_[n]);
    fill_.assign(in_begin_.begin(), in_begin_.end() - 1);
    for (const std::size_t slot : by_transfer_)
      if (sends[slot].exists) in_[fill_[sends[slot].to]++] = slot;
  }

  bool listed() const noexcept { return listed_; }
  /// Class c's slots: [first(c), last(c)).
  std::size_t first(std::size_t c) const noexcept { return listed_ ? begin_[c] : c * transfers_; }
  std::size_t last(std::size_t c) const noexcept { return listed_ ? begin_[c + 1] : (c + 1) * transfers_; }
  /// The transfer of class c's slot `slot`.
  std::size_t transfer_of(std::size_t c, std::size_t slot) const noexcept {
    return listed_ ? transfer_[slot] : slot - c * transfers_;
  }
  /// Listed: calls f(slot, transfer) for every slot that sends to class c, in transfer order.
  template <class F>
  void each_receive(std::size_t c, F&& f) const {
    for (std::size_t i = in_begin_[c]; i < in_begin_[c + 1]; ++i)
      f(in_[i], static_cast<std::size_t>(transfer_[in_[i]]));
  }

 private:
  struct pair {
    std::uint32_t c;
    std::size_t ti;
  };
  bool listed_ = false;
  std::size_t transfers_ = 0;
  std::vector<pair> pairs_;
  std::vector<std::size_t> begin_, by_transfer_, in_begin_, in_, fill_;
  std::vector<std::uint32_t> transfer_;
};

}  // namespace haloshift::detail

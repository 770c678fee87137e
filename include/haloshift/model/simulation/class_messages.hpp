// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file class_messages.hpp
/// @brief What each class of ranks sends in a transfer, as its representative
/// makes it: the max-plus engine's messages (model/simulation/maxplus_engine.hpp),
/// their bytes, routes and times, and the totals counted.

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "../../grid/grid_shape.hpp"
#include "../../schedule/schedule.hpp"
#include "partner_tables.hpp"
#include "rank_classes.hpp"
#include "simulation_setup.hpp"

namespace haloshift::detail {

/// The messages of one simulation over classes of ranks (model/simulation/rank_classes.hpp): a
/// class's send in a transfer, the class that sends to it, its copies to itself, the messages and
/// bytes counted. The max-plus engine derives from it and adds the times.
class class_messages {
 protected:
  /// `uniform_bytes`: the size of every rank's block, or < 0 when they differ.
  class_messages(const grid_shape& grid, const schedule& s, const simulation_setup& setup, rank_classes classes,
                 double uniform_bytes)
      : grid_(grid),
        s_(s),
        setup_(setup),
        classes_(std::move(classes)),
        n_(classes_.size()),
        uniform_bytes_(uniform_bytes) {
    for (int d = 0; d < max_dims; ++d) along_[d] = classes_.classes_along(d);
    every_box_exists_ = every_box_exists(grid, s);
  }

  /// A class's send in one transfer, as its representative makes it.
  struct send {
    double bytes = 0, seconds = 0;
    std::uint32_t to = 0;  ///< the receiver's class
    bool exists = false;
    message_route route;  ///< the level it crosses (node_placement) and what prices it
  };

  offset coords(std::size_t c) const { return classes_.representative(static_cast<int>(c)); }
  int rank(std::size_t c) const { return grid_.rank_of(coords(c)); }

  /// The class with these classes along the dimensions, or `none` when one is -1 (no box).
  std::size_t product(int a, int b, int c) const {
    if (a < 0 || b < 0 || c < 0) return none;
    return (static_cast<std::size_t>(a) * static_cast<std::size_t>(along_[1]) + static_cast<std::size_t>(b)) *
               static_cast<std::size_t>(along_[2]) +
           static_cast<std::size_t>(c);
  }
  /// Calls f(c, a, b, z) for every class c, with its classes a, b, z along the dimensions.
  template <class F>
  void each_class(F&& f) const {
    std::size_t c = 0;
    for (int a = 0; a < along_[0]; ++a)
      for (int b = 0; b < along_[1]; ++b)
        for (int z = 0; z < along_[2]; ++z) f(c++, a, b, z);
  }

  unsigned staging(std::size_t c, std::size_t round, std::size_t ti) const {
    return charges_staging() ? setup_.staging(rank(c), round, ti) : 0u;
  }
  bool charges_staging() const { return setup_.staging && !setup_.launches && setup_.cost.copy_beta() > 0; }
  /// Fills `l` for transfer `t` on the current classes.
  void link(const transfer& t, partner_tables& l) const {
    l.fill(grid_, classes_, t, setup_.mode, !every_box_exists_ && uniform_bytes_ >= 0);
  }

  bool sends_in(const partner_tables& l, const transfer& t, std::size_t c, int a, int b, int z) const {
    return l.sends(t, coords(c), a, b, z);
  }

  /// Bytes class c (classes a, b, z along the dimensions) sends in transfer `t`, or copies to itself.
  /// With blocks of one size that is the size times the blocks that exist around it.
  double block_bytes(std::size_t c, const partner_tables& l, const transfer& t, int a, int b, int z) const {
    if (uniform_bytes_ >= 0 && l.words == 0) return uniform_bytes_ * static_cast<double>(t.blocks.size());
    return counted_block_bytes(c, l, t, a, b, z);
  }
  double counted_block_bytes(std::size_t c, const partner_tables& l, const transfer& t, int a, int b, int z) const {
    if (uniform_bytes_ < 0) {
      double bytes = 0;
      for (const offset& o : t.blocks)
        if (const auto owner = grid_.neighbor_at(coords(c), o)) bytes += setup_.block_bytes(owner->rank);
      return bytes;
    }
    return uniform_bytes_ * static_cast<double>(l.blocks_held(a, b, z));
  }

  /// Class c's send in transfer `t` (none to itself, none without bytes).
  send send_of(std::size_t c, const partner_tables& l, const transfer& t, int a, int b, int z) {
    send out;
    if (l.self || !sends_in(l, t, c, a, b, z)) return out;
    const std::size_t to = product(l.ahead[0][static_cast<std::size_t>(a)], l.ahead[1][static_cast<std::size_t>(b)],
                                   l.ahead[2][static_cast<std::size_t>(z)]);
    if (to == none) return out;
    const double bytes = block_bytes(c, l, t, a, b, z);
    if (bytes <= 0) return out;
    out.exists = true;
    out.to = static_cast<std::uint32_t>(to);
    out.bytes = bytes;
    // The partner itself, not its class's representative; a class's members cross the same levels (node_boxes).
    out.route = route_of(setup_, rank(c), grid_.neighbor_at(coords(c), t.direction)->rank);
    out.seconds = setup_.link_time ? setup_.link_time(rank(c), rank(to), bytes) : seconds(out.route, bytes);
    return out;
  }
  /// Counts the messages of `sends` (one per member of each sending class, class i / stride; stride 0:
  /// a class per rank, listed slots) into the totals.
  void count(const std::vector<send>& sends, std::size_t stride) {
    double bytes = 0;  // summed per call, then added (the order the totals always had)
    for (std::size_t i = 0; i < sends.size(); ++i) {
      const std::int64_t members = !sends[i].exists ? 0 : stride ? classes_.members(static_cast<int>(i / stride)) : 1;
      messages_ += static_cast<std::size_t>(members);
      bytes += static_cast<double>(members) * sends[i].bytes;
    }
    bytes_ += bytes;
  }
  /// The time of a message of `bytes` on `route`, kept for the last size and route asked (a transfer's are alike).
  double seconds(const message_route& route, double bytes) {
    if (bytes != last_bytes_ || route.model != last_route_.model || route.shm != last_route_.shm)
      std::tie(last_bytes_, last_route_, last_seconds_) = std::tuple(bytes, route, route.seconds(bytes));
    return last_seconds_;
  }
  /// The class that sends to class c in a transfer (the rank at -direction), if it sends to c.
  std::size_t sender_of(const partner_tables& l, const std::vector<send>& sends, std::size_t ti, std::size_t stride,
                        int a, int b, int z) const {
    if (l.self) return none;
    const std::size_t from = product(l.behind[0][static_cast<std::size_t>(a)], l.behind[1][static_cast<std::size_t>(b)],
                                     l.behind[2][static_cast<std::size_t>(z)]);
    return from != none && sends[from * stride + ti].exists ? from : none;
  }
  /// Bytes class c copies to itself in a transfer (its neighbour along the direction is itself).
  double copy_bytes(std::size_t c, const partner_tables& l, const transfer& t, int a, int b, int z) const {
    return l.self && sends_in(l, t, c, a, b, z) ? block_bytes(c, l, t, a, b, z) : 0.0;
  }

  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  const grid_shape& grid_;
  const schedule& s_;
  const simulation_setup& setup_;
  rank_classes classes_;
  int n_ = 0;
  std::array<int, max_dims> along_{};  // classes along each dimension
  double uniform_bytes_ = -1;
  bool every_box_exists_ = false;
  std::size_t messages_ = 0;
  double bytes_ = 0;
  double last_bytes_ = -1, last_seconds_ = 0;
  message_route last_route_;  // of the time kept
};

}  // namespace haloshift::detail

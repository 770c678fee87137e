// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file ttl_local_exchange.hpp
/// @brief NAStJA's data-aware multi-hop network (msn-global-network,
/// Sec. II-C): the local exchange plus a TTL, so a message spreads one box
/// further per step, up to `hops` boxes, along NAStJA's forwarding tree.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../grid/cartesian_grid.hpp"
#include "../grid/grid_shape.hpp"
#include "../grid/offset.hpp"
#include "../mpi/agreement.hpp"
#include "../mpi/communicator.hpp"
#include "../schedule/ttl_forwarding.hpp"
#include "detail/grid_links.hpp"
#include "detail/links.hpp"
#include "detail/wire.hpp"
#include "message_codec.hpp"

namespace haloshift {

/// A message of the multi-hop network as delivered: the poster's box is at
/// offset `from` (periodic wrap `image`), `hops` = Chebyshev length of `from`.
template <class T>
struct local_message {
  /// Offset of the poster's box from this rank's box.
  offset from;
  /// The poster's rank.
  int source;
  /// Periodic wraps of `from`, per dimension.
  offset image;
  /// Hops travelled: the Chebyshev length of `from`.
  int hops;
  /// The step (counting step() calls from 0) in which the message left its poster.
  long posted_step;
  /// The message.
  T value;
};

/// Data-aware TTL multi-hop exchange. `post` from any rank; every rank calls
/// `step()` once per simulation step. A message posted before step `s` reaches
/// the box at every offset `o` with `0 < max_i |o_i| <= hops` exactly once per
/// offset (periodic images of one rank count separately, as in a halo), in
/// step `s + max_i |o_i| - 1`. The path is the TTL forwarding rule shared with
/// the TtlMultiHop strategy (ttl::forwards: faces go on to 1 neighbour, edges
/// to 3, corners to 7), so no copy is sent twice and none needs filtering.
/// Every link carries one package per step; an idle link a 4-byte one.
template <network_message T>
class ttl_local_exchange {
public:
  /// Collective over the grid; works on a duplicate of its communicator.
  /// `hops` (the TTL) must be the same on all ranks.
  ttl_local_exchange(const cartesian_grid& grid, int hops)
      : comm_(grid.comm()), shape_(grid.shape()), coords_(grid.coords()), links_(grid), hops_(hops) {
    mpi::agree(comm_.get(),
               [hops] {
                 if (hops < 1) throw error("ttl_local_exchange: hops must be >= 1, got " + std::to_string(hops));
               },
               {{"ttl_local_exchange hops", hops}});
    for (std::size_t i = 0; i < links_.directions.size(); ++i) {
      if (links_.to[i]) sends_.push_back(*links_.to[i]), send_direction_.push_back(i);
      if (links_.from[i]) receives_.push_back(*links_.from[i]), receive_direction_.push_back(i);
    }
    outgoing_.resize(links_.directions.size());
    reset_outgoing();
  }

  /// Queues `message` to leave in the next step().
  void post(const T& message) {
    byte_buffer payload;
    message_codec<T>::encode(message, comm_.get(), payload);
    if (payload.size() > static_cast<std::size_t>(INT32_MAX))
      throw error("ttl_local_exchange: a message of " + std::to_string(payload.size()) +
                  " bytes exceeds MPI's int count");
    posted_.push_back(std::move(payload));
  }

  /// One hop for every message under way; collective.
  void step() {
    delivered_.clear();
    for (const byte_buffer& payload : posted_) {
      for (std::size_t i : send_direction_) enqueue(i, comm_.rank(), next_sequence_, links_.directions[i], payload);
      ++next_sequence_;
    }
    posted_.clear();

    std::vector<std::span<const std::byte>> out;
    for (std::size_t i : send_direction_) {
      std::memcpy(outgoing_[i].data.data(), &outgoing_[i].records, sizeof(std::uint32_t));
      out.emplace_back(outgoing_[i].data);
    }
    detail::exchange_packages(comm_.get(), sends_, out, receives_, arrived_);
    reset_outgoing();

    for (std::size_t j = 0; j < arrived_.size(); ++j) {
      const offset& moved = links_.directions[receive_direction_[j]];
      detail::wire_reader read(arrived_[j]);
      for (auto n = read.get<std::uint32_t>(); n > 0; --n) {
        const int origin = read.get<int>();
        const auto sequence = read.get<std::uint32_t>();
        offset travelled{};
        for (int& t : travelled) t = read.get<int>();
        const auto payload = read.take(read.get<std::uint32_t>());
        const int hops = std::max({std::abs(travelled[0]), std::abs(travelled[1]), std::abs(travelled[2])});
        if (!message_codec<T>::decodes(payload))
          throw error("ttl_local_exchange: a message of " + std::to_string(payload.size()) + " bytes from rank " +
                      std::to_string(origin) + " does not decode as the message type");
        const offset from = -travelled;
        delivered_.push_back({from, origin, shape_.neighbor_at(coords_, from)->image, hops, step_ - hops + 1,
                              message_codec<T>::decode(payload, comm_.get())});
        if (hops < hops_)
          for (std::size_t i : send_direction_)
            if (ttl::forwards(moved, links_.directions[i]))
              enqueue(i, origin, sequence, travelled + links_.directions[i], payload);
      }
    }
    ++step_;
  }

  /// What arrived in the last step() (not the rank's own posts).
  const std::vector<local_message<T>>& delivered() const noexcept { return delivered_; }
  /// The TTL: how many boxes away messages reach.
  int hops() const noexcept { return hops_; }
  /// Number of step() calls so far.
  long steps() const noexcept { return step_; }

private:
  struct package {
    std::uint32_t records = 0;
    byte_buffer data;
  };

  void enqueue(std::size_t direction, int origin, std::uint32_t sequence, const offset& travelled,
               std::span<const std::byte> payload) {
    package& p = outgoing_[direction];
    ++p.records;
    detail::put(p.data, origin);
    detail::put(p.data, sequence);
    for (int t : travelled) detail::put(p.data, t);
    detail::put(p.data, static_cast<std::uint32_t>(payload.size()));
    p.data.insert(p.data.end(), payload.begin(), payload.end());
  }

  void reset_outgoing() {
    for (package& p : outgoing_) {
      p.records = 0;
      p.data.assign(sizeof(std::uint32_t), std::byte{0});  // the record count, filled in at send time
    }
  }

  mpi::communicator comm_;
  grid_shape shape_;
  offset coords_;
  detail::grid_links links_;
  int hops_;
  std::vector<detail::link> sends_, receives_;
  std::vector<std::size_t> send_direction_, receive_direction_;
  std::vector<package> outgoing_;
  std::vector<byte_buffer> posted_, arrived_;
  std::vector<local_message<T>> delivered_;
  std::uint32_t next_sequence_ = 0;
  long step_ = 0;
};

}  // namespace haloshift

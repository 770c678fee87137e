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
#include "../detail/mpi/agreement.hpp"
#include "../detail/mpi/communicator.hpp"
#include "../detail/schedule/ttl_forwarding.hpp"
#include "../detail/network/grid_links.hpp"
#include "../detail/network/links.hpp"
#include "../detail/network/wire.hpp"
#include "message_codec.hpp"

namespace haloshift {

namespace detail {
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


/// One message of a ttl_local_exchange package as it travels over a link.
struct ttl_wire_message {
  int origin;                          ///< the poster's rank
  std::uint32_t sequence;              ///< its number among the poster's posts
  offset travelled;                    ///< the sum of its hops so far, this one included
  std::span<const std::byte> payload;  ///< the encoded message
};

/// Appends one message to a package (after its 4-byte message count):
/// origin, sequence, the three components of travelled, payload length, payload.
inline void put_ttl_message(byte_buffer& package, int origin, std::uint32_t sequence, const offset& travelled,
                            std::span<const std::byte> payload) {
  put(package, origin);
  put(package, sequence);
  for (int t : travelled) put(package, t);
  put(package, static_cast<std::uint32_t>(payload.size()));
  package.insert(package.end(), payload.begin(), payload.end());
}

/// Bytes of a message before its payload: origin, sequence, travelled (3 ints), payload length.
inline constexpr std::size_t ttl_message_header = 24;

/// The messages of a package that arrived from rank `from` in step `step`
/// (from 0) at the box `coords` of `shape` over the link along `moved`, in a
/// network of TTL `max_hops`, into `out` (cleared first; the payloads point
/// into `package`). The bytes come from another rank and are checked against
/// what every sender guarantees, so that step() never acts on a corrupted
/// package (negating or taking |.| of INT_MIN is undefined, and an offset
/// leaving the grid has no box to deliver from): the count fits the bytes,
/// every field and payload is complete, nothing is left over, the offset
/// travelled has 1 to `max_hops` hops and no more than the steps so far
/// allow, ends with a hop along `moved` (the forwarding tree's last hop,
/// ttl::last_hop), and starts at a box of the grid owned by the origin.
/// Throws haloshift::error naming what is wrong. No MPI: the fuzz target
/// calls it on arbitrary bytes.
inline void read_ttl_package(std::span<const std::byte> package, int from, const grid_shape& shape,
                             const offset& coords, const offset& moved, int max_hops, long step,
                             std::vector<ttl_wire_message>& out) {
  out.clear();
  wire_reader read(package, "ttl_local_exchange: a package", from);
  const auto count = read.get<std::uint32_t>("the message count");
  // Checked before reading on, so that a corrupted count fails at once with the count in the message.
  if (count > read.left() / ttl_message_header)
    throw error(read.what() + ": " + std::to_string(count) + " messages of at least " +
                std::to_string(ttl_message_header) + " bytes do not fit in the " + bytes_text(read.left()) + " left");
  for (std::uint32_t i = 0; i < count; ++i) {
    ttl_wire_message m;
    m.origin = read.get<int>("an origin");
    m.sequence = read.get<std::uint32_t>("a sequence number");
    for (int& t : m.travelled) t = read.get<int>("an offset travelled");
    m.payload = read.take(read.get<std::uint32_t>("a payload length"), "a payload");
    const auto bad = [&](const std::string& what) {
      return error(read.what() + ": message " + std::to_string(i + 1) + " of " + std::to_string(count) +
                   " has travelled " + to_string(m.travelled) + ", " + what);
    };
    int hops = 0;
    for (int t : m.travelled) {
      if (t < -max_hops || t > max_hops)  // first: |t| and -t are defined from here on
        throw bad("more than the network's " + std::to_string(max_hops) + " hops");
      hops = std::max(hops, std::abs(t));
    }
    if (hops == 0) throw bad("no hop at all");
    // One hop per step, the first in the step of the post: at most step + 1 hops by now.
    if (hops > step + 1) throw bad("too far by step " + std::to_string(step) + " (one hop per step, from step 0)");
    // Keeps grid_shape::neighbor_at's int arithmetic (coordinate + offset, floor division) far from
    // overflow; a real message gets there only after 2^30 steps.
    if (hops > (1 << 30)) throw bad("beyond 2^30 hops");
    const offset poster_at = -m.travelled;
    if (detail::ttl::last_hop(poster_at, hops) != moved)
      throw bad("which does not end with a hop along " + to_string(moved) + ", the link it came over");
    const auto poster = shape.neighbor_at(coords, poster_at);
    if (!poster) throw bad("from outside the grid");
    if (poster->rank != m.origin)
      throw bad("from the box of rank " + std::to_string(poster->rank) + ", but names rank " +
                std::to_string(m.origin) + " as its origin");
    out.push_back(m);
  }
  read.expect_end();
}

/// The delivery of `m`, as read_ttl_package returned it with the same shape,
/// coords and step (so its offset is checked: |.|, negation and the poster's
/// box are defined); throws if its payload does not decode as a T.
template <network_message T>
local_message<T> make_local_message(const ttl_wire_message& m, const grid_shape& shape, const offset& coords,
                                    long step, MPI_Comm comm) {
  const int hops = std::max({std::abs(m.travelled[0]), std::abs(m.travelled[1]), std::abs(m.travelled[2])});
  if (!message_codec<T>::decodes(m.payload))
    throw error("ttl_local_exchange: a message of " + std::to_string(m.payload.size()) + " bytes from rank " +
                std::to_string(m.origin) + " does not decode as the message type");
  const offset from = -m.travelled;
  return {from, m.origin, shape.neighbor_at(coords, from)->image, hops, step - hops + 1,
          message_codec<T>::decode(m.payload, comm)};
}

}  // namespace detail

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
      detail::read_ttl_package(arrived_[j], receives_[j].peer, shape_, coords_, moved, hops_, step_, incoming_);
      for (const detail::ttl_wire_message& m : incoming_) {
        delivered_.push_back(detail::make_local_message<T>(m, shape_, coords_, step_, comm_.get()));
        if (delivered_.back().hops < hops_)
          for (std::size_t i : send_direction_)
            if (detail::ttl::forwards(moved, links_.directions[i]))
              enqueue(i, m.origin, m.sequence, m.travelled + links_.directions[i], m.payload);
      }
    }
    ++step_;
  }

  /// What arrived in the last step() (not the rank's own posts).
  const std::vector<detail::local_message<T>>& delivered() const noexcept { return delivered_; }
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
    detail::put_ttl_message(p.data, origin, sequence, travelled, payload);
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
  std::vector<detail::ttl_wire_message> incoming_;  // one arrived package, decoded; kept for its capacity
  std::vector<detail::local_message<T>> delivered_;
  std::uint32_t next_sequence_ = 0;
  long step_ = 0;
};

}  // namespace haloshift

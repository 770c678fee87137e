// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file msn_announce.hpp
/// @brief MsnAnnounce: NAStJA's global announcement network
/// (msn-global-network, Sec. II-A). Store-and-forward over a Manhattan
/// Street Network, one hop per simulation step, no collectives.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../error.hpp"
#include "../detail/mpi/agreement.hpp"
#include "../detail/mpi/check.hpp"
#include "../detail/mpi/communicator.hpp"
#include "announcement.hpp"
#include "../detail/network/links.hpp"
#include "../detail/network/wire.hpp"
#include "message_codec.hpp"
#include "msn_distances.hpp"
#include "msn_topology.hpp"

namespace haloshift {

namespace detail {

/// One message of an MsnAnnounce package as it travels over a link.
struct msn_wire_message {
  int origin;                          ///< the rank that posted it
  std::uint32_t sequence;              ///< its number among the origin's posts
  int ttl;                             ///< hops it may still take, as sent
  std::span<const std::byte> payload;  ///< the encoded message
};

/// Appends one message to a package (after its 4-byte message count):
/// origin, sequence, ttl, payload length, payload.
inline void put_msn_message(byte_buffer& package, int origin, std::uint32_t sequence, int ttl,
                            std::span<const std::byte> payload) {
  put(package, origin);
  put(package, sequence);
  put(package, ttl);
  put(package, static_cast<std::uint32_t>(payload.size()));
  package.insert(package.end(), payload.begin(), payload.end());
}

/// Bytes of a message before its payload: origin, sequence, ttl, payload length.
inline constexpr std::size_t msn_message_header = 16;

/// The messages of a package that arrived from rank `from` in step `step`
/// (from 0) over an MSN of `ranks` ranks whose TTL is `max_ttl`, into `out`
/// (cleared first; the payloads point into `package`). The bytes come from
/// another rank and are checked against what every sender guarantees, so that
/// step() never acts on a corrupted package: the count fits the bytes, every
/// field and payload is complete, nothing is left over, the origin is a rank,
/// the TTL is 1 to `max_ttl` (a copy with 0 left is never sent; one with less
/// than 0 would otherwise circulate forever, as `ttl - 1` never reaches 0) and
/// the hops it implies fit in the steps so far. Throws haloshift::error naming
/// what is wrong. No MPI: the fuzz target calls it on arbitrary bytes.
inline void read_msn_package(std::span<const std::byte> package, int from, int ranks, int max_ttl, long step,
                             std::vector<msn_wire_message>& out) {
  out.clear();
  wire_reader read(package, "msn_announce: a package", from);
  const auto count = read.get<std::uint32_t>("the message count");
  // Checked before reading on, so that a corrupted count fails at once with the count in the message.
  if (count > read.left() / msn_message_header)
    throw error(read.what() + ": " + std::to_string(count) + " messages of at least " +
                std::to_string(msn_message_header) + " bytes do not fit in the " + bytes_text(read.left()) + " left");
  for (std::uint32_t i = 0; i < count; ++i) {
    msn_wire_message m;
    m.origin = read.get<int>("an origin");
    m.sequence = read.get<std::uint32_t>("a sequence number");
    m.ttl = read.get<int>("a ttl");
    m.payload = read.take(read.get<std::uint32_t>("a payload length"), "a payload");
    const auto bad = [&](const std::string& what) {
      return error(read.what() + ": message " + std::to_string(i + 1) + " of " + std::to_string(count) + " " + what);
    };
    if (m.origin < 0 || m.origin >= ranks)
      throw bad("has origin " + std::to_string(m.origin) + ", not a rank of the " + std::to_string(ranks));
    if (m.ttl < 1 || m.ttl > max_ttl)
      throw bad("has ttl " + std::to_string(m.ttl) + ", outside 1 to " + std::to_string(max_ttl) +
                " (the network's ttl)");
    // One hop per step, the first in the step of the post: at most step + 1 hops by now.
    if (const int hops = max_ttl - m.ttl + 1; hops > step + 1)
      throw bad("has ttl " + std::to_string(m.ttl) + " of " + std::to_string(max_ttl) + ", so " +
                std::to_string(hops) + " hops by step " + std::to_string(step) + " (one hop per step, from step 0)");
    out.push_back(m);
  }
  read.expect_end();
}

/// The announcement of a message that took `hops` hops to arrive in step
/// `step`; throws if `payload` does not decode as a T.
template <network_message T>
announcement<T> make_announcement(int origin, std::uint32_t sequence, long step, int hops,
                                  std::span<const std::byte> payload, MPI_Comm comm) {
  if (!message_codec<T>::decodes(payload))
    throw error("msn_announce: a message of " + std::to_string(payload.size()) + " bytes from rank " +
                std::to_string(origin) + " does not decode as the message type");
  return {origin, sequence, step - std::max(hops - 1, 0), hops, message_codec<T>::decode(payload, comm)};
}


/// Options of msn_announce; they must be the same on all ranks.
struct msn_options {
  /// Hops a message may travel; 0 means the network's true diameter (the
  /// smallest value that reaches every rank). A larger value only delays the
  /// moment every copy has died out.
  int ttl = 0;
};
}  // namespace detail

/// Global announcements over an MSN of `degree` dimensions spanning all ranks
/// of a communicator.
///
/// Use: any rank `post`s messages at any time; every rank calls `step()`
/// once per simulation step (collectively, like a halo exchange); after each
/// `step()`, `delivered()` lists what arrived in it. Guarantees: every rank,
/// the poster included, receives every posted message exactly once; a
/// message posted before step `s` (counting step() calls from 0) is
/// delivered on every rank by the end of step `s + diameter() - 1`, on the
/// poster in step `s` itself.
///
/// Each step a rank sends one package to each of its `degree` MSN
/// successors (self-loops of tiny networks skipped) holding every message it
/// learnt in the previous step whose TTL allows another hop (and its own new
/// posts); a link with nothing to say carries a 4-byte package. Copies that
/// come back are recognised by a buffer of live messages, (origin, sequence)
/// kept as long as a copy can still be under way, and dropped.
template <network_message T>
class msn_announce {
public:
  /// Collective over `comm`; works on a duplicate. `degree` and the options
  /// must be the same on all ranks.
  msn_announce(MPI_Comm comm, int degree, detail::msn_options options = {}) : comm_(comm), net_(1, 1) {
    mpi::agree(comm_.get(),
               [&] {
                 if (options.ttl < 0)
                   throw error("msn_announce: ttl must be >= 0 (0: the diameter), got " +
                               std::to_string(options.ttl));
                 net_ = msn_topology(comm_.size(), degree);
               },
               {{"msn_announce degree", degree}, {"msn_announce ttl", options.ttl}});
    // The true diameter: every rank measures its own eccentricity, the largest wins.
    diameter_ = detail::msn_eccentricity(net_, comm_.rank());
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, &diameter_, 1, MPI_INT, MPI_MAX, comm_.get()), "MPI_Allreduce");
    if (options.ttl > 0 && options.ttl < diameter_)
      throw error("msn_announce: ttl " + std::to_string(options.ttl) + " is below the network's diameter " +
                  std::to_string(diameter_) + ", so some ranks would miss messages");
    ttl_ = options.ttl > 0 ? options.ttl : diameter_;
    for (int d = 0; d < degree; ++d) {
      const int to = net_.successor(comm_.rank(), d), from = net_.predecessor(comm_.rank(), d);
      if (to != comm_.rank()) sends_.push_back({to, d});
      if (from != comm_.rank()) receives_.push_back({from, d});
    }
  }

  /// Queues `message` to be sent (and delivered here) in the next step().
  void post(const T& message) {
    record r{comm_.rank(), next_sequence_++, ttl_, {}};
    message_codec<T>::encode(message, comm_.get(), r.payload);
    if (r.payload.size() > static_cast<std::size_t>(INT32_MAX))
      throw error("msn_announce: a message of " + std::to_string(r.payload.size()) +
                  " bytes exceeds MPI's int count");
    posted_.push_back(std::move(r));
  }

  /// One hop for every message under way; collective.
  void step() {
    delivered_.clear();
    for (record& r : posted_) {
      live_[key(r)] = step_ + ttl_;
      deliver(r, r.payload, 0);
      forwarding_.push_back(std::move(r));
    }
    posted_.clear();

    byte_buffer& package = package_;  // kept between steps: its capacity is reused, not allocated anew
    package.clear();
    detail::put(package, static_cast<std::uint32_t>(forwarding_.size()));
    for (const record& r : forwarding_) detail::put_msn_message(package, r.origin, r.sequence, r.ttl, r.payload);
    forwarding_.clear();
    const std::vector<std::span<const std::byte>> same_to_all(sends_.size(), package);
    detail::exchange_packages(comm_.get(), sends_, same_to_all, receives_, arrived_);

    for (std::size_t j = 0; j < arrived_.size(); ++j) {
      detail::read_msn_package(arrived_[j], receives_[j].peer, comm_.size(), ttl_, step_, incoming_);
      for (const detail::msn_wire_message& m : incoming_) {
        record r{m.origin, m.sequence, m.ttl - 1, {}};  // ttl after this hop: 0 to ttl_ - 1 (checked)
        if (!live_.try_emplace(key(r), step_ + r.ttl).second) continue;  // a copy we already have
        deliver(r, m.payload, ttl_ - r.ttl);
        if (r.ttl == 0) continue;
        r.payload.assign(m.payload.begin(), m.payload.end());  // copied only to be forwarded
        forwarding_.push_back(std::move(r));
      }
    }
    // No copy of a message can arrive after its TTL ran out anywhere.
    std::erase_if(live_, [this](const auto& entry) { return entry.second <= step_; });
    ++step_;
  }

  /// What arrived in the last step(), the rank's own posts included.
  const std::vector<detail::announcement<T>>& delivered() const noexcept { return delivered_; }

  /// Hops from the farthest rank to the farthest other: the bound on delivery.
  int diameter() const noexcept { return diameter_; }
  /// Hops a message may travel (msn_options::ttl, or the diameter when that was 0).
  int ttl() const noexcept { return ttl_; }
  /// Dimensions of the MSN: the links each rank sends on per step.
  int degree() const noexcept { return net_.degree(); }
  /// The MSN the announcements travel over.
  const msn_topology& topology() const noexcept { return net_; }
  /// Number of step() calls so far.
  long steps() const noexcept { return step_; }
  /// Messages this rank has seen that may still have copies under way.
  std::size_t live_messages() const noexcept { return live_.size(); }
  /// The network's own duplicate of the communicator.
  MPI_Comm comm() const noexcept { return comm_.get(); }

private:
  struct record {
    int origin = 0;
    std::uint32_t sequence = 0;
    int ttl = 0;  ///< hops it may still take
    byte_buffer payload;
  };

  static std::uint64_t key(const record& r) noexcept {
    return (std::uint64_t{static_cast<std::uint32_t>(r.origin)} << 32) | r.sequence;
  }

  /// Decodes `payload` (r's, or still in the arrived package) into delivered_.
  void deliver(const record& r, std::span<const std::byte> payload, int hops) {
    delivered_.push_back(detail::make_announcement<T>(r.origin, r.sequence, step_, hops, payload, comm_.get()));
  }

  mpi::communicator comm_;
  msn_topology net_;
  int diameter_ = 0;
  int ttl_ = 0;
  std::vector<detail::link> sends_, receives_;
  std::vector<record> posted_, forwarding_;
  std::vector<byte_buffer> arrived_;
  std::vector<detail::msn_wire_message> incoming_;  // one arrived package, decoded; kept for its capacity
  byte_buffer package_;
  std::unordered_map<std::uint64_t, long> live_;
  std::vector<detail::announcement<T>> delivered_;
  std::uint32_t next_sequence_ = 0;
  long step_ = 0;
};

}  // namespace haloshift

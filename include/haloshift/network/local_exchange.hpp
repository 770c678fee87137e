// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file local_exchange.hpp
/// @brief NAStJA's local single-hop exchange network (msn-global-network,
/// Sec. II-B): every step, every rank's package to all direct neighbours.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../error.hpp"
#include "../grid/cartesian_grid.hpp"
#include "../grid/offset.hpp"
#include "../detail/mpi/agreement.hpp"
#include "../detail/mpi/communicator.hpp"
#include "../detail/network/grid_links.hpp"
#include "../detail/network/links.hpp"

namespace haloshift {

namespace detail {
/// The package of the box at offset `from` (owned by `source`, `image` its
/// periodic wrap as in grid_shape::neighbor_at).
template <class T>
struct neighbor_package {
  /// Offset of the sender's box from this rank's box.
  offset from;
  /// The sender's rank.
  int source;
  /// Periodic wraps of `from`, per dimension.
  offset image;
  /// The package, as the sender passed it to step().
  std::vector<T> data;
};
}  // namespace detail

/// Single-hop local exchange over a Cartesian grid: `step(package)` sends the
/// package (any number of elements, none included) to the 26 (3D), 8 (2D) or
/// 2 (1D) direct neighbours and receives theirs, sizes found by probe. On a
/// periodic dimension of 1 or 2 boxes a rank meets itself or a neighbour at
/// several offsets; it receives the package once per offset, as a halo would.
/// Collective per step; neighbours at non-periodic borders do not exist.
template <class T>
  requires std::is_trivially_copyable_v<T>
class local_exchange {
public:
  /// Collective over the grid; works on a duplicate of its communicator.
  explicit local_exchange(const cartesian_grid& grid) : comm_(grid.comm()), links_(grid) {
    mpi::agree(comm_.get(), [] {}, {{"local_exchange sizeof(T)", static_cast<std::int64_t>(sizeof(T))}});
    sends_ = detail::grid_links::existing(links_.to);
    // Directions are canonical and symmetric, so walking them backwards
    // lists the senders' offsets (-w) in canonical order.
    for (std::size_t i = links_.directions.size(); i-- > 0;)
      if (links_.from[i]) {
        const offset from = -links_.directions[i];
        receives_.push_back(*links_.from[i]);
        received_.push_back({from, links_.from[i]->peer, grid.neighbor_at(from)->image, {}});
      }
  }

  /// Sends `package` to every neighbour and receives theirs (collective).
  void step(std::span<const T> package) {
    const std::span<const std::byte> raw = std::as_bytes(package);
    detail::exchange_packages(comm_.get(), sends_, std::vector<std::span<const std::byte>>(sends_.size(), raw),
                              receives_, arrived_);
    for (std::size_t j = 0; j < arrived_.size(); ++j) {
      const byte_buffer& in = arrived_[j];
      if (in.size() % sizeof(T) != 0)
        throw error("local_exchange: " + std::to_string(in.size()) + " bytes from rank " +
                    std::to_string(received_[j].source) + " are not a whole number of elements");
      received_[j].data.resize(in.size() / sizeof(T));
      if (!in.empty()) std::memcpy(received_[j].data.data(), in.data(), in.size());
    }
  }

  /// The packages of the last step, one per existing neighbour offset, in
  /// canonical offset order (z slowest, x fastest).
  const std::vector<detail::neighbor_package<T>>& received() const noexcept { return received_; }

private:
  mpi::communicator comm_;
  detail::grid_links links_;
  std::vector<detail::link> sends_, receives_;
  std::vector<byte_buffer> arrived_;
  std::vector<detail::neighbor_package<T>> received_;
};

}  // namespace haloshift

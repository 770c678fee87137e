// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file migrate.hpp
/// @brief Migration: particles that left their box move to their new owner,
/// over any distance, none lost and none duplicated.

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <type_traits>
#include <map>
#include <string>
#include <vector>

#include "../error.hpp"
#include "../exchange/halo.hpp"
#include "../grid/cartesian_grid.hpp"
#include "../mpi/agreement.hpp"
#include "../mpi/check.hpp"
#include "domain.hpp"

namespace haloshift {

/// Wraps `x` into the primary domain along periodic dimensions
/// (`domain::wrap`) and returns the rank whose box owns it by the one
/// ownership rule (`domain::owner_coordinate`, half-open boxes), the rule
/// make_particle_plan checks. Throws haloshift::error when `x` is not finite
/// or leaves a non-periodic dimension.
inline int owner_of(const grid_shape& grid, const domain& dom, position& x) {
  offset c{0, 0, 0};
  for (int d = 0; d < grid.ndims(); ++d) {
    if (!std::isfinite(x[d]))
      throw error("migrate: a particle has a non-finite coordinate along dimension " + std::to_string(d));
    if (grid.periodic(d)) {
      x[d] = dom.wrap(d, x[d]);  // exact: always inside [lo, hi), a value that rounds to hi becomes lo
    } else if (x[d] < dom.lo[d] || x[d] >= dom.hi[d]) {
      throw error("migrate: a particle at coordinate " + std::to_string(x[d]) + " along dimension " +
                  std::to_string(d) + " left the non-periodic domain [" + std::to_string(dom.lo[d]) + ", " +
                  std::to_string(dom.hi[d]) + ")");
    }
    c[d] = dom.owner_coordinate(grid, d, x[d]);
  }
  return grid.rank_of(c);
}

namespace detail {
/// Sparse data exchange (Hoefler's NBX): synchronous sends to the few ranks
/// that get something, receives by probing, and a non-blocking barrier that
/// completes once every send was matched. O(messages) work and no O(P)
/// memory, for any distance. Returns each source's bytes, ordered by source rank.
/// Consecutive calls on one grid alternate between two tags (mpi/tags.hpp): a
/// rank whose barrier completed may start the next call while another still
/// probes for the last messages of this one.
inline std::map<int, std::vector<std::byte>> sparse_exchange(grid_context& context,
                                                             const std::map<int, std::vector<std::byte>>& out) {
  MPI_Comm comm = context.comm.get();
  const int tag = sparse_exchange_tag + static_cast<int>(context.sparse_exchanges++ % 2);
  std::vector<MPI_Request> sends;
  for (const auto& [rank, bytes] : out) {
    if (bytes.size() > static_cast<std::size_t>(INT_MAX))
      throw error("migrate: " + std::to_string(bytes.size()) + " bytes for rank " + std::to_string(rank) +
                  " exceed MPI's int count");
    sends.emplace_back();
    mpi::check(MPI_Issend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, rank, tag, comm, &sends.back()),
               "MPI_Issend");
  }
  std::map<int, std::vector<std::byte>> in;
  MPI_Request barrier = MPI_REQUEST_NULL;
  bool barrier_started = false;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    mpi::check(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &status), "MPI_Iprobe");
    if (flag) {
      int n = 0;
      mpi::check(MPI_Get_count(&status, MPI_BYTE, &n), "MPI_Get_count");
      std::vector<std::byte>& bytes = in[status.MPI_SOURCE];
      bytes.resize(static_cast<std::size_t>(n));
      mpi::check(MPI_Recv(bytes.data(), n, MPI_BYTE, status.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
      continue;
    }
    if (!barrier_started) {
      int done = 0;
      mpi::check(MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE),
                 "MPI_Testall");
      if (done) {
        mpi::check(MPI_Ibarrier(comm, &barrier), "MPI_Ibarrier");
        barrier_started = true;
      }
    } else {
      int done = 0;
      mpi::check(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) break;
    }
  }
  return in;
}
}  // namespace detail

namespace detail {
/// What every form of migrate shares, once each particle's owner is known
/// (agreed: a bad particle anywhere raised on every rank before this): the
/// particles that stay are compacted in order (`keep(from, to)`, then
/// `shrink(count)`), those that leave are packed per destination
/// (`pack(i, out)` appends `record` bytes), and arrivals are appended ordered
/// by source rank (`append(bytes, count)`).
template <class Keep, class Shrink, class Pack, class Append>
void move_to_owners(const cartesian_grid& grid, const std::vector<int>& owner, std::size_t record, Keep keep,
                    Shrink shrink, Pack pack, Append append) {
  std::map<int, std::vector<std::byte>> out;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < owner.size(); ++i) {
    if (owner[i] == grid.rank()) {
      keep(i, kept++);
      continue;
    }
    pack(i, out[owner[i]]);
  }
  shrink(kept);
  for (const auto& [source, bytes] : sparse_exchange(*grid.context(), out)) append(bytes.data(), bytes.size() / record);
}

/// Each particle's owner (wrapping `position_of(i)` into the domain), checked on every rank together.
template <class PositionOf>
std::vector<int> owners(const cartesian_grid& grid, const domain& dom, std::size_t n, PositionOf position_of,
                        const std::function<void()>& also_check = {}) {
  std::vector<int> owner(n);
  mpi::agree(grid.comm(), [&] {
    dom.validate(grid.shape());
    if (also_check) also_check();
    for (std::size_t i = 0; i < n; ++i) {
      try {
        owner[i] = owner_of(grid.shape(), dom, position_of(i));
      } catch (const error& e) {
        throw error(std::string(e.what()).substr(std::string("haloshift: ").size()) + " (particle " +
                    std::to_string(i) + ")");
      }
    }
  });
  return owner;
}
}  // namespace detail

/// Moves every particle of `particles` to the rank whose box holds its
/// position (`position_of(p)` returns a `position&`; wrapped into the domain
/// along periodic dimensions on the way), over any distance. Collective. On
/// return a rank holds the particles that stayed, in their old order, then
/// the arrivals ordered by source rank and, within a source, in its order:
/// the result does not depend on message timing. A particle outside a
/// non-periodic dimension raises the same haloshift::error on every rank
/// before anything moves.
template <transferable T, class PositionOf>
  requires std::is_invocable_r_v<position&, PositionOf, T&>
void migrate(const cartesian_grid& grid, const domain& dom, std::vector<T>& particles, PositionOf position_of) {
  const std::vector<int> owner = detail::owners(
      grid, dom, particles.size(), [&](std::size_t i) -> position& { return std::invoke(position_of, particles[i]); });
  detail::move_to_owners(
      grid, owner, sizeof(T), [&](std::size_t from, std::size_t to) { particles[to] = particles[from]; },
      [&](std::size_t n) { particles.resize(n); },
      [&](std::size_t i, std::vector<std::byte>& out) {
        const auto* p = reinterpret_cast<const std::byte*>(&particles[i]);
        out.insert(out.end(), p, p + sizeof(T));
      },
      [&](const std::byte* bytes, std::size_t n) {
        const std::size_t at = particles.size();
        particles.resize(at + n);
        if (n) std::memcpy(static_cast<void*>(particles.data() + at), bytes, n * sizeof(T));
      });
}

/// Migration of bare positions.
inline void migrate(const cartesian_grid& grid, const domain& dom, std::vector<position>& x) {
  migrate(grid, dom, x, [](position& p) -> position& { return p; });
}

/// Migration of a structure of arrays: `x` holds the positions, and every
/// array of `more` (velocities, ids, types, ...) as many entries, entry `i`
/// of each belonging to particle `i`. All move together, in the order migrate
/// gives one array of structs. Arrays of differing lengths raise the same
/// haloshift::error on every rank before anything moves.
template <transferable... Ts>
  requires(sizeof...(Ts) >= 1)
void migrate(const cartesian_grid& grid, const domain& dom, std::vector<position>& x, std::vector<Ts>&... more) {
  const std::vector<int> owner = detail::owners(
      grid, dom, x.size(), [&](std::size_t i) -> position& { return x[i]; },
      [&] {
        int which = 1;
        (
            [&](const auto& array) {
              if (array.size() != x.size())
                throw error("migrate: array " + std::to_string(which) + " after the positions has " +
                            std::to_string(array.size()) + " entries, the positions " + std::to_string(x.size()));
              ++which;
            }(more),
            ...);
      });
  constexpr std::size_t record = sizeof(position) + (sizeof(Ts) + ...);
  detail::move_to_owners(
      grid, owner, record,
      [&](std::size_t from, std::size_t to) {
        x[to] = x[from];
        ((more[to] = more[from]), ...);
      },
      [&](std::size_t n) {
        x.resize(n);
        (more.resize(n), ...);
      },
      [&](std::size_t i, std::vector<std::byte>& out) {
        auto put = [&](const auto& value) {
          const auto* p = reinterpret_cast<const std::byte*>(&value);
          out.insert(out.end(), p, p + sizeof(value));
        };
        put(x[i]);
        (put(more[i]), ...);
      },
      [&](const std::byte* bytes, std::size_t n) {
        const std::size_t at = x.size();
        auto take = [&](auto& array) {
          array.resize(at + n);
          using V = typename std::remove_reference_t<decltype(array)>::value_type;
          for (std::size_t k = 0; k < n; ++k) std::memcpy(static_cast<void*>(&array[at + k]), bytes + k * record, sizeof(V));
          bytes += sizeof(V);  // the next array's entry sits after this one in each record
        };
        take(x);
        (take(more), ...);
      });
}

}  // namespace haloshift

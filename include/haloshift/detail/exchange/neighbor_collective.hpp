// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file neighbor_collective.hpp
/// @brief Runs a one-round program as MPI_Neighbor_alltoallv on a
/// distributed-graph communicator (the NeighborAlltoall baseline).

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>
#if MPI_VERSION < 4 && defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include "../../error.hpp"
#include "../../log.hpp"
#include "../mpi/check.hpp"
#include "../mpi/communicator.hpp"
#include "arrays.hpp"
#include "executor.hpp"
#include "program.hpp"

// SimGrid's SMPI (its mpi.h defines SMPI_SHARED_MALLOC) declares the distributed-graph calls but,
// up to 3.32 at least, does not implement them: MPI_Dist_graph_create_adjacent ends the whole
// simulation ("Not yet implemented"). There, or wherever HALOSHIFT_NEIGHBOR_POINT_TO_POINT is
// defined to 1, NeighborAlltoall posts its edges as MPI_Irecv and MPI_Isend on a duplicate of the
// grid's communicator instead of the collective: the same messages, at once, matched in edge order
// as the collective matches them (docs/smpi.md).
#if !defined(HALOSHIFT_NEIGHBOR_POINT_TO_POINT)
#if defined(SMPI_SHARED_MALLOC)
/// 1: NeighborAlltoall posts its edges point to point (SimGrid's SMPI, or defined so by the user).
#define HALOSHIFT_NEIGHBOR_POINT_TO_POINT 1
#else
/// 0: NeighborAlltoall runs MPI's neighbourhood collective (define it to 1 to post its edges point to point).
#define HALOSHIFT_NEIGHBOR_POINT_TO_POINT 0
#endif
#endif

// The persistent neighbourhood collective, where the MPI has it and completes it under MPI_Testall
// (split-phase exchanges test their requests): Open MPI. MPICH 4.0 (Debian 12) has
// MPI_Neighbor_alltoallv_init but fails MPI_Testall on the started request ("Fatal error in
// internal_Testall"); there, and everywhere else, MPI_Ineighbor_alltoallv runs.
#if defined(OPEN_MPI) && OPEN_MPI && !HALOSHIFT_NEIGHBOR_POINT_TO_POINT
#if MPI_VERSION >= 4
#define HALOSHIFT_NEIGHBOR_ALLTOALLV_INIT MPI_Neighbor_alltoallv_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define HALOSHIFT_NEIGHBOR_ALLTOALLV_INIT MPIX_Neighbor_alltoallv_init
#endif
#endif

namespace haloshift::detail {

/// Whether forward exchanges use a persistent neighbourhood collective.
inline constexpr bool persistent_neighbor_collective =
#ifdef HALOSHIFT_NEIGHBOR_ALLTOALLV_INIT
    true;
#else
    false;
#endif

/// One direction of the exchange: a graph communicator and per-edge counts
/// and displacements in bytes. Owns the communicator: move-only, and a
/// moved-from graph is empty (no communicator, no edges).
struct neighbor_graph {
  mpi::communicator comm;
  std::vector<int> sources, destinations;
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;

  neighbor_graph() = default;
  neighbor_graph(const neighbor_graph&) = delete;
  neighbor_graph& operator=(const neighbor_graph&) = delete;
  neighbor_graph(neighbor_graph&&) noexcept = default;
  neighbor_graph& operator=(neighbor_graph&&) noexcept = default;

  void create(MPI_Comm parent) {
#if HALOSHIFT_NEIGHBOR_POINT_TO_POINT
    comm = mpi::communicator(parent);
    static bool told = false;  // once per process, from rank 0 of the first graph
    int rank = 0;
    mpi::check(MPI_Comm_rank(parent, &rank), "MPI_Comm_rank");
    if (rank == 0 && !told) {
      told = true;
      log_message(log_level::warning,
                  "NeighborAlltoall runs point to point (HALOSHIFT_NEIGHBOR_POINT_TO_POINT; SimGrid's SMPI "
                  "lacks MPI_Dist_graph_create_adjacent): its messages are MPI_Isend/MPI_Irecv, all at once, "
                  "instead of MPI_Ineighbor_alltoallv");
    }
#else
    MPI_Comm graph = MPI_COMM_NULL;
    mpi::check(MPI_Dist_graph_create_adjacent(parent, static_cast<int>(sources.size()), sources.data(), MPI_UNWEIGHTED,
                                              static_cast<int>(destinations.size()), destinations.data(),
                                              MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph),
               "MPI_Dist_graph_create_adjacent");
    comm = mpi::communicator::adopt(graph);
#endif
  }
  /// Starts the collective; its request joins `requests` (point to point: one request per edge).
  void start(const void* send, void* recv, std::vector<MPI_Request>& requests) const {
    start(send, send_displs, recv, recv_displs, requests);
  }
  /// The same with other displacements (a batched exchange's packed staging).
  void start(const void* send, const std::vector<int>& sends_at, void* recv, const std::vector<int>& receives_at,
             std::vector<MPI_Request>& requests) const {
#if HALOSHIFT_NEIGHBOR_POINT_TO_POINT
    for (std::size_t i = 0; i < sources.size(); ++i) {
      requests.emplace_back();
      mpi::check(MPI_Irecv(static_cast<std::byte*>(recv) + receives_at[i], recv_counts[i], MPI_BYTE, sources[i], 0,
                           comm.get(), &requests.back()),
                 "MPI_Irecv");
    }
    for (std::size_t i = 0; i < destinations.size(); ++i) {
      requests.emplace_back();
      mpi::check(MPI_Isend(static_cast<const std::byte*>(send) + sends_at[i], send_counts[i], MPI_BYTE,
                           destinations[i], 0, comm.get(), &requests.back()),
                 "MPI_Isend");
    }
#else
    requests.emplace_back();
    mpi::check(MPI_Ineighbor_alltoallv(send, send_counts.data(), sends_at.data(), MPI_BYTE, recv,
                                       recv_counts.data(), receives_at.data(), MPI_BYTE, comm.get(), &requests.back()),
               "MPI_Ineighbor_alltoallv");
#endif
  }
};

inline int checked_int(std::size_t bytes, const char* what) {
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw error(std::string("NeighborAlltoall: ") + what + " of " + std::to_string(bytes) +
                " bytes exceeds MPI's int counts and displacements");
  return static_cast<int>(bytes);
}

/// The neighbourhood-collective engine of a plan. Forwards, every edge sends
/// the own block from one engine-owned copy (all edges share that region,
/// which MPI allows for sends; a separate copy because MPI forbids aliasing
/// the send and receive buffers) and receives straight into the block's slot
/// of the halo buffer. Backwards, the
/// edges reverse: each returns the contribution in its slot, and all arrivals
/// are combined into the own slot.
class neighbor_engine {
 public:
  /// Lays out the edges (local; throws when sizes exceed MPI's int). Then
  /// connect() creates the graph communicators, collectively.
  neighbor_engine(const program& p, std::size_t element_size) {
    if (p.rounds.size() > 1) throw error("NeighborAlltoall: the schedule must have a single round");
    const block_layout& layout = p.layout;
    own_.resize(std::max<std::size_t>(1, layout.slots()[layout.own()].count * element_size));
    std::size_t staged = 0;
    if (!p.rounds.empty())
      for (const transfer_program& t : p.rounds.front().transfers) {
        if (t.send.exists()) {
          forward_.destinations.push_back(t.send.peer);
          forward_.send_counts.push_back(checked_int(t.send.count * element_size, "a message"));
          forward_.send_displs.push_back(0);
          backward_.sources.push_back(t.send.peer);
          backward_.recv_counts.push_back(forward_.send_counts.back());
          backward_.recv_displs.push_back(checked_int(staged, "the reverse staging area"));
          // What comes back on this edge is combined into the own block, element by element.
          own_targets_.emplace_back();
          own_targets_.back().count = t.send.count;
          own_targets_.back().contiguous = true;
          own_targets_.back().first = layout.slots()[layout.own()].first;
          staged += t.send.count * element_size;
        }
        if (t.recv.exists()) {
          forward_.sources.push_back(t.recv.peer);
          forward_.recv_counts.push_back(checked_int(t.recv.count * element_size, "a message"));
          forward_.recv_displs.push_back(checked_int(t.recv.first * element_size, "the halo"));
          backward_.destinations.push_back(t.recv.peer);
          backward_.send_counts.push_back(forward_.recv_counts.back());
          backward_.send_displs.push_back(forward_.recv_displs.back());
        }
      }
    staging_bytes_ = staged;
    // A rank may have no edge in one direction (its block is empty); some MPIs reject null count
    // arrays even then, so every array gets one unused trailing entry.
    for (neighbor_graph* g : {&forward_, &backward_})
      for (auto* v : {&g->send_counts, &g->send_displs, &g->recv_counts, &g->recv_displs}) v->push_back(0);
    for (int d = 0; d < 2; ++d) {  // packed: each direction's edges one after another, in edge order
      const neighbor_graph& g = d == 0 ? forward_ : backward_;
      packed_[d][0] = running_sum(g.send_counts);
      packed_[d][1] = running_sum(g.recv_counts);
    }
  }

  /// Collective over `parent`.
  void connect(MPI_Comm parent) {
    forward_.create(parent);
    backward_.create(parent);
    // Open MPI's persistent neighbourhood collective returns an unusable request on a rank without
    // edges (all its blocks empty); then every rank takes the blocking call, since all ranks must
    // run the same collective.
    int edges = forward_.sources.empty() && forward_.destinations.empty() ? 0 : 1;
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, &edges, 1, MPI_INT, MPI_MIN, parent), "MPI_Allreduce");
    persistent_allowed_ = edges == 1;
  }
  neighbor_engine(const neighbor_engine&) = delete;
  neighbor_engine& operator=(const neighbor_engine&) = delete;
  ~neighbor_engine() { release_persistent(); }

  /// Staging bytes a pass needs: backwards, every contribution that comes back.
  std::size_t staging_bytes(const program&, std::size_t) const noexcept { return staging_bytes_; }

  /// Forwards: sends the own block (already in its slot of the array) to every
  /// edge and receives into the array's slots.
  template <class Data>
  void post_forward(const program& p, const Data& data, std::byte*, std::vector<MPI_Request>& requests) {
    auto* buffer = data.only();
    using T = std::remove_pointer_t<decltype(buffer)>;
    const block_slot& own = p.layout.slots()[p.layout.own()];
    if (own.count) std::memcpy(own_.data(), buffer + own.first, own.count * sizeof(T));
#ifdef HALOSHIFT_NEIGHBOR_ALLTOALLV_INIT
    if (persistent_allowed_) {
      if (buffer != persistent_buffer_) {
        release_persistent();
        mpi::check(HALOSHIFT_NEIGHBOR_ALLTOALLV_INIT(own_.data(), forward_.send_counts.data(),
                                                     forward_.send_displs.data(), MPI_BYTE, buffer,
                                                     forward_.recv_counts.data(), forward_.recv_displs.data(),
                                                     MPI_BYTE, forward_.comm.get(), MPI_INFO_NULL, &persistent_),
                   "MPI_Neighbor_alltoallv_init");
        persistent_buffer_ = buffer;
      }
      mpi::check(MPI_Start(&persistent_), "MPI_Start");
      requests.push_back(persistent_);  // a copy of the handle: completing it leaves the request inactive, not freed
      return;
    }
#endif
    forward_.start(own_.data(), buffer, requests);
  }
  template <class Data>
  void finish_forward(const program&, const Data&, const std::byte*) {}

  /// Backwards: each edge returns the contribution in its slot into `staging`.
  template <class Data>
  void post_reverse(const program&, const Data& data, std::byte* staging, std::vector<MPI_Request>& requests) {
    backward_.start(data.only(), staging, requests);
  }
  /// Combines every returned contribution into the own slot with `op`.
  template <class Data, class Op>
  void finish_reverse(const program& p, const Data& data, const std::byte* staging, Op& op) {
    for (const message& own : own_targets_) {
      data.combine(p.layout, own, staging, op);
      staging += own.count * data.element_bytes();
    }
  }

  /// Starts a pass over departures a batched exchange packed at `send` in edge order (the
  /// compiled program's order: batch::program_compiler), arrivals landing at `recv` in edge order.
  void start_packed(const program&, bool forwards, std::size_t, const std::byte* send, std::byte* recv,
                    std::vector<MPI_Request>& requests) const {
    const int d = forwards ? 0 : 1;
    (forwards ? forward_ : backward_).start(send, packed_[d][0], recv, packed_[d][1], requests);
  }

  /// The requests of a started pass were freed (abandoned): the persistent one with them.
  void forget_requests() noexcept {
#ifdef HALOSHIFT_NEIGHBOR_ALLTOALLV_INIT
    persistent_ = MPI_REQUEST_NULL;
    persistent_buffer_ = nullptr;
#endif
  }

 private:
  void release_persistent() {
#ifdef HALOSHIFT_NEIGHBOR_ALLTOALLV_INIT
    mpi::free_unless_finalized(persistent_, MPI_REQUEST_NULL, MPI_Request_free);
    persistent_buffer_ = nullptr;
#endif
  }

  /// Each edge's offset in `counts` laid end to end (the trailing unused entry included).
  static std::vector<int> running_sum(const std::vector<int>& counts) {
    std::vector<int> at(counts.size());
    std::size_t next = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
      at[i] = checked_int(next, "a batched staging area");
      next += static_cast<std::size_t>(counts[i]);
    }
    return at;
  }

  neighbor_graph forward_, backward_;
  std::vector<int> packed_[2][2];  ///< per direction (forward, backward): send and receive displacements, packed
  std::vector<std::byte> own_;
  std::vector<message> own_targets_;  ///< per backward edge: its contributions' place, the own block
  std::size_t staging_bytes_ = 0;
  bool persistent_allowed_ = false;
  MPI_Request persistent_ = MPI_REQUEST_NULL;
  void* persistent_buffer_ = nullptr;
};

}  // namespace haloshift::detail

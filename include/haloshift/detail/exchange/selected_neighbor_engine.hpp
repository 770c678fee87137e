// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file selected_neighbor_engine.hpp
/// @brief NeighborAlltoall for selective payloads (grid cells, particles):
/// every edge packs its own pieces.

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "../../log.hpp"
#include "../compiled.hpp"
#include "neighbor_collective.hpp"
#include "program.hpp"

namespace haloshift::detail {

/// A one-round *selective* program (grid cells, particles; built from
/// SingleHop's schedule) as MPI_Neighbor_alltoallv: each message packs its
/// own pieces, so unlike neighbor_engine every edge has its own send data.
/// Forwards, all departures are packed into one area, one collective moves
/// them, arrivals are unpacked; backwards, the ghosts' values go back and are
/// combined into the cells they came from. The graph depends only on the
/// peers, so programs with the same messages in other units (a field
/// bundle's bytes) run on the same graph.
class selected_neighbor_engine {
 public:
  /// Collective over `parent`. `p` must have at most one round (checked by the caller, collectively).
  selected_neighbor_engine(const program& p, MPI_Comm parent) {
    for_each_edge(p, [&](const message& m, bool out) {
      (out ? forward_.destinations : forward_.sources).push_back(m.peer);
      (out ? backward_.sources : backward_.destinations).push_back(m.peer);
    });
    forward_.create(parent);
    backward_.create(parent);
    for (neighbor_graph* g : {&forward_, &backward_})  // sized per pass (the element type): room now, not then
      for (auto* v : {&g->send_counts, &g->send_displs, &g->recv_counts, &g->recv_displs})
        v->reserve(g->sources.size() + g->destinations.size() + 1);
    if (verbose())
      log_message(log_level::info, "NeighborAlltoall: graph communicators created (" +
                                       std::to_string(forward_.sources.size()) + " sources, " +
                                       std::to_string(forward_.destinations.size()) + " destinations)");
  }

  /// Whether `p` has exactly this engine's edges (the same peers in the same order): then a
  /// rebuild keeps the graph communicators, whose creation is collective and costs more than the
  /// rest of a small rebuild. Local; the caller agrees on it before keeping them.
  bool serves(const program& p) const noexcept {
    std::size_t out = 0, in = 0;
    bool same = true;
    for_each_edge(p, [&](const message& m, bool outgoing) {
      const std::vector<int>& peers = outgoing ? forward_.destinations : forward_.sources;
      std::size_t& next = outgoing ? out : in;
      same = same && next < peers.size() && peers[next] == m.peer;
      ++next;
    });
    return same && out == forward_.destinations.size() && in == forward_.sources.size();
  }
  /// Owns its graphs' communicators: move-only; a moved-from engine has none.
  selected_neighbor_engine(const selected_neighbor_engine&) = delete;
  selected_neighbor_engine& operator=(const selected_neighbor_engine&) = delete;
  selected_neighbor_engine(selected_neighbor_engine&&) noexcept = default;
  selected_neighbor_engine& operator=(selected_neighbor_engine&&) noexcept = default;

  /// Staging bytes a pass needs: what leaves, packed, then what arrives.
  std::size_t staging_bytes(const program& p, std::size_t element_bytes) const noexcept {
    std::size_t n = 0;
    for_each_edge(p, [&](const message& m, bool) { n += m.count; });
    return n * element_bytes;
  }

  template <class Data>
  void post_forward(const program& p, const Data& data, std::byte* staging, std::vector<MPI_Request>& requests) {
    post(p, forward_, true, data, staging, requests);
  }
  template <class Data>
  void finish_forward(const program& p, const Data& data, const std::byte* staging) {
    const std::byte* arrived = staging + arrivals_at_;
    for_each_edge(p, [&](const message& m, bool out) {
      if (out) return;
      data.scatter(p.layout, m, arrived);
      arrived += m.count * data.element_bytes();
    });
  }
  template <class Data>
  void post_reverse(const program& p, const Data& data, std::byte* staging, std::vector<MPI_Request>& requests) {
    post(p, backward_, false, data, staging, requests);
  }
  template <class Data, class Op>
  void finish_reverse(const program& p, const Data& data, const std::byte* staging, Op& op) {
    const std::byte* arrived = staging + arrivals_at_;
    for_each_edge(p, [&](const message& m, bool out) {
      if (!out) return;
      data.combine(p.layout, m, arrived, op);
      arrived += m.count * data.element_bytes();
    });
  }
  void forget_requests() noexcept {}

 private:
  /// Calls `f(message, outgoing)` for every send, then every receive, in transfer order.
  template <class F>
  static void for_each_edge(const program& p, F&& f) {
    for (const round_program& r : p.rounds)
      for (const transfer_program& t : r.transfers)
        if (t.send.exists()) f(t.send, true);
    for (const round_program& r : p.rounds)
      for (const transfer_program& t : r.transfers)
        if (t.recv.exists()) f(t.recv, false);
  }

  /// Sizes the graph's counts for `T` (the arrays stay untouched until the
  /// collective completes: one pass of a plan at a time), packs what leaves
  /// (sends forwards, receives backwards) at the start of `staging`, and
  /// starts the collective, arrivals after the departures.
  template <class Data>
  void post(const program& p, neighbor_graph& g, bool forwards, const Data& data, std::byte* staging,
            std::vector<MPI_Request>& requests) {
    const std::size_t element_bytes = data.element_bytes();
    std::byte* next = staging;
    for_each_edge(p, [&](const message& m, bool out) {
      if (out != forwards) return;
      data.gather(p.layout, m, next);
      next += m.count * element_bytes;
    });
    arrivals_at_ = static_cast<std::size_t>(next - staging);
    start(p, g, forwards, element_bytes, staging, next, requests);
  }

 public:
  /// Starts the collective forwards or not over departures already packed at `send`, in edge
  /// order, arrivals landing at `recv` in edge order (a batched exchange packs them itself).
  void start_packed(const program& p, bool forwards, std::size_t element_bytes, const std::byte* send,
                    std::byte* recv, std::vector<MPI_Request>& requests) {
    start(p, forwards ? forward_ : backward_, forwards, element_bytes, send, recv, requests);
  }

 private:
  /// Sizes the graph's counts for elements of `element_bytes` and starts the collective.
  HALOSHIFT_BUILDER void start(const program& p, neighbor_graph& g, bool forwards, std::size_t element_bytes,
                               const std::byte* send, std::byte* recv, std::vector<MPI_Request>& requests);

  std::size_t arrivals_at_ = 0;  ///< where the current pass's arrivals start in the staging, in bytes
  neighbor_graph forward_, backward_;
};

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER void selected_neighbor_engine::start(const program& p, neighbor_graph& g, bool forwards,
                                                       std::size_t element_bytes, const std::byte* send,
                                                       std::byte* recv, std::vector<MPI_Request>& requests) {
  for (auto* v : {&g.send_counts, &g.send_displs, &g.recv_counts, &g.recv_displs}) v->clear();
  std::size_t out_bytes = 0, in_bytes = 0;
  for_each_edge(p, [&](const message& m, bool out) {
    const bool leaves = out == forwards;
    std::size_t& at = leaves ? out_bytes : in_bytes;
    (leaves ? g.send_displs : g.recv_displs).push_back(checked_int(at, "a staging area"));
    (leaves ? g.send_counts : g.recv_counts).push_back(checked_int(m.count * element_bytes, "a message"));
    at += m.count * element_bytes;
  });
  for (auto* v : {&g.send_counts, &g.send_displs, &g.recv_counts, &g.recv_displs}) v->push_back(0);
  g.start(send, recv, requests);
}
#endif

}  // namespace haloshift::detail

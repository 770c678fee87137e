// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file nodes.hpp
/// @brief Which ranks of a grid share a node: the ranks that can share memory
/// (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)), optionally split further into
/// pretend nodes (grid_options::node_sizes, HALOSHIFT_NODE_SIZE) so that the
/// node-aware paths can be tested and measured on one machine.

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../detail/compiled.hpp"
#include "../detail/mpi/agreement.hpp"
#include "../detail/mpi/check.hpp"
#include "../detail/mpi/communicator.hpp"
#include "../error.hpp"
#include "cartesian_grid.hpp"

namespace haloshift::detail {

class node_segment;
/// The node-shared allocations (haloshift::shared_array) made on a node's communicator, which
/// the shared-memory path lends to the rank's node partners instead of packing (zero copy). Each
/// has a number, the same on every rank of the node: they are made collectively, in one order.
struct node_segments {
  std::vector<const node_segment*> live;
  std::uint64_t made = 0;  ///< allocations made so far: the next one's number
};

/// The nodes of a grid's ranks. Computed once per grid (collectively, on the
/// first plan build that needs it) and shared by the plans built on it.
struct node_layout {
  /// Per grid rank, its node: nodes are numbered in the order of their lowest ranks.
  std::shared_ptr<const std::vector<int>> node_of;
  int count = 1;          ///< number of nodes
  int node = 0;           ///< this rank's node
  mpi::communicator comm; ///< this rank's node (its ranks in grid order): MPI_Win_allocate_shared runs on it
  std::shared_ptr<node_segments> segments = std::make_shared<node_segments>();  ///< the shared_arrays made on it

  bool same_node(int rank) const noexcept { return (*node_of)[static_cast<std::size_t>(rank)] == node; }
};

/// The pretend node sizes `text` asks for: "N" (groups of N consecutive ranks
/// of a real node, the last one smaller) or "A,B,C" (groups of A, B, C ranks,
/// the list repeated until the real node's ranks are used up). `name` names
/// the source in messages.
inline std::vector<int> parse_node_sizes(const std::string& text, const char* name) {
  std::vector<int> sizes;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || n < 1 || n > (1L << 30))
      throw error(std::string(name) + " = \"" + text +
                  "\" must be a node size N >= 1 or a list of sizes such as \"3,2,3\"");
    sizes.push_back(static_cast<int>(n));
    at = comma + 1;
  }
  return sizes;
}

/// The pretend node sizes in force: the grid's option, else HALOSHIFT_NODE_SIZE, else none
/// (real nodes). Raises on a size below 1 or a malformed variable.
inline std::vector<int> requested_node_sizes(const std::vector<int>& option) {
  for (std::size_t i = 0; i < option.size(); ++i)
    if (option[i] < 1)
      throw error("grid_options.node_sizes[" + std::to_string(i) + "] must be >= 1, got " +
                  std::to_string(option[i]));
  if (!option.empty()) return option;
  const char* env = std::getenv("HALOSHIFT_NODE_SIZE");
  if (!env || !*env) return {};
  return parse_node_sizes(env, "HALOSHIFT_NODE_SIZE");
}

/// Which pretend node of its real node the rank `local` (its rank among the real node's) joins.
inline int pretend_group(const std::vector<int>& sizes, int local) {
  if (sizes.empty()) return 0;
  int group = 0;
  for (std::size_t i = 0;; i = (i + 1) % sizes.size(), ++group) {
    if (local < sizes[i]) return group;
    local -= sizes[i];
  }
}

/// Computes the node layout of `context`'s communicator (collective over it).
/// Raises the same haloshift::error on every rank when the requested node
/// sizes are malformed on some rank or differ across ranks.
HALOSHIFT_BUILDER node_layout compute_node_layout(grid_context& context);
#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER node_layout compute_node_layout(grid_context& context) {
  MPI_Comm comm = context.comm.get();
  // The values are read before agree() runs its function: the sizes are parsed first, and a
  // rank that failed to parse them raises inside the agreement, so every rank raises its error.
  std::vector<int> sizes;
  std::optional<error> failure;
  try {
    sizes = requested_node_sizes(context.node_sizes);
  } catch (const error& e) {
    failure = e;
  }
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a over the sizes
  for (int s : sizes) hash = (hash ^ static_cast<std::uint64_t>(s)) * 1099511628211ull;
  mpi::agree(
      comm, [&] { if (failure) throw *failure; },
      {{"node sizes (grid_options.node_sizes or HALOSHIFT_NODE_SIZE): their number",
        static_cast<std::int64_t>(sizes.size())},
       {"node sizes (grid_options.node_sizes or HALOSHIFT_NODE_SIZE): the first", sizes.empty() ? 0 : sizes[0]},
       {"node sizes (grid_options.node_sizes or HALOSHIFT_NODE_SIZE)", static_cast<std::int64_t>(hash)}});
  const int rank = context.comm.rank();
  MPI_Comm shared = MPI_COMM_NULL;
  mpi::check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared),
             "MPI_Comm_split_type");
  const mpi::communicator real = mpi::communicator::adopt(shared);
  MPI_Comm pretend = MPI_COMM_NULL;
  mpi::check(MPI_Comm_split(real.get(), pretend_group(sizes, real.rank()), rank, &pretend), "MPI_Comm_split");
  node_layout layout;
  layout.comm = mpi::communicator::adopt(pretend);
  int lowest = rank;
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, layout.comm.get()), "MPI_Allreduce");
  std::vector<int> lowest_of(static_cast<std::size_t>(context.comm.size()));
  mpi::check(MPI_Allgather(&lowest, 1, MPI_INT, lowest_of.data(), 1, MPI_INT, comm), "MPI_Allgather");
  // A node's number: how many nodes have a lower lowest rank (a node's lowest rank is its own).
  std::vector<int> number_of_leader(lowest_of.size(), -1);
  int count = 0;
  for (std::size_t r = 0; r < lowest_of.size(); ++r)
    if (lowest_of[r] == static_cast<int>(r)) number_of_leader[r] = count++;
  auto node_of = std::make_shared<std::vector<int>>(lowest_of.size());
  for (std::size_t r = 0; r < lowest_of.size(); ++r)
    (*node_of)[r] = number_of_leader[static_cast<std::size_t>(lowest_of[r])];
  layout.node = (*node_of)[static_cast<std::size_t>(rank)];
  layout.count = count;
  layout.node_of = std::move(node_of);
  return layout;
}
#endif

/// The node layout of the grid behind `context`, computed on first use
/// (collective then: call it where every rank does, in the same order, as a plan build).
inline const node_layout& nodes_of(grid_context& context) {
  if (!context.nodes) context.nodes = std::make_shared<node_layout>(compute_node_layout(context));
  return *context.nodes;
}

/// The node layout of `grid` (collective on first use: see above).
inline const node_layout& nodes_of(const cartesian_grid& grid) { return nodes_of(*grid.context()); }

}  // namespace haloshift::detail

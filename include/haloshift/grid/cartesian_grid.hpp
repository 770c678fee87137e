// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file cartesian_grid.hpp
/// @brief A Cartesian grid of boxes, one per rank, over a communicator.

#include <mpi.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../detail/compiled.hpp"
#include "../detail/mpi/agreement.hpp"
#include "../detail/mpi/check.hpp"
#include "../detail/mpi/communicator.hpp"
#include "../detail/mpi/tags.hpp"
#include "../error.hpp"
#include "grid_shape.hpp"

namespace haloshift {

namespace detail {
struct node_layout;  // grid/nodes.hpp

/// What a grid, its copies and every plan built on it share: the one
/// duplicate of the user's communicator (freed when the last of them goes,
/// so a plan stays usable after its grid is destroyed) and a count of the
/// sparse exchanges run on it. Plans do not duplicate it again: a duplicate
/// costs a collective (several in Open MPI) per plan build, and the plans'
/// messages cannot be confused anyway: each plan claims its own range of
/// tags (detail/mpi/tags.hpp), so exchanges of several plans may be in flight at once.
struct grid_context {
  grid_context(MPI_Comm user, std::vector<int> pretend_node_sizes)
      : comm(user), node_sizes(std::move(pretend_node_sizes)) {}
  mpi::communicator comm;
  std::vector<int> node_sizes;            ///< grid_options::node_sizes (agreed when the layout is computed)
  std::shared_ptr<node_layout> nodes;     ///< which ranks share a node: nodes_of() (grid/nodes.hpp) fills it
  std::uint64_t sparse_exchanges = 0;  ///< same on all ranks: sparse exchanges are collective
  int next_plan_tag = 0;               ///< same on all ranks: plans are built collectively, in the same order

  /// The first of `width` consecutive tags for a new plan (`width`: the
  /// transfers of its schedule's widest round), after the previous plan's.
  int claim_plan_tags(std::size_t width) {
    if (width > static_cast<std::size_t>(plan_tag_count - next_plan_tag)) next_plan_tag = 0;
    const int base = next_plan_tag;
    next_plan_tag += static_cast<int>(std::min<std::size_t>(width, plan_tag_count));
    if (next_plan_tag >= plan_tag_count) next_plan_tag = 0;
    return base;
  }
};
}  // namespace detail

/// How to lay the ranks out. `dims` entries of 0 are chosen by
/// MPI_Dims_create; `periodic` is empty (every dimension wraps) or has one
/// entry per dimension, so `{.dims = {0, 0}}` is a periodic 2D grid.
struct grid_options {
  /// Boxes along each dimension (1 to 3 entries, their count is the grid's dimension); 0: chosen.
  std::vector<int> dims{0, 0, 0};
  /// Whether each dimension wraps around: empty, every dimension does (the
  /// bulk of an MD or stencil domain; docs/design.md says why), or one entry
  /// per entry of `dims`.
  std::vector<bool> periodic{};
  /// The domain's extent along each dimension, or empty. When given (one
  /// positive entry per dimension), the chosen dims minimise the surface
  /// between boxes, as MD codes split space (LAMMPS's `processors *`; a cube
  /// over 2 ranks is 1x1x2, over 4 ranks 1x2x2): the least communication for
  /// particles. Empty: MPI_Dims_create's balanced split (2 ranks: 2x1x1).
  std::vector<double> lengths{};
  /// grid_shape::rank_order, by its short name.
  using rank_order = grid_shape::rank_order;
  /// Which dimension varies fastest in rank numbers (docs/grids.md, "Matching
  /// another code's decomposition"): the last, as MPI_Cart_create numbers ranks
  /// (the default), or the first (x fastest: PETSc's DMDA, LAMMPS's `map xyz`).
  rank_order order = rank_order::last_fastest;
  /// grid_shape::remainder_cells, by its short name.
  using remainder_cells = grid_shape::remainder_cells;
  /// Which boxes of the even split of a field's cells take the cells left over
  /// when the boxes do not divide them: spread out (the default), the first
  /// boxes (PETSc) or the last ones.
  remainder_cells remainder = remainder_cells::spread;
  /// Pretend nodes (docs/node-aware.md): empty, the nodes are the ranks that
  /// share memory (or HALOSHIFT_NODE_SIZE's, when set); {N}, each real node's
  /// ranks in groups of N consecutive ranks (the last group smaller); {A, B,
  /// ...}, groups of A, then B, ... ranks (the list repeated). Must be the same
  /// on all ranks: checked when a plan first needs the nodes.
  std::vector<int> node_sizes{};
};

/// The dims minimising the surface between boxes (the sum over one box of its
/// face areas) for `ranks` boxes over a domain of `lengths`, keeping the
/// nonzero entries of `dims` as given. Among equal surfaces the first in the
/// order of increasing x, then y (LAMMPS's order). Empty when no
/// factorisation fits the given entries.
inline std::vector<int> smallest_surface_dims(int ranks, const std::vector<double>& lengths, std::vector<int> dims) {
  const std::size_t n = dims.size();
  std::vector<int> best, trial(n, 1);
  double best_surface = 0;
  auto search = [&](auto&& self, std::size_t d, int left) -> void {
    if (d == n) {
      if (left != 1) return;
      double surface = 0;  // per box: each face area, a face across d has the other dimensions' widths
      for (std::size_t a = 0; a < n; ++a) {
        double area = 1;
        for (std::size_t b = 0; b < n; ++b)
          if (b != a) area *= lengths[b] / trial[b];
        surface += n == 1 ? 1.0 : area;
      }
      // Equal surfaces computed in another order may differ in the last bits: the first one found stays.
      if (best.empty() || surface < best_surface * (1 - 1e-12)) best = trial, best_surface = surface;
      return;
    }
    for (int p = 1; p <= left; ++p) {
      if (left % p != 0 || (dims[d] != 0 && dims[d] != p)) continue;
      trial[d] = p;
      self(self, d + 1, left / p);
    }
  };
  search(search, 0, ranks);
  return best;
}

/// One box per rank of a communicator, arranged as a 1D, 2D or 3D grid.
/// Constructing it is collective; it works on its own duplicate of the
/// communicator, which copies of the grid and the plans built on it share
/// (it lives as long as any of them). Rank numbers are those of the given communicator, mapped to
/// coordinates row-major (last dimension fastest) as MPI_Cart_create does
/// without reordering, or with the first dimension fastest (grid_options::order).
class cartesian_grid {
public:
  /// Lays the ranks of `comm` out as `options` says and duplicates `comm`
  /// (collective over `comm`). Throws haloshift::error, the same on every
  /// rank, when the dims do not fit the communicator's size, `periodic` is
  /// neither empty nor one entry per dimension, `order` or `remainder` is no
  /// enumerator, or any option differs across ranks: they are agreed in the
  /// constructor's first collective, before the communicator is duplicated.
  explicit cartesian_grid(MPI_Comm comm, const grid_options& options = {})
      : cartesian_grid(comm, agreed_shape(comm, options), options.node_sizes) {}

  /// The grid's shape (dims and periodicity), without the communicator.
  const grid_shape& shape() const noexcept { return shape_; }
  /// Number of dimensions, 1 to 3.
  int ndims() const noexcept { return shape_.ndims(); }
  /// Boxes along dimension `d`; 1 for dimensions beyond ndims().
  int dim(int d) const noexcept { return shape_.dim(d); }
  /// Whether dimension `d` wraps around.
  bool periodic(int d) const noexcept { return shape_.periodic(d); }
  /// Number of boxes (= ranks).
  int size() const noexcept { return shape_.size(); }
  /// This rank (the same in the user's communicator and in comm()).
  int rank() const { return live("rank").comm.rank(); }
  /// This rank's box coordinates (0 along dimensions beyond ndims()).
  const offset& coords() const noexcept { return coords_; }
  /// The rank owning the box at `coords` (each within `[0, dim(d))`).
  int rank_of(const offset& coords) const noexcept { return shape_.rank_of(coords); }
  /// The box coordinates of `rank`.
  offset coords_of(int rank) const noexcept { return shape_.coords_of(rank); }
  /// The box at offset `o` from this rank's box, with its periodic image.
  std::optional<detail::neighbor> neighbor_at(const offset& o) const noexcept { return shape_.neighbor_at(coords_, o); }

  /// The grid's own duplicate of the user's communicator. haloshift's plans
  /// and migrate send on it with tags 0 to 32767; an application that sends
  /// its own messages on it while a haloshift call is in flight should use
  /// larger tags (up to MPI_TAG_UB).
  MPI_Comm comm() const { return live("comm").comm.get(); }

  /// @cond internal
  /// The communicator and counters shared with plans (not part of the API).
  const std::shared_ptr<detail::grid_context>& context() const {
    live("context");
    return context_;
  }
  /// @endcond

private:
  /// What every use of the communicator goes through: a moved-from grid has
  /// none (its shape stays). Raises on this rank only, before any collective:
  /// a grid moved from on some ranks only cannot reach the others.
  detail::grid_context& live(const char* call) const {
    if (!context_)
      throw error("grid: the cartesian_grid was moved from and has no communicator left for " + std::string(call) +
                  "() (use the grid it was moved to)");
    return *context_;
  }
  cartesian_grid(MPI_Comm comm, grid_shape shape, const std::vector<int>& node_sizes)
      : context_(std::make_shared<detail::grid_context>(comm, node_sizes)),
        shape_(std::move(shape)),
        coords_(shape_.coords_of(context_->comm.rank())) {}

  /// Validates `options` on every rank of `comm` and agrees dims and periodic
  /// (one MPI_Allreduce on the user's communicator, nothing before it).
  HALOSHIFT_BUILDER static grid_shape agreed_shape(MPI_Comm comm, const grid_options& options);

  /// The ranks of `comm`, after the local checks that need no communication
  /// (the same on every rank that can run them).
  static int checked_size(MPI_Comm comm) {
    if (comm == MPI_COMM_NULL) throw error("communicator: MPI_COMM_NULL is not a valid communicator");
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) throw error("communicator: MPI is not initialized (call MPI_Init first)");
    int size = 0;
    mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    return size;
  }

  /// What must be equal on all ranks: the sizes of options' vectors and each entry (0 where absent).
  static std::vector<mpi::agreed_value> agreed_options(const grid_options& options) {
    const std::vector<int>& given = options.dims;
    std::vector<mpi::agreed_value> values{
        {"grid_options.dims.size()", static_cast<std::int64_t>(given.size())},
        {"grid_options.periodic.size()", static_cast<std::int64_t>(options.periodic.size())}};
    static const char* dim_names[max_dims] = {"grid_options.dims[0]", "grid_options.dims[1]", "grid_options.dims[2]"};
    static const char* periodic_names[max_dims] = {"grid_options.periodic[0]", "grid_options.periodic[1]",
                                                   "grid_options.periodic[2]"};
    static const char* length_names[max_dims] = {"grid_options.lengths[0]", "grid_options.lengths[1]",
                                                 "grid_options.lengths[2]"};
    values.push_back({"grid_options.lengths.size()", static_cast<std::int64_t>(options.lengths.size())});
    // Named by their enumerators when ranks differ (the texts are static: they outlive the agreement).
    values.push_back(mpi::text_value("grid_options.order", detail::name_of(options.order),
                                     static_cast<std::int64_t>(options.order)));
    values.push_back(mpi::text_value("grid_options.remainder", detail::name_of(options.remainder),
                                     static_cast<std::int64_t>(options.remainder)));
    for (int d = 0; d < max_dims; ++d) {
      const auto i = static_cast<std::size_t>(d);
      values.push_back(mpi::real_value(length_names[d], i < options.lengths.size() ? options.lengths[i] : 0.0));
      values.push_back({dim_names[d], i < given.size() ? given[i] : 0});
      values.push_back({periodic_names[d], i < options.periodic.size() ? static_cast<int>(options.periodic[i]) : 0});
    }
    return values;
  }

  /// The grid `options` describe on `size` ranks (inside the agreement: raises on the rank whose options are wrong).
  static grid_shape shape_of(int size, const grid_options& options) {
    std::vector<int> dims = options.dims;
    check_dims(dims, options, size);
    if (!options.lengths.empty()) {
      check_lengths(dims.size(), options.lengths);
      dims = smallest_surface_dims(size, options.lengths, dims);
    } else {
      mpi::check(MPI_Dims_create(size, static_cast<int>(dims.size()), dims.data()), "MPI_Dims_create");
    }
    grid_shape shape(dims, options.periodic.empty() ? std::vector<bool>(dims.size(), true) : options.periodic,
                     options.order, options.remainder);
    if (shape.size() != size)
      throw error("grid: dims " + to_string(shape) + " hold " + std::to_string(shape.size()) +
                  " boxes but the communicator has " + std::to_string(size) + " ranks");
    return shape;
  }

  /// Checks the given dims (and periodic's length) against `size` ranks.
  static void check_dims(const std::vector<int>& dims, const grid_options& options, int size) {
    if (dims.empty() || dims.size() > static_cast<std::size_t>(max_dims))
      throw error("grid: dims must have 1, 2 or 3 entries, got " + std::to_string(dims.size()));
    if (!options.periodic.empty() && options.periodic.size() != dims.size())
      throw error("grid: periodic must have one entry per dimension (" + std::to_string(dims.size()) + "), got " +
                  std::to_string(options.periodic.size()) + "; or none: every dimension periodic");
    std::int64_t fixed = 1;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] < 0)
        throw error("grid: dims[" + std::to_string(d) + "] must be >= 1 (or 0 to choose), got " +
                    std::to_string(dims[d]));
      if (dims[d] > 0) fixed *= dims[d];  // both factors below 2^31: no overflow
      if (fixed > INT_MAX)
        throw error("grid: dims multiply to more than " + std::to_string(INT_MAX) + " (dims[" + std::to_string(d) +
                    "] = " + std::to_string(dims[d]) + ")");
    }
    const bool all_fixed = std::find(dims.begin(), dims.end(), 0) == dims.end();
    if (all_fixed && fixed != size)
      throw error("grid: dims multiply to " + std::to_string(fixed) + " but the communicator has " +
                  std::to_string(size) + " ranks");
    if (size % fixed != 0)
      throw error("grid: the fixed dims multiply to " + std::to_string(fixed) +
                  ", which does not divide the communicator size " + std::to_string(size));
  }

  /// Raises unless `lengths` has one finite, positive entry per dimension.
  static void check_lengths(std::size_t dims, const std::vector<double>& lengths) {
    if (lengths.size() != dims)
      throw error("grid: lengths must be empty or have one entry per dimension (" + std::to_string(dims) +
                  "), got " + std::to_string(lengths.size()));
    for (std::size_t d = 0; d < dims; ++d)
      if (!(lengths[d] > 0 && std::isfinite(lengths[d])))
        throw error("grid: lengths[" + std::to_string(d) + "] must be finite and > 0, got " +
                    mpi::value_text(std::bit_cast<std::int64_t>(lengths[d]), mpi::value_kind::real));
  }

  std::shared_ptr<detail::grid_context> context_;
  grid_shape shape_;
  offset coords_{0, 0, 0};
};

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER grid_shape cartesian_grid::agreed_shape(MPI_Comm comm, const grid_options& options) {
  const int size = checked_size(comm);
  grid_shape shape;
  mpi::agree(
      comm, [&] { shape = shape_of(size, options); }, agreed_options(options));
  return shape;
}
#endif

}  // namespace haloshift

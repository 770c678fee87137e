// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file particles.hpp
/// @brief Particle mode (molecular dynamics): each rank imports, as ghosts,
/// the particles that lie within a cutoff of its box, from as many boxes away
/// as the cutoff reaches, shifted across periodic boundaries; per-particle
/// arrays then move along the stored lists (forward) and contributions such
/// as forces are summed back onto the owners (reverse).

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <concepts>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../exchange/selection.hpp"
#include "../grid/cartesian_grid.hpp"
#include "../select/auto_hook.hpp"
#include "../strategy_registry.hpp"
#include "domain.hpp"

namespace haloshift {

/// A block of ghosts: the particles imported from the box at `offset`.
struct ghost_block {
  haloshift::offset offset;  ///< position of the source box relative to this rank's box
  int source;                ///< owner rank (may be this rank: a periodic image)
  haloshift::offset image;   ///< periodic wraps: ghost position = owner's position + image * length
  std::size_t first;         ///< index of its first ghost in the owned-then-ghosts arrays
  /// number of ghosts in the block
  std::size_t count;
};

namespace detail {
struct particle_builder;

/// A particle forward's last step: `shift(ghost, image)` on every ghost of a block that wrapped.
template <class T, class Shift>
struct shift_images {
  std::span<const ghost_block> blocks;  ///< the plan's (their storage stays put when the plan moves)
  T* data;
  Shift shift;
  void operator()() {
    for (const ghost_block& b : blocks)
      if (b.image != zero_offset)
        for (std::size_t i = b.first; i < b.first + b.count; ++i) shift(data[i], b.image);
  }
};

/// The particle selector: the box at `source + rel` needs a particle when the
/// particle, as that box receives it (shifted by its periodic image), lies
/// within `cutoff` of the box along every grid dimension: inside the box grown
/// by the cutoff, closed (a distance equal to the cutoff is in), as LAMMPS's
/// ghost region. `domain::cutoff_reach` bounds the boxes this can select.
struct within_cutoff {
  static constexpr bool geometric = true;  ///< by construction: the selective build may count in one pass
  const grid_shape* grid;
  domain dom;
  position cutoff;
  bool operator()(const offset& source, const offset& rel, const position& x) const noexcept {
    for (int d = 0; d < grid->ndims(); ++d) {
      const int n = grid->dim(d), c = source[d] + rel[d];
      const int wraps = c >= 0 ? c / n : -((-c + n - 1) / n), inside = c - wraps * n;
      // The ghost's coordinate as the receiver gets it: x + image * length with image = -wraps.
      const double g = x[d] - static_cast<double>(wraps) * dom.length(d);
      if (dom.edge(*grid, d, inside) - g > cutoff[d] || g - dom.edge(*grid, d, inside + 1) > cutoff[d]) return false;
    }
    return true;
  }
};
}  // namespace detail

/// A particle exchange for one rank, built from positions at re-neighbouring
/// time. Arrays handed to it hold `owned()` particles followed by room for
/// `ghosts()` ghosts (LAMMPS's `nlocal` then `nghost`); the ghosts are ordered
/// block by block in canonical offset order, each block in its owner's order,
/// so every strategy gives the same arrays bit for bit.
class particle_plan {
 public:
  /// Name of the strategy the plan runs (for Auto: the one it chose).
  std::string_view strategy() const noexcept { return plan_.strategy(); }
  /// Particles this rank owns: the first owned() entries of every array.
  std::size_t owned() const noexcept { return plan_.owned(); }
  /// Ghosts this rank imports: the entries after the owned ones.
  std::size_t ghosts() const noexcept { return plan_.ghosts(); }
  /// owned() + ghosts(): the length of every array forward and reverse take.
  std::size_t size() const noexcept { return plan_.size(); }
  /// Boxes the ghosts come from, per dimension (`domain::cutoff_reach`: about
  /// `floor(cutoff / box width) + 1`, the cutoff region being closed).
  const offset& reach() const noexcept { return reach_; }
  /// The ghost blocks, in canonical offset order.
  const std::vector<ghost_block>& blocks() const noexcept { return blocks_; }
  /// Positions of owned particles and ghosts as of the plan's construction, ghosts shifted.
  const std::vector<position>& positions() const noexcept { return positions_; }

  /// Moves any per-particle quantity to the ghosts: `data[0, owned())` goes
  /// out, `data[owned(), size())` is filled. No periodic shift is applied.
  template <transferable T>
  void forward(std::span<T> data) {
    plan_.forward(data);
  }
  /// forward() on a whole vector, which must hold size() elements.
  template <transferable T>
  void forward(std::vector<T>& data) {
    plan_.forward(std::span<T>(data));
  }
  /// Starts forward(data): the ghosts are filled once wait() on the handle
  /// returns; until then the array is off-limits (see exchange_handle).
  template <transferable T>
  auto start_forward(std::span<T> data) {
    return plan_.start_forward(data);
  }

  /// Starts forward(data, shift); `shift` runs on the ghosts when the exchange completes.
  template <transferable T, class Shift>
    requires std::invocable<Shift&, T&, const offset&>
  auto start_forward(std::span<T> data, Shift shift) {
    return plan_.start_forward(data, detail::shift_images<T, Shift>{blocks_, data.data(), std::move(shift)});
  }
  /// Moves any per-particle quantity, then calls `shift(ghost, image)` for
  /// every ghost whose block wrapped around a periodic dimension: for
  /// positions kept in another form (fixed point, single precision, a struct).
  template <transferable T, class Shift>
    requires std::invocable<Shift&, T&, const offset&>
  void forward(std::span<T> data, Shift shift) {
    start_forward(data, std::move(shift)).wait();
  }

  /// Starts forward_positions(x): the ghosts are shifted when the exchange completes.
  auto start_forward_positions(std::span<position> x) { return start_forward(x, shift_position{length_}); }
  /// Starts forward_positions(particles, member).
  template <transferable T>
  auto start_forward_positions(std::span<T> particles, position T::*member) {
    return start_forward(particles, shift_member<T>{length_, member});
  }
  /// Moves positions and shifts each ghost by its block's periodic image times the domain length.
  void forward_positions(std::span<position> x) { start_forward_positions(x).wait(); }
  /// forward_positions() on a whole vector, which must hold size() elements.
  void forward_positions(std::vector<position>& x) { forward_positions(std::span<position>(x)); }
  /// The same for an array of structs: `member` is the position inside each element.
  template <transferable T>
  void forward_positions(std::span<T> particles, position T::*member) {
    start_forward_positions(particles, member).wait();
  }

  /// Sums (or combines with `op`) every ghost's value onto its owner: what a
  /// code using Newton's third law does with ghost forces. The ghost entries
  /// are used as accumulators and hold partial sums afterwards.
  template <transferable T, class Op = std::plus<>>
  void reverse(std::span<T> data, Op op = {}) {
    plan_.reverse(data, op);
  }
  /// reverse() on a whole vector, which must hold size() elements.
  template <transferable T, class Op = std::plus<>>
  void reverse(std::vector<T>& data, Op op = {}) {
    plan_.reverse(std::span<T>(data), op);
  }
  /// Starts reverse(data, op): the owners hold the sums once wait() on the
  /// handle returns; until then the array is off-limits.
  template <transferable T, class Op = std::plus<>>
  auto start_reverse(std::span<T> data, Op op = {}) {
    return plan_.start_reverse(data, std::move(op));
  }
  /// Whether an exchange of this plan is in flight.
  bool busy() const noexcept { return plan_.busy(); }

  /// Several per-particle arrays (a structure of arrays) in one exchange: one
  /// message per neighbour carries every array's entries of its particles.
  /// No periodic shift is applied (use forward_positions for positions).
  template <transferable... Ts>
    requires(sizeof...(Ts) >= 2)
  void forward(std::span<Ts>... data) {
    start_forward(data...).wait();
  }
  /// forward() of several whole vectors, each of size() elements.
  template <transferable... Ts>
    requires(sizeof...(Ts) >= 2)
  void forward(std::vector<Ts>&... data) {
    start_forward(std::span<Ts>(data)...).wait();
  }
  /// Starts forward() of several arrays.
  template <transferable... Ts>
    requires(sizeof...(Ts) >= 2)
  auto start_forward(std::span<Ts>... data) {
    return plan_.start_forward_arrays(data...);
  }
  /// Reverse of several arrays in one exchange, each combined with `op`
  /// (which must take every one of their element types: `std::plus<>` for numbers).
  template <class Op, transferable... Ts>
    requires(sizeof...(Ts) >= 1)
  void reverse(Op op, std::span<Ts>... data) {
    start_reverse(std::move(op), data...).wait();
  }
  /// reverse() of several whole vectors.
  template <class Op, transferable... Ts>
    requires(sizeof...(Ts) >= 1)
  void reverse(Op op, std::vector<Ts>&... data) {
    start_reverse(std::move(op), std::span<Ts>(data)...).wait();
  }
  /// Starts reverse() of several arrays.
  template <class Op, transferable... Ts>
    requires(sizeof...(Ts) >= 1)
  auto start_reverse(Op op, std::span<Ts>... data) {
    return plan_.start_reverse_arrays(std::move(op), data...);
  }
  /// Sizes the plan's staging for several arrays moved together whose element sizes add up to
  /// `element_bytes`, so that not even their first exchange allocates.
  void reserve_arrays(std::size_t element_bytes) { plan_.reserve_arrays(element_bytes); }

 private:
  friend struct detail::particle_builder;

  particle_plan(selective_plan plan, std::vector<position> x, const domain& dom, const offset& reach)
      : plan_(std::move(plan)), positions_(std::move(x)), reach_(reach) {
    for (int d = 0; d < max_dims; ++d) length_[d] = dom.length(d);
    for (const detail::block_slot& b : plan_.blocks())
      blocks_.push_back({b.off, b.source.rank, b.source.image, b.first, b.count});
    for (const ghost_block& b : blocks_)
      for (std::size_t i = b.first; i < b.first + b.count; ++i) shift(positions_[i], b.image, length_);
    plan_.reserve(sizeof(position));  // positions, forces: no exchange of them allocates
  }

  static void shift(position& p, const offset& image, const position& length) noexcept {
    for (int d = 0; d < max_dims; ++d) p[d] += image[d] * length[d];
  }
  /// A ghost position moved by its periodic image.
  struct shift_position {
    position length;
    void operator()(position& p, const offset& image) const noexcept { shift(p, image, length); }
  };
  /// The same for the position inside a struct.
  template <class T>
  struct shift_member {
    position length;
    position T::*member;
    void operator()(T& p, const offset& image) const noexcept { shift(p.*member, image, length); }
  };

  selective_plan plan_;
  std::vector<position> positions_;
  offset reach_{0, 0, 0};
  position length_{0, 0, 0};
  std::vector<ghost_block> blocks_;
};

/// The box `[lo, hi)` of this rank within `dom`.
inline std::pair<position, position> box_of(const cartesian_grid& grid, const domain& dom) {
  position lo = dom.lo, hi = dom.hi;
  for (int d = 0; d < grid.ndims(); ++d) {
    lo[d] = dom.edge(grid.shape(), d, grid.coords()[d]);
    hi[d] = dom.edge(grid.shape(), d, grid.coords()[d] + 1);
  }
  return {lo, hi};
}

namespace detail {
/// What a particle plan's ranks must agree on besides the plan options: the domain and the cutoff
/// (doubles compared through their bit patterns, equal values, equal bits, and reported as numbers).
inline std::vector<mpi::agreed_value> agreed_particle_values(const grid_shape& shape, const domain& dom,
                                                             const position& cutoff) {
  static const char* names[max_dims][3] = {{"domain.lo[0]", "domain.hi[0]", "cutoff[0]"},
                                           {"domain.lo[1]", "domain.hi[1]", "cutoff[1]"},
                                           {"domain.lo[2]", "domain.hi[2]", "cutoff[2]"}};
  std::vector<mpi::agreed_value> agreed;
  for (int d = 0; d < shape.ndims(); ++d)
    for (int i = 0; i < 3; ++i)
      agreed.push_back(mpi::real_value(names[d][i], i == 0 ? dom.lo[d] : i == 1 ? dom.hi[d] : cutoff[d]));
  return agreed;
}

/// Checks a particle plan's arguments on this rank (no communication) and
/// returns how many boxes the cutoff reaches per dimension.
inline offset checked_particle_reach(const cartesian_grid& grid, const domain& dom, const position& cutoff,
                                     std::span<const position> x) {
  const grid_shape& shape = grid.shape();
  offset reach{0, 0, 0};
  dom.validate(shape);
  for (int d = 0; d < shape.ndims(); ++d) {
    if (!(std::isfinite(cutoff[d]) && cutoff[d] >= 0))
      throw error("cutoff[" + std::to_string(d) + "] must be finite and >= 0, got " + std::to_string(cutoff[d]));
    constexpr int max_boxes = 1000000;
    reach[d] = dom.cutoff_reach(shape, d, cutoff[d], max_boxes);  // at least 1: a zero cutoff takes the border
    if (reach[d] > max_boxes)
      throw error("cutoff[" + std::to_string(d) + "] = " + std::to_string(cutoff[d]) +
                  " spans more than a million boxes");
  }
  const auto [lo, hi] = box_of(grid, dom);
  for (std::size_t i = 0; i < x.size(); ++i)
    for (int d = 0; d < shape.ndims(); ++d)
      // The ownership rule migrate uses (domain::owner_coordinate), not a separate comparison.
      if (!(x[i][d] >= dom.lo[d] && x[i][d] < dom.hi[d] &&
            dom.owner_coordinate(shape, d, x[i][d]) == grid.coords()[d]))
        throw error("particle " + std::to_string(i) + " at coordinate " + std::to_string(x[i][d]) +
                    " along dimension " + std::to_string(d) + " lies outside this rank's box [" +
                    std::to_string(lo[d]) + ", " + std::to_string(hi[d]) + "): call migrate first");
  return reach;
}

/// Everything a particle plan's ranks must agree on: the domain, the cutoff,
/// the options and the requested strategy. The same list for Auto and for a
/// strategy, so that ranks asking for each meet in the same collective.
inline std::vector<mpi::agreed_value> particle_agreement(const grid_shape& shape, const domain& dom,
                                                         const position& cutoff, const plan_options& options,
                                                         std::string_view requested) {
  auto values = agreed_particle_values(shape, dom, cutoff);
  const auto plan_values = agreed_plan_values(zero_offset, options, requested, sizeof(position));
  values.insert(values.end(), plan_values.begin(), plan_values.end());
  return values;
}

/// The checks of a particle plan, collectively (the same error on every rank),
/// for Auto, which needs the reach before it chooses the strategy: the same
/// agreement as the build's first (values and spreads), so that a rank asking
/// Auto and one asking a strategy both raise.
inline offset particle_reach(const cartesian_grid& grid, const domain& dom, const position& cutoff,
                             std::span<const position> x, const plan_options& options, std::string_view requested) {
  offset reach{0, 0, 0};
  mpi::spread unused[selective_builder::spread_count];
  mpi::agree(
      grid.comm(),
      [&] {
        check_plan_options(options);
        reach = checked_particle_reach(grid, dom, cutoff, x);
      },
      particle_agreement(grid.shape(), dom, cutoff, options, requested), unused);
  return reach;
}

struct particle_builder {
  /// One agreement checks the arguments on every rank (the domain, cutoff and
  /// options agree, every particle lies in its rank's box) and starts the build.
  static particle_plan build(const cartesian_grid& grid, const domain& dom, const position& cutoff,
                             std::span<const position> x, plan_options options, const strategy_request& request) {
    offset reach{0, 0, 0};
    within_cutoff needs{&grid.shape(), dom, cutoff};
    auto [plan, keys] = selective_builder::build<position>(
        grid, [&] { return reach = checked_particle_reach(grid, dom, cutoff, x); },
        particle_agreement(grid.shape(), dom, cutoff, options, request.name), x, needs, options, request);
    return particle_plan(std::move(plan), std::move(keys), dom, reach);
  }
};
}  // namespace detail

/// Builds the ghost exchange for the particles at `x` (all inside this rank's
/// box: call migrate first) with a cutoff per dimension. Collective: the
/// domain, cutoff, strategy and options must agree on all ranks and are
/// checked; a bad argument on any rank raises the same haloshift::error on all.
/// Strategies: Shift, SingleHop, TtlMultiHop, NeighborAlltoall, custom
/// strategies whose blocks move away from their source, and Auto (with
/// <haloshift/auto.hpp>; see docs/particles.md).
template <strategy S>
particle_plan make_particle_plan(const cartesian_grid& grid, const domain& dom, const position& cutoff,
                                 std::span<const position> x, plan_options options = {}) {
  return detail::particle_builder::build(grid, dom, cutoff, x, options, {S::name, entry_of<S>()});
}

namespace detail {
/// How Auto sizes a particle exchange: the boxes the cutoff reaches and the
/// bytes of the slab of a box within the cutoff of a face neighbour.
struct particle_sizing {
  offset reach{0, 0, 0};
  double bytes = 0;
};
inline particle_sizing size_particle_blocks(const grid_shape& grid, const domain& dom, const position& cutoff,
                                            std::size_t particles, std::size_t bytes_per_particle) {
  particle_sizing out;
  double fraction = 0;
  for (int d = 0; d < grid.ndims(); ++d) {
    const double width = dom.length(d) / grid.dim(d);
    out.reach[d] = std::min(dom.cutoff_reach(grid, d, cutoff[d]), 1000000);
    fraction = std::max(fraction, std::min(1.0, cutoff[d] / width));
  }
  out.bytes = static_cast<double>(particles * bytes_per_particle) * fraction;
  return out;
}
}  // namespace detail

/// The strategy named at run time: a registered name without regard to case
/// ("shift", "singlehop", ...), or "Auto" with <haloshift/auto.hpp> (rank 0
/// ranks the candidates that can carry particles by explain_particles, with
/// positions' bytes and the largest owned count, and broadcasts the choice).
/// One plan type for every strategy, so choosing at run time instantiates
/// the plan code once.
inline particle_plan make_particle_plan(const cartesian_grid& grid, std::string_view strategy, const domain& dom,
                                        const position& cutoff, std::span<const position> x,
                                        plan_options options = {}) {
  if (!strategy_registry::same_name(strategy, Auto::name))
    return detail::particle_builder::build(grid, dom, cutoff, x, options, {strategy, std::nullopt});
  detail::particle_reach(grid, dom, cutoff, x, options, strategy);  // Auto sizes its model from checked arguments
  std::uint64_t largest = x.size();
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_UINT64_T, MPI_MAX, grid.comm()), "MPI_Allreduce");
  const detail::particle_sizing sized = detail::size_particle_blocks(grid.shape(), dom, cutoff, largest, sizeof(position));
  const strategy_choice choice = choose_automatically(
      grid, {.grid = grid.shape(), .r = range{sized.reach, shell::full}, .bytes = sized.bytes, .mode = options.mode,
             .payload = payload_kind::selective});
  return detail::particle_builder::build(grid, dom, cutoff, x, options, {choice.entry.name, choice.entry});
}
/// The strategy named at run time, the same cutoff along every dimension.
inline particle_plan make_particle_plan(const cartesian_grid& grid, std::string_view strategy, const domain& dom,
                                        double cutoff, std::span<const position> x, plan_options options = {}) {
  return make_particle_plan(grid, strategy, dom, position{cutoff, cutoff, cutoff}, x, options);
}

/// The same cutoff along every dimension.
template <class S>
particle_plan make_particle_plan(const cartesian_grid& grid, const domain& dom, double cutoff,
                                 std::span<const position> x, plan_options options = {}) {
  return make_particle_plan<S>(grid, dom, position{cutoff, cutoff, cutoff}, x, options);
}

}  // namespace haloshift

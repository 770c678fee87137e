// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file particle_plan.hpp
/// @brief A particle exchange built by make_particle_plan (particles.hpp): the
/// send and ghost lists it found, forward and reverse of per-particle arrays,
/// and rebuild for positions that moved.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../auto_hook.hpp"
#include "../detail/exchange/shared_runs.hpp"
#include "../detail/op_last.hpp"
#include "../detail/payload/cutoff_selection.hpp"
#include "../detail/payload/particle_checks.hpp"
#include "../detail/payload/particle_columns.hpp"
#include "../detail/payload/particle_spaces.hpp"
#include "../error.hpp"
#include "../exchange/selection.hpp"
#include "../grid/cartesian_grid.hpp"
#include "../strategy_registry.hpp"
#include "domain.hpp"
#include "particle_grid.hpp"
#include "position_views.hpp"

namespace haloshift {

/// One transfer of a particle exchange, both ways (LAMMPS's swap: `sendproc`
/// and `sendlist`, `recvproc`, `firstrecv` and `recvnum`): in round `round` of
/// the strategy this rank sends the entries `indices` of the owned-then-ghosts
/// arrays (ghosts too where the strategy forwards them: Shift's later
/// dimensions), in message order, to `rank`, and receives `count` elements from
/// `source` into the entries `received` (the k-th element that arrives is
/// entry `received[k]`; when they form one range, `first` to `first + count`).
/// A forward runs the transfers in order, a reverse backwards.
struct send_list {
  int rank = -1;                     ///< the receiver (this rank itself for a periodic image); -1: nothing sent
  std::size_t round = 0;             ///< the strategy's round
  haloshift::offset direction{};     ///< where the receiver's box lies from this one (unwrapped)
  std::vector<std::size_t> indices;  ///< array entries sent, in order
  int source = -1;                   ///< the sender of what arrives (from -direction); -1: nothing arrives
  std::size_t first = 0;             ///< the first entry the arrival fills (`received[0]`)
  std::size_t count = 0;             ///< elements that arrive
  std::vector<std::size_t> received;  ///< array entries the arrival fills, in message order
};

/// Where a ghost comes from: its owner and the owner's index of it (LAMMPS
/// gives the same through `tag` and `map`).
struct ghost_origin {
  int rank = -1;          ///< the owner
  std::size_t index = 0;  ///< the particle's index among the owner's owned particles
};

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
struct particle_columns;
struct particle_spaces;
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
    start_forward(data).wait();
  }
  /// forward() on a whole vector, which must hold size() elements.
  template <transferable T>
  void forward(std::vector<T>& data) {
    start_forward(std::span<T>(data)).wait();
  }
  /// Starts forward(data): the ghosts are filled once wait() on the handle
  /// returns; until then the array is off-limits (see exchange_handle).
  template <transferable T>
  auto start_forward(std::span<T> data) {
    return detail::particle_spaces::start_forward(*this, memory::host{}, data);
  }

  /// Starts forward(data, shift); `shift` runs on the ghosts when the exchange completes.
  template <transferable T, class Shift>
    requires std::invocable<Shift&, T&, const offset&>
  auto start_forward(std::span<T> data, Shift shift) {
    return detail::particle_spaces::start_forward_then(
        *this, memory::host{}, detail::shift_images<ghost_block, T, Shift>{blocks_, data.data(), std::move(shift)}, data);
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
  template <detail::coordinate_array P>
  auto start_forward_positions(std::span<P> x) {
    return start_forward(x, detail::shift_array{length_});
  }
  /// Starts forward_positions(particles, member).
  template <transferable T, detail::coordinate_array P>
  auto start_forward_positions(std::span<T> particles, P T::*member) {
    return start_forward(particles, detail::shift_member<T, P>{length_, member});
  }
  /// Moves positions and shifts each ghost by its block's periodic image times the domain
  /// length. Positions as the code stores them: `hs::position`, `std::array<float, 3>`, a padded
  /// `std::array<double, 4>` (the fourth entry moves unshifted); the shift is computed in double
  /// and stored in the array's type.
  template <detail::coordinate_array P>
  void forward_positions(std::span<P> x) {
    start_forward_positions(x).wait();
  }
  /// forward_positions() on a whole vector, which must hold size() elements.
  template <detail::coordinate_array P>
  void forward_positions(std::vector<P>& x) {
    forward_positions(std::span<P>(x));
  }
  /// The same for an array of structs: `member` is the position inside each element.
  template <transferable T, detail::coordinate_array P>
  void forward_positions(std::span<T> particles, P T::*member) {
    start_forward_positions(particles, member).wait();
  }
  /// Starts forward_positions(x, y, z): positions as one array per coordinate, all three in one
  /// exchange (one message per neighbour), shifted when it completes.
  template <std::floating_point F>
  auto start_forward_positions(std::span<F> x, std::span<F> y, std::span<F> z) {
    return start_forward_positions(split_positions<F>(x, y, z));
  }
  /// forward_positions() for a structure of arrays: x, y and z, each of at least size() entries.
  template <std::floating_point F>
  void forward_positions(std::span<F> x, std::span<F> y, std::span<F> z) {
    start_forward_positions(x, y, z).wait();
  }

  /// Positions in the code's own layout, written in place: `x` is a position view made from
  /// writable storage (hs::strided_positions over `x[i*PAD + d]`, hs::split_positions,
  /// hs::array_positions, hs::member_positions) of at least size() particles, the ghosts landing
  /// after the owned ones. The coordinates move and ghosts are shifted by their periodic image (in
  /// double, stored in the view's type); padding is left alone. `more` are companion arrays moved
  /// in the same messages, unshifted: spans or vectors of any transferable type (types, charges,
  /// ids), or strided columns (a strided_positions or member_positions of any trivially copyable
  /// type), each of at least size() entries. One message per neighbour carries them all.
  template <detail::position_view View, class... More>
  void forward_positions(const View& x, More&&... more) {
    start_forward_positions(x, std::forward<More>(more)...).wait();
  }
  /// Starts forward_positions(x, more...): the ghosts are filled and shifted once wait() returns.
  template <detail::position_view View, class... More>
  auto start_forward_positions(const View& x, More&&... more) {
    return detail::particle_columns::start_forward(*this, x, std::forward<More>(more)...);
  }
  /// forward_positions() of a vector of positions with companion arrays in the same messages.
  template <detail::coordinate_array P, class... More>
    requires(sizeof...(More) >= 1)
  void forward_positions(std::vector<P>& x, More&&... more) {
    forward_positions(array_positions<P>(x), std::forward<More>(more)...);
  }
  /// Sums ghost values (forces) back onto their owners in a position view's layout (made from
  /// writable storage of at least size() particles): `op` combines one coordinate at a time
  /// (default `std::plus<>`); padding is combined too.
  template <detail::position_view View, class Op = std::plus<>>
    requires detail::reduction_for<Op, detail::view_scalar<View>>
  void reverse(const View& f, Op op = {}) {
    start_reverse(f, std::move(op)).wait();
  }
  /// Starts reverse(f, op) on a position view.
  template <detail::position_view View, class Op = std::plus<>>
    requires detail::reduction_for<Op, detail::view_scalar<View>>
  auto start_reverse(const View& f, Op op = {}) {
    return detail::particle_columns::start_reverse(*this, f, std::move(op));
  }

  /// Sums (or combines with `op`) every ghost's value onto its owner: what a
  /// code using Newton's third law does with ghost forces. The ghost entries
  /// are used as accumulators and hold partial sums afterwards.
  template <transferable T, detail::reduction_for<T> Op = std::plus<>>
  void reverse(std::span<T> data, Op op = {}) {
    start_reverse(data, std::move(op)).wait();
  }
  /// reverse() on a whole vector, which must hold size() elements.
  template <transferable T, detail::reduction_for<T> Op = std::plus<>>
  void reverse(std::vector<T>& data, Op op = {}) {
    start_reverse(std::span<T>(data), std::move(op)).wait();
  }
  /// Starts reverse(data, op): the owners hold the sums once wait() on the
  /// handle returns; until then the array is off-limits.
  template <transferable T, detail::reduction_for<T> Op = std::plus<>>
  auto start_reverse(std::span<T> data, Op op = {}) {
    return detail::particle_spaces::start_reverse(*this, memory::host{}, std::move(op), data);
  }
  /// Whether an exchange of this plan is in flight.
  bool busy() const noexcept { return plan_.busy(); }

  /// Per-particle arrays in a memory space (`space`: hs::memory::device{stream},
  /// hs::memory::emulated_device{}, docs/gpu.md; or hs::memory::host{}), spans of size() elements:
  /// forward() of all of them in one exchange, packed and unpacked by the space's executor (device
  /// memory is never touched by the host).
  template <detail::particle_space Space, transferable... Ts>
    requires(sizeof...(Ts) >= 1)
  void forward(const Space& space, std::span<Ts>... data) {
    start_forward(space, data...).wait();
  }
  /// Starts forward(space, data...).
  template <detail::particle_space Space, transferable... Ts>
    requires(sizeof...(Ts) >= 1)
  auto start_forward(const Space& space, std::span<Ts>... data) {
    return detail::particle_spaces::start_forward(*this, space, data...);
  }
  /// reverse() of arrays in a memory space, all in one exchange: `reverse(space, f, g, op)`; a device's
  /// executor combines arithmetic types with std::plus<> (the default), take_min or take_max.
  template <detail::particle_space Space, class... Args>
    requires detail::arrays_then_op<detail::span_array, 1, Args...>
  void reverse(const Space& space, Args&&... args) {
    start_reverse(space, std::forward<Args>(args)...).wait();
  }
  /// Starts reverse(space, arrays..., op).
  template <detail::particle_space Space, class... Args>
    requires detail::arrays_then_op<detail::span_array, 1, Args...>
  auto start_reverse(const Space& space, Args&&... args) {
    return detail::call_op_first<detail::span_array>(
        [&](auto op, auto... data) { return detail::particle_spaces::start_reverse(*this, space, std::move(op), data...); },
        std::forward<Args>(args)...);
  }
  /// forward_positions() in a memory space: positions as a span of coordinate arrays
  /// (hs::position, std::array<float, 4>: padding moves unshifted) or as three spans x, y, z, then
  /// companion spans, all of size() elements, in one exchange; a device's executor shifts the ghosts
  /// (in double, stored once in the positions' type: bit for bit the host's shift).
  template <detail::particle_space Space, class... Arrays>
    requires detail::span_positions<Arrays...>::value
  void forward_positions(const Space& space, Arrays... arrays) {
    start_forward_positions(space, arrays...).wait();
  }
  /// Starts forward_positions(space, arrays...).
  template <detail::particle_space Space, class... Arrays>
    requires detail::span_positions<Arrays...>::value
  auto start_forward_positions(const Space& space, Arrays... arrays) {
    return detail::particle_spaces::start_forward_positions(*this, space, arrays...);
  }

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
    return detail::particle_spaces::start_forward(*this, memory::host{}, data...);
  }
  /// Reverse of several arrays in one exchange: `reverse(a, b, op)`, each
  /// array combined with `op` (last, like the one-array reverse; it must take
  /// every one of their element types; default `std::plus<>`). The arrays are
  /// spans or whole vectors of size() elements.
  template <class... Args>
    requires detail::arrays_then_op<detail::particle_array, 2, Args...>
  void reverse(Args&&... args) {
    start_reverse(std::forward<Args>(args)...).wait();
  }
  /// Starts reverse() of several arrays.
  template <class... Args>
    requires detail::arrays_then_op<detail::particle_array, 2, Args...>
  auto start_reverse(Args&&... args) {
    return detail::call_op_first<detail::particle_array>(
        [this](auto op, auto&&... data) {
          return detail::particle_spaces::start_reverse(*this, memory::host{}, std::move(op), std::span(data)...);
        },
        std::forward<Args>(args)...);
  }
  /// Sizes the plan's staging for several arrays moved together whose element sizes add up to
  /// `element_bytes`, so that not even their first exchange allocates.
  void reserve_arrays(std::size_t element_bytes) { plan_.reserve_arrays(element_bytes); }

  /// Every transfer of a forward, in order (send_list: what this rank sends, to whom, and where
  /// what it receives lands), for a code's own exchange loop over the plan's lists. Local.
  std::vector<send_list> send_lists() const {
    detail::check_not_moved(recipe_ != nullptr, "send_lists");
    return detail::particle_columns::send_lists<send_list>(*this);
  }
  /// Each ghost's owner and the owner's index of it, in ghost order (entry `i` for the array
  /// entry `owned() + i`). Collective: one forward of the owned indices.
  HALOSHIFT_BUILDER std::vector<ghost_origin> ghost_origins();

  /// Re-neighbouring: the same plan (grid, domain, cutoff, strategy, options) for new positions
  /// `x`, all inside this rank's box (call migrate first). Collective. Skips everything a build
  /// decides before it looks at positions (the strategy and its schedule, the cutoff's
  /// thresholds, the count exchange's program, the tags) and reuses the plan's buffers: one
  /// agreement (the positions lie in their boxes, no exchange is in flight, on every rank), the
  /// count exchange and the rounds that move the ghosts' positions.
  template <detail::position_source V>
  void rebuild(const V& x);

 private:
  friend struct detail::particle_builder;
  friend struct detail::particle_columns;
  friend struct detail::particle_spaces;
  using recipe = detail::selective_recipe<detail::within_cutoff>;

  particle_plan(selective_plan plan, std::vector<position> x, const domain& dom, const offset& reach,
                std::unique_ptr<recipe> rc)
      : plan_(std::move(plan)), positions_(std::move(x)), reach_(reach), dom_(dom), recipe_(std::move(rc)) {
    for (int d = 0; d < max_dims; ++d) length_[d] = dom.length(d);
    adopt_blocks();
  }

  /// The ghost blocks of the plan just built, the ghosts' positions shifted by their images.
  void adopt_blocks() {
    blocks_.clear();
    for (const detail::block_slot& b : plan_.blocks())
      blocks_.push_back({b.off, b.source.rank, b.source.image, b.first, b.count});
    for (const ghost_block& b : blocks_)
      for (std::size_t i = b.first; i < b.first + b.count; ++i) detail::shift_by_image(positions_[i], b.image, length_);
    plan_.reserve(sizeof(position));  // positions, forces: no exchange of them allocates
    plan_.reserve_arrays(sizeof(position));  // nor of them in a view's layout
  }

  selective_plan plan_;
  std::vector<position> positions_;
  offset reach_{0, 0, 0};
  position length_{0, 0, 0};
  domain dom_{};
  std::vector<ghost_block> blocks_;
  std::unique_ptr<recipe> recipe_;  ///< what rebuild() reuses (behind a pointer: its selector points into it)
};

}  // namespace haloshift

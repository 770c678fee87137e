// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file selective_plan.hpp
/// @brief A compiled selective exchange for one rank (what
/// make_selective_plan builds, selection.hpp): its layout of owned elements
/// and ghosts, and the exchanges over one or several per-element arrays,
/// blocking or split phase.

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../grid/cartesian_grid.hpp"
#include "argument_checks.hpp"
#include "exchange_handle.hpp"
#include "../detail/batch/host_threads.hpp"
#include "../detail/batch/ops.hpp"
#include "../detail/exchange/exchange_run.hpp"
#include "halo.hpp"
#include "../detail/exchange/neighbor_collective.hpp"
#include "../detail/exchange/selected_neighbor_engine.hpp"
#include "plan.hpp"
#include "../detail/exchange/plan_base.hpp"
#include "../detail/exchange/program.hpp"
#include "../detail/exchange/remap.hpp"

namespace haloshift {

class field_plan;
namespace detail {
struct selective_builder;
struct particle_spaces;
}  // namespace detail

/// A compiled selective exchange for one rank. Its data is one array per
/// per-element quantity: the `owned()` elements of this rank first, then the
/// `ghosts()` it imports, block by block in canonical offset order (z
/// slowest), each block in its owner's order, so every strategy yields the
/// same array bit for bit. Built collectively by make_selective_plan.
class selective_plan : public detail::plan_base {
 public:
  /// Whether an exchange is in flight, and a call's one argument check (for the payload plans
  /// built on this one: detail::plan_base says what each does).
  using plan_base::busy;
  using plan_base::check_call;
  /// Elements this rank owns: the first owned() entries of the data array.
  std::size_t owned() const noexcept {
    return program_ ? program_->layout.slots()[program_->layout.own()].count : 0;
  }
  /// Elements this rank imports, after the owned ones.
  std::size_t ghosts() const noexcept { return program_ ? program_->layout.total() - owned() : 0; }
  /// Elements an array handed to forward/reverse must hold.
  std::size_t size() const noexcept { return program_ ? storage_ : 0; }
  /// The imported blocks, canonical order; `first` indexes the data array.
  const std::vector<detail::block_slot>& blocks() const noexcept { return blocks_; }
  /// The compiled program (an internal type; for the tests and the benchmarks).
  const detail::program& details() const {
    check_built("details");
    return *program_;
  }

  /// The handle start_forward returns (`Then` runs once the ghosts have arrived).
  template <class T, class Then = detail::no_epilogue>
  using forward_handle = exchange_handle<
      detail::exchange_run<detail::arrays<T>, detail::store_arrivals, detail::selected_neighbor_engine>, Then>;
  /// The handle start_reverse returns.
  template <class T, class Op>
  using reverse_handle = exchange_handle<detail::exchange_run<detail::arrays<T>, Op, detail::selected_neighbor_engine>>;

  /// Starts a ghost fill: `data[0, owned())` goes out, the ghosts after it
  /// are filled by the time wait() on the handle returns, and then `then()`
  /// runs. Until then the owned entries must not change and the ghosts must
  /// not be touched.
  template <transferable T, class Then = detail::no_epilogue>
  forward_handle<T, Then> start_forward(std::span<T> data, Then then = {}) {
    check_call(
        "start_forward",
        [&] {
          check_size(data.size());
          detail::check_idle(resources_->busy, "start_forward");
        },
        {sizeof(T)});
    return forward_handle<T, Then>(
        {*program_, comm(), options_.mode, *resources_, detail::arrays<T>{{data.data()}}, false, {}, engine_.get()},
        *resources_, std::move(then));
  }
  /// Ghost fill (start_forward(data).wait()).
  template <transferable T>
  void forward(std::span<T> data) {
    start_forward(data).wait();
  }

  /// Starts sending contributions back (see reverse); the owned entries hold
  /// the combined values once wait() on the handle returns. The whole array
  /// is off-limits until then.
  template <transferable T, detail::reduction_for<T> Op = std::plus<>>
  reverse_handle<T, Op> start_reverse(std::span<T> data, Op op = {}) {
    check_call(
        "start_reverse",
        [&] {
          check_size(data.size());
          detail::check_idle(resources_->busy, "start_reverse");
        },
        {sizeof(T)});
    return reverse_handle<T, Op>(
        {*program_, comm(), options_.mode, *resources_, detail::arrays<T>{{data.data()}}, true, std::move(op), engine_.get()},
        *resources_);
  }
  /// Contributions back: every ghost's value is combined with `op` onto its
  /// owner's element (forwarders combine on the way: a tree reduction). The
  /// ghost entries are used as accumulators and hold partial results after.
  template <transferable T, detail::reduction_for<T> Op = std::plus<>>
  void reverse(std::span<T> data, Op op = {}) {
    start_reverse(data, std::move(op)).wait();
  }

  /// The communicator the plan runs on: its grid's duplicate.
  MPI_Comm comm() const {
    check_built("comm");
    return communicator();
  }

  /// Sizes the plan's staging for elements of `element_size` bytes, so that
  /// the first exchange of a type larger than the plan's keys allocates
  /// nothing either (a plan is sized for its keys when built).
  void reserve(std::size_t element_size) {
    check_built("reserve");
    element_size_ = std::max(element_size_, element_size);
    resources_->reserve(*program_, element_size_);
    if (engine_) resources_->staging<std::byte>(engine_->staging_bytes(*program_, element_size_));
  }
  /// The same for several arrays moved together (start_forward_arrays): `element_bytes` is the sum
  /// of their element sizes.
  void reserve_arrays(std::size_t element_bytes) {
    check_built("reserve_arrays");
    resources_->reserve(*program_, element_bytes, false);
    if (engine_) resources_->staging<std::byte>(engine_->staging_bytes(*program_, element_bytes));
  }

  /// The handle start_forward_arrays returns.
  template <class... Ts>
  using arrays_forward_handle = exchange_handle<
      detail::exchange_run<detail::arrays<Ts...>, detail::store_arrivals, detail::selected_neighbor_engine>>;
  /// The handle start_reverse_arrays returns.
  template <class Op, class... Ts>
  using arrays_reverse_handle =
      exchange_handle<detail::exchange_run<detail::arrays<Ts...>, Op, detail::selected_neighbor_engine>>;

  /// Starts a ghost fill of several arrays of size() elements each (a structure of arrays) in one
  /// exchange: every message carries each array's elements in turn.
  template <transferable... Ts>
  arrays_forward_handle<Ts...> start_forward_arrays(std::span<Ts>... data) {
    return start_forward_arrays_then(detail::no_epilogue{}, data...);
  }
  /// Starts a ghost fill of several arrays, then runs `then()` once the ghosts have arrived.
  template <class Then, transferable... Ts>
  exchange_handle<detail::exchange_run<detail::arrays<Ts...>, detail::store_arrivals, detail::selected_neighbor_engine>,
                  Then>
  start_forward_arrays_then(Then then, std::span<Ts>... data) {
    check_call(
        "start_forward",
        [&] {
          (check_size(data.size()), ...);
          detail::check_idle(resources_->busy, "start_forward");
        },
        {sizeof(Ts)...});
    return {{*program_, comm(), options_.mode, *resources_, detail::arrays<Ts...>{{data.data()...}}, false, {}, engine_.get()},
            *resources_,
            std::move(then)};
  }
  /// Starts a reverse of several arrays in one exchange, each combined with `op`.
  template <class Op, transferable... Ts>
    requires(detail::reduction_for<Op, Ts> && ...)
  arrays_reverse_handle<Op, Ts...> start_reverse_arrays(Op op, std::span<Ts>... data) {
    check_call(
        "start_reverse",
        [&] {
          (check_size(data.size()), ...);
          detail::check_idle(resources_->busy, "start_reverse");
        },
        {sizeof(Ts)...});
    return arrays_reverse_handle<Op, Ts...>(
        {*program_, comm(), options_.mode, *resources_, detail::arrays<Ts...>{{data.data()...}}, true, std::move(op),
         engine_.get()},
        *resources_);
  }
  /// Starts a ghost fill of `data`, arrays and strided columns in a code's own layouts
  /// (detail::arrays), then runs `then()`. For the payload plans built on this one: the caller has
  /// checked, in its check_call, that each holds at least size() elements.
  template <class Then, class... Cs>
  exchange_handle<detail::exchange_run<detail::arrays<Cs...>, detail::store_arrivals, detail::selected_neighbor_engine>,
                  Then>
  start_forward_columns(Then then, const detail::arrays<Cs...>& data) {
    check_locally("start_forward");
    return {{*program_, comm(), options_.mode, *resources_, data, false, {}, engine_.get()}, *resources_, std::move(then)};
  }
  /// Starts a reverse of `data` (as start_forward_columns), each value combined with `op`.
  template <class Op, class... Cs>
  arrays_reverse_handle<Op, Cs...> start_reverse_columns(Op op, const detail::arrays<Cs...>& data) {
    check_locally("start_reverse");
    return arrays_reverse_handle<Op, Cs...>(
        {*program_, comm(), options_.mode, *resources_, data, true, std::move(op), engine_.get()}, *resources_);
  }

  /// Keeps the elements in the caller's storage instead: element `i` of the
  /// data array described above lives at `place[i]` of an array of
  /// `storage_size` elements (a grid field with its ghost layers). Messages
  /// then gather from and scatter into that storage directly. On the shared-memory path the plan's
  /// window is made again (collective, as the build that relocates): receivers copy a lent array's
  /// elements where the relocated messages find them (zero copy).
  void relocate(std::span<const std::size_t> place, std::size_t storage_size) {
    check_built("relocate");
    if (place.size() != program_->layout.total())
      throw error("relocate: place has " + std::to_string(place.size()) + " entries, the plan has " +
                  std::to_string(program_->layout.total()) + " elements");
    for (std::size_t p : place)
      if (p >= storage_size)
        throw error("relocate: place " + std::to_string(p) + " lies outside storage of " +
                    std::to_string(storage_size) + " elements");
    using element_runs = std::vector<detail::element_run>;
    detail::remap(*program_, [&](const element_runs& cells, element_runs& out) {
      for (const detail::element_run& c : cells)
        for (std::size_t e = c.first; e < c.first + c.count; ++e) out.push_back({place[e], 1});
    });
    resources_->reserve(*program_, element_size_);
    storage_ = storage_size;
    if (resources_->window) detail::share_node_memory(resources_->window, *program_, *context_, options_);
  }

 private:
  friend struct detail::selective_builder;
  // The `_with` calls run a program other than the plan's own (its cells moved onto a field's
  // storage, a bundle's bytes, a view's layout: detail::remapped). Only field_plan, which makes
  // those programs and checks the call first, may start them.
  friend class field_plan;
  friend struct detail::particle_spaces;  // a particle plan's arrays in a memory space (start_batched)

  /// Starts `p`, this plan's program in other units (a field bundle's
  /// bytes), forward on this plan's communicator (and neighbourhood
  /// collective). `p` must outlive the exchange. The `_with` calls check on
  /// this rank only (check_locally): their caller (a field plan) has run its
  /// own check_call, the call's one collective.
  template <transferable T, class Then = detail::no_epilogue>
  forward_handle<T, Then> start_forward_with(const detail::program& p, T* data, Then then = {}) {
    check_locally("start_forward");
    return forward_handle<T, Then>({p, comm(), options_.mode, *resources_, detail::arrays<T>{{data}}, false, {}, engine_.get()},
                                   *resources_, std::move(then));
  }

  /// Starts `p` (this plan's program in other units or another layout) backwards.
  template <transferable T, class Op = std::plus<>>
  reverse_handle<T, Op> start_reverse_with(const detail::program& p, T* data, Op op = {}) {
    check_locally("start_reverse");
    return reverse_handle<T, Op>(
        {p, comm(), options_.mode, *resources_, detail::arrays<T>{{data}}, true, std::move(op), engine_.get()}, *resources_);
  }

  /// The handle of an exchange of `Data` (detail::arrays, detail::field_views) combining with `Op`.
  template <class Data, class Op>
  using data_handle = exchange_handle<detail::exchange_run<Data, Op, detail::selected_neighbor_engine>>;

  /// Starts `p` (this plan's program in another layout, or split per field) over `data`,
  /// forwards or `backward` (combining with `op`), on the plan's own serial path.
  template <class Data, class Op>
  data_handle<Data, Op> start_data_with(const detail::program& p, const Data& data, bool backward, Op op) {
    check_locally(backward ? "start_reverse" : "start_forward");
    return data_handle<Data, Op>({p, comm(), options_.mode, *resources_, data, backward, std::move(op), engine_.get()},
                                 *resources_);
  }

  /// The batch cache a field view in `Space` exchanges through: the space's executor for a
  /// device, host threads for host memory with plan_options::pack_threads above 1, else none
  /// (the plan's own serial path). On the shared-memory path host memory takes the serial path
  /// whatever pack_threads says: it packs straight into the window's slots and lends shared
  /// arrays (zero copy), where a batched exchange stages its messages and never lends.
  template <class Space>
  detail::batch::batch_cache* batch_cache_for() {
    if constexpr (detail::device_space<Space>) {
      static constexpr char key = 0;  // one per space type
      return &resources_->batches(&key, 0, [&] { return Space::make_executor(options_.device_mpi); });
    } else {
      const int n = options_.pack_threads;  // checked when the plan was built (check_plan_options)
      if (n == 1 || resources_->window) return nullptr;
      static constexpr char key = 0;
      return &resources_->batches(&key, n, [&] { return detail::batch::make_host_threads(n); });
    }
  }

  /// Starts `p` over the arrays `data`, forwards or `backward` (combining with `op`, which the
  /// executor runs as `bop`), every copy of a phase in one launch of `batch`'s executor; ordered
  /// on `stream` when it is not null (exchange_run::post_batched).
  template <class Op, transferable... Ts>
  exchange_handle<detail::exchange_run<detail::arrays<Ts...>, Op, detail::selected_neighbor_engine>> start_batched(
      const detail::program& p, bool backward, Op op, detail::batch::batch_cache& batch, detail::batch::batch_op bop,
      void* stream, Ts*... data) {
    return start_batched_then(detail::no_epilogue{}, p, backward, std::move(op), batch, bop, stream, data...);
  }
  /// start_batched, then `then()` once the exchange has completed (a particle plan's periodic shift).
  template <class Then, class Op, transferable... Ts>
  exchange_handle<detail::exchange_run<detail::arrays<Ts...>, Op, detail::selected_neighbor_engine>, Then>
  start_batched_then(Then then, const detail::program& p, bool backward, Op op, detail::batch::batch_cache& batch,
                     detail::batch::batch_op bop, void* stream, Ts*... data) {
    return start_batched_data(std::move(then), detail::arrays<Ts...>{{data...}}, p, backward, std::move(op), batch,
                              bop, stream, data...);
  }
  /// start_batched_then with the arrays described as `described` (what the window's arrivals meet).
  template <class Then, class Data, class Op, transferable... Ts>
  exchange_handle<detail::exchange_run<Data, Op, detail::selected_neighbor_engine>, Then> start_batched_data(
      Then then, const Data& described, const detail::program& p, bool backward, Op op,
      detail::batch::batch_cache& batch, detail::batch::batch_op bop, void* stream, Ts*... data) {
    check_locally(backward ? "start_reverse" : "start_forward");
    const detail::batch::array_shape shapes[] = {{sizeof(Ts), alignof(Ts)}...};
    detail::batch::batch_run b = batch.prepare(p, backward, shapes, engine_ != nullptr, resources_->window != nullptr);
    int i = 0;
    ((b.at.at[i] = reinterpret_cast<std::byte*>(data), b.kinds[i] = detail::batch::scalar_kind_of<Ts>(), ++i), ...);
    b.op = bop;
    b.stream = stream;
    detail::exchange_run<Data, Op, detail::selected_neighbor_engine> run(p, comm(), options_.mode, *resources_,
                                                                          described, backward, std::move(op),
                                                                          engine_.get());
    run.batched(b);
    return {std::move(run), *resources_, std::move(then)};
  }

  selective_plan(const cartesian_grid& grid, std::string_view strategy, const plan_options& options)
      : plan_base(grid, strategy, options) {}
  /// An empty plan, never built, for an empty payload plan (field_plan's default constructor):
  /// its calls raise naming `builder`.
  explicit selective_plan(const char* builder) : plan_base(builder) {}

  /// What the `_with` calls check, locally: their caller agreed the rest (and this too) in its check_call.
  void check_locally(const char* call) const {
    check_built(call);
    detail::check_idle(resources_->busy, call);
  }
  void check_size(std::size_t n) const {
    if (n != storage_)
      throw error("forward/reverse: the array has " + std::to_string(n) + " elements but the plan needs " +
                  std::to_string(storage_) + " (owned and ghosts)");
  }

  /// Behind a pointer, so that moving the plan keeps what an exchange in flight uses in place.
  std::unique_ptr<detail::program> program_ = std::make_unique<detail::program>();
  std::size_t element_size_ = 1;  ///< the largest element the staging is sized for
  std::vector<detail::block_slot> blocks_;
  std::size_t storage_ = 0;
  /// NeighborAlltoall: SingleHop's one round of selected messages as one MPI_Neighbor_alltoallv.
  std::unique_ptr<detail::selected_neighbor_engine> engine_;
};

}  // namespace haloshift

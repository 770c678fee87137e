// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file field_plan.hpp
/// @brief A ghost-layer exchange built by make_field_plan (grid_field.hpp):
/// forward and reverse of fields, bundles and views of one shape, and the
/// reduction operations reverse takes besides any binary functor.

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../auto_hook.hpp"
#include "../detail/compiled.hpp"
#include "../detail/exchange/field_segments.hpp"
#include "../detail/exchange/remap.hpp"
#include "../detail/exchange/shared_runs.hpp"
#include "../detail/mpi/agreement.hpp"
#include "../detail/op_last.hpp"
#include "../detail/payload/field_programs.hpp"
#include "../detail/payload/interior_partition.hpp"
#include "../error.hpp"
#include "../exchange/selection.hpp"
#include "../grid/cartesian_grid.hpp"
#include "../strategy_registry.hpp"
#include "field_shape.hpp"
#include "field_storage.hpp"
#include "field_view.hpp"
#include "reductions.hpp"

namespace haloshift {

namespace detail {
struct field_plan_builder;
}  // namespace detail

/// A compiled ghost-layer exchange for fields of one shape. Built collectively
/// by make_field_plan; forward (ghost fill) and reverse (contributions back)
/// may then be called any number of times, collectively.
class field_plan {
 public:
  /// An empty plan, for a code that builds its plan after setup (assign it the plan
  /// make_field_plan returns): until then every call that needs the plan raises, saying so.
  field_plan() : plan_("make_field_plan") {}

  /// Name of the strategy the plan runs (for Auto: the one it chose); empty for an empty plan.
  std::string_view strategy() const noexcept { return name_; }
  /// How several fields in one exchange travel (for field_messages::automatic: what Auto chose,
  /// else per_neighbor); a single field is one message per neighbour either way.
  field_messages messages() const noexcept {
    return per_field_ ? field_messages::per_field : field_messages::per_neighbor;
  }
  /// The shape the plan was built for; forward and reverse check that a field has it.
  const field_shape& shape() const {
    plan_.check_built("shape");
    return shape_;
  }
  /// Boxes the ghosts reach along each dimension (field_shape::reach; at least 1 along the
  /// grid's dimensions when no dimension has ghosts).
  const offset& reach() const {
    plan_.check_built("reach");
    return reach_;
  }
  /// The compiled program (messages, pieces) in cells of the padded array.
  const detail::program& details() const { return plan_.details(); }
  /// This rank's interior split for overlap with a stencil of `reach[d]` cells on each side
  /// along `d`: `inner`, the cells whose stencil stays inside the interior along every
  /// dimension with ghosts (their update may run while start_forward's exchange is in flight,
  /// written to another array: the exchange reads the cells near the faces), and
  /// `rim`, disjoint boxes (none empty) that with `inner` cover the interior once. Boxes are
  /// half-open local cell ranges (`lo` to `hi`, interior from 0); take the result with `auto`.
  detail::interior_partition interior_regions(const offset& reach) const {
    plan_.check_built("interior_regions");
    return detail::partition_interior(shape_, reach);
  }

  /// Fills the ghost layers of `f` from the owners' interiors. Ghost cells
  /// outside a non-periodic dimension are left as they are.
  template <transferable T>
  void forward(grid_field<T>& f) {
    start_forward(f).wait();
  }
  /// Starts forward(f): the ghost layers are filled once wait() on the
  /// handle returns. Until then the interior cells next to the ghosts (the
  /// ones neighbours import) must not change and the ghost cells must not be
  /// read; cells deeper inside are free to compute on (interior_regions gives
  /// the cells whose stencil reads no ghost; docs/overlap.md, "Buffer rules").
  template <transferable T>
  auto start_forward(grid_field<T>& f) {
    check_call("start_forward", [&] { check(f.shape(), f.data(), "forward"); }, {sizeof(T)});
    return start_views(memory::host{}, plan_.details(), detail::store_arrivals{}, f.storage().data());
  }

  /// Fills the ghosts of every field of the bundle in one exchange (one message per neighbour, or
  /// one per neighbour and field: messages()).
  template <transferable... Ts>
  void forward(field_bundle<Ts...>& b) {
    start_forward(b).wait();
  }
  /// Starts forward(b), for every field of the bundle in one exchange.
  template <transferable... Ts>
  auto start_forward(field_bundle<Ts...>& b) {
    check_call("start_forward", [&] { check(b.shape(), b.base(), "forward"); }, {sizeof(Ts)...});
    const bool apart = per_field_ && b.parts().size() > 1;
    return start_on(memory::host{}, programs_.bundle(plan_.details(), b.parts(), per_field_), detail::store_arrivals{},
                    apart, detail::arrays<std::byte>{{b.base()}}, b.base());
  }

  /// Combines every ghost cell's value onto its owner: owner = owner op
  /// copy op copy ... (forwarders combine on the way, a tree reduction). The
  /// ghosts are used as accumulators and hold partial results afterwards.
  /// Floating-point sums may round differently per strategy (the combining
  /// order differs); min, max, `take_ghost_value` and integer sums do not.
  template <transferable T, detail::reduction_for<T> Op = std::plus<>>
  void reverse(grid_field<T>& f, Op op = {}) {
    start_reverse(f, std::move(op)).wait();
  }
  /// Starts reverse(f, op); the owners hold the combined values once wait()
  /// on the handle returns. The field is off-limits until then.
  template <transferable T, detail::reduction_for<T> Op = std::plus<>>
    requires(!std::is_same_v<Op, take_ghost_value>)
  auto start_reverse(grid_field<T>& f, Op op = {}) {
    check_call("start_reverse", [&] { check(f.shape(), f.data(), "reverse"); }, {sizeof(T)});
    return start_views(memory::host{}, plan_.details(), std::move(op), f.storage().data());
  }
  /// Whether an exchange of this plan is in flight.
  bool busy() const noexcept { return plan_.busy(); }

  /// Fills the ghost layers of the caller's own array (see field_view): the
  /// same cells as a grid_field of the plan's shape, in place. The view is
  /// checked on this rank only (a bad view on one rank cannot be reported to
  /// the others, which then wait: docs/design.md, "Plans and collective
  /// validation", per-call checks), or on every rank together with collective
  /// argument checks (plan_options::checks).
  template <transferable T, class Space>
  void forward(const field_view<T, Space>& v) {
    start_forward(v).wait();
  }
  /// Starts forward(v).
  template <transferable T, class Space>
  auto start_forward(const field_view<T, Space>& v) {
    check_call("start_forward", [&] { detail::checked_view(v, shape_, "forward"); }, {sizeof(T)});
    return start_views(v.space, programs_.view(plan_.details(), shape_, v.ghost, v.stride), detail::store_arrivals{}, v.data);
  }
  /// Fills the ghosts of several views in one exchange (one message per
  /// neighbour carrying each view's cells in turn, or one per neighbour and
  /// view: messages()). The views may hold different element types but must
  /// share their layout: ghost widths and element strides. One message per
  /// field takes views of host memory.
  template <class Space, transferable... Ts>
    requires(sizeof...(Ts) >= 2)
  void forward(const field_view<Ts, Space>&... views) {
    start_forward(views...).wait();
  }
  /// Starts forward() of several views.
  template <class Space, transferable... Ts>
    requires(sizeof...(Ts) >= 2)
  auto start_forward(const field_view<Ts, Space>&... views) {
    std::pair<offset, std::array<std::size_t, 3>> layout;
    check_call("start_forward", [&] { layout = shared_layout("forward", views...); }, {sizeof(Ts)...});
    return start_together(first_space(views...), layout, detail::store_arrivals{}, views.data...);
  }
  /// Combines the ghosts of several views onto their owners in one exchange:
  /// `reverse(u, v, op)`, each view combined with `op` (last, like the
  /// one-view reverse; default `std::plus<>`).
  template <class... Args>
    requires detail::arrays_then_op<detail::is_field_view, 2, Args...> &&
             (!std::is_same_v<detail::last_of<Args...>, take_ghost_value>)
  void reverse(const Args&... args) {
    start_reverse(args...).wait();
  }
  /// Starts reverse() of several views.
  template <class... Args>
    requires detail::arrays_then_op<detail::is_field_view, 2, Args...> &&
             (!std::is_same_v<detail::last_of<Args...>, take_ghost_value>)
  auto start_reverse(const Args&... args) {
    return detail::call_op_first<detail::is_field_view>(
        [this](auto op, const auto&... views) { return this->start_reverse_views(std::move(op), views...); }, args...);
  }

  /// Combines the ghosts of the caller's array onto their owners (see reverse(grid_field)).
  template <transferable T, class Space, detail::reduction_for<T> Op = std::plus<>>
    requires(!std::is_same_v<Op, take_ghost_value>)
  void reverse(const field_view<T, Space>& v, Op op = {}) {
    start_reverse(v, std::move(op)).wait();
  }
  /// Starts reverse(v, op). A view of device memory combines with std::plus<>, take_min or
  /// take_max, of arithmetic element types.
  template <transferable T, class Space, detail::reduction_for<T> Op = std::plus<>>
    requires(!std::is_same_v<Op, take_ghost_value>)
  auto start_reverse(const field_view<T, Space>& v, Op op = {}) {
    check_call("start_reverse", [&] { detail::checked_view(v, shape_, "reverse"); }, {sizeof(T)});
    return start_views(v.space, programs_.view(plan_.details(), shape_, v.ghost, v.stride), std::move(op), v.data);
  }

  /// Reverse with take_ghost_value (see haloshift::take_ghost_value).
  template <transferable T>
  void reverse(grid_field<T>& f, take_ghost_value) {
    check_call("reverse", [&] { check(f.shape(), f.data(), "reverse"); }, {sizeof(T)});
    struct ranked {
      std::uint64_t priority;  ///< 0: the owner's own value; else (holder rank + 1, storage index)
      T value;
    };
    const std::span<T> cells = f.storage();
    std::vector<ranked> work(cells.size());
    const std::uint64_t holder = static_cast<std::uint64_t>(f.grid().rank() + 1) << 40;
    for (std::size_t i = 0; i < cells.size(); ++i) work[i] = {holder | i, cells[i]};
    for (int k = 0; k < shape_.interior[2]; ++k)
      for (int j = 0; j < shape_.interior[1]; ++j)
        for (int i = 0; i < shape_.interior[0]; ++i) work[shape_.index(i, j, k)].priority = 0;
    combine(std::span<ranked>(work), [](const ranked& a, const ranked& b) { return b.priority > a.priority ? b : a; });
    for (std::size_t i = 0; i < cells.size(); ++i) cells[i] = work[i].value;
  }

 private:
  /// reverse() of several views, the op first (the pack of views must come last to be deduced).
  template <class Op, class Space, transferable... Ts>
  auto start_reverse_views(Op op, const field_view<Ts, Space>&... views) {
    std::pair<offset, std::array<std::size_t, 3>> layout;
    check_call("start_reverse", [&] { layout = shared_layout("reverse", views...); }, {sizeof(Ts)...});
    return start_together(first_space(views...), layout, std::move(op), views.data...);
  }
  /// The space of the first of several views (the exchange's stream, for a device).
  template <class First, class... Rest>
  static const auto& first_space(const First& first, const Rest&...) {
    return first.space;
  }
  /// Starts program `p` of views in `Space` holding `data`.
  template <class Space, class Op, transferable... Ts>
  auto start_views(const Space& space, const detail::program& p, Op op, Ts*... data) {
    return start_on(space, p, std::move(op), false, detail::arrays<Ts...>{{data...}}, data...);
  }
  /// Starts several views of one layout (`layout`: their ghost widths and strides) in one
  /// exchange: one message per neighbour, or one per neighbour and view (per_field_), whose
  /// program moves the views' bytes as one run (detail::field_segments).
  template <class Space, class Op, transferable... Ts>
  auto start_together(const Space& space, const std::pair<offset, std::array<std::size_t, 3>>& layout, Op op,
                      Ts*... data) {
    detail::field_views<Ts...> views{{{data...}}, {{reinterpret_cast<std::byte*>(data)...}, 0}, per_field_};
    if (!per_field_)
      return start_on(space, programs_.view(plan_.details(), shape_, layout.first, layout.second), std::move(op), false,
                      views, data...);
    const std::size_t sizes[] = {sizeof(Ts)...};
    views.apart.shift = detail::field_programs::segment_shift(shape_, layout.first, layout.second, sizes);
    const detail::program& split =
        programs_.views_apart(plan_.details(), shape_, layout.first, layout.second, sizes, views.apart.shift);
    return start_on(space, split, std::move(op), true, views, data...);
  }
  /// Starts program `p` of views in `Space` holding `data`, described to the executor as
  /// `described`: forwards (`Op` is store_arrivals) or combining with `op`; batched through the
  /// space's executor (or host threads), else on the plan's own serial path. One message per
  /// field (`apart`: `p` split per field) runs on the serial path, host memory only (checked).
  template <class Space, class Op, class Data, transferable... Ts>
  auto start_on(const Space& space, const detail::program& p, Op op, bool apart, const Data& described, Ts*... data) {
    constexpr bool forwards = std::is_same_v<Op, detail::store_arrivals>;
    constexpr bool batchable = forwards || detail::batch::executor_combines<Op, Ts...>();
    static_assert(batchable || !detail::device_space<Space>,
                  "reverse of device memory combines arithmetic element types with std::plus<>, take_min or take_max");
    detail::batch::batch_cache* batch = apart ? nullptr : plan_.template batch_cache_for<Space>();
    if constexpr (batchable) {
      detail::batch::batch_op bop = detail::batch::batch_op::copy;
      if constexpr (!forwards) bop = detail::batch::op_kind<Op>::value;
      if (batch)
        return plan_.start_batched_data(detail::no_epilogue{}, described, p, !forwards, std::move(op), *batch, bop,
                                        detail::stream_of(space), data...);
    }
    if constexpr (detail::device_space<Space>) {
      throw error("unreachable: a device space always has its executor");
    } else {
      return plan_.start_data_with(p, described, !forwards, std::move(op));
    }
  }
  friend struct detail::field_plan_builder;
  field_plan(selective_plan p, const field_shape& s, const offset& reach, bool per_field)
      : plan_(std::move(p)), name_(plan_.strategy()), shape_(s), reach_(reach), per_field_(per_field) {}

  template <class U, class Op>
  void combine(std::span<U> data, Op op) {
    plan_.start_reverse_with(plan_.details(), data.data(), op).wait();  // checked by the caller
  }

  /// A call's one argument check (collective with plan_options::checks):
  /// `local`, the exchange not already in flight (before a new layout's
  /// program is added) and the element size of each array.
  template <class Local>
  void check_call(const char* call, Local&& local, std::initializer_list<std::size_t> element_sizes) {
    plan_.check_call(
        call,
        [&] {
          local();
          detail::check_idle(plan_.busy(), call);
        },
        element_sizes);
  }

  /// Raises unless a field (or bundle) of shape `s` whose storage starts at `data` fits the plan.
  HALOSHIFT_BUILDER void check(const field_shape& s, const void* data, const char* what) const;

  /// Checks several views (each against the plan, all of one layout) and returns their layout.
  template <class Space, class First, class... Rest>
  std::pair<offset, std::array<std::size_t, 3>> shared_layout(const char* call, const field_view<First, Space>& first,
                                                              const field_view<Rest, Space>&... rest) const {
    detail::checked_view(first, shape_, call);
    int which = 1;
    (
        [&](const auto& v) {
          detail::checked_view(v, shape_, call);
          if (v.ghost != first.ghost || v.stride != first.stride)
            throw error(std::string(call) + ": view " + std::to_string(which) + " has ghost " + to_string(v.ghost) +
                        " and strides " + std::to_string(v.stride[0]) + "," + std::to_string(v.stride[1]) + "," +
                        std::to_string(v.stride[2]) + ", view 0 ghost " + to_string(first.ghost) + " and strides " +
                        std::to_string(first.stride[0]) + "," + std::to_string(first.stride[1]) + "," +
                        std::to_string(first.stride[2]) + ": views exchanged together must share their layout");
          if (per_field_ && detail::device_space<Space>)
            throw error(std::string(call) +
                        ": one message per field (plan_options::messages) takes views of host memory; views of "
                        "device memory go as one message per neighbour (build the plan with "
                        "field_messages::per_neighbor)");
          if (detail::stream_of(v.space) != detail::stream_of(first.space))
            throw error(std::string(call) + ": view " + std::to_string(which) +
                        " is ordered on another stream than view 0: views exchanged together share one stream");
          ++which;
        }(rest),
        ...);
    return {first.ghost, first.stride};
  }

  selective_plan plan_;
  std::string_view name_;
  field_shape shape_;
  offset reach_{0, 0, 0};
  detail::field_programs programs_;  ///< for bundles and views, by layout
  bool per_field_ = false;        ///< several fields go as one message per field (messages())
};

#if HALOSHIFT_DEFINE_BUILDERS
HALOSHIFT_BUILDER void field_plan::check(const field_shape& s, const void* data, const char* what) const {
  if (!data) throw error(std::string(what) + ": the field was moved from (use the field it was moved to)");
  if (s.global == shape_.global && s.ghost == shape_.ghost && s.ghost_high == shape_.ghost_high && s.lo == shape_.lo &&
      s.interior == shape_.interior)
    return;
  std::string field = to_string(s), planned = to_string(shape_);
  if (field == planned) {  // another split of the same size: this rank's cells tell them apart
    field += ", this rank's cells " + to_string(s.lo) + " + " + to_string(s.interior);
    planned += ", this rank's cells " + to_string(shape_.lo) + " + " + to_string(shape_.interior);
  }
  throw error(std::string(what) + ": the field has " + field + " but the plan was built for " + planned);
}
#endif

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file particle_spaces.hpp
/// @brief A particle plan's exchanges of arrays through an executor, as a
/// field view's (field_plan.hpp): arrays in a device memory space
/// (`plan.forward(space, ...)`, particle_plan.hpp), every copy of a phase in
/// one launch of the space's executor, and host arrays on threads
/// (plan_options::pack_threads). Ghost positions in a device space are
/// shifted across periodic borders by the executor too, as one launch
/// (batch_op::shift) once the exchange has completed: each coordinate a block
/// wrapped gets `image[d] * length[d]` added in double and is stored once in
/// its own type, bit for bit the host path's shift_by_image. The shift waits
/// for the last round because a multi-hop strategy forwards ghosts onwards:
/// shifting while packing would round a float twice.

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../error.hpp"
#include "../../exchange/exchange_handle.hpp"
#include "../../exchange/selective_plan.hpp"
#include "../../memory/spaces.hpp"
#include "../../payload/position_views.hpp"
#include "../batch/batch_cache.hpp"
#include "../batch/ops.hpp"
#include "particle_columns.hpp"

namespace haloshift::detail {

/// A memory space of a particle plan's array calls: host memory (packed on threads with
/// plan_options::pack_threads above 1) or a device space.
template <class S>
concept particle_space = std::same_as<S, memory::host> || device_space<S>;

/// A span element forward_positions writes positions into: a coordinate array that is not const.
template <class P>
concept writable_coordinates = coordinate_array<P> && transferable<P>;

/// The arguments of forward_positions in a memory space: an array per particle (a span of
/// coordinate arrays), or one array per coordinate (x, y, z), then companion arrays.
template <class... A>
struct span_positions : std::false_type {};
template <writable_coordinates P, transferable... M>
struct span_positions<std::span<P>, std::span<M>...> : std::true_type {};
template <std::floating_point F, transferable... M>
struct span_positions<std::span<F>, std::span<F>, std::span<F>, std::span<M>...> : std::true_type {};

/// Where the coordinates of a forward_positions lie: the exchange's first `columns` arrays, array
/// `k` holding per element (of `stride[k]` bytes) `width[k]` coordinates from coordinate `first[k]`.
struct shift_layout {
  std::size_t columns = 1;
  std::array<std::size_t, 3> stride{}, width{}, first{};
  std::uint32_t scalar_bytes = 8;
  batch::scalar_kind kind = batch::scalar_kind::f64;
};

/// The shift launch of `blocks` for `s`, and its bytes: its segments (one per block and coordinate
/// it wrapped: the block's ghosts, one coordinate a row), then the doubles they add (base
/// `s.columns` is these bytes).
template <class Block>
std::pair<std::vector<std::byte>, batch::launch> shift_launch_of(std::span<const Block> blocks, const position& length,
                                                                 const shift_layout& s) {
  std::vector<batch::segment> table;
  std::vector<double> by;
  batch::launch l{0, 0, 0, s.scalar_bytes, batch::batch_op::shift, s.kind};
  for (const Block& b : blocks)
    for (std::size_t k = 0; k < s.columns; ++k)
      for (std::size_t j = 0; j < s.width[k]; ++j) {
        const std::size_t d = s.first[k] + j;
        if (d >= 3 || b.image[d] == 0 || b.count == 0) continue;
        batch::segment g;
        g.to = static_cast<std::int64_t>(b.first * s.stride[k] + j * s.scalar_bytes);
        g.to_stride = static_cast<std::int64_t>(s.stride[k]);
        g.from = static_cast<std::int64_t>(by.size() * sizeof(double));  // moved past the table below
        g.row_bytes = s.scalar_bytes;
        g.repeat = static_cast<std::uint32_t>(b.count);
        g.to_base = static_cast<std::uint16_t>(k);
        g.from_base = static_cast<std::uint16_t>(s.columns);
        g.first_word = l.words;
        l.words += b.count;
        by.push_back(b.image[d] * length[d]);  // as shift_by_image computes it
        table.push_back(g);
      }
  l.count = table.size();
  const std::size_t table_bytes = table.size() * sizeof(batch::segment);
  for (batch::segment& g : table) g.from += static_cast<std::int64_t>(table_bytes);
  std::vector<std::byte> bytes(table_bytes + by.size() * sizeof(double));
  if (!table.empty()) std::memcpy(bytes.data(), table.data(), table_bytes);
  if (!by.empty()) std::memcpy(bytes.data() + table_bytes, by.data(), by.size() * sizeof(double));
  return {std::move(bytes), l};
}

/// A forward_positions' last step: the shift launch, enqueued on the exchange's stream (or run and
/// waited for) once the ghosts have arrived.
struct shift_on_executor {
  batch::executor* exec = nullptr;
  const batch::segment* table = nullptr;  ///< executor memory
  batch::launch l{};
  batch::bases at{};
  void* stream = nullptr;
  void operator()() const {
    if (l.words == 0) return;
    exec->use_stream(stream);
    exec->run(table, l, at);
    if (!stream) exec->synchronize();  // the arrays are the caller's once wait() returns
  }
};

/// The calls of particle_plan on per-particle arrays (a friend of it: `Plan` is particle_plan),
/// in host memory (through the host-threads executor when plan_options::pack_threads is above 1,
/// else the plan's own path) or in a device space (through its executor).
struct particle_spaces {
  /// Starts a forward of `data`, arrays of size() elements in `space`, in one exchange.
  template <class Plan, class Space, transferable... Ts>
  static auto start_forward(Plan& plan, const Space& space, std::span<Ts>... data) {
    return start_forward_then(plan, space, no_epilogue{}, data...);
  }
  /// The same, then `then()` once the exchange has completed.
  template <class Plan, class Space, class Then, transferable... Ts>
  static auto start_forward_then(Plan& plan, const Space& space, Then then, std::span<Ts>... data) {
    check(plan, "start_forward", {data.size()...}, {sizeof(Ts)...});
    return start_checked(plan, space, std::move(then), data...);
  }

  /// Starts a reverse of `data` in `space`, each combined with `op` (by the executor, if any).
  template <class Plan, class Space, class Op, transferable... Ts>
  static auto start_reverse(Plan& plan, const Space& space, Op op, std::span<Ts>... data) {
    constexpr bool combines = batch::executor_combines<Op, Ts...>();
    static_assert(combines || !device_space<Space>,
                  "reverse of device memory combines arithmetic element types with std::plus<>, take_min or take_max");
    check(plan, "start_reverse", {data.size()...}, {sizeof(Ts)...});
    if constexpr (combines)
      if (batch::batch_cache* c = plan.plan_.template batch_cache_for<Space>())
        return plan.plan_.start_batched(plan.plan_.details(), true, std::move(op), *c, batch::op_kind<Op>::value,
                                        stream_of(space), data.data()...);
    return plan.plan_.start_reverse_columns(std::move(op), arrays<Ts...>{{data.data()...}});
  }

  /// Starts forward_positions of an array per particle `x` with companions `more`.
  template <class Plan, class Space, coordinate_array P, transferable... M>
  static auto start_forward_positions(Plan& plan, const Space& space, std::span<P> x, std::span<M>... more) {
    using traits = coordinate_traits<std::remove_cv_t<P>>;
    using F = typename traits::type;
    check(plan, "start_forward_positions", {x.size(), more.size()...}, {sizeof(P), sizeof(M)...},
          static_cast<int>(traits::size));
    const shift_layout s{1, {sizeof(P)}, {traits::size}, {0}, sizeof(F), batch::scalar_kind_of<F>()};
    return start_shifted<F>(plan, space, s, x, more...);
  }
  /// Starts forward_positions of one array per coordinate `x`, `y`, `z` with companions `more`.
  template <class Plan, class Space, std::floating_point F, transferable... M>
  static auto start_forward_positions(Plan& plan, const Space& space, std::span<F> x, std::span<F> y, std::span<F> z,
                                      std::span<M>... more) {
    check(plan, "start_forward_positions", {x.size(), y.size(), z.size(), more.size()...},
          {sizeof(F), sizeof(F), sizeof(F), sizeof(M)...}, 3);
    const shift_layout s{3,         {sizeof(F), sizeof(F), sizeof(F)}, {1, 1, 1}, {0, 1, 2},
                         sizeof(F), batch::scalar_kind_of<F>()};
    return start_shifted<F>(plan, space, s, x, y, z, more...);
  }

 private:
  /// Starts a checked forward: batched through `Space`'s executor, or the plan's own path where
  /// there is none (host memory, one thread); then `then()`.
  template <class Plan, class Space, class Then, class... Ts>
  static auto start_checked(Plan& plan, const Space& space, Then then, std::span<Ts>... data) {
    batch::batch_cache* c = plan.plan_.template batch_cache_for<Space>();
    if (!c) return plan.plan_.start_forward_columns(std::move(then), arrays<Ts...>{{data.data()...}});
    return plan.plan_.start_batched_then(std::move(then), plan.plan_.details(), false, store_arrivals{}, *c,
                                         batch::batch_op::copy, stream_of(space), data.data()...);
  }

  /// Starts a checked forward of `data` whose first `s.columns` arrays hold positions of F, shifted
  /// once it completes: by the space's executor, or on the host for host memory.
  template <class F, class Plan, class Space, class... Ts>
  static auto start_shifted(Plan& plan, const Space& space, const shift_layout& s, std::span<Ts>... data) {
    using block = typename decltype(plan.blocks_)::value_type;
    std::size_t k = 0;
    if constexpr (!device_space<Space>) {
      position_columns<F> pc;
      auto column = [&](auto* array) {
        if (k < s.columns)
          pc.c[k] = {reinterpret_cast<std::byte*>(array), s.stride[k], s.width[k]}, pc.first[k] = s.first[k];
        ++k;
      };
      (column(data.data()), ...);
      return start_checked(plan, space, shift_columns<F, block>{plan.blocks_, pc, plan.length_}, data...);
    } else {
      batch::batch_cache& c = *plan.plan_.template batch_cache_for<Space>();
      const std::uint64_t key[] = {s.columns,  s.stride[0], s.stride[1], s.stride[2], s.width[0],    s.width[1],
                                   s.width[2], s.first[0],  s.first[1],  s.first[2],  s.scalar_bytes};
      const batch::batch_cache::side_launch& shift =
          c.side(key, [&] { return shift_launch_of(std::span<const block>(plan.blocks_), plan.length_, s); });
      shift_on_executor then{
          &c.exec(), reinterpret_cast<const batch::segment*>(shift.memory), shift.l, {}, stream_of(space)};
      auto base = [&](auto* array) {  // the shift's bases: the position arrays, then its bytes
        if (k < s.columns) then.at.at[k] = reinterpret_cast<std::byte*>(array);
        ++k;
      };
      (base(data.data()), ...);
      then.at.at[s.columns] = shift.memory;
      return start_checked(plan, space, then, data...);
    }
  }

  /// The call's one argument check (agreed when the plan checks collectively): every array has
  /// exactly size() elements, positions have a coordinate per dimension, no exchange in flight.
  template <class Plan>
  static void check(Plan& plan, const char* call, std::initializer_list<std::size_t> sizes,
                    std::initializer_list<std::size_t> element_sizes, int coordinates = 3) {
    plan.plan_.check_call(
        call,
        [&] {
          check_idle(plan.busy(), call);
          const int ndims = plan.recipe_->shape.ndims();
          if (coordinates < ndims)
            throw error(std::string(call) + ": positions: " + std::to_string(coordinates) +
                        " coordinates per particle, the grid has " + std::to_string(ndims) + " dimensions");
          std::size_t i = 0;
          for (std::size_t n : sizes) {
            if (n != plan.size())
              throw error(std::string(call) + ": the array has " + std::to_string(n) + " elements but the plan needs " +
                          std::to_string(plan.size()) + " (owned and ghosts)" +
                          (sizes.size() > 1 ? "; array " + std::to_string(i) + " of the call" : std::string()));
            ++i;
          }
        },
        element_sizes);
  }
};

}  // namespace haloshift::detail

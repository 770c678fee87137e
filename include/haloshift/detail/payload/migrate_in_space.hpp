// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file migrate_in_space.hpp
/// @brief migrate in place of columns in a device space. The host never touches
/// the columns: the positions come to the host through the space's executor,
/// the owners are decided (and the positions wrapped) there and the wrapped
/// positions go back; the departures are packed, the holes closed and the
/// arrivals unpacked by the executor, each phase one launch of strided copies
/// (batch::phase_builder over the columns as arrays of bytes). The messages are
/// the host migrate's, record for record, so the result is the host's bit for
/// bit, and ranks in host memory and in a device space migrate together.

#include <array>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../error.hpp"
#include "../../grid/cartesian_grid.hpp"
#include "../../memory/spaces.hpp"
#include "../../payload/domain.hpp"
#include "../batch/compile.hpp"
#include "../batch/segment.hpp"
#include "migrate_columns.hpp"
#include "migrate_set.hpp"

namespace haloshift::detail {

template <class Decide>
departures owners(const cartesian_grid& grid, const domain& dom, std::size_t n, std::size_t components,
                  std::span<const std::size_t> element_sizes, Decide decide, const std::function<void()>& also_check);

/// A position source over other columns of its kind (the host copies of a device's positions).
template <class T>
column<T> with_columns(const column<T>&, const std::array<column<T>, 1>& c) noexcept {
  return c[0];
}
template <class T, class Proj>
projected<T, Proj> with_columns(const projected<T, Proj>& x, const std::array<column<T>, 1>& c) noexcept {
  return {c[0], x.proj};
}
template <std::floating_point F, std::size_t N>
coordinate_arrays<F, N> with_columns(const coordinate_arrays<F, N>&, const std::array<column<F>, N>& c) noexcept {
  return {c};
}

/// Executor memory and tables of one migrate, released once everything enqueued has run.
class executor_memory {
 public:
  explicit executor_memory(batch::executor& exec) : exec_(exec) {}
  executor_memory(const executor_memory&) = delete;
  executor_memory& operator=(const executor_memory&) = delete;
  ~executor_memory() {
    try {
      exec_.synchronize();
    } catch (...) {  // already failing: release what can be released
    }
    for (auto [p, bytes] : held_) exec_.deallocate(p, bytes);
  }
  std::byte* allocate(std::size_t bytes) {
    held_.emplace_back(exec_.allocate(bytes), bytes);
    return static_cast<std::byte*>(held_.back().first);
  }
  /// `table` in executor memory.
  const batch::segment* upload(const std::vector<batch::segment>& table) {
    const std::size_t bytes = table.size() * sizeof(batch::segment);
    std::byte* at = allocate(bytes);
    if (bytes) exec_.upload(at, table.data(), bytes);
    return reinterpret_cast<const batch::segment*>(at);
  }

 private:
  batch::executor& exec_;
  std::vector<std::pair<void*, std::size_t>> held_;
};

/// The positions' columns of a migrate in a device space, copied to the host and back.
template <class Columns>
class position_copies {
 public:
  using column_type = typename Columns::value_type;
  using value_type = typename column_type::value_type;

  /// Room for the first `count` entries of each of `device`'s columns.
  position_copies(const Columns& device, std::size_t count) : device_(device) {
    for (std::size_t d = 0; d < device.size(); ++d) {
      const column_type& c = device[d];
      values_[d].resize(count ? (count - 1) * c.stride + c.width : 0);
      host_[d] = column_type{values_[d].data(), nullptr, nullptr, c.stride, c.width};
    }
  }
  const Columns& columns() const noexcept { return host_; }
  /// The device's values to the host (after the columns were checked).
  void download(batch::executor& exec) {
    for (std::size_t d = 0; d < values_.size(); ++d)
      if (!values_[d].empty()) exec.to_host(values_[d].data(), device_[d].data(), bytes(d));
    exec.synchronize();
  }
  /// The values, wrapped on the host, back to the device (enqueued: the copies must outlive it).
  void upload(batch::executor& exec) {
    for (std::size_t d = 0; d < values_.size(); ++d)
      if (!values_[d].empty()) exec.to_device(device_[d].data(), values_[d].data(), bytes(d));
  }

 private:
  std::size_t bytes(std::size_t d) const noexcept { return values_[d].size() * sizeof(value_type); }

  Columns device_, host_{};
  std::array<std::vector<value_type>, std::tuple_size_v<Columns>> values_;
};

/// The byte-moving half of a migrate in a device space, once the owners are known.
template <std::size_t K>
class space_migration {
 public:
  space_migration(batch::executor& exec, const std::array<std::size_t, K>& align, const departures& where)
      : exec_(exec), memory_(exec), where_(where) {
    for (std::size_t k = 0; k < K; ++k) arrays_[k] = {1, align[k]};  // the columns as arrays of bytes
  }

  /// Packs the departures (records grouped by destination, as pack_departures) into `out` and
  /// `to`, and enqueues the closing of the holes after it (run by close_holes()).
  void pack(const std::array<byte_column, K>& columns, bool keep_order, std::vector<std::byte>& out,
            std::vector<rank_bytes>& to) {
    std::size_t record = 0, moved = 0;
    for (const byte_column& c : columns) record += c.bytes;
    refill_holes(where_, keep_order, [&](std::size_t, std::size_t, std::size_t n) { moved += n; });
    const std::size_t n = where_.leave.size();
    const std::vector<std::size_t> slot = departure_slots(where_, record, to);
    std::byte* staging = memory_.allocate(n * record + moved * record);
    batch::phase_builder packing(arrays_), gather(arrays_), scatter(arrays_);
    std::array<std::size_t, K> at{};  // each column's departures, column after column
    for (std::size_t a = 0, next = 0; a < K; next += n * columns[a].bytes, ++a) {
      at[a] = next;
      for (std::size_t k = 0; k < n; ++k)
        packing.add(int(a), where_.leave[k] * columns[a].stride, columns[a].bytes, 0, 1,
                    next + slot[k] * columns[a].bytes, true, false);
    }
    // Survivors that move down go through the staging (a run may overlap its target).
    std::size_t cursor = n * record;
    refill_holes(where_, keep_order, [&](std::size_t from, std::size_t into, std::size_t m) {
      for (std::size_t a = 0; a < K; cursor += m * columns[a].bytes, ++a) {
        gather.add(int(a), from * columns[a].stride, columns[a].bytes, columns[a].stride, m, cursor, true, false);
        scatter.add(int(a), into * columns[a].stride, columns[a].bytes, columns[a].stride, m, cursor, false, false);
      }
    });
    std::vector<batch::segment> table;
    const std::vector<batch::launch> packs = packing.finish(table);
    compaction_ = gather.finish(table);
    for (const batch::launch& l : scatter.finish(table)) compaction_.push_back(l);
    table_ = memory_.upload(table);
    bases_ = bases_of(columns, staging);
    run(packs);
    std::vector<std::byte> packed(n * record);
    if (n) exec_.to_host(packed.data(), staging, packed.size());
    exec_.synchronize();
    out.assign(n * record, std::byte{});  // the records, as the host migrate packs them
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t a = 0, offset = 0; a < K; offset += columns[a].bytes, ++a)
        std::memcpy(out.data() + p * record + offset, packed.data() + at[a] + p * columns[a].bytes, columns[a].bytes);
  }
  /// Enqueues the compaction pack() prepared (on the columns as they were then) and waits for it.
  void close_holes() {
    run(compaction_);
    exec_.synchronize();
  }
  /// Writes the arrivals (`got`, records as exchange_records received them) into `columns` after
  /// the survivors, and waits for it.
  void unpack(const std::array<byte_column, K>& columns, const arrivals& got) {
    std::size_t record = 0;
    for (const byte_column& c : columns) record += c.bytes;
    std::vector<std::byte> in(got.count * record);  // column after column
    std::size_t q = 0;
    for (const rank_bytes& m : got.from)
      for (std::size_t j = 0; j < m.size / record; ++j, ++q)
        for (std::size_t a = 0, offset = 0, at = 0; a < K;
             at += got.count * columns[a].bytes, offset += columns[a].bytes, ++a)
          std::memcpy(in.data() + at + q * columns[a].bytes, got.in.data() + m.first + j * record + offset,
                      columns[a].bytes);
    std::byte* staging = memory_.allocate(in.size());
    if (!in.empty()) exec_.to_device(staging, in.data(), in.size());
    batch::phase_builder unpacking(arrays_);
    for (std::size_t a = 0, at = 0; a < K; at += got.count * columns[a].bytes, ++a)
      unpacking.add(int(a), got.kept * columns[a].stride, columns[a].bytes, columns[a].stride, got.count, at, false,
                    false);
    std::vector<batch::segment> table;
    const std::vector<batch::launch> launches = unpacking.finish(table);
    table_ = memory_.upload(table);
    bases_ = bases_of(columns, staging);
    run(launches);
    exec_.synchronize();  // `in` goes with this call
  }

 private:
  static batch::bases bases_of(const std::array<byte_column, K>& columns, std::byte* staging) {
    batch::bases b;
    for (std::size_t a = 0; a < K; ++a) b.at[a] = columns[a].data;
    b.at[K] = staging;
    return b;
  }
  void run(const std::vector<batch::launch>& launches) {
    for (const batch::launch& l : launches) exec_.run(table_, l, bases_);
  }

  batch::executor& exec_;
  executor_memory memory_;
  const departures& where_;
  std::array<batch::array_shape, K> arrays_{};
  const batch::segment* table_ = nullptr;
  batch::bases bases_;
  std::vector<batch::launch> compaction_;
};

/// migrate in place (hs::migrate(space, grid, dom, how, x, more...)) of columns in device space `Space`.
template <class Space, class Positions, class... Ts>
std::size_t migrate_in_space(const Space& space, const cartesian_grid& grid, const domain& dom,
                             const migrate_options& how, const Positions& x, const column<Ts>&... more) {
  using set_type = migrate_set<Positions, Ts...>;
  static_assert(set_type::K < batch::max_bases, "migrate in a device space moves at most 15 columns");
  const set_type set(x, more...);
  position_copies<typename set_type::position_columns> host(set.positions(), how.count);
  const std::unique_ptr<batch::executor> exec = Space::make_executor(memory::mpi_path::staged);
  exec->use_stream(stream_of(space));
  std::array<std::size_t, set_type::K> align{};
  set.each(
      [&](std::size_t k, const auto& c) { align[k] = alignof(typename std::remove_cvref_t<decltype(c)>::value_type); });
  const auto sizes = set.sizes();
  const departures where =
      owners(grid, dom, how.count, coordinate_count(x), sizes, owner_decider(with_columns(x, host.columns())), [&] {
        set.check(how);
        set.each([](std::size_t k, const auto& c) {
          if (c.vector)
            throw error("migrate: column " + std::to_string(k) +
                        " is a std::vector, in host memory: in a device space give pointers to the space's memory");
        });
        host.download(*exec);
      });
  space_migration<set_type::K> move(*exec, align, where);
  host.upload(*exec);  // the positions wrapped
  std::vector<std::byte> out;
  std::vector<rank_bytes> to;
  move.pack(set.now(), how.keep_order, out, to);
  std::size_t record = 0;
  for (std::size_t b : sizes) record += b;
  const arrivals got = exchange_records(grid, where, how, out.data(), to, record);
  move.close_holes();
  if (how.resize) how.resize(got.kept + got.count);
  move.unpack(set.now(), got);  // the columns read again: the resize may have moved them
  return got.kept + got.count;
}

}  // namespace haloshift::detail

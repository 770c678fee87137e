// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file halo.hpp
/// @brief The blocks a rank received: one per offset, viewing one buffer.

#include <concepts>
#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "../error.hpp"
#include "../detail/exchange/halo_buffer.hpp"
#include "../detail/exchange/program.hpp"

namespace haloshift {

/// Element types haloshift moves as raw bytes.
template <class T>
concept transferable = std::is_trivially_copyable_v<T> && std::is_object_v<T> && !std::is_const_v<T>;

namespace detail {
/// A reduction op of reverse for elements of type `T`: `op(a, b)` combines two
/// of them into a value a `T` takes (std::plus<>, take_min, a lambda). Checked
/// at the user's call, so a wrong op is reported there rather than in the executor.
template <class Op, class T>
concept reduction_for = std::invocable<Op&, const T&, const T&> &&
                        std::convertible_to<std::invoke_result_t<Op&, const T&, const T&>, T>;
}  // namespace detail

/// One imported block: where it came from and a view of its elements.
template <class T>
struct block {
  haloshift::offset offset;  ///< position relative to the receiving box
  int source;                ///< rank that owns the box (may be this rank: periodic image)
  haloshift::offset image;   ///< wraps per periodic dimension; shift coordinates by image * length
  /// the block's elements, in the order their owner holds them
  std::span<T> data;
};

template <transferable T>
class plan;

/// The halo of one rank: one block per imported offset that exists (offsets
/// leaving a non-periodic border have none), in canonical order (z slowest,
/// x fastest). All blocks view one buffer owned by the halo; nothing is copied
/// when iterating. Made by a plan, filled by `plan.forward`. A halo made by
/// `plan.make_halo(space)` keeps its buffer in that device space: its blocks and
/// buffer() then view device memory (pass them to your kernels, or copy them to
/// the host with the space's copies), and the plan exchanges it with the calls
/// that take the space (docs/gpu.md, "Blocks").
template <transferable T>
class halo {
 public:
  halo() = default;

  /// Forward iterator over the blocks; yields `block<V>` by value (a view, nothing copied).
  template <class V>
  class basic_iterator {
   public:
    /// A forward iterator.
    using iterator_category = std::forward_iterator_tag;
    /// What dereferencing yields.
    using value_type = block<V>;
    /// Distance between two iterators.
    using difference_type = std::ptrdiff_t;
    /// None: blocks are made on dereference, there is nothing to point at.
    using pointer = void;
    /// A block by value (it is a view).
    using reference = block<V>;

    basic_iterator() = default;
    /// The `i`-th block of halo `h`.
    basic_iterator(const halo* h, std::size_t i) : h_(h), i_(i) {}
    /// The current block.
    block<V> operator*() const { return h_->make_block<V>(h_->visible_[i_]); }
    /// Next block.
    basic_iterator& operator++() {
      ++i_;
      return *this;
    }
    /// Next block; returns the iterator before the step.
    basic_iterator operator++(int) {
      auto old = *this;
      ++i_;
      return old;
    }
    friend bool operator==(const basic_iterator& a, const basic_iterator& b) { return a.i_ == b.i_; }

   private:
    const halo* h_ = nullptr;
    std::size_t i_ = 0;
  };
  /// Iterates blocks of mutable elements.
  using iterator = basic_iterator<T>;
  /// Iterates blocks of const elements.
  using const_iterator = basic_iterator<const T>;

  /// Number of blocks (offsets that exist); the own box is not one of them.
  std::size_t size() const noexcept { return visible_.size(); }
  /// True when no imported offset exists (a single box on non-periodic dimensions).
  bool empty() const noexcept { return visible_.empty(); }
  /// First block, in canonical order.
  iterator begin() { return {this, 0}; }
  /// Past the last block.
  iterator end() { return {this, visible_.size()}; }
  /// First block, read-only.
  const_iterator begin() const { return {this, 0}; }
  /// Past the last block, read-only.
  const_iterator end() const { return {this, visible_.size()}; }

  /// The block imported from offset `o`, or nothing if there is none.
  std::optional<block<const T>> find(const offset& o) const {
    const int s = program_ ? program_->layout.find(o) : -1;
    if (s < 0 || !program_->layout.slots()[s].visible) return std::nullopt;
    return make_block<const T>(s);
  }
  /// The block imported from offset `o`, writable, or nothing if there is none.
  std::optional<block<T>> find(const offset& o) {
    const int s = program_ ? program_->layout.find(o) : -1;
    if (s < 0 || !program_->layout.slots()[s].visible) return std::nullopt;
    return make_block<T>(s);
  }
  /// The block from offset `o`; throws haloshift::error when there is none.
  block<const T> at(const offset& o) const {
    if (auto b = find(o)) return *b;
    throw error("halo has no block at offset " + to_string(o));
  }

  /// The whole receive buffer, own block included, in canonical order.
  std::span<const T> buffer() const noexcept { return {buffer_.data(), buffer_.size()}; }
  /// The whole receive buffer, writable.
  std::span<T> buffer() noexcept { return {buffer_.data(), buffer_.size()}; }

 private:
  friend class plan<T>;

  explicit halo(std::shared_ptr<const detail::program> p) : program_(std::move(p)), buffer_(program_->layout.total()) {
    index_visible();
  }
  /// A halo whose buffer lives in node-shared memory (`shared`: at least its bytes).
  halo(std::shared_ptr<const detail::program> p, std::unique_ptr<detail::node_segment> shared)
      : program_(std::move(p)), buffer_(program_->layout.total(), std::move(shared)) {
    index_visible();
  }
  /// A halo whose buffer lives in a device space.
  halo(std::shared_ptr<const detail::program> p, const detail::space_memory& m)
      : program_(std::move(p)), buffer_(program_->layout.total(), m) {
    index_visible();
  }
  void index_visible() {
    const auto& slots = program_->layout.slots();
    for (std::size_t s = 0; s < slots.size(); ++s)
      if (slots[s].visible) visible_.push_back(static_cast<int>(s));
  }

  template <class V>
  block<V> make_block(int s) const {
    const detail::block_slot& b = program_->layout.slots()[s];
    V* base = buffer_.data() + b.first;  // constness follows V
    return {b.off, b.source.rank, b.source.image, std::span<V>(base, b.count)};
  }

  std::shared_ptr<const detail::program> program_;
  detail::halo_buffer<T> buffer_;
  std::vector<int> visible_;
};

}  // namespace haloshift

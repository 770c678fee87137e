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
#include "aligned_buffer.hpp"
#include "program.hpp"

namespace haloshift {

/// Element types haloshift moves as raw bytes.
template <class T>
concept transferable = std::is_trivially_copyable_v<T> && std::is_object_v<T> && !std::is_const_v<T>;

/// One imported block: where it came from and a view of its elements.
template <class T>
struct block {
  haloshift::offset offset;  ///< position relative to the receiving box
  int source;                ///< rank that owns the box (may be this rank: periodic image)
  haloshift::offset image;   ///< wraps per periodic dimension; shift coordinates by image * length
  std::span<T> data;
};

template <transferable T>
class plan;

/// The halo of one rank: one block per imported offset that exists (offsets
/// leaving a non-periodic border have none), in canonical order (z slowest,
/// x fastest). All blocks view one buffer owned by the halo; nothing is copied
/// when iterating. Made by a plan, filled by `plan.forward`.
template <transferable T>
class halo {
 public:
  halo() = default;

  template <class V>
  class basic_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = block<V>;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = block<V>;

    basic_iterator() = default;
    basic_iterator(const halo* h, std::size_t i) : h_(h), i_(i) {}
    block<V> operator*() const { return h_->make_block<V>(h_->visible_[i_]); }
    basic_iterator& operator++() {
      ++i_;
      return *this;
    }
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
  using iterator = basic_iterator<T>;
  using const_iterator = basic_iterator<const T>;

  /// Number of blocks (offsets that exist); the own box is not one of them.
  std::size_t size() const noexcept { return visible_.size(); }
  bool empty() const noexcept { return visible_.empty(); }
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, visible_.size()}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, visible_.size()}; }

  /// The block imported from offset `o`, or nothing if there is none.
  std::optional<block<const T>> find(const offset& o) const {
    const int s = program_ ? program_->layout.find(o) : -1;
    if (s < 0 || !program_->layout.slots()[s].visible) return std::nullopt;
    return make_block<const T>(s);
  }
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
  std::span<const T> buffer() const noexcept { return buffer_; }
  std::span<T> buffer() noexcept { return buffer_; }

 private:
  friend class plan<T>;

  explicit halo(std::shared_ptr<const program> p) : program_(std::move(p)), buffer_(program_->layout.total()) {
    const auto& slots = program_->layout.slots();
    for (std::size_t s = 0; s < slots.size(); ++s)
      if (slots[s].visible) visible_.push_back(static_cast<int>(s));
  }

  template <class V>
  block<V> make_block(int s) const {
    const block_slot& b = program_->layout.slots()[s];
    V* base = const_cast<T*>(buffer_.data()) + b.first;  // constness follows V
    return {b.off, b.source.rank, b.source.image, std::span<V>(base, b.count)};
  }

  std::shared_ptr<const program> program_;
  detail::aligned_vector<T> buffer_;
  std::vector<int> visible_;
};

}  // namespace haloshift

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file halo_buffer.hpp
/// @brief Where a halo keeps its blocks: host memory (an aligned vector),
/// node-shared host memory (plan::make_shared_halo(): zero copy on the
/// shared-memory path), or memory of a device space (plan::make_halo(space)),
/// allocated and released through that space's own calls and never touched by the host.

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "../checked_size.hpp"
#include "aligned_buffer.hpp"
#include "node_segment.hpp"

namespace haloshift::detail {

/// One address per memory space type: what a halo and a call compare to tell spaces apart.
template <class Space>
inline constexpr char space_key = 0;

/// A device space's memory calls, as a halo keeps them (the halo's type does not name its space).
struct space_memory {
  const void* key = nullptr;  ///< &space_key<Space>; null: host memory
  void* (*allocate)(std::size_t bytes) = nullptr;
  void (*release)(void* p) = nullptr;
  void (*to_host)(void* to, const void* from, std::size_t bytes) = nullptr;
  void (*to_device)(void* to, const void* from, std::size_t bytes) = nullptr;
};

/// The memory calls of `Space` (its static allocate / deallocate / copy_to_host / copy_to_device).
template <class Space>
space_memory memory_of() {
  return {&space_key<Space>, [](std::size_t bytes) -> void* { return Space::template allocate<std::byte>(bytes); },
          [](void* p) { Space::deallocate(p); },
          [](void* to, const void* from, std::size_t bytes) { Space::copy_to_host(to, from, bytes); },
          [](void* to, const void* from, std::size_t bytes) { Space::copy_to_device(to, from, bytes); }};
}

/// `n` elements of `T` in host memory or in a device space. Copying one in a device space copies
/// its elements through the host (the space offers no copy of its own memory); moving never copies.
template <class T>
class halo_buffer {
 public:
  halo_buffer() = default;
  explicit halo_buffer(std::size_t n) : host_(n), count_(n) {}
  halo_buffer(std::size_t n, const space_memory& m) : memory_(m), count_(n) {
    device_ = static_cast<T*>(m.allocate(checked_mul(n, sizeof(T), "make_halo: the halo's elements")));
  }
  /// `n` elements in `shared`, a node-shared allocation of at least their bytes (zeroed here).
  halo_buffer(std::size_t n, std::unique_ptr<node_segment> shared) : count_(n), shared_(std::move(shared)) {
    if (n) std::memset(shared_->data(), 0, n * sizeof(T));
  }
  /// A copy lives in this rank's own memory (a node-shared copy would be a collective).
  halo_buffer(const halo_buffer& other) : host_(other.host_), memory_(other.memory_), count_(other.count_) {
    if (other.shared_) host_.assign(other.data(), other.data() + count_);
    if (!other.device_) return;  // host memory, or a device halo of no elements
    device_ = static_cast<T*>(memory_.allocate(count_ * sizeof(T)));
    std::vector<std::byte> through(count_ * sizeof(T));
    memory_.to_host(through.data(), other.device_, through.size());
    memory_.to_device(device_, through.data(), through.size());
  }
  halo_buffer(halo_buffer&& other) noexcept
      : host_(std::move(other.host_)),
        memory_(other.memory_),
        count_(std::exchange(other.count_, 0)),
        device_(std::exchange(other.device_, nullptr)),
        shared_(std::move(other.shared_)) {}
  halo_buffer& operator=(halo_buffer other) noexcept {
    swap(other);
    return *this;
  }
  ~halo_buffer() {
    if (device_) memory_.release(device_);
  }

  T* data() const noexcept {
    if (shared_) return reinterpret_cast<T*>(shared_->data());
    return device_ ? device_ : const_cast<T*>(host_.data());
  }
  std::size_t size() const noexcept { return count_; }
  /// The space's key (space_key), null for host memory.
  const void* space() const noexcept { return memory_.key; }

 private:
  void swap(halo_buffer& other) noexcept {
    std::swap(host_, other.host_);
    std::swap(memory_, other.memory_);
    std::swap(count_, other.count_);
    std::swap(device_, other.device_);
    std::swap(shared_, other.shared_);
  }

  aligned_vector<T> host_;
  space_memory memory_;
  std::size_t count_ = 0;
  T* device_ = nullptr;  ///< set: the elements live in memory_'s space
  std::unique_ptr<node_segment> shared_;  ///< set: the elements live in node-shared memory
};

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file wire.hpp
/// @brief Fixed-layout fields in a byte buffer, for the networks' packages.

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include "../../error.hpp"
#include "../message_codec.hpp"

namespace haloshift::detail {

template <class V>
  requires std::is_trivially_copyable_v<V>
void put(byte_buffer& out, const V& value) {
  const auto* first = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), first, first + sizeof(V));
}

/// Reads what `put` wrote, in the same order; throws on a short buffer
/// (a corrupted package would otherwise read past its end).
class wire_reader {
public:
  explicit wire_reader(std::span<const std::byte> in) : in_(in) {}

  template <class V>
  V get() {
    V value;
    std::memcpy(&value, take(sizeof(V)).data(), sizeof(V));
    return value;
  }
  std::span<const std::byte> take(std::size_t n) {
    if (n > in_.size() - at_)
      throw error("network: a package ends after " + std::to_string(in_.size()) + " bytes, " +
                  std::to_string(at_ + n) + " expected");
    const auto part = in_.subspan(at_, n);
    at_ += n;
    return part;
  }
  bool done() const noexcept { return at_ == in_.size(); }

private:
  std::span<const std::byte> in_;
  std::size_t at_ = 0;
};

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file detail/hash.hpp
/// @brief 64-bit FNV-1a: what ranks compare to find values that differ
/// (strategy names, cuts, coordinates, partitions). Not cryptographic; a
/// match is always confirmed by the values themselves where it matters.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace haloshift::detail {

class fnv1a {
 public:
  static constexpr std::uint64_t offset_basis = 14695981039346656037ull;
  static constexpr std::uint64_t prime = 1099511628211ull;

  constexpr fnv1a& byte(unsigned char b) noexcept {
    h_ = (h_ ^ b) * prime;
    return *this;
  }
  constexpr fnv1a& bytes(std::string_view s) noexcept {
    for (char c : s) byte(static_cast<unsigned char>(c));
    return *this;
  }
  /// The object representation of a trivially copyable value, byte by byte.
  template <class T>
  fnv1a& value(const T& v) noexcept {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    for (unsigned char b : raw) byte(b);
    return *this;
  }
  /// A 64-bit word folded in at once (cheaper than 8 bytes; for tables of counts and flags).
  constexpr fnv1a& word(std::uint64_t w) noexcept {
    h_ = (h_ ^ w) * prime;
    return *this;
  }
  constexpr std::uint64_t get() const noexcept { return h_; }

 private:
  std::uint64_t h_ = offset_basis;
};

/// FNV-1a of a string.
constexpr std::uint64_t fnv1a_of(std::string_view s) noexcept { return fnv1a{}.bytes(s).get(); }

}  // namespace haloshift::detail

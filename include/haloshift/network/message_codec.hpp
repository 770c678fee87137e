// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file message_codec.hpp
/// @brief How the information networks turn a message into bytes and back.

#include <concepts>
#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <mpi.h>

#include "../error.hpp"

namespace haloshift {

/// A message of raw bytes, of any length (empty included).
using byte_buffer = std::vector<std::byte>;

/// `encode` appends a value's bytes; `decode` rebuilds it from exactly those
/// bytes. Defined here for trivially copyable types (copied as they are) and
/// for `byte_buffer`; `network/boost_serialization.hpp` adds every type Boost can
/// serialize. The communicator is the one the bytes travel on (Boost.MPI's
/// packed archives need it; the others ignore it).
template <class T>
struct message_codec;

/// Trivially copyable types travel as their object representation (sizeof(T) bytes).
/// The bytes come from another rank: their number is checked, and a `bool`
/// must be 0 or 1 (any other byte would be an invalid bool, undefined to use).
/// Other types with invalid object representations (an enum without a fixed
/// underlying type, a struct holding a bool) are trusted as sent.
template <class T>
  requires std::is_trivially_copyable_v<T>
struct message_codec<T> {
  /// Appends the sizeof(T) bytes of `value` to `out`.
  static void encode(const T& value, MPI_Comm, byte_buffer& out) {
    const auto* first = reinterpret_cast<const std::byte*>(&value);
    out.insert(out.end(), first, first + sizeof(T));
  }
  /// Whether `in` can be decoded: exactly sizeof(T) bytes (for bool, the byte 0 or 1).
  static bool decodes(std::span<const std::byte> in) {
    if constexpr (std::is_same_v<std::remove_cv_t<T>, bool>)
      return in.size() == 1 && std::to_integer<unsigned>(in[0]) <= 1;
    else
      return in.size() == sizeof(T);
  }
  /// The value whose bytes `in` holds; throws haloshift::error unless decodes(in)
  /// (checked here too, so that a caller who skips decodes() cannot read past `in`).
  static T decode(std::span<const std::byte> in, MPI_Comm) {
    if (!decodes(in)) {
      if (std::is_same_v<std::remove_cv_t<T>, bool> && in.size() == 1)
        throw error("network message: a bool must be the byte 0 or 1, got " +
                    std::to_string(std::to_integer<unsigned>(in[0])));
      throw error("network message: " + std::to_string(in.size()) + " bytes do not decode as a type of " +
                  std::to_string(sizeof(T)) + " bytes");
    }
    T value;
    std::memcpy(&value, in.data(), sizeof(T));
    return value;
  }
};

/// Raw bytes travel as they are.
template <>
struct message_codec<byte_buffer> {
  /// Appends `value` to `out`.
  static void encode(const byte_buffer& value, MPI_Comm, byte_buffer& out) { out.insert(out.end(), value.begin(), value.end()); }
  /// Any bytes decode.
  static bool decodes(std::span<const std::byte>) { return true; }
  /// A copy of `in`.
  static byte_buffer decode(std::span<const std::byte> in, MPI_Comm) { return byte_buffer(in.begin(), in.end()); }
};

/// Types the networks can carry (a `message_codec` exists for them).
template <class T>
concept network_message = requires(const T& value, MPI_Comm comm, byte_buffer& out, std::span<const std::byte> in) {
  message_codec<T>::encode(value, comm, out);
  { message_codec<T>::decodes(in) } -> std::same_as<bool>;
  { message_codec<T>::decode(in, comm) } -> std::same_as<T>;
};

}  // namespace haloshift

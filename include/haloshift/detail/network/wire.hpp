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
#include "../../network/message_codec.hpp"

namespace haloshift::detail {

template <class V>
  requires std::is_trivially_copyable_v<V>
void put(byte_buffer& out, const V& value) {
  const auto* first = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), first, first + sizeof(V));
}

/// "1 byte", "12 bytes": a byte count for error messages.
inline std::string bytes_text(std::size_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

/// Reads what `put` wrote, in the same order. The bytes come from another
/// rank and are not trusted: a read past the end, or bytes left over at the
/// end (expect_end), throws haloshift::error naming the package (`context`,
/// e.g. "msn_announce: a package"), the field and the bytes left.
class wire_reader {
public:
  /// `context` must outlive the reader (a string literal, in practice);
  /// `from`, the sending rank, is named in errors unless negative.
  explicit wire_reader(std::span<const std::byte> in, const char* context = "network: a package", int from = -1)
      : in_(in), context_(context), from_(from) {}

  /// The next sizeof(V) bytes as a V; `field` names it if the package ends first.
  template <class V>
  V get(const char* field) {
    V value;
    std::memcpy(&value, take(sizeof(V), field).data(), sizeof(V));
    return value;
  }
  /// The next `n` bytes; `field` names them if the package ends first.
  std::span<const std::byte> take(std::size_t n, const char* field) {
    // Compared with what is left, never as at_ + n: n may come from the wire
    // and be close to SIZE_MAX, where the sum would wrap around.
    if (n > left())
      throw error(what() + ": " + field + " of " + bytes_text(n) + " at byte " + std::to_string(at_) +
                  " exceeds the " + bytes_text(left()) + " left");
    const auto part = in_.subspan(at_, n);
    at_ += n;
    return part;
  }
  /// Bytes not read yet.
  std::size_t left() const noexcept { return in_.size() - at_; }
  /// Whether every byte was read.
  bool done() const noexcept { return at_ == in_.size(); }
  /// Throws unless every byte was read: bytes after the last field mean the
  /// sender wrote another layout (or the count was corrupted), so the fields
  /// read so far cannot be trusted either.
  void expect_end() const {
    if (!done()) throw error(what() + ": " + bytes_text(left()) + " left over after the last message");
  }
  /// The package as a whole, for error messages: "<context> from rank <from> of <n> bytes".
  std::string what() const {
    return std::string(context_) + (from_ >= 0 ? " from rank " + std::to_string(from_) : std::string()) + " of " +
           bytes_text(in_.size());
  }

private:
  std::span<const std::byte> in_;
  const char* context_;
  int from_;
  std::size_t at_ = 0;
};

}  // namespace haloshift::detail

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file boost_serialization.hpp
/// @brief Lets the information networks carry any type Boost.MPI can
/// serialize (std::string, std::vector, user structs with `serialize`).
/// Optional: include it only where Boost.MPI is built for the MPI in use
/// (on Debian, libboost-mpi-dev is built against Open MPI). Trivially
/// copyable types keep the zero-copy codec of message_codec.hpp.

#include <boost/mpi/packed_iarchive.hpp>
#include <boost/mpi/packed_oarchive.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

#include <cstring>
#include <exception>
#include <string>

#include "../error.hpp"
#include "message_codec.hpp"

namespace haloshift {

/// Types Boost.Serialization can write to and read from Boost.MPI's packed archives.
template <class T>
concept boost_serializable = requires(T& value, boost::mpi::packed_oarchive& out, boost::mpi::packed_iarchive& in) {
  out << value;
  in >> value;
};

/// Packs with MPI_Pack through Boost.MPI's archives, so the bytes are
/// portable between the ranks of the communicator.
template <class T>
  requires(!std::is_trivially_copyable_v<T> && !std::is_same_v<T, byte_buffer> && boost_serializable<T>)
struct message_codec<T> {
  /// Appends `value` packed for `comm` to `out`.
  static void encode(const T& value, MPI_Comm comm, byte_buffer& out) {
    boost::mpi::packed_oarchive::buffer_type buffer;
    boost::mpi::packed_oarchive archive(comm, buffer);
    archive << value;
    const auto* first = reinterpret_cast<const std::byte*>(buffer.data());
    out.insert(out.end(), first, first + buffer.size());
  }
  /// Always true: packed values have no fixed size.
  static bool decodes(std::span<const std::byte>) { return true; }
  /// Unpacks the value `in` holds (packed on `comm`). The bytes come from
  /// another rank: what Boost throws on bytes that are not a packed T (a
  /// corrupted size it cannot allocate: std::bad_alloc or std::length_error; an
  /// MPI_Unpack error in heterogeneous builds) becomes a haloshift::error.
  /// Caution: Boost.MPI built homogeneous (BOOST_MPI_HOMOGENEOUS, as Debian's
  /// 1.74 is) checks reads past the end of the buffer only with assert(), so
  /// such bytes may also be read past (docs/fuzzing.md, "Not fuzzed").
  static T decode(std::span<const std::byte> in, MPI_Comm comm) {
    boost::mpi::packed_iarchive::buffer_type buffer(in.size());
    if (!in.empty()) std::memcpy(buffer.data(), in.data(), in.size());
    try {
      boost::mpi::packed_iarchive archive(comm, buffer);
      T value;
      archive >> value;
      return value;
    } catch (const error&) {
      throw;  // from the type's own serialize()
    } catch (const std::exception& e) {
      throw error("network message: " + std::to_string(in.size()) + " bytes do not unpack as the message type (" +
                  e.what() + ")");
    }
  }
};

}  // namespace haloshift

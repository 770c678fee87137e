// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file log.hpp
/// @brief The library's only voice: messages go to a sink the program sets,
/// never to stdout or stderr on their own.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "error.hpp"

namespace haloshift {

/// How much a message matters.
enum class log_level {
  info,    ///< what Auto chose and why, calibrations measured; sent only when verbose
  warning  ///< something the program should know (a calibration made on another machine); always sent
};

/// Receives the library's messages (one line each, without a newline).
using log_sink = std::function<void(log_level, std::string_view)>;

namespace detail {
struct log_state {
  std::mutex mutex;
  log_sink sink;
  std::uint64_t generation = 0;  ///< counts set_log_sink calls: a sink that threw is removed only if still set
  int verbose = -1;              ///< -1: read HALOSHIFT_VERBOSE on first use
};
inline log_state& logger() {
  static log_state state;
  return state;
}
}  // namespace detail

/// Sets where messages go (an empty sink: nowhere, the default). Returns the previous sink.
inline log_sink set_log_sink(log_sink sink) {
  auto& s = detail::logger();
  std::lock_guard lock(s.mutex);
  ++s.generation;
  return std::exchange(s.sink, std::move(sink));
}

namespace detail {
/// The sink of set_log_sink(FILE*): `haloshift: <message>` lines to `stream`.
inline log_sink stream_sink(std::FILE* stream) {
  if (!stream) throw error("set_log_sink: stream is a null FILE* (pass stderr, stdout or a file fopen opened)");
  return [stream](log_level level, std::string_view text) {
    std::fprintf(stream, "haloshift: %s%.*s\n", level == log_level::warning ? "warning: " : "",
                 static_cast<int>(text.size()), text.data());
  };
}
}  // namespace detail

/// Sends messages as `haloshift: <message>` lines to `stream` (stderr by
/// default); returns the previous sink. A null `stream` raises here rather
/// than crash at the first message.
inline log_sink set_log_sink(std::FILE* stream = stderr) { return set_log_sink(detail::stream_sink(stream)); }
/// No sink: messages go nowhere (the default). Returns the previous sink.
inline log_sink set_log_sink(std::nullptr_t) { return set_log_sink(log_sink{}); }

/// Sends info messages (`on`) or only warnings, overriding HALOSHIFT_VERBOSE.
inline void set_verbose(bool on) {
  auto& s = detail::logger();
  std::lock_guard lock(s.mutex);
  s.verbose = on ? 1 : 0;
}

namespace detail {
/// Whether info messages are sent: set_verbose(), else HALOSHIFT_VERBOSE=1 in the environment.
inline bool verbose() {
  auto& s = logger();
  std::lock_guard lock(s.mutex);
  if (s.verbose < 0) {
    const char* v = std::getenv("HALOSHIFT_VERBOSE");
    s.verbose = v && std::string_view(v) == "1" ? 1 : 0;
  }
  return s.verbose == 1;
}
/// What log_message does with a sink that threw: removes it (unless another
/// was set meanwhile) and says so once on stderr, the only line the library
/// writes on its own: the program's sink can no longer be trusted with it.
inline void drop_sink(std::uint64_t generation, const char* why) noexcept {
  auto& s = logger();
  {
    std::lock_guard lock(s.mutex);
    if (s.generation != generation) return;  // replaced meanwhile: the new sink is not at fault
    s.sink = nullptr;
  }
  std::fprintf(stderr, "haloshift: the log sink threw (%s); it is removed and later messages are dropped\n", why);
}

/// Sends a message to the sink (info only when verbose()). The library calls
/// it on one rank (rank 0 of the plan's grid) so a job prints each line once,
/// often in the middle of a collective (Auto's choice): it never throws, or
/// that rank would leave the collective and its peers would wait forever. A
/// sink that throws is removed (detail::drop_sink).
inline void log_message(log_level level, std::string_view text) noexcept {
  std::uint64_t generation = 0;
  try {
    if (level == log_level::info && !verbose()) return;
    auto& s = logger();
    log_sink sink;
    {
      std::lock_guard lock(s.mutex);
      sink = s.sink;
      generation = s.generation;
    }
    if (sink) sink(level, text);
  } catch (const std::exception& e) {
    drop_sink(generation, e.what());
  } catch (...) {
    drop_sink(generation, "an exception of unknown type");
  }
}

}  // namespace detail

}  // namespace haloshift

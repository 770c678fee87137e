// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What haloshift's command-line tools share: a CLI11 command line with
// --help and --version, errors in one line ("<tool>: error: ..."), checks
// that name the option and the value, and a main() that runs between
// MPI_Init and MPI_Finalize and lets no exception escape.
//
// Exit status: 0 on success and after --help or --version; 1 when the run
// fails (a haloshift::error or any other exception); 2 for a bad command line.

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <exception>
#include <haloshift/version.hpp>
#include <iostream>
#include <stdexcept>
#include <string>

namespace tool {

/// The library version, "MAJOR.MINOR.PATCH".
inline std::string version() {
#ifdef HALOSHIFT_VERSION_STRING
  return HALOSHIFT_VERSION_STRING;
#else
  return std::to_string(HALOSHIFT_VERSION_MAJOR) + "." + std::to_string(HALOSHIFT_VERSION_MINOR) + "." +
         std::to_string(HALOSHIFT_VERSION_PATCH);
#endif
}

/// A bad command line found after parsing (options that do not go together, a value that does not fit
/// another): exit status 2 like a parse error. `option` is named at the start of the message.
inline CLI::ValidationError usage_error(const std::string& option, const std::string& message) {
  return CLI::ValidationError(option, message);
}

/// `text` on one line: line breaks become "; ", and haloshift::error's prefix "haloshift: " goes
/// (the tool's name comes first).
inline std::string one_line(std::string text) {
  if (text.rfind("haloshift: ", 0) == 0) text.erase(0, 11);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  for (std::size_t at; (at = text.find('\n')) != std::string::npos;) text.replace(at, 1, "; ");
  return text;
}

/// A CLI11 app named `name` (the executable's name: usage, errors) with --version.
inline void add_version(CLI::App& app) {
  app.set_version_flag("--version", app.get_name() + " (haloshift) " + version(),
                       "Print the haloshift version and exit");
}

/// Parses the command line (every rank the same argv). Returns -1 to go on, else the exit status:
/// 0 after --help or --version (printed to stdout when `print`), 2 after a bad command line
/// (one line on stderr when `print`).
inline int parse(CLI::App& app, int argc, char** argv, bool print) {
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::Success& e) {
    if (print) {
      app.exit(e, std::cout, std::cerr);
      std::cout.flush();
    }
    return 0;
  } catch (const CLI::ParseError& e) {
    if (print) std::fprintf(stderr, "%s: error: %s\n", app.get_name().c_str(), one_line(e.what()).c_str());
    return 2;
  }
}

/// Integers in [low, high]; the message names the value (CLI11 puts the option in front).
inline CLI::Validator integer(long long low, long long high = INT_MAX) {
  std::string range =
      high == INT_MAX ? ">= " + std::to_string(low) : "in " + std::to_string(low) + ".." + std::to_string(high);
  return CLI::Validator(
      [low, high, range](std::string& text) -> std::string {
        long long v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size() || v < low || v > high)
          return "expected an integer " + range + ", got '" + text + "'";
        return {};
      },
      "");  // the help shows INT; the message names the range
}

/// Numbers x with low < x <= high.
inline CLI::Validator fraction(double low, double high) {
  char text[64];
  std::snprintf(text, sizeof text, "in (%g, %g]", low, high);
  const std::string range = text;
  return CLI::Validator(
      [low, high, range](std::string& text) -> std::string {
        std::size_t used = 0;
        double v = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != text.size() || !(v > low && v <= high))
          return "expected a number " + range + ", got '" + text + "'";
        return {};
      },
      "");
}

/// A check from a parser: `parse(text)` throws on a bad value, with a message that names the value;
/// CLI11 puts the option's name in front of it.
template <class Parse>
CLI::Validator parses(Parse parse) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        try {
          (void)parse(text);
        } catch (const std::exception& e) {
          return one_line(e.what());
        }
        return {};
      },
      "");
}

/// Where `main` is: rank and how errors are reported.
struct context {
  int rank = 0;
  /// True while every rank throws the same errors (parsing, checks of the options, set-up): rank 0
  /// prints the error and all ranks end with MPI_Finalize. Set it to false where an error may reach
  /// some ranks only (the others would wait forever): that rank prints and aborts the job.
  bool agreed = true;
  bool lead() const { return rank == 0; }
};

/// main() of a tool that uses MPI: runs `body(context&) -> int` (the exit status) between MPI_Init
/// and MPI_Finalize. An exception from `body` becomes one line "<name>: error: ..." on stderr and
/// exit status 1 (see context::agreed).
template <class Body>
int mpi_main(const char* name, int argc, char** argv, Body&& body) {
  MPI_Init(&argc, &argv);
  context ctx;
  MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank);
  int status = 1;
  std::string failure;
  try {
    status = body(ctx);
  } catch (const std::exception& e) {
    failure = one_line(e.what());
  } catch (...) {
    failure = "unknown exception";
  }
  if (!failure.empty()) {
    if (!ctx.agreed) {
      std::fprintf(stderr, "%s: error: rank %d: %s\n", name, ctx.rank, failure.c_str());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (ctx.lead()) std::fprintf(stderr, "%s: error: %s\n", name, failure.c_str());
    status = 1;
  }
  std::fflush(stdout);
  MPI_Finalize();
  return status;
}

/// main() of a tool without MPI: the same error handling on one process.
template <class Body>
int plain_main(const char* name, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", name, one_line(e.what()).c_str());
  } catch (...) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: unknown exception\n", name);
  }
  return 1;
}

}  // namespace tool

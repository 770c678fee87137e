// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file core.hpp
/// @brief What every source of the C interface shares: the handles' C++ objects, the one
/// boundary every entry point goes through (no exception crosses it; the text stays for
/// hs_last_error), and the checks of C arguments.

#include <haloshift/haloshift.hpp>

#include <cstddef>
#include <new>
#include <string>
#include <utility>

// The library compiles with hidden visibility: the C interface alone is exported (and exports.map
// keeps everything else local).
#pragma GCC visibility push(default)
#include "../haloshift.h"
#pragma GCC visibility pop

/// A grid handle: the C++ grid (its own duplicate of the caller's communicator).
struct hs_grid_s {
  haloshift::cartesian_grid grid;
};

namespace haloshift::c_api {

/// Stores `text` as this thread's last error and returns `code`.
hs_status fail(hs_status code, const char* text) noexcept;
/// The C status of a haloshift::error: MPI failures carry their routine, a NULL argument says so.
hs_status status_of(const error& e) noexcept;

/// Runs `body` and turns whatever it throws into a status (and hs_last_error's text).
template <class Body>
hs_status guarded(const char* function, Body&& body) noexcept {
  try {
    std::forward<Body>(body)();
    return HS_OK;
  } catch (const error& e) {
    return fail(status_of(e), e.what());
  } catch (const std::bad_alloc&) {
    return fail(HS_ERR_MEMORY, function);
  } catch (const std::exception& e) {
    try {
      return fail(HS_ERR_INTERNAL, (std::string(function) + ": " + e.what()).c_str());
    } catch (...) {
      return fail(HS_ERR_INTERNAL, function);
    }
  } catch (...) {
    return fail(HS_ERR_INTERNAL, function);
  }
}

/// Raises "<function>: <name> is NULL" (HS_ERR_NULL) when `p` is null.
inline void require(const void* p, const char* function, const char* name) {
  if (!p) throw error(std::string(function) + ": " + name + " is NULL");
}

/// The grid of a handle, or the error that it is NULL.
inline const cartesian_grid& grid_of(hs_grid g, const char* function) {
  require(g, function, "grid");
  return g->grid;
}

/// Calls `f(T{})` with the element type `type` names (float, double, int32_t, int64_t).
template <class F>
decltype(auto) with_type(int type, const char* function, F&& f) {
  switch (type) {
    case HS_FLOAT: return f(float{});
    case HS_DOUBLE: return f(double{});
    case HS_INT32: return f(std::int32_t{});
    case HS_INT64: return f(std::int64_t{});
    default:
      throw error(std::string(function) + ": type = " + std::to_string(type) +
                  " is no hs_type (HS_FLOAT 0, HS_DOUBLE 1, HS_INT32 2, HS_INT64 3)");
  }
}
/// The bytes of one value of hs_type `type`.
std::size_t type_size(int type, const char* function);

/// Calls `f(op)` with the reduction `op` names (std::plus<>, take_min, take_max).
template <class F>
decltype(auto) with_op(hs_op op, const char* function, F&& f) {
  switch (op) {
    case HS_SUM: return f(std::plus<>{});
    case HS_MIN: return f(take_min{});
    case HS_MAX: return f(take_max{});
    default:
      throw error(std::string(function) + ": op = " + std::to_string(static_cast<int>(op)) +
                  " is no hs_op (HS_SUM 0, HS_MIN 1, HS_MAX 2)");
  }
}

/// Copies `text` into a C string of at most `capacity` bytes (with its terminator).
void copy_text(char* out, std::size_t capacity, const std::string& text) noexcept;

/// The field_shape and plan_options of a C field spec, checked on this rank (`function` names the
/// C call in errors; the caller agrees the outcome across ranks).
void read_field_spec(const cartesian_grid& grid, const char* strategy, const hs_field_spec* spec, field_shape& shape,
                     plan_options& options, const char* function);

/// The C domain, or the error that it is NULL.
domain read_domain(const hs_domain* d, const char* function);

/// Installs Auto's chooser (the model layer); plans by name call it before "Auto" can be asked for.
void install_auto();

}  // namespace haloshift::c_api

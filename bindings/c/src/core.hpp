// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file core.hpp
/// @brief What every source of the C interface shares: the handles' C++ objects, the one
/// boundary every entry point goes through (no exception crosses it; the text stays for
/// hs_last_error), and the checks of C arguments.

#include <haloshift/haloshift.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <new>
#include <tuple>
#include <variant>
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

// One source of truth: the C interface's values are the C++ library's, value for value, so that the
// conversions cast and cannot drift (a change on either side stops the build here).
static_assert(HS_PATTERN_FULL == static_cast<int>(halo_pattern::full) &&
              HS_PATTERN_FACES == static_cast<int>(halo_pattern::faces) &&
              HS_PATTERN_FACES_AND_EDGES == static_cast<int>(halo_pattern::faces_and_edges));
static_assert(HS_X_FASTEST == static_cast<int>(storage_order::x_fastest) &&
              HS_Z_FASTEST == static_cast<int>(storage_order::z_fastest));
static_assert(static_cast<int>(grid_shape::rank_order::last_fastest) == 0 &&
              static_cast<int>(grid_shape::rank_order::first_fastest) == 1);  // hs_grid_options::first_fastest
static_assert(static_cast<int>(grid_shape::remainder_cells::spread) == 0 &&
              static_cast<int>(grid_shape::remainder_cells::first) == 1 &&
              static_cast<int>(grid_shape::remainder_cells::last) == 2);  // hs_grid_options::remainder
static_assert(sizeof(float) == 4 && sizeof(double) == 8 && std::numeric_limits<float>::is_iec559 &&
              std::numeric_limits<double>::is_iec559);  // HS_FLOAT, HS_DOUBLE: C's float and double
static_assert(std::is_same_v<position::value_type, double>);  // hs_domain, cutoffs: doubles

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

/// The exchange a plan has in flight: none (std::monostate) or one of the handles `Tuple` lists,
/// kept in the plan's handle so that the split phase allocates nothing.
template <class Tuple>
struct in_flight_of;
template <class... Handles>
struct in_flight_of<std::tuple<Handles...>> {
  using type = std::variant<std::monostate, Handles...>;
};
/// `Reverse<T, Op>` for every hs_type `T`.
template <template <class, class> class Reverse, class Op>
using each_type = std::tuple<Reverse<float, Op>, Reverse<double, Op>, Reverse<std::int32_t, Op>, Reverse<std::int64_t, Op>>;
/// The exchange slot of a plan whose handles are `Others` and a reverse `Reverse<T, Op>` of every
/// hs_type with every hs_op.
template <template <class, class> class Reverse, class... Others>
using in_flight_with = typename in_flight_of<decltype(std::tuple_cat(
    std::declval<std::tuple<Others...>>(), std::declval<each_type<Reverse, std::plus<>>>(),
    std::declval<each_type<Reverse, take_min>>(), std::declval<each_type<Reverse, take_max>>()))>::type;

/// Raises unless no exchange is in flight (one per plan); `wait` names the C call that ends one.
template <class Pending>
void check_no_exchange(const Pending& pending, const char* function, const char* wait) {
  if (!std::holds_alternative<std::monostate>(pending))
    throw error(std::string(function) + ": this plan already has an exchange in flight; call " + wait +
                " (or the test call until it says done) first");
}
/// test() on the exchange in flight: true (and the slot emptied) once it is done, or when there is none.
template <class Pending>
bool test_pending(Pending& pending) {
  bool done = true;
  std::visit([&](auto& h) { if constexpr (requires { h.test(); }) done = h.test(); }, pending);
  if (done) pending.template emplace<std::monostate>();
  return done;
}
/// Waits for the exchange in flight, if any, and empties the slot.
template <class Pending>
void wait_pending(Pending& pending) {
  std::visit([](auto& h) { if constexpr (requires { h.wait(); }) h.wait(); }, pending);
  pending.template emplace<std::monostate>();
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

// SPDX-License-Identifier: BSD-3-Clause
/// @file migrate.cpp
/// @brief hs_migrate: migrate in place (detail/payload/migrate_columns.hpp) on the caller's
/// positions and any number of columns, their count known at run time only: the steps of
/// hs::migrate(grid, dom, how, positions, columns...) over a list of byte columns.

#include <string>
#include <vector>

#include "particles.hpp"

namespace hs = haloshift;

namespace haloshift::c_api {
namespace {

const char* const f = "hs_migrate";

/// The positions as migrate decides owners on them: a column of whole entries (interleaved: the
/// padding of a stride-4 entry moves along) or one column per coordinate.
template <class F>
detail::column<F> position_column(void* p, std::size_t stride, std::size_t width) {
  return {static_cast<F*>(p), nullptr, nullptr, stride, width};
}

/// Every array the migrate moves, as bytes, its pointers read from `x` and `columns` now.
std::vector<detail::byte_column> byte_columns(const hs_positions& x, const hs_column* columns, int n) {
  std::vector<detail::byte_column> out;
  const std::size_t size = x.type == HS_FLOAT ? sizeof(float) : sizeof(double), stride = stride_of(x) * size;
  if (split(x)) {
    for (void* p : {x.x, x.y, x.z}) out.push_back({static_cast<std::byte*>(p), stride, size});
  } else {
    out.push_back({static_cast<std::byte*>(x.x), stride, stride});
  }
  for (int k = 0; k < n; ++k) {
    const hs_column& c = columns[k];
    const std::size_t value = type_size(c.type, f), width = static_cast<std::size_t>(c.components);
    out.push_back({static_cast<std::byte*>(c.data), (c.stride ? c.stride : width) * value, width * value});
  }
  return out;
}

/// Raises unless every array has an address when `count` particles need one.
void check_addresses(const hs_positions& x, const hs_column* columns, int n, std::size_t count, const char* when) {
  if (count == 0) return;
  const std::string what = std::string(f) + ": " + when + ", ";
  if (!x.x || (split(x) && (!x.y || !x.z))) throw error(what + "a positions array is NULL");
  for (int k = 0; k < n; ++k)
    if (!columns[k].data) throw error(what + "columns[" + std::to_string(k) + "].data is NULL");
}

/// Each particle's owner, agreed (hs::migrate's one agreement), with the positions of `F`.
template <class F>
detail::departures owners_of(const cartesian_grid& g, const domain& dom, const hs_positions& x, std::size_t count,
                             const std::vector<std::size_t>& sizes) {
  const std::size_t stride = stride_of(x);
  const auto none = [] {};
  if (!split(x))
    return detail::owners(g, dom, count, 3, sizes, detail::owner_decider(position_column<F>(x.x, stride, stride)), none);
  const detail::coordinate_arrays<F, 3> c{{position_column<F>(x.x, stride, 1), position_column<F>(x.y, stride, 1),
                                           position_column<F>(x.z, stride, 1)}};
  return detail::owners(g, dom, count, 3, sizes, detail::owner_decider(c), none);
}

/// The C arguments, checked on every rank together.
void check_arguments(const cartesian_grid& g, const hs_domain* domain, const hs_positions* x, int n,
                     const hs_column* columns, const std::size_t* count, std::size_t capacity, bool resize) {
  mpi::agree(g.comm(), [&] {
    read_domain(domain, f);
    require(count, f, "count");
    check_positions(x, *count, f);
    if (n < 0) throw error(std::string(f) + ": ncolumns must be >= 0, got " + std::to_string(n));
    if (n > 0) require(columns, f, "columns");
    for (int k = 0; k < n; ++k) check_column(columns[k], k, 0, f);  // addresses: check_addresses
    check_addresses(*x, columns, n, *count, "before");
    if (!resize && capacity < *count)
      throw error(std::string(f) + ": the capacity " + std::to_string(capacity) + " is below the count " +
                  std::to_string(*count) + " (give the particles the arrays hold, or a resize callback)");
  });
}

}  // namespace
}  // namespace haloshift::c_api

using namespace haloshift::c_api;

extern "C" {

hs_status hs_migrate(hs_grid grid, const hs_domain* domain, hs_positions* x, int ncolumns, hs_column* columns,
                     size_t* count, size_t capacity, int keep_order, hs_resize_fn resize, void* user) {
  return guarded(f, [&] {
    const hs::cartesian_grid& g = grid_of(grid, f);
    check_arguments(g, domain, x, ncolumns, columns, count, capacity, resize != nullptr);
    const hs::domain dom = read_domain(domain, f);
    std::vector<hs::detail::byte_column> arrays = byte_columns(*x, columns, ncolumns);
    std::vector<std::size_t> sizes;
    for (const hs::detail::byte_column& c : arrays) sizes.push_back(c.bytes);
    const hs::detail::departures where = with_float(x->type, f, [&](auto v) {
      return owners_of<decltype(v)>(g, dom, *x, *count, sizes);
    });
    // With a callback the arrivals need no room now (a capacity is checked on every rank otherwise).
    const hs::detail::migrate_options how{.count = *count,
                                          .resize = resize ? std::function<void(std::size_t)>([](std::size_t) {}) : nullptr,
                                          .capacity = capacity,
                                          .keep_order = keep_order != 0};
    hs::detail::arrivals got = hs::detail::send_departures(g, where, how, arrays);
    const std::size_t after = got.kept + got.count;
    if (resize) {
      // Local from here: a failure leaves this rank's arrivals unwritten, no other rank waits.
      if (const int code = resize(after, got.kept, x, columns, ncolumns, user); code != 0)
        throw hs::error(std::string(f) + ": the resize callback returned " + std::to_string(code) + " for " +
                        std::to_string(after) + " particles; the " + std::to_string(got.count) +
                        " arrivals are lost");
      check_addresses(*x, columns, ncolumns, after, "after the resize callback");
      arrays = byte_columns(*x, columns, ncolumns);
    }
    std::size_t record = 0;
    for (const hs::detail::byte_column& c : arrays) record += c.bytes;
    hs::detail::unpack_arrivals(got.in, got.from, arrays, record, got.kept);
    *count = after;
  });
}

}  // extern "C"

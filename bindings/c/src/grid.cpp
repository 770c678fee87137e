// SPDX-License-Identifier: BSD-3-Clause
/// @file grid.cpp
/// @brief The C interface's errors, version and grids.

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core.hpp"

namespace hs = haloshift;

namespace haloshift::c_api {

namespace {
/// This thread's last error text (hs_last_error). A static buffer, so that storing it cannot fail.
thread_local char last_error[1024] = "";
}  // namespace

void copy_text(char* out, std::size_t capacity, const std::string& text) noexcept {
  if (!out || capacity == 0) return;
  const std::size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

hs_status fail(hs_status code, const char* text) noexcept {
  std::snprintf(last_error, sizeof last_error, "%s", text ? text : "");
  return code;
}

hs_status status_of(const error& e) noexcept {
  if (e.mpi_code() != MPI_SUCCESS) return HS_ERR_MPI;
  const std::string_view what = e.what();
  // A NULL argument found on one rank travels to the others as text (mpi::agree): the same code everywhere.
  if (what.find(" is NULL") != std::string_view::npos) return HS_ERR_NULL;
  if (what.find("MPI_") != std::string_view::npos && what.find(" failed: ") != std::string_view::npos)
    return HS_ERR_MPI;
  return HS_ERR_ARGUMENT;
}

std::size_t type_size(int type, const char* function) {
  return with_type(type, function, [](auto v) { return sizeof(v); });
}

namespace {
/// grid_options from the C options, every value checked (collectively: the constructor agrees them).
grid_options options_from(const hs_grid_options& o) {
  if (o.ndims < 1 || o.ndims > 3)
    throw error("hs_grid_create: options->ndims must be 1, 2 or 3, got " + std::to_string(o.ndims));
  grid_options g;
  const auto n = static_cast<std::size_t>(o.ndims);
  g.dims.assign(o.dims, o.dims + n);
  g.periodic.resize(n);
  bool lengths = false;
  for (std::size_t d = 0; d < n; ++d) {
    g.periodic[d] = o.periodic[d] != 0;
    lengths = lengths || o.lengths[d] != 0;
  }
  if (lengths) g.lengths.assign(o.lengths, o.lengths + n);
  if (o.first_fastest != 0 && o.first_fastest != 1)
    throw error("hs_grid_create: options->first_fastest must be 0 or 1, got " + std::to_string(o.first_fastest));
  g.order = static_cast<grid_options::rank_order>(o.first_fastest);  // the same values (core.hpp)
  g.remainder = static_cast<grid_options::remainder_cells>(o.remainder);  // checked by the grid (agreed)
  return g;
}
}  // namespace

}  // namespace haloshift::c_api

using haloshift::c_api::guarded;
using haloshift::c_api::require;

extern "C" {

const char* hs_last_error(void) { return haloshift::c_api::last_error; }
const char* hs_version(void) { return HALOSHIFT_VERSION_STRING; }

void hs_grid_options_init(hs_grid_options* options) {
  if (!options) return;
  *options = hs_grid_options{};
  options->ndims = 3;
  for (int d = 0; d < 3; ++d) options->periodic[d] = 1;
}

hs_status hs_grid_create(MPI_Comm comm, const hs_grid_options* options, hs_grid* grid) {
  return guarded("hs_grid_create", [&] {
    hs_grid_options o;
    hs_grid_options_init(&o);
    if (options) o = *options;
    if (comm == MPI_COMM_NULL) throw hs::error("hs_grid_create: comm is MPI_COMM_NULL");
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) throw hs::error("hs_grid_create: MPI is not initialized (call MPI_Init first)");
    // A check of these C options on one rank only would leave the others in the grid's agreement:
    // the options are converted inside it.
    hs::grid_options g;
    hs::mpi::agree(comm, [&] {
      require(grid, "hs_grid_create", "grid");
      *grid = nullptr;
      g = haloshift::c_api::options_from(o);
    });
    auto made = std::make_unique<hs_grid_s>(hs_grid_s{hs::cartesian_grid(comm, g)});
    *grid = made.release();
  });
}

hs_status hs_grid_create_f(MPI_Fint comm, const hs_grid_options* options, hs_grid* grid) {
  return hs_grid_create(MPI_Comm_f2c(comm), options, grid);
}

hs_status hs_grid_free(hs_grid* grid) {
  return guarded("hs_grid_free", [&] {
    require(grid, "hs_grid_free", "grid (the address of the handle)");
    std::unique_ptr<hs_grid_s> gone(*grid);
    *grid = nullptr;
  });
}

hs_status hs_grid_info(hs_grid grid, int* ndims, int* rank, int* size, int dims[3], int coords[3], int periodic[3]) {
  return guarded("hs_grid_info", [&] {
    const hs::cartesian_grid& g = haloshift::c_api::grid_of(grid, "hs_grid_info");
    if (ndims) *ndims = g.ndims();
    if (rank) *rank = g.rank();
    if (size) *size = g.size();
    for (int d = 0; d < 3; ++d) {
      if (dims) dims[d] = g.dim(d);
      if (coords) coords[d] = g.coords()[d];
      if (periodic) periodic[d] = d < g.ndims() && g.periodic(d) ? 1 : 0;
    }
  });
}

hs_status hs_grid_comm(hs_grid grid, MPI_Comm* comm) {
  return guarded("hs_grid_comm", [&] {
    const hs::cartesian_grid& g = haloshift::c_api::grid_of(grid, "hs_grid_comm");
    require(comm, "hs_grid_comm", "comm");
    *comm = g.comm();
  });
}

hs_status hs_grid_comm_f(hs_grid grid, MPI_Fint* comm) {
  return guarded("hs_grid_comm_f", [&] {
    const hs::cartesian_grid& g = haloshift::c_api::grid_of(grid, "hs_grid_comm_f");
    require(comm, "hs_grid_comm_f", "comm");
    *comm = MPI_Comm_c2f(g.comm());
  });
}

}  // extern "C"

// SPDX-License-Identifier: BSD-3-Clause
/// @file model.cpp
/// @brief The C interface's model layer: Auto's chooser, explain for field and particle plans
/// (the agreed model), and the calibration file Auto reads.

#include <haloshift/auto.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core.hpp"

namespace hs = haloshift;

namespace haloshift::c_api {

void install_auto() { detail::install_auto_chooser(); }

namespace {
/// Copies the ranking into the caller's `out` (at most `capacity`) and their number into `*count`.
/// Strategy names are registered at run time: one too long for hs_prediction raises rather than
/// being cut.
void write_ranking(const std::vector<prediction>& ranked, hs_prediction* out, int capacity, int* count) {
  for (const prediction& p : ranked)
    if (p.strategy.size() >= sizeof out->strategy)
      throw error("explain: strategy name '" + p.strategy + "' has " + std::to_string(p.strategy.size()) +
                  " characters, hs_prediction.strategy holds " + std::to_string(sizeof out->strategy - 1));
  *count = static_cast<int>(ranked.size());
  for (int i = 0; i < capacity && i < *count; ++i) {
    const prediction& p = ranked[static_cast<std::size_t>(i)];
    copy_text(out[i].strategy, sizeof out[i].strategy, p.strategy);
    for (int d = 0; d < 3; ++d) out[i].team[d] = p.team[d];
    out[i].shared_memory = p.inside_nodes == "shm";
    out[i].seconds = p.seconds;
  }
}

/// Raises unless the output arguments of an explain call are usable.
void check_output(const char* function, const hs_prediction* out, int capacity, const int* count) {
  require(count, function, "count");
  if (capacity < 0) throw error(std::string(function) + ": capacity must be >= 0, got " + std::to_string(capacity));
  if (capacity > 0) require(out, function, "out");
}

/// What Auto ranks for a plan of `request` on `g` (collective): the agreed model on the grid's nodes,
/// with the shared-memory rows where the plan could take the path, only the rows it can run.
std::vector<prediction> auto_ranking(const cartesian_grid& g, const detail::auto_request& request) {
  const hockney model = agreed_model(g.comm());
  const detail::node_placement nodes = detail::auto_placement(g, model);
  return detail::runnable_rows(
      detail::rank_candidates(request.grid, request.r, request.bytes, model, request.mode, request.payload, {}, "explain",
                              nullptr, nodes, detail::prices_shared_memory(model, request)),
      request.shared_memory_asked);
}

/// The C domain as a haloshift::domain (even split).
domain domain_of(const hs_domain& d) {
  domain dom;
  for (int i = 0; i < 3; ++i) {
    dom.lo[static_cast<std::size_t>(i)] = d.lo[i];
    dom.hi[static_cast<std::size_t>(i)] = d.hi[i];
  }
  return dom;
}
}  // namespace

domain read_domain(const hs_domain* d, const char* function) {
  require(d, function, "domain");
  return domain_of(*d);
}

}  // namespace haloshift::c_api

using namespace haloshift::c_api;

extern "C" {

hs_status hs_explain_field(hs_grid grid, const hs_field_spec* spec, hs_prediction* out, int capacity, int* count) {
  const char* f = "hs_explain_field";
  return guarded(f, [&] {
    const hs::cartesian_grid& g = grid_of(grid, f);
    hs::field_shape shape;
    hs::plan_options options;
    hs::mpi::agree(g.comm(), [&] {
      check_output(f, out, capacity, count);
      read_field_spec(g, "Auto", spec, shape, options, f);
    });
    shape = hs::detail::agreed_shape(g, shape, {});
    // What Auto ranks for a field plan of this spec (the same sizing, field_plan_builder::auto_sizing).
    const std::size_t element = spec->element_size ? spec->element_size : sizeof(double);
    const auto [r, bytes] = hs::detail::field_plan_builder::auto_sizing(g, shape, options, element);
    write_ranking(auto_ranking(g, {.grid = g.shape(), .r = r, .bytes = bytes, .mode = options.mode,
                                   .payload = hs::detail::payload_kind::selective,
                                   .shared_memory_asked = options.shared_memory}),
                  out, capacity, count);
  });
}

hs_status hs_explain_particles(hs_grid grid, const hs_domain* domain, const double cutoff[3], size_t count,
                               hs_prediction* out, int capacity, int* written) {
  const char* f = "hs_explain_particles";
  return guarded(f, [&] {
    const hs::cartesian_grid& g = grid_of(grid, f);
    hs::domain dom;
    hs::mpi::agree(g.comm(), [&] {
      check_output(f, out, capacity, written);
      dom = read_domain(domain, f);
      require(cutoff, f, "cutoff");
    });
    // Auto sizes by the largest count over the ranks.
    std::uint64_t largest = count;
    hs::mpi::check(MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_UINT64_T, MPI_MAX, g.comm()), "MPI_Allreduce");
    const hs::detail::particle_sizing sized = hs::detail::size_particle_blocks(
        g.shape(), dom, {cutoff[0], cutoff[1], cutoff[2]}, static_cast<std::size_t>(largest), sizeof(hs::position));
    write_ranking(auto_ranking(g, {.grid = g.shape(), .r = hs::range{sized.reach, hs::shell::full}, .bytes = sized.bytes,
                                   .payload = hs::detail::payload_kind::selective}),
                  out, capacity, written);
  });
}

hs_status hs_explain_text(const hs_prediction* predictions, int count, char* text, size_t capacity, size_t* length) {
  const char* f = "hs_explain_text";
  return guarded(f, [&] {
    if (count < 0) throw hs::error(std::string(f) + ": count must be >= 0, got " + std::to_string(count));
    if (count > 0) require(predictions, f, "predictions");
    if (capacity > 0) require(text, f, "text");
    std::string table = "rank  strategy      team     predicted\n";
    char line[128];
    for (int i = 0; i < count; ++i) {
      const hs_prediction& p = predictions[i];
      std::snprintf(line, sizeof line, "%4d  %-12.31s%s  %d %d %d  %.3f us\n", i + 1, p.strategy,
                    p.shared_memory ? " +shm" : "", p.team[0], p.team[1], p.team[2], p.seconds * 1e6);
      table += line;
    }
    if (length) *length = table.size();
    if (capacity > 0) copy_text(text, capacity, table);
  });
}

hs_status hs_use_calibration(const char* path) {
  return guarded("hs_use_calibration", [&] {
    require(path, "hs_use_calibration", "path");
    (void)hs::load_calibration(path);  // raises naming the file and what is wrong with it
    // Auto reads the file HALOSHIFT_CALIBRATION names (no other hook): point it there and forget
    // the models agreed so far, so that the next Auto plan reads this file.
    if (setenv("HALOSHIFT_CALIBRATION", path, 1) != 0)
      throw hs::error(std::string("hs_use_calibration: setenv(HALOSHIFT_CALIBRATION) failed for ") + path);
    hs::detail::forget_agreed_models();
  });
}

}  // extern "C"

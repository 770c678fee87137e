// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file calibration.hpp
/// @brief The calibration every rank of a plan agrees on: read from the file
/// (calibration_file.hpp) or measured once in process (measure.hpp).

#include <chrono>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <mpi.h>

#include "../../error.hpp"
#include "../../log.hpp"
#include "../../detail/mpi/agreement.hpp"
#include "../../detail/mpi/check.hpp"
#include "../../detail/mpi/communicator.hpp"
#include "../cost/hockney.hpp"
#include "calibration_file.hpp"
#include "fit.hpp"
#include "measure.hpp"
#include "measure_nodes.hpp"

namespace haloshift {

/// A calibration in well under a second: ping-pong over 0 B to 1 MiB, a
/// linear regression, and gamma, its growth and the cost per round from
/// short exchanges on all ranks. Where ranks share nodes (real, or pretend:
/// HALOSHIFT_NODE_SIZE) the ping-pong stays on rank 0's node and the model
/// gains the levels detail::with_node_levels measures. Collective.
inline calibration quick_calibration(MPI_Comm comm) {
  const std::vector<std::size_t> sizes{0, 64, 1024, 8192, 65536, 262144, 1048576};
  const detail::node_placement nodes = detail::node_placement_of(comm);
  int size = 0;
  mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const int inside = detail::partner_of_rank0(nodes, size, true);
  const auto samples = detail::ping_pong(comm, sizes, 20, 2, inside > 0 ? inside : 1);
  const auto means = detail::fit::means(detail::fit::fastest(samples, 0.5));
  calibration c;
  c.cost = detail::fit::linear_regression(means);
  const detail::exchange_terms x = detail::measure_exchange_terms(comm, c.cost, 256, 16, 7);
  c.cost =
      hockney(c.cost.alpha(), c.cost.beta(), x.gamma).with_gamma_growth(x.gamma_growth).with_round_delta(x.round_delta);
  double copy = detail::measure_copy_beta();
  mpi::check(MPI_Bcast(&copy, 1, MPI_DOUBLE, 0, comm), "MPI_Bcast");  // rank 0's, like everything else
  c.cost = detail::with_node_levels(comm, nodes, c.cost.with_copy_beta(copy), 16);
  c.ranks_per_node = nodes.ranks_per_node;
  c.method = "linear-regression (quick, fastest 50 %)";
  c.mpi_library = detail::mpi_library_version();
  c.host = detail::host_name();
  c.date = detail::utc_now();
  mpi::check(MPI_Comm_size(comm, &c.ranks), "MPI_Comm_size");
  c.samples = means;
  return c;
}

namespace detail {
/// Appends `h`'s numbers to `flat` (one level: its second level, if any, is the caller's).
inline void flatten_model(const hockney& h, std::vector<double>& flat) {
  const hockney::device_terms& d = h.device();
  flat.insert(flat.end(), {h.gamma(), h.copy_beta(), h.round_delta(), h.gamma_growth(), d.launch, d.pack_beta,
                           d.copy_alpha, d.copy_beta, h.shm_alpha(), static_cast<double>(h.pieces().size())});
  for (const auto& p : h.pieces()) flat.insert(flat.end(), {p.from_bytes, p.alpha, p.beta, p.gamma});
}
/// The model flatten_model wrote at `flat[at]`; moves `at` past it.
inline hockney unflatten_model(const std::vector<double>& flat, std::size_t& at) {
  constexpr std::size_t head = 10;  // the scalars, then 4 numbers per piece
  const double* x = flat.data() + at;
  std::vector<hockney::piece> pieces;
  for (std::size_t i = 0; i < static_cast<std::size_t>(x[head - 1]); ++i)
    pieces.push_back({x[head + 4 * i], x[head + 1 + 4 * i], x[head + 2 + 4 * i], x[head + 3 + 4 * i]});
  at += head + 4 * pieces.size();
  return hockney::piecewise(pieces, x[0])
      .with_copy_beta(x[1])
      .with_round_delta(x[2])
      .with_gamma_growth(x[3])
      .with_device({x[4], x[5], x[6], x[7]})
      .with_shm_alpha(x[8]);
}
/// Sends rank 0's model, both levels, to every rank: the model all ranks decide with.
inline hockney broadcast_model(MPI_Comm comm, const hockney& h) {
  std::vector<double> flat;
  flatten_model(h, flat);
  if (h.between_nodes()) flatten_model(*h.between_nodes(), flat);
  int n = static_cast<int>(flat.size());
  mpi::check(MPI_Bcast(&n, 1, MPI_INT, 0, comm), "MPI_Bcast");
  flat.resize(static_cast<std::size_t>(n));
  mpi::check(MPI_Bcast(flat.data(), n, MPI_DOUBLE, 0, comm), "MPI_Bcast");
  std::size_t at = 0;
  const hockney inside = unflatten_model(flat, at);
  return at < flat.size() ? inside.with_between_nodes(unflatten_model(flat, at)) : inside;
}
}  // namespace detail

namespace detail {
/// How Auto finds its model; the same on all ranks.
struct auto_settings {
  /// A calibration file made on another host, with another MPI library or
  /// another rank count raises an error instead of a warning.
  /// HALOSHIFT_CALIBRATION_STRICT=1 in the environment sets it too.
  bool strict_calibration = false;
};

inline auto_settings& current_auto_settings() {
  static auto_settings settings;
  return settings;
}
/// Models already agreed, per communicator group: measured at most once per process and group.
struct cached_model {
  mpi::communicator comm;  ///< our own duplicate, kept for comparison and freed with the entry
  hockney model;
};
inline std::vector<cached_model>& model_cache() {
  static std::vector<cached_model> cache;
  return cache;
}

/// Compares a loaded calibration with the running job; returns what differs ("" if nothing).
inline std::string calibration_mismatch(const calibration& c, int ranks) {
  std::string why;
  auto differs = [&](const char* what, const std::string& file, const std::string& here) {
    if (!file.empty() && file != here) why += std::string(why.empty() ? "" : "; ") + what + " '" + file + "' (here '" + here + "')";
  };
  differs("host", c.host, host_name());
  differs("MPI library", c.mpi_library, mpi_library_version());
  if (c.ranks > 0 && c.ranks != ranks)
    why += std::string(why.empty() ? "" : "; ") + "ranks " + std::to_string(c.ranks) + " (here " + std::to_string(ranks) + ")";
  return why;
}
}  // namespace detail

/// Settings Auto reads (change them on every rank alike, before building plans).
inline detail::auto_settings& auto_configuration() { return detail::current_auto_settings(); }

namespace detail {
/// Forgets the models agreed so far, freeing the duplicates of their communicators: the next Auto
/// plan reads or measures again (tests that switch calibration files between plans).
inline void forget_agreed_models() { model_cache().clear(); }
}  // namespace detail

/// The model every rank of `comm` uses (collective). Read or measured once per
/// process and communicator group, then cached, so re-neighbouring never
/// measures again and Auto's choice cannot drift between plans. Rank 0 reads
/// the file at default_calibration_path() if there is one (a problem with it
/// raises the same error everywhere) and compares its host, MPI library and
/// rank count with this job: a mismatch is a warning through the log sink
/// (log.hpp), or an error with auto_configuration().strict_calibration. Without a
/// file it measures once with quick_calibration() and says so (info).
inline hockney agreed_model(MPI_Comm comm) {
  for (const detail::cached_model& c : detail::model_cache()) {
    int same = MPI_UNEQUAL;
    mpi::check(MPI_Comm_compare(c.comm.get(), comm, &same), "MPI_Comm_compare");
    if (same == MPI_IDENT || same == MPI_CONGRUENT) return c.model;
  }
  int rank = 0, size = 0;
  mpi::check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const std::string path = default_calibration_path();
  hockney model;
  int have_file = 0;
  if (rank == 0) {
    // Something there that cannot even be looked at (permissions) is a file to report, not a reason to measure.
    std::error_code ec;
    const bool exists = std::filesystem::exists(path, ec);
    have_file = exists || (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) ? 1 : 0;
  }
  mpi::check(MPI_Bcast(&have_file, 1, MPI_INT, 0, comm), "MPI_Bcast");
  if (have_file) {
    // Rank 0 alone reads and parses the file; its error (any exception, as a
    // haloshift::error) reaches every rank through agree(), its model through
    // broadcast_model(): a file readable on one rank only cannot split the ranks.
    mpi::agree(comm, [&] {
      if (rank != 0) return;
      try {
        const calibration c = load_calibration(path);
        model = c.cost;
        if (const std::string why = detail::calibration_mismatch(c, size); !why.empty()) {
          const char* env = std::getenv("HALOSHIFT_CALIBRATION_STRICT");
          const bool strict = auto_configuration().strict_calibration || (env && std::string(env) == "1");
          const std::string text = "calibration file " + path + " was made for another job: " + why;
          if (strict) throw error(text + " (strict_calibration is set: recalibrate with haloshift-calibrate)");
          detail::log_message(log_level::warning,
                              text + "; Auto uses it anyway (haloshift-calibrate makes one for this job)");
        }
      } catch (const error&) {
        throw;
      } catch (const std::exception& e) {
        throw error("calibration file " + path + ": " + e.what());
      } catch (...) {
        throw error("calibration file " + path + ": unknown exception while loading");
      }
    });
  } else {
    const auto start = std::chrono::steady_clock::now();
    model = quick_calibration(comm).cost;
    if (rank == 0 && detail::verbose())
      detail::log_message(
          log_level::info,
          "no calibration at " + path + "; measured alpha " + std::to_string(model.alpha() * 1e6) + " us, beta " +
              std::to_string(model.beta() * 1e9) + " ns/B, gamma " + std::to_string(model.gamma() * 1e6) +
              " us, delta " + std::to_string(model.round_delta() * 1e6) + " us per round in " +
              std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()) +
              " s, once for this process (haloshift-calibrate saves one)");
  }
  model = detail::broadcast_model(comm, model);
  detail::model_cache().push_back({mpi::communicator(comm), model});
  return model;
}

}  // namespace haloshift

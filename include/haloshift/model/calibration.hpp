// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file calibration.hpp
/// @brief The calibration every rank of a plan agrees on: read from the file
/// (calibration_file.hpp) or measured once in process (measure.hpp).

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <mpi.h>

#include "../error.hpp"
#include "../mpi/agreement.hpp"
#include "../mpi/check.hpp"
#include "calibration_file.hpp"
#include "fit.hpp"
#include "hockney.hpp"
#include "measure.hpp"

namespace haloshift {

/// A calibration in well under a second: ping-pong over 0 B to 1 MiB, a
/// linear regression, and gamma, its growth and the cost per round from
/// short exchanges on all ranks. Collective.
inline calibration quick_calibration(MPI_Comm comm) {
  const std::vector<std::size_t> sizes{0, 64, 1024, 8192, 65536, 262144, 1048576};
  const auto samples = ping_pong(comm, sizes, 20);
  const auto means = fit::means(fit::fastest(samples, 0.5));
  calibration c;
  c.cost = fit::linear_regression(means);
  const exchange_terms x = measure_exchange_terms(comm, c.cost, 256, 16, 7);
  c.cost =
      hockney(c.cost.alpha(), c.cost.beta(), x.gamma).with_gamma_growth(x.gamma_growth).with_round_delta(x.round_delta);
  double copy = measure_copy_beta();
  mpi::check(MPI_Bcast(&copy, 1, MPI_DOUBLE, 0, comm), "MPI_Bcast");  // rank 0's, like everything else
  c.cost = c.cost.with_copy_beta(copy);
  c.method = "linear-regression (quick, fastest 50 %)";
  c.mpi_library = detail::mpi_library_version();
  c.host = detail::host_name();
  c.date = detail::utc_now();
  mpi::check(MPI_Comm_size(comm, &c.ranks), "MPI_Comm_size");
  c.samples = means;
  return c;
}

namespace detail {
/// Sends rank 0's model to every rank: the model all ranks decide with.
inline hockney broadcast_model(MPI_Comm comm, const hockney& h) {
  constexpr std::size_t head = 5;  // the scalars, then 4 numbers per piece
  std::vector<double> flat{h.gamma(), h.copy_beta(), h.round_delta(), h.gamma_growth(),
                           static_cast<double>(h.pieces().size())};
  for (const auto& p : h.pieces()) flat.insert(flat.end(), {p.from_bytes, p.alpha, p.beta, p.gamma});
  int n = static_cast<int>(flat.size());
  mpi::check(MPI_Bcast(&n, 1, MPI_INT, 0, comm), "MPI_Bcast");
  flat.resize(static_cast<std::size_t>(n));
  mpi::check(MPI_Bcast(flat.data(), n, MPI_DOUBLE, 0, comm), "MPI_Bcast");
  std::vector<hockney::piece> pieces;
  for (std::size_t i = 0; i < static_cast<std::size_t>(flat[head - 1]); ++i)
    pieces.push_back({flat[head + 4 * i], flat[head + 1 + 4 * i], flat[head + 2 + 4 * i], flat[head + 3 + 4 * i]});
  return hockney::piecewise(pieces, flat[0])
      .with_copy_beta(flat[1])
      .with_round_delta(flat[2])
      .with_gamma_growth(flat[3]);
}
}  // namespace detail

/// The model every rank of `comm` uses (collective): rank 0 reads the file
/// at default_calibration_path() if there is one (an unreadable or invalid
/// file raises the same error everywhere), otherwise measures once with
/// quick_calibration() and says so in one line on rank 0.
inline hockney agreed_model(MPI_Comm comm) {
  int rank = 0;
  mpi::check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const std::string path = default_calibration_path();
  hockney model;
  int have_file = 0;
  if (rank == 0) have_file = std::filesystem::exists(path) ? 1 : 0;
  mpi::check(MPI_Bcast(&have_file, 1, MPI_INT, 0, comm), "MPI_Bcast");
  if (have_file) {
    mpi::agree(comm, [&] {
      if (rank == 0) model = load_calibration(path).cost;
    });
  } else {
    const auto start = std::chrono::steady_clock::now();
    model = quick_calibration(comm).cost;
    if (rank == 0)
      std::cerr << "haloshift: no calibration at " << path << "; measured alpha " << model.alpha() * 1e6
                << " us, beta " << model.beta() * 1e9 << " ns/B, gamma " << model.gamma() * 1e6 << " us, delta "
                << model.round_delta() * 1e6 << " us per round in "
                << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                << " s (haloshift-calibrate saves one)\n";
  }
  return detail::broadcast_model(comm, model);
}

}  // namespace haloshift

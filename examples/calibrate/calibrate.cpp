// SPDX-License-Identifier: BSD-3-Clause
// haloshift-calibrate: measures this machine's Hockney parameters and writes
// the calibration file Auto reads.
//
//   mpiexec -n 2 haloshift-calibrate [--output FILE] [--fastest 0.2] [--reps 200] [--max-bytes 4194304]
//                                    [--loaded] [--rounds] [--quick] [--help] [--version]
//
// Ping-pong between ranks 0 and 1 over 0 B .. max-bytes (powers of 4), after
// warm-up; fits both ways of the Shift paper (per-size means; linear
// regression) and a two-piece fit split at the eager/rendezvous knee; gamma
// from a burst of concurrent messages (again above the knee, where every
// message needs a handshake); the speed of a rank's copies to itself; and,
// from short exchanges on all ranks (so run it on the rank count of the runs
// it is for), the gap and its growth with the burst size (bursts of 4 to
// 1024 messages in one round, spread over all other ranks) and the cost per round (a chain of rounds).
// --quick measures 10 repetitions of sizes up to 64 KiB (unless --reps or
// --max-bytes say otherwise). --fastest keeps the fastest share of each size (the Petri-net paper's 20 %
// observation). --loaded runs the ping-pong between all rank pairs (2i, 2i+1)
// at once, so messages meet the load of a real exchange, and times the copy
// speed with every rank copying at once (what packing costs where ranks share
// cores). The two-piece model (or the single line, when no
// knee is found) is written to FILE (default: the path Auto reads).
// --rounds writes instead the round table (model/calibration/round_table.hpp): per size
// from 8 B to 16 MiB (powers of 2), the time per round of a chain of 2-message
// rounds and the gap of a burst, measured on all ranks at once, with the copy
// speed of all ranks at once: the model for nodes with more ranks than cores.
// Where ranks share nodes (real ones, or pretend nodes of HALOSHIFT_NODE_SIZE
// ranks) the file gets two levels (docs/node-aware.md): ranks 0 and 1 measure
// inside a node, rank 0 and the first rank of another node between nodes
// ('between_nodes'), and a flag passed through a shared window the
// shared-memory path's latency ('shm_alpha_s').
//
// This tool is the library's own calibrator, so it calls the measurement and
// fit internals (haloshift::detail: ping-pong, fit::, measure_*, the round
// table) directly; a user calibrates through this tool or quick_calibration().
#include <cstdio>
#include <cstdlib>
#include <haloshift/auto.hpp>
#include <haloshift/haloshift.hpp>
#include <string>
#include <vector>

#include "tool.hpp"

namespace hs = haloshift;

namespace {
void progress_bar(std::size_t done, std::size_t total, std::size_t bytes) {
  const int bar = static_cast<int>(40 * done / total);
  std::fprintf(stderr, "\r[%s%s] %zu B", std::string(static_cast<std::size_t>(bar), '#').c_str(),
               std::string(static_cast<std::size_t>(40 - bar), ' ').c_str(), bytes);
  if (done == total) std::fprintf(stderr, "\n");
}

/// One-way times of every repetition and size; with `loaded`, every pair (2i, 2i+1) runs at once and
/// the slowest pair's time counts.
std::vector<hs::detail::fit::sample> measure(MPI_Comm comm, const std::vector<std::size_t>& sizes, int reps,
                                             bool loaded, bool progress) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const bool active = loaded ? rank < size - size % 2 : rank < 2;
  const int peer = rank % 2 == 0 ? rank + 1 : rank - 1;
  std::size_t largest = 1;
  for (auto s : sizes) largest = std::max(largest, s);
  std::vector<char> a(largest), b(largest);
  std::vector<hs::detail::fit::sample> out;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const int n = static_cast<int>(sizes[i]);
    for (int rep = -3; rep < reps; ++rep) {
      MPI_Barrier(comm);
      double t = 0;
      if (active && size > 1) {
        const double start = MPI_Wtime();
        if (rank % 2 == 0) {
          MPI_Send(a.data(), n, MPI_BYTE, peer, 1, comm);
          MPI_Recv(b.data(), n, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(b.data(), n, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
          MPI_Send(a.data(), n, MPI_BYTE, peer, 1, comm);
        }
        t = (MPI_Wtime() - start) / 2;
      }
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
      if (rep >= 0) out.push_back({static_cast<double>(n), t});
    }
    if (progress && rank == 0) progress_bar(i + 1, sizes.size(), sizes[i]);
  }
  return out;
}
}  // namespace

int main(int argc, char** argv) {
  return tool::mpi_main("haloshift-calibrate", argc, argv, [&](tool::context& ctx) {
    CLI::App app{
        "Measures this machine's Hockney parameters (ping-pong, gap, cost per round, copy speed) and writes "
        "the calibration file Auto reads. Run it with mpiexec on at least 2 ranks, on the rank count of "
        "the runs it is for.",
        "haloshift-calibrate"};
    tool::add_version(app);
    std::string output = hs::default_calibration_path();
    double fastest = 1.0;
    int reps = 200;
    std::size_t max_bytes = 4u << 20;
    bool loaded = false, rounds = false, quick = false;
    app.add_option("--output", output, "Calibration file to write (default: the path Auto reads)")
        ->type_name("FILE")
        ->capture_default_str();
    app.add_option("--fastest", fastest, "Keep the fastest share of each size's repetitions (e.g. 0.2)")
        ->check(tool::fraction(0, 1))
        ->capture_default_str();
    auto* reps_option = app.add_option("--reps", reps, "Repetitions per message size (default 200, --quick: 10)")
                            ->check(tool::integer(1));
    auto* bytes_option =
        app.add_option("--max-bytes", max_bytes, "Largest ping-pong message in bytes (default 4194304, --quick: 65536)")
            ->check(tool::integer(4, 1 << 30));
    app.add_flag("--loaded", loaded, "Ping-pong between all pairs of ranks at once; copy speed with all ranks copying");
    app.add_flag("--rounds", rounds, "Write the round table (for nodes with more ranks than cores)");
    app.add_flag("--quick", quick, "Few repetitions and sizes up to 64 KiB (--reps and --max-bytes still apply)");
    if (const int status = tool::parse(app, argc, argv, ctx.lead()); status >= 0) return status;
    if (quick && reps_option->count() == 0) reps = 10;
    if (quick && bytes_option->count() == 0) max_bytes = std::size_t{1} << 16;
    const int rank = ctx.rank;
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) throw hs::error("needs at least 2 ranks (mpiexec -n 2 or more), got " + std::to_string(size));
    std::vector<std::size_t> sizes{0};
    for (std::size_t s = 4; s <= max_bytes; s *= 4) sizes.push_back(s);
    auto samples = measure(MPI_COMM_WORLD, sizes, reps, loaded, true);
    if (fastest < 1.0) samples = hs::detail::fit::fastest(samples, fastest);
    const auto means_model = hs::detail::fit::per_size_means(samples);
    const auto line_model = hs::detail::fit::linear_regression(samples);
    auto [two, knee] = hs::detail::fit::two_piece(samples);
    // The eager gap, its growth and the cost per round come from exchanges of every rank at once.
    const hs::detail::exchange_terms x = hs::detail::measure_exchange_terms(MPI_COMM_WORLD, two);
    const double gamma = x.gamma;
    // Above the knee every message of a burst needs its own rendezvous handshake, so the gap is
    // measured again there, at twice the piece's first size (the round table measures its own gaps).
    auto pieces = two.pieces();
    for (std::size_t i = 1; i < pieces.size() && !rounds; ++i)
      pieces[i].gamma =
          hs::detail::measure_gamma(MPI_COMM_WORLD, two, static_cast<std::size_t>(2 * pieces[i].from_bytes));
    hs::calibration c;
    const double copy_beta =
        loaded || rounds ? hs::detail::measure_copy_beta_loaded(MPI_COMM_WORLD) : hs::detail::measure_copy_beta();
    std::vector<hs::detail::round_point> table;
    if (rounds) {
      std::vector<std::size_t> round_sizes;
      for (std::size_t s = 8; s <= (std::size_t{16} << 20); s *= 2) round_sizes.push_back(s);
      table = hs::detail::measure_round_table(MPI_COMM_WORLD, round_sizes, std::min(reps, 21), [&](std::size_t i) {
        if (rank == 0) progress_bar(i + 1, round_sizes.size(), round_sizes[i]);
      });
      c.cost = hs::detail::round_table_model(table, x.gamma_growth).with_copy_beta(copy_beta);
    } else {
      c.cost = hs::hockney::piecewise(pieces, gamma)
                   .with_copy_beta(copy_beta)
                   .with_gamma_growth(x.gamma_growth)
                   .with_round_delta(x.round_delta);
    }
    // Two levels where ranks share nodes (real, or pretend with HALOSHIFT_NODE_SIZE): ranks 0 and 1 measured
    // inside a node above (block placement), the shared-memory path's latency and the model between nodes here.
    const hs::detail::node_placement nodes = hs::detail::node_placement_of(MPI_COMM_WORLD);
    c.cost = hs::detail::with_node_levels(MPI_COMM_WORLD, nodes, c.cost, quick ? 16 : 1000);  // flag round trips
    c.ranks_per_node = nodes.ranks_per_node;
    c.knee_bytes = knee;
    c.method = std::string(rounds ? "round table" : knee > 0 ? "two-piece" : "linear-regression") +
               (loaded ? ", loaded" : "") +
               (fastest < 1.0 ? ", fastest " + std::to_string(static_cast<int>(fastest * 100)) + " %" : "");
    c.mpi_library = hs::detail::mpi_library_version();
    c.host = hs::detail::host_name();
    c.date = hs::detail::utc_now();
    c.ranks = size;
    c.samples = hs::detail::fit::means(samples);
    if (rank == 0) {
      std::printf("%-12s %14s %14s %14s\n", "bytes", "measured us", "per-size us", "regression us");
      for (const auto& s : c.samples)
        std::printf("%-12.0f %14.3f %14.3f %14.3f\n", s.bytes, s.seconds * 1e6, means_model.time(s.bytes) * 1e6,
                    line_model.time(s.bytes) * 1e6);
      std::printf("regression: alpha %.3f us, beta %.4f ns/B\n", line_model.alpha() * 1e6, line_model.beta() * 1e9);
      if (rounds) {
        std::printf("%-12s %16s %16s %16s\n", "bytes", "us per round", "gap us (burst)", "model t(m) us");
        for (const auto& p : table)
          std::printf("%-12.0f %16.3f %10.3f (%3d) %16.3f\n", p.bytes, p.per_round * 1e6, p.gap * 1e6, p.burst,
                      c.cost.time(p.bytes) * 1e6);
      }
      for (const auto& p : c.cost.pieces())
        std::printf("written piece from %.0f B: alpha %.3f us, beta %.4f ns/B, gamma %.3f us\n", p.from_bytes,
                    p.alpha * 1e6, p.beta * 1e9, c.cost.gamma(p.from_bytes) * 1e6);
      std::printf("bursts of 8 B on %d ranks, gap per message:", size);
      for (const auto& g : x.gaps) std::printf(" %.0f: %.3f us", g.bytes + 1, g.seconds * 1e6);
      std::printf("\nchain of rounds of 2 messages: %.3f us per round\n", x.round_seconds * 1e6);
      std::printf("ping-pong knee %.0f B, gamma %.3f us + %.3f ns per further message, delta %.3f us per round, "
                  "local copy %.4f ns/B -> %s\n",
                  knee, c.cost.gamma() * 1e6, x.gamma_growth * 1e9, c.cost.round_delta() * 1e6,
                  c.cost.copy_beta() * 1e9, output.c_str());
      if (const hs::hockney* b = c.cost.between_nodes())
        std::printf("between nodes (%d ranks per node): alpha %.3f us, beta %.4f ns/B, gamma %.3f us\n",
                    c.ranks_per_node, b->alpha() * 1e6, b->beta() * 1e9, b->gamma() * 1e6);
      if (c.cost.shm_alpha() > 0) std::printf("shared-memory path: %.3f us per transfer\n", c.cost.shm_alpha() * 1e6);
      hs::save_calibration(c, output);
    }
    return 0;
  });
}

#pragma once
/// @file calibration.hpp
/// @brief Measured Hockney parameters: a quick in-process ping-pong, the JSON
/// file format, and the calibration every rank of a plan agrees on.

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "../error.hpp"
#include "../mpi/agreement.hpp"
#include "../mpi/check.hpp"
#include "fit.hpp"
#include "hockney.hpp"

namespace haloshift {

/// A fitted message-time model and where it came from.
struct calibration {
  hockney cost;
  double knee_bytes = 0;  ///< eager-to-rendezvous switch found by the fit (0: none)
  std::string method;     ///< "linear-regression", "per-size-means" or "two-piece"
  std::string mpi_library, host, date;
  int ranks = 0;
  std::vector<fit::sample> samples;  ///< per-size means the fit used
};

namespace detail {
inline std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<std::size_t>(length));
  if (const auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}
inline std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}
inline std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}
}  // namespace detail

/// Where calibrations live: $HALOSHIFT_CALIBRATION, else
/// $XDG_CACHE_HOME/haloshift/calibration.json, else ~/.cache/haloshift/calibration.json.
inline std::string default_calibration_path() {
  if (const char* p = std::getenv("HALOSHIFT_CALIBRATION"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/haloshift/calibration.json";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/haloshift/calibration.json";
  return "haloshift-calibration.json";
}

inline void save_calibration(const calibration& c, const std::string& path) {
  nlohmann::json j;
  j["haloshift_calibration"] = 1;
  j["alpha_s"] = c.cost.alpha();
  j["beta_s_per_byte"] = c.cost.beta();
  j["gamma_s"] = c.cost.gamma();
  for (const auto& p : c.cost.pieces())
    j["pieces"].push_back({{"from_bytes", p.from_bytes}, {"alpha_s", p.alpha}, {"beta_s_per_byte", p.beta}});
  j["knee_bytes"] = c.knee_bytes;
  j["method"] = c.method;
  j["mpi_library"] = c.mpi_library;
  j["host"] = c.host;
  j["date"] = c.date;
  j["ranks"] = c.ranks;
  for (const auto& s : c.samples) j["samples"].push_back({s.bytes, s.seconds});
  std::error_code ignored;
  if (const auto dir = std::filesystem::path(path).parent_path(); !dir.empty())
    std::filesystem::create_directories(dir, ignored);
  std::ofstream out(path);
  if (!out) throw error("calibration file " + path + ": cannot be written");
  out << j.dump(2) << '\n';
}

/// Reads a calibration; every problem names the file and the field.
inline calibration load_calibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw error("calibration file " + path + ": cannot be read");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw error("calibration file " + path + ": not valid JSON (" + e.what() + ")");
  }
  auto number = [&](const nlohmann::json& obj, const char* field, double low, double high) {
    if (!obj.contains(field)) throw error("calibration file " + path + ": field '" + field + "' is missing");
    if (!obj[field].is_number()) throw error("calibration file " + path + ": field '" + field + "' is not a number");
    const double v = obj[field].get<double>();
    if (!(v >= low && v <= high))
      throw error("calibration file " + path + ": field '" + field + "' = " + std::to_string(v) +
                  " is out of range [" + std::to_string(low) + ", " + std::to_string(high) + "]");
    return v;
  };
  if (!j.is_object() || !j.contains("haloshift_calibration"))
    throw error("calibration file " + path + ": field 'haloshift_calibration' is missing (not a haloshift calibration)");
  calibration c;
  const double gamma = number(j, "gamma_s", 0, 1);
  if (j.contains("pieces")) {
    if (!j["pieces"].is_array() || j["pieces"].empty())
      throw error("calibration file " + path + ": field 'pieces' must be a non-empty array");
    std::vector<hockney::piece> pieces;
    for (const auto& p : j["pieces"])
      pieces.push_back({number(p, "from_bytes", 0, 1e15), number(p, "alpha_s", 0, 1), number(p, "beta_s_per_byte", 0, 1)});
    try {
      c.cost = hockney::piecewise(pieces, gamma);
    } catch (const error& e) {
      throw error("calibration file " + path + ": field 'pieces': " + std::string(e.what()).substr(11));
    }
  } else {
    c.cost = hockney(number(j, "alpha_s", 0, 1), number(j, "beta_s_per_byte", 0, 1), gamma);
  }
  c.knee_bytes = j.value("knee_bytes", 0.0);
  c.method = j.value("method", std::string());
  c.mpi_library = j.value("mpi_library", std::string());
  c.host = j.value("host", std::string());
  c.date = j.value("date", std::string());
  c.ranks = j.value("ranks", 0);
  return c;
}

/// Ping-pong between ranks 0 and 1 of `comm` (with one rank: messages to
/// itself). Collective; every rank gets the one-way times of every round trip.
inline std::vector<fit::sample> ping_pong(MPI_Comm comm, const std::vector<std::size_t>& sizes, int repetitions,
                                          int warmup = 2) {
  int rank = 0, size = 0;
  mpi::check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const int peer = size > 1 ? 1 - rank : rank;
  std::vector<double> times;
  std::size_t largest = 1;
  for (std::size_t s : sizes) largest = std::max(largest, s);
  std::vector<char> buffer(largest), back(largest);
  for (std::size_t bytes : sizes)
    for (int rep = -warmup; rep < repetitions; ++rep) {
      double t = 0;
      if (rank <= 1 && (size > 1 || rank == 0)) {
        const int n = static_cast<int>(bytes);
        const double start = MPI_Wtime();
        if (size == 1) {
          MPI_Request r[2];
          MPI_Irecv(back.data(), n, MPI_BYTE, peer, 7, comm, &r[0]);
          MPI_Isend(buffer.data(), n, MPI_BYTE, peer, 7, comm, &r[1]);
          MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        } else if (rank == 0) {
          MPI_Send(buffer.data(), n, MPI_BYTE, peer, 7, comm);
          MPI_Recv(back.data(), n, MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(back.data(), n, MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE);
          MPI_Send(buffer.data(), n, MPI_BYTE, peer, 7, comm);
        }
        t = (MPI_Wtime() - start) / (size == 1 ? 1 : 2);
      }
      if (rep >= 0 && rank == 0) times.push_back(t);
    }
  std::vector<double> flat(times.size());
  int count = static_cast<int>(times.size());
  mpi::check(MPI_Bcast(&count, 1, MPI_INT, 0, comm), "MPI_Bcast");
  times.resize(static_cast<std::size_t>(count));
  mpi::check(MPI_Bcast(times.data(), count, MPI_DOUBLE, 0, comm), "MPI_Bcast");
  std::vector<fit::sample> out;
  std::size_t i = 0;
  for (std::size_t bytes : sizes)
    for (int rep = 0; rep < repetitions; ++rep) out.push_back({static_cast<double>(bytes), times[i++]});
  return out;
}

/// The injection gap: rank 0 posts `burst` messages of `bytes` at once to
/// rank 1; gamma = (burst time - single time - (burst - 1) beta m) / (burst - 1).
inline double measure_gamma(MPI_Comm comm, const hockney& single, std::size_t bytes = 8, int burst = 16,
                            int repetitions = 50) {
  int rank = 0, size = 0;
  mpi::check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  mpi::check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  double best = 1e30;
  if (size > 1 && rank <= 1) {
    std::vector<char> data(bytes * static_cast<std::size_t>(burst));
    std::vector<MPI_Request> req(static_cast<std::size_t>(burst));
    char ack = 0;
    for (int rep = 0; rep < repetitions; ++rep) {
      const double start = MPI_Wtime();
      for (int i = 0; i < burst; ++i) {
        char* p = data.data() + bytes * static_cast<std::size_t>(i);
        if (rank == 0)
          MPI_Isend(p, static_cast<int>(bytes), MPI_BYTE, 1, 8, comm, &req[static_cast<std::size_t>(i)]);
        else
          MPI_Irecv(p, static_cast<int>(bytes), MPI_BYTE, 0, 8, comm, &req[static_cast<std::size_t>(i)]);
      }
      MPI_Waitall(burst, req.data(), MPI_STATUSES_IGNORE);
      // Close the loop so the time covers arrival, as a ping-pong's does.
      if (rank == 1) MPI_Send(&ack, 1, MPI_BYTE, 0, 9, comm);
      if (rank == 0) MPI_Recv(&ack, 1, MPI_BYTE, 1, 9, comm, MPI_STATUS_IGNORE);
      best = std::min(best, MPI_Wtime() - start - single.time(1));
    }
  }
  mpi::check(MPI_Bcast(&best, 1, MPI_DOUBLE, 0, comm), "MPI_Bcast");
  if (size == 1) return single.alpha();
  const double gap = (best - single.time(static_cast<double>(bytes)) -
                      (burst - 1) * single.beta(static_cast<double>(bytes)) * static_cast<double>(bytes)) /
                     (burst - 1);
  return std::clamp(gap, 0.0, single.alpha());
}

/// A calibration in well under a second: ping-pong over 0 B to 1 MiB, a
/// linear regression, and gamma from a burst. Collective.
inline calibration quick_calibration(MPI_Comm comm) {
  const std::vector<std::size_t> sizes{0, 64, 1024, 8192, 65536, 262144, 1048576};
  const auto samples = ping_pong(comm, sizes, 20);
  const auto means = fit::means(fit::fastest(samples, 0.5));
  calibration c;
  c.cost = fit::linear_regression(means);
  c.cost = hockney(c.cost.alpha(), c.cost.beta(), measure_gamma(comm, c.cost));
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
  std::vector<double> flat{h.gamma(), static_cast<double>(h.pieces().size())};
  for (const auto& p : h.pieces()) flat.insert(flat.end(), {p.from_bytes, p.alpha, p.beta});
  int n = static_cast<int>(flat.size());
  mpi::check(MPI_Bcast(&n, 1, MPI_INT, 0, comm), "MPI_Bcast");
  flat.resize(static_cast<std::size_t>(n));
  mpi::check(MPI_Bcast(flat.data(), n, MPI_DOUBLE, 0, comm), "MPI_Bcast");
  std::vector<hockney::piece> pieces;
  for (std::size_t i = 0; i < static_cast<std::size_t>(flat[1]); ++i)
    pieces.push_back({flat[2 + 3 * i], flat[3 + 3 * i], flat[4 + 3 * i]});
  return hockney::piecewise(pieces, flat[0]);
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
                << " us, beta " << model.beta() * 1e9 << " ns/B, gamma " << model.gamma() * 1e6 << " us in "
                << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                << " s (haloshift-calibrate saves one)\n";
  }
  return detail::broadcast_model(comm, model);
}

}  // namespace haloshift

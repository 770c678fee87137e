// SPDX-License-Identifier: BSD-3-Clause
// haloshift_smpi_check: the cost model against SimGrid's SMPI. Runs real
// exchanges of every strategy and protocol on a simulated cluster and compares
// each one's simulated time with what explain() predicts for the same grid,
// k and block size, with the Hockney parameters of the platform the
// simulation runs on:
//
//   alpha = L + e / B,   beta = 1 / B,   gamma = e / B,
//
// L and B the latency and bandwidth of a route (read from the platform), e
// the envelope SMPI adds to every message (16 bytes in SimGrid 3.32). A
// message of m bytes then takes L + (m + e) / B in the simulation and
// alpha + beta m in the model, and a burst of n takes L + n (m + e) / B and
// alpha + (n - 1) gamma + n beta m: the same. This holds on the platform and
// with the configuration scripts/smpi_crosscheck sets up (docs/smpi.md); the
// driver prints what it finds so a run elsewhere shows what differs.
//
//   smpirun -np 27 -platform cluster.xml -hostfile hosts ./haloshift_smpi_check
//           [--k 1,2] [--bytes 64,4K,32K,256K] [--strategies Shift,TeamShift,...]
//           [--protocols overlapping,rendezvous] [--tolerance 0.02] [--grid PxQxR] ...
//
// Every exchange starts on all ranks at the same simulated instant (each rank
// sleeps until an agreed time) and its time is the last rank's finish minus
// that instant: the makespan explain() predicts. The simulation is
// deterministic, so one exchange after a warm-up is the measurement (--reps
// more check that). Exit status 1 when a ratio simulated / predicted leaves
// [1 - tolerance, 1 + tolerance], a ranking differs or a halo arrives wrong.
#include <mpi.h>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <xbt/config.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <haloshift/auto.hpp>
#include <haloshift/haloshift.hpp>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "option_lists.hpp"
#include "tool.hpp"

namespace hs = haloshift;

namespace {

using tool::bad;
using tool::dims_of;
using tool::k_list;
using tool::split;

/// Block sizes as byte counts ("64,4K,256K", or a range as in haloshift-advise).
std::vector<std::size_t> size_list(const std::string& text) {
  std::vector<std::size_t> out;
  for (double b : tool::size_list(text)) out.push_back(static_cast<std::size_t>(b));
  return out;
}

/// NodeAggregate on the platform's nodes (hosts in blocks of --node-size, as the model places them). The
/// grid's own nodes are the ranks that share memory, and SMPI gives every rank a host of its own, so
/// MPI_COMM_TYPE_SHARED (and pretend nodes inside it) knows no node of the platform: the driver runs
/// NodeAggregate's schedule on the platform's nodes under a name of its own.
struct PlatformNodeAggregate {
  static constexpr std::string_view name = "NodeAggregateOnPlatform";
  static constexpr bool blocks_only = true;
  static inline int node_size = 1;
  static hs::schedule make_schedule(const hs::grid_shape& g, const hs::range& r) {
    auto node_of = std::make_shared<std::vector<int>>();
    for (int rank = 0; rank < g.size(); ++rank) node_of->push_back(rank / node_size);
    return hs::NodeAggregate::make_schedule(g, r, {.node_of = node_of});
  }
};

const std::vector<std::string> all_strategies{"Shift",       "TeamShift",        "SingleHop",
                                              "TtlMultiHop", "NeighborAlltoall", "NodeAggregate"};

std::vector<std::string> strategy_list(const std::string& text) {
  std::vector<std::string> out = split(text, ',');
  for (const auto& s : out)
    if (std::find(all_strategies.begin(), all_strategies.end(), s) == all_strategies.end())
      bad("unknown strategy '" + s + "' (Shift, TeamShift, SingleHop, TtlMultiHop, NeighborAlltoall, NodeAggregate)");
  return out;
}

std::vector<hs::protocol> protocol_list(const std::string& text) {
  std::vector<hs::protocol> out;
  for (const auto& p : split(text, ',')) {
    if (p == "overlapping") out.push_back(hs::protocol::overlapping);
    else if (p == "rendezvous") out.push_back(hs::protocol::rendezvous);
    else bad("unknown protocol '" + p + "' (overlapping, rendezvous)");
  }
  return out;
}

std::string dims_label(const hs::grid_shape& g) {
  std::string out;
  for (int d = 0; d < g.ndims(); ++d) out += (d ? "x" : "") + std::to_string(g.dim(d));
  return out;
}

const char* name_of(hs::protocol p) { return p == hs::protocol::rendezvous ? "rendezvous" : "overlapping"; }

std::string size_label(std::size_t bytes) {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

/// What the simulation's platform and configuration give the model: per level (0: inside a node, 1:
/// between nodes) the latency and bandwidth of its routes (all of a level checked equal).
struct platform_model {
  double latency[2] = {0, 0}, bandwidth[2] = {0, 0};
  bool seen[2] = {false, false};  ///< whether routes of the level exist
  std::string route;              ///< rank 0 to rank 1, for the header
};

std::string policy_name(simgrid::s4u::Link::SharingPolicy p) {
  using P = simgrid::s4u::Link::SharingPolicy;
  switch (p) {
    case P::SHARED: return "SHARED";
    case P::FATPIPE: return "FATPIPE";
    case P::SPLITDUPLEX: return "SPLITDUPLEX";
    default: return "other";
  }
}

/// The index of host "h<i>" (the hostfile puts rank i there).
int host_index(const simgrid::s4u::Host* h) {
  const std::string& name = h->get_name();
  if (name.size() < 2 || name[0] != 'h' || name.find_first_not_of("0123456789", 1) != std::string::npos)
    throw hs::error("host '" + name + "' is not named h<rank> (scripts/smpi_crosscheck's platform)");
  return std::stoi(name.substr(1));
}

/// The route from `from` to `to`: its latency, its narrowest bandwidth, and its links as text.
std::pair<double, double> route_of(const simgrid::s4u::Host* from, const simgrid::s4u::Host* to, std::string* text) {
  std::vector<simgrid::s4u::Link*> links;
  double latency = 0, bandwidth = 1e300;
  from->route_to(to, links, &latency);
  for (const auto* l : links) {
    bandwidth = std::min(bandwidth, l->get_bandwidth());
    if (!text) continue;
    char line[256];
    std::snprintf(line, sizeof line, " %s (%g B/s, %g s, %s)", l->get_cname(), l->get_bandwidth(), l->get_latency(),
                  policy_name(l->get_sharing_policy()).c_str());
    *text += line;
  }
  return {latency, bandwidth};
}

/// Latency and bandwidth of the routes between all hosts of the platform, per level: hosts h<i> and
/// h<j> share a node when i / node_size == j / node_size (node_size <= 1: every route between nodes).
/// Rank 0 reads them, all ranks get them (collective); throws unless the routes of each level agree.
platform_model read_platform(MPI_Comm comm, int node_size) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  platform_model out;
  double values[6] = {0, 0, 0, 0, 0, 0};  // per level: latency, bandwidth, seen
  std::string failure;
  if (rank == 0) {
    const std::vector<simgrid::s4u::Host*> hosts = simgrid::s4u::Engine::get_instance()->get_all_hosts();
    double low[2][2] = {{1e300, 1e300}, {1e300, 1e300}}, high[2][2] = {{0, 0}, {0, 0}};  // [level][latency, bandwidth]
    for (const auto* from : hosts)
      for (const auto* to : hosts) {
        if (from == to) continue;
        const int a = host_index(from), b = host_index(to);
        const int level = node_size > 1 && a / node_size == b / node_size ? 0 : 1;
        const bool first = a == 0 && b == 1;
        const auto [latency, bandwidth] = route_of(from, to, first ? &out.route : nullptr);
        if (first) out.route = from->get_name() + " -> " + to->get_name() + ":" + out.route;
        values[3 * level + 2] = 1;
        low[level][0] = std::min(low[level][0], latency), high[level][0] = std::max(high[level][0], latency);
        low[level][1] = std::min(low[level][1], bandwidth), high[level][1] = std::max(high[level][1], bandwidth);
      }
    for (int level = 0; level < 2; ++level) {
      values[3 * level] = low[level][0], values[3 * level + 1] = low[level][1];
      if (values[3 * level + 2] > 0 &&
          (high[level][0] > low[level][0] * (1 + 1e-12) || high[level][1] > low[level][1] * (1 + 1e-12)))
        failure = std::string("the platform's routes ") + (level ? "between" : "inside") + " nodes differ (latency " +
                  std::to_string(low[level][0]) + " to " + std::to_string(high[level][0]) + " s, bandwidth " +
                  std::to_string(low[level][1]) + " to " + std::to_string(high[level][1]) +
                  " B/s); the comparison needs one latency and one bandwidth per level";
    }
  }
  int failed = !failure.empty();
  MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
  if (failed) throw hs::error(rank == 0 ? failure : "the platform's routes differ");
  MPI_Bcast(values, 6, MPI_DOUBLE, 0, comm);
  for (int level = 0; level < 2; ++level) {
    out.latency[level] = values[3 * level];
    out.bandwidth[level] = values[3 * level + 1];
    out.seen[level] = values[3 * level + 2] > 0;
  }
  return out;
}

/// The SMPI configuration items the mapping onto the model depends on, as "name=value; ...", and
/// whether each has the value the mapping assumes.
std::string configuration(std::vector<std::string>& differs) {
  namespace cfg = simgrid::config;
  std::string out;
  auto show = [&](const std::string& name, const std::string& value, bool expected) {
    out += (out.empty() ? "" : " ") + name + "=" + value;
    if (!expected) differs.push_back(name + "=" + value);
  };
  auto text = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return std::string(b);
  };
  const std::string model = cfg::get_value<std::string>("network/model");
  show("network/model", model, true);
  const std::string bw = cfg::get_value<std::string>("smpi/bw-factor");
  const std::string lat = cfg::get_value<std::string>("smpi/lat-factor");
  show("smpi/bw-factor", bw, model != "SMPI" || bw == "0:1" || bw == "1");
  show("smpi/lat-factor", lat, model != "SMPI" || lat == "0:1" || lat == "1");
  for (const char* name : {"smpi/os", "smpi/ois", "smpi/or"}) {
    const std::string v = cfg::get_value<std::string>(name);
    show(name, v, v.find_first_not_of("0:.") == std::string::npos);
  }
  const bool computation = cfg::get_value<bool>("smpi/simulate-computation");
  show("smpi/simulate-computation", computation ? "yes" : "no", !computation);
  const int detached = cfg::get_value<int>("smpi/send-is-detached-thresh");
  show("smpi/send-is-detached-thresh", std::to_string(detached), detached == 0);
  const int async = cfg::get_value<int>("smpi/async-small-thresh");
  show("smpi/async-small-thresh", std::to_string(async), async == 0);
  const bool cross = cfg::get_value<bool>("network/crosstraffic");
  show("network/crosstraffic", cross ? "yes" : "no", !cross);
  const double wtime = cfg::get_value<double>("smpi/wtime");
  show("smpi/wtime", text(wtime), wtime == 0);
  return out;
}

/// One strategy to run: a registered name and TeamShift's team.
struct variant {
  std::string strategy;
  int team = 0;  ///< TeamShift's team size (the same along every dimension it divides), else 0
  std::string label() const { return team ? strategy + " c=" + std::to_string(team) : strategy; }
};

/// Block `i` of rank `r`'s data: the pattern every receiver checks.
unsigned char pattern(int r, std::size_t i) { return static_cast<unsigned char>(r * 131 + static_cast<int>(i % 251) * 7); }

/// Competition ranks (1, 2, 2, 4): times within a relative 1e-9 tie.
std::vector<int> ranks_of(const std::vector<double>& t) {
  std::vector<int> out(t.size(), 1);
  for (std::size_t i = 0; i < t.size(); ++i)
    for (std::size_t j = 0; j < t.size(); ++j)
      if (t[j] < t[i] * (1 - 1e-9)) ++out[i];
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  return tool::mpi_main("haloshift_smpi_check", argc, argv, [&](tool::context& ctx) {
    CLI::App app{
        "The cost model against SimGrid's SMPI: runs every strategy and protocol on the simulated platform, "
        "times one exchange (simulated time, all ranks starting together, the last one's finish) and "
        "compares it with explain()'s prediction for alpha = L + e/B, beta = 1/B, gamma = e/B (L, B: the "
        "platform's route latency and bandwidth; e: SMPI's envelope per message). Run it under smpirun; "
        "scripts/smpi_crosscheck sets up the platform and configuration (docs/smpi.md).",
        "haloshift_smpi_check"};
    tool::add_version(app);
    std::string ks = "1,2", sizes = "64,4K,32K,256K";
    std::string strategies = "Shift,TeamShift,SingleHop,TtlMultiHop,NeighborAlltoall,NodeAggregate";
    std::string protocols = "overlapping,rendezvous", grid_text, teams = "all";
    double tolerance = 0.02, envelope = 16, max_memory_mib = 8192;
    int reps = 1, node_size = 0;
    bool header = true;
    app.add_option("--k", ks, "Neighbourhood widths")
        ->check(tool::parses(k_list))
        ->type_name("K1,K2,...")
        ->capture_default_str();
    app.add_option("--bytes", sizes, "Block sizes per rank (suffix K or M)")
        ->check(tool::parses(size_list))
        ->type_name("S1,S2,...")
        ->capture_default_str();
    app.add_option("--strategies", strategies, "Strategies to run")
        ->check(tool::parses(strategy_list))
        ->type_name("NAMES")
        ->capture_default_str();
    app.add_option("--protocols", protocols, "Protocols: overlapping, rendezvous")
        ->check(tool::parses(protocol_list))
        ->type_name("NAMES")
        ->capture_default_str();
    app.add_option("--team", teams, "TeamShift team sizes: 'all' (every one explain() ranks) or C1,C2,...")
        ->check(tool::parses([](const std::string& t) { return t == "all" ? std::vector<int>{} : k_list(t); }))
        ->type_name("all|C1,...")
        ->capture_default_str();
    app.add_option("--grid", grid_text, "Ranks per dimension, PxQxR (default: MPI_Dims_create, 3D, periodic)")
        ->check(tool::parses(dims_of))
        ->type_name("PxQxR");
    app.add_option("--tolerance", tolerance, "Largest accepted |simulated / predicted - 1|")
        ->check(tool::fraction(0, 10))
        ->capture_default_str();
    app.add_option("--envelope", envelope, "Bytes SMPI adds to every message (SimGrid 3.32: 16)")
        ->check(CLI::Range(0.0, 1e6).description(""))
        ->type_name("BYTES")
        ->capture_default_str();
    app.add_option("--reps", reps, "Timed exchanges per case (the simulation is deterministic: all must agree)")
        ->check(tool::integer(1, 100))
        ->capture_default_str();
    app.add_option("--max-memory-mib", max_memory_mib,
                   "Skip cases that would need more memory than this, estimated as 3 halos per rank (all ranks are in one process)")
        ->check(CLI::Range(1.0, 1e9).description(""))
        ->type_name("MIB")
        ->capture_default_str();
    app.add_option("--node-size", node_size,
                   "Ranks per node (hosts h<i> in blocks): two levels, routes inside and between nodes")
        ->check(tool::integer(0))
        ->type_name("N");
    app.add_flag("--no-header", [&](std::int64_t) { header = false; }, "Print the table rows only");
    if (const int status = tool::parse(app, argc, argv, ctx.lead()); status >= 0) return status;
    if (ctx.lead()) hs::set_log_sink(stdout);  // the NeighborAlltoall fall-back's note

    const std::vector<int> k_values = k_list(ks);
    const std::vector<std::size_t> byte_values = size_list(sizes);
    const std::vector<std::string> names = strategy_list(strategies);
    const std::vector<hs::protocol> modes = protocol_list(protocols);
    const std::vector<int> team_values = teams == "all" ? std::vector<int>{} : k_list(teams);

    hs::grid_options options;
    if (!grid_text.empty()) {
      options.dims = dims_of(grid_text);
      options.periodic.assign(options.dims.size(), true);
    }
    hs::cartesian_grid grid(MPI_COMM_WORLD, options);
    PlatformNodeAggregate::node_size = std::max(node_size, 1);
    try {
      hs::register_strategy<PlatformNodeAggregate>(false);
    } catch (const hs::error&) {  // another rank of this process registered it (SMPI may share the registry)
    }
    const MPI_Comm comm = grid.comm();
    const int P = grid.size();

    // The model, from the platform.
    // Two levels where nodes hold several ranks (--node-size): the model inside a node from its routes,
    // the model between nodes from theirs; rank 0 to 1 (the probe) is inside a node then.
    const platform_model platform = read_platform(comm, node_size);
    const int first = platform.seen[0] ? 0 : 1;
    const auto level_model = [&](int level) {
      const double b = 1 / platform.bandwidth[level], g = envelope * b;
      return hs::hockney(platform.latency[level] + g, b, g);
    };
    const double beta = 1 / platform.bandwidth[first], gamma = envelope * beta, alpha = platform.latency[first] + gamma;
    const hs::hockney model =
        platform.seen[0] && platform.seen[1] ? level_model(0).with_between_nodes(level_model(1)) : level_model(first);
    std::vector<std::string> differs;
    const std::string config = configuration(differs);

    // A check of the mapping in the simulation itself: one message of 0 B and of 1 MiB from rank 0 to
    // rank 1, and a burst of 16 messages of 8 B, each from an agreed start.
    double start_at = 0;
    auto synchronise = [&](double margin) {
      MPI_Barrier(comm);
      double now = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, &now, 1, MPI_DOUBLE, MPI_MAX, comm);
      start_at = now + margin;
      if (MPI_Wtime() >= start_at) return false;
      simgrid::s4u::this_actor::sleep_until(start_at);
      return true;
    };
    // Times `body` from an agreed start to the last rank's end, retrying with a larger margin when a
    // rank reached the start too late (it never should: the margin is 1 ms of simulated time).
    auto timed = [&](auto&& body) {
      for (double margin = 1e-3;; margin *= 10) {
        int late = synchronise(margin) ? 0 : 1;
        body();
        double end = MPI_Wtime() - start_at;
        MPI_Allreduce(MPI_IN_PLACE, &late, 1, MPI_INT, MPI_MAX, comm);
        MPI_Allreduce(MPI_IN_PLACE, &end, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (!late) return end;
        if (margin > 100) throw hs::error("ranks could not agree on a start time");
      }
    };
    double probe[3] = {0, 0, 0};
    if (P >= 2) {
      std::vector<std::byte> buffer(1 << 20);
      std::vector<MPI_Request> requests(16);
      auto message = [&](int bytes) {
        if (grid.rank() == 0) MPI_Send(buffer.data(), bytes, MPI_BYTE, 1, 0, comm);
        if (grid.rank() == 1) MPI_Recv(buffer.data(), bytes, MPI_BYTE, 0, 0, comm, MPI_STATUS_IGNORE);
      };
      probe[0] = timed([&] { message(0); });
      probe[1] = timed([&] { message(1 << 20); });
      probe[2] = timed([&] {
        for (int i = 0; i < 16; ++i) {
          if (grid.rank() == 0) MPI_Isend(buffer.data() + 8 * i, 8, MPI_BYTE, 1, i, comm, &requests[i]);
          if (grid.rank() == 1) MPI_Irecv(buffer.data() + 8 * i, 8, MPI_BYTE, 0, i, comm, &requests[i]);
        }
        if (grid.rank() <= 1) MPI_Waitall(16, requests.data(), MPI_STATUSES_IGNORE);
      });
    }

    if (ctx.lead() && header) {
      std::printf("SMPI cross-check: %d ranks, periodic grid %s\n", P, dims_label(grid.shape()).c_str());
      std::printf("platform: latency L = %.6g s, bandwidth B = %.6g B/s (every route%s); route %s\n",
                  platform.latency[first], platform.bandwidth[first], first == 0 ? " inside a node" : "",
                  platform.route.c_str());
      if (model.between_nodes())
        std::printf("between nodes of %d ranks: latency %.6g s, bandwidth %.6g B/s: alpha %.6g us, beta %.6g ns/B\n",
                    node_size, platform.latency[1], platform.bandwidth[1], model.between_nodes()->alpha() * 1e6,
                    model.between_nodes()->beta() * 1e9);
      std::printf("configuration: %s\n", config.c_str());
      for (const auto& d : differs)
        std::printf("note: %s is not what the mapping onto the model assumes (docs/smpi.md)\n", d.c_str());
      std::printf("model: alpha = L + %g B / B = %.6g us, beta = 1 / B = %.6g ns/B, gamma = %g B / B = %.6g us, "
                  "copy_beta = 0 (no simulated computation)\n",
                  envelope, alpha * 1e6, beta * 1e9, envelope, gamma * 1e6);
      if (P >= 2) {
        const double t1 = model.time(1 << 20), burst = alpha + 15 * gamma + 16 * beta * 8;
        std::printf("probe, rank 0 to 1: 0 B %.6g us (model %.6g), 1 MiB %.6g us (model %.6g), 16 x 8 B at once "
                    "%.6g us (model %.6g)\n",
                    probe[0] * 1e6, alpha * 1e6, probe[1] * 1e6, t1 * 1e6, probe[2] * 1e6, burst * 1e6);
      }
      std::printf("tolerance %.3g %%; time of one exchange, us; rank: by simulated / by predicted time among the "
                  "strategies of one (k, bytes, protocol)\n\n",
                  tolerance * 100);
      std::printf("| ranks | grid | k | bytes | protocol | strategy | simulated us | predicted us | ratio | rank sim "
                  "| rank pred | check |\n");
      std::printf("|---:|:---|---:|---:|:---|:---|---:|---:|---:|---:|---:|:---|\n");
    }
    std::fflush(stdout);

    int cases = 0, within = 0, groups = 0, ranked_alike = 0, skipped = 0, wrong = 0;
    double worst = 0;
    const std::string grid_label = dims_label(grid.shape());
    for (int k : k_values)
      for (std::size_t bytes : byte_values)
        for (hs::protocol mode : modes) {
          const hs::offset kk{k, grid.shape().ndims() > 1 ? k : 0, grid.shape().ndims() > 2 ? k : 0};
          const hs::range range = hs::make_range(grid.shape(), kk);
          double blocks = 1;
          for (int d = 0; d < 3; ++d) blocks *= kk[d] ? 2.0 * kk[d] + 1 : 1;
          // Every rank's halo, staging and messages are in this one process: about 3 halos per rank
          // at the peak (measured: 6.2 GB at 64 ranks, k = 2, 256 KiB).
          const double mib = 3.0 * P * blocks * static_cast<double>(bytes) / (1 << 20);
          if (mib > max_memory_mib) {
            ++skipped;
            if (ctx.lead())
              std::printf("| %d | %s | %d | %s | %s | all | skipped: about %.0f MiB of halos (--max-memory-mib %.0f) "
                          "| | | | | |\n",
                          P, grid_label.c_str(), k, size_label(bytes).c_str(), name_of(mode), mib, max_memory_mib);
            continue;
          }
          // Rank 0 predicts (explain() is pure) and says which variants run.
          std::vector<hs::prediction> predicted;
          std::vector<int> wire;  // per variant: index into all_strategies, team
          if (ctx.lead()) {
            predicted = hs::explain(grid.shape(), range, static_cast<double>(bytes), model, mode, {}, std::nullopt,
                                    node_size);
            std::erase_if(predicted, [](const hs::prediction& p) { return !p.inside_nodes.empty(); });  // MPI only
            for (const auto& name : names) {
              const int id = static_cast<int>(std::find(all_strategies.begin(), all_strategies.end(), name) -
                                              all_strategies.begin());
              if (name == "NeighborAlltoall") {
                if (mode == hs::protocol::overlapping) wire.insert(wire.end(), {id, 0});
                continue;
              }
              for (const auto& p : predicted) {
                if (p.strategy != name) continue;
                const int c = name == "TeamShift" ? *std::max_element(p.team.begin(), p.team.end()) : 0;
                if (c && !team_values.empty() &&
                    std::find(team_values.begin(), team_values.end(), c) == team_values.end())
                  continue;
                wire.insert(wire.end(), {id, c});
              }
            }
          }
          int count = static_cast<int>(wire.size());
          MPI_Bcast(&count, 1, MPI_INT, 0, comm);
          wire.resize(static_cast<std::size_t>(count));
          MPI_Bcast(wire.data(), count, MPI_INT, 0, comm);
          std::vector<variant> variants;
          for (std::size_t i = 0; i < wire.size(); i += 2)
            variants.push_back({all_strategies[static_cast<std::size_t>(wire[i])], wire[i + 1]});

          std::vector<double> simulated, model_time;
          std::vector<std::string> notes;
          std::vector<std::byte> mine(bytes);
          for (std::size_t i = 0; i < bytes; ++i) mine[i] = std::byte(pattern(grid.rank(), i));
          for (const variant& v : variants) {
            hs::plan_options po;
            po.mode = mode;
            if (v.team)
              for (int d = 0; d < 3; ++d) po.team[d] = kk[d] && grid.dim(d) % v.team == 0 ? v.team : 1;
            const std::string run_as{v.strategy == "NodeAggregate" ? PlatformNodeAggregate::name : v.strategy};
            auto plan = hs::make_plan<std::byte>(grid, run_as, kk, bytes, po);
            auto halo = plan.make_halo();
            plan.forward(mine, halo);  // warm-up
            double t = 0, spread = 0;
            for (int r = 0; r < reps; ++r) {
              const double one = timed([&] { plan.forward(mine, halo); });
              if (r == 0) t = one;
              spread = std::max(spread, std::abs(one - t));
            }
            // Every block holds its owner's pattern.
            int bad_blocks = 0;
            for (const auto& b : halo)
              for (std::size_t i = 0; i < b.data.size(); ++i)
                if (b.data[i] != std::byte(pattern(b.source, i))) {
                  ++bad_blocks;
                  break;
                }
            MPI_Allreduce(MPI_IN_PLACE, &bad_blocks, 1, MPI_INT, MPI_SUM, comm);
            std::string note;
            if (bad_blocks) note += " WRONG DATA (" + std::to_string(bad_blocks) + " blocks)";
            if (spread > 1e-12 * t) note += " reps differ by " + std::to_string(spread * 1e6) + " us";
            wrong += bad_blocks > 0;
            simulated.push_back(t);
            notes.push_back(note);
            if (ctx.lead()) {
              const std::string family = v.strategy == "NeighborAlltoall" ? "SingleHop" : v.strategy;
              double p = 0;
              for (const auto& q : predicted)
                if (q.strategy == family && (!v.team || *std::max_element(q.team.begin(), q.team.end()) == v.team))
                  p = q.seconds;
              model_time.push_back(p);
            }
          }
          if (!ctx.lead()) continue;
          const std::vector<int> rank_sim = ranks_of(simulated), rank_pred = ranks_of(model_time);
          ++groups;
          ranked_alike += rank_sim == rank_pred;
          for (std::size_t i = 0; i < variants.size(); ++i) {
            const double ratio = simulated[i] / model_time[i];
            const bool ok = std::abs(ratio - 1) <= tolerance;
            ++cases;
            within += ok;
            worst = std::max(worst, std::abs(ratio - 1));
            std::string check = ok ? "ok" : "RATIO";
            if (rank_sim[i] != rank_pred[i]) check += " RANK";
            std::printf("| %d | %s | %d | %s | %s | %s | %.4f | %.4f | %.6f | %d | %d | %s%s |\n", P,
                        grid_label.c_str(), k, size_label(bytes).c_str(), name_of(mode), variants[i].label().c_str(),
                        simulated[i] * 1e6, model_time[i] * 1e6, ratio, rank_sim[i], rank_pred[i], check.c_str(),
                        notes[i].c_str());
          }
          std::fflush(stdout);
        }
    int failed = 0;
    if (ctx.lead()) {
      failed = within < cases || ranked_alike < groups || wrong > 0;
      std::printf("\nsummary, %d ranks: %d of %d cases within %.3g %% (largest deviation %.3g %%), ranking alike in %d "
                  "of %d groups, %d skipped, %d with wrong data: %s\n",
                  P, within, cases, tolerance * 100, worst * 100, ranked_alike, groups, skipped, wrong,
                  failed ? "FAILED" : "passed");
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
    return failed ? 1 : 0;
  });
}

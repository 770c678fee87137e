// SPDX-License-Identifier: BSD-3-Clause
// Block payloads in the emulated device space (plan::make_halo(space), forward /
// start_forward / reverse / start_reverse with the space first): over the block
// sweep of tests/mpi/test_halo_oracle.cpp (every strategy, every grid shape of
// the world size, periodic and not, several k including k beyond the grid,
// uniform, uneven and empty payloads), a halo and an own block in emulated
// device memory, which faults on any host access outside the executor, must
// equal, bit for bit, the oracle (support/block_oracle.hpp) and the same
// exchange in host memory: forward blocking, split phase and stream-ordered,
// reverse with std::plus<>, take_min and take_max, staged and "GPU-aware" in
// turn, both protocols, the full shell, the eighth shell and a halo pattern.
// Hidden Catch2 tag: the ctest tests device_payloads.np<n> (label device-emulate).

#include <cstring>
#include <haloshift/haloshift.hpp>
#include <haloshift/memory/emulated_device.hpp>
#include <limits>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "../support/block_oracle.hpp"
#include "../support/catch.hpp"
#include "../support/driving.hpp"
#include "../support/oracle.hpp"
#include "../support/sweep.hpp"
#include "space_oracle.hpp"

namespace {

namespace hs = haloshift;
using device = hs::memory::emulated_device;
using namespace block_oracle;

/// Emulated device memory holding a copy of a host vector (freed with it).
using device_array = space_sweeps::space_array<device, double>;

/// A halo of `plan` in host memory holding the elements of `d` (a halo of the plan in device memory).
hs::halo<double> downloaded(const hs::plan<double>& plan, const hs::halo<double>& d) {
  hs::halo<double> h = plan.make_halo();
  device::copy_to_host(h.buffer().data(), d.buffer().data(), h.buffer().size_bytes());
  return h;
}

bool same_bits(std::span<const double> a, std::span<const double> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0);
}

/// One configuration of the sweep, and the variants its index picks.
struct config {
  const sweep::shape& shape;
  int k;
  sweep::payload payload;
  std::size_t index;  ///< picks the protocol, the MPI path, the neighbourhood, the driving and the reduction

  neighbourhood hood() const {
    const neighbourhood hoods[] = {{hs::shell::full}, {hs::shell::eighth}, {hs::shell::full, hs::halo_pattern::faces}};
    return hoods[index % 3];
  }
  driving how() const { return static_cast<driving>(index / 3 % 3); }
  hs::memory::mpi_path path() const { return index % 2 ? hs::memory::mpi_path::direct : hs::memory::mpi_path::staged; }
};

/// A block sweep's exchanges of one configuration, in host memory and in the emulated device.
template <class Strategy>
class block_case {
 public:
  block_case(const hs::cartesian_grid& grid, const config& c)
      : c_(c),
        rank_(grid.rank()),
        og_(oracle_grid(c.shape)),
        k_(range_of(c.shape, c.k)),
        mine_(sweep::count_of(c.payload, rank_)),
        plan_(make(grid)) {
    for (std::size_t e = 0; e < mine_.size(); ++e) mine_[e] = value_of(rank_, e);
  }

  /// Forward blocking, split phase (driven as the index says) and stream-ordered.
  void forward() {
    const hs::halo<double> host = plan_.forward(std::span<const double>(mine_));
    REQUIRE(compare_forward(host, og_, rank_, k_, c_.hood(), c_.payload) == "");
    const device_array d(mine_);
    const std::span<const double> dmine(d.get(), mine_.size());
    hs::halo<double> blocking = plan_.make_halo(device{});
    plan_.forward(device{}, dmine, blocking);
    expect_forward("forward", blocking, host);
    hs::halo<double> split = plan_.make_halo(device{});
    drive(plan_.start_forward(device{}, dmine, split), c_.how());
    expect_forward("start_forward", split, host);
    device::queue stream;
    hs::halo<double> ordered = plan_.make_halo(device{});
    drive(plan_.start_forward(device{&stream}, dmine, ordered), c_.how());
    stream.synchronize();
    expect_forward("start_forward on a stream", ordered, host);
    // Host ranks (even) and device ranks (odd) in one exchange: the same messages.
    if (rank_ % 2 == 0) {
      CHECK(same_bits(plan_.forward(std::span<const double>(mine_)).buffer(), host.buffer()));
    } else {
      expect_forward("forward beside host ranks", plan_.forward(device{}, dmine), host);
    }
  }

  /// Reverse with `op` (its neutral element `identity`) of every holder's contributions.
  template <class Op>
  void reverse(Op op, double identity, bool on_stream) {
    hs::halo<double> contributions = plan_.make_halo();
    fill_contributions(contributions, rank_);
    hs::halo<double> in_device = plan_.make_halo(device{});
    device::copy_to_device(in_device.buffer().data(), contributions.buffer().data(),
                           contributions.buffer().size_bytes());
    std::vector<double> host = mine_;
    plan_.reverse(contributions, std::span<double>(host), op, identity);
    const device_array own(mine_);
    const std::span<double> on_device(own.get(), mine_.size());
    device::queue stream;
    if (on_stream) {
      drive(plan_.start_reverse(device{&stream}, in_device, on_device, op, identity), c_.how());
      stream.synchronize();
    } else if (c_.how() == driving::blocking) {
      plan_.reverse(device{}, in_device, on_device, op, identity);
    } else {
      drive(plan_.start_reverse(device{}, in_device, on_device, op, identity), c_.how());
    }
    const std::vector<double> got = own.read();
    INFO("reverse" << (on_stream ? " on a stream" : ""));
    CHECK(compare_reverse(got, og_, rank_, k_, c_.hood(), op) == "");
    CHECK(same_bits(got, host));
    // The partial sums left in the halo too: the same accumulator on both sides.
    CHECK(same_bits(downloaded(plan_, in_device).buffer(), contributions.buffer()));
  }

 private:
  hs::plan<double> make(const hs::cartesian_grid& grid) const {
    hs::protocol mode = hs::protocol::overlapping;
    if constexpr (!requires { Strategy::neighbor_collective; })
      if (c_.index / 2 % 2) mode = hs::protocol::rendezvous;
    const neighbourhood n = c_.hood();
    return hs::make_plan<Strategy, double>(
        grid, c_.k, mine_.size(), {.mode = mode, .kind = n.kind, .pattern = n.pattern, .device_mpi = c_.path()});
  }
  void expect_forward(const char* call, const hs::halo<double>& in_device, const hs::halo<double>& host) const {
    INFO(call);
    const hs::halo<double> got = downloaded(plan_, in_device);
    CHECK(compare_forward(got, og_, rank_, k_, c_.hood(), c_.payload) == "");
    CHECK(same_bits(got.buffer(), host.buffer()));  // transit slots included
  }

  const config& c_;
  int rank_;
  oracle::grid og_;
  oracle::coords k_;
  std::vector<double> mine_;
  hs::plan<double> plan_;
};

template <class Strategy>
void sweep_blocks() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::size_t index = 0;
  for (const sweep::shape& s : sweep::shapes(size)) {
    // Pretend nodes of 2 ranks (the last one smaller): what NodeAggregate gathers (the others ignore nodes).
    const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic, .node_sizes = {2}});
    for (int k : sweep::ks(s))
      for (sweep::payload pl : sweep::payloads()) {
        const config c{s, k, pl, index++};
        INFO(std::string(Strategy::name) + " " + s.name() + " k=" + std::to_string(k) + " " + sweep::to_string(pl) +
             c.hood().name() + " variant " + std::to_string(c.index));
        block_case<Strategy> one(grid, c);
        one.forward();
        one.reverse(std::plus<>{}, 0.0, c.index % 4 == 3);
        if (c.index % 2)
          one.reverse(hs::take_min{}, std::numeric_limits<double>::infinity(), false);
        else
          one.reverse(hs::take_max{}, -std::numeric_limits<double>::infinity(), c.index % 4 == 2);
      }
  }
  CHECK(index > 0);
}

using strategies =
    std::tuple<hs::Shift, hs::TeamShift, hs::SingleHop, hs::TtlMultiHop, hs::NeighborAlltoall, hs::NodeAggregate>;

TEMPLATE_LIST_TEST_CASE("block payloads in emulated device memory equal the oracle and host memory",
                        "[.device-emulate][blocks]", strategies) {
  sweep_blocks<TestType>();
}

TEST_CASE("a block halo's space must match the call; one-shot exchanges and copies in the space",
          "[.device-emulate][blocks]") {
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  auto plan = hs::make_plan<hs::Shift, double>(grid, 1, 2);
  const std::vector<double> mine{grid.rank() * 10.0 + 1, grid.rank() * 10.0 + 2};
  const device_array d(mine);
  const std::span<const double> dmine(d.get(), mine.size());
  hs::halo<double> host = plan.make_halo(), in_device = plan.make_halo(device{});
  CHECK_THROWS_WITH(plan.forward(std::span<const double>(mine), in_device),
                    Catch::Contains("the halo lives in device memory"));
  CHECK_THROWS_WITH(plan.forward(device{}, dmine, host), Catch::Contains("the halo lives in host memory"));
  CHECK_THROWS_WITH(plan.forward(device{}, dmine.first(1), in_device),
                    Catch::Contains("the local data has 1 elements but the plan was built for 2"));
  // The one-shot exchange in the space: the halo a plan's forward gives, in device memory.
  const hs::halo<double> once = hs::exchange<hs::Shift>(device{}, grid, 1, dmine);
  CHECK(same_bits(downloaded(plan, once).buffer(), downloaded(plan, plan.forward(device{}, dmine)).buffer()));
  CHECK(same_bits(downloaded(plan, once).buffer(), plan.forward(std::span<const double>(mine)).buffer()));
  // A copy of a device halo is a halo of its own, in device memory, with the same elements.
  plan.forward(device{}, dmine, in_device);
  const hs::halo<double> copy = in_device;
  CHECK(copy.buffer().data() != in_device.buffer().data());
  CHECK(same_bits(downloaded(plan, copy).buffer(), downloaded(plan, in_device).buffer()));
}

}  // namespace

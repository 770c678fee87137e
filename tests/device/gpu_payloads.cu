// SPDX-License-Identifier: BSD-3-Clause
// Block halos and migrate in memory::device (CUDA or HIP), without a test framework: on a 1D
// periodic grid of the ranks, forward and reverse of every block strategy and a migrate of
// padded positions with ids, each compared byte for byte with the same call in host memory.
// Every rank runs them (ranks sharing one GPU); rank 0 prints `N passed, M failed`. The
// emulated device runs the full sweeps (test_device_blocks.cpp, test_device_migrate.cpp); this
// keeps the device instantiations compiling as CUDA and HIP (ctest label hip-compile) and runs
// them where a GPU is at hand.
#include <haloshift/haloshift.hpp>
#include <haloshift/memory/device.hpp>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace {

namespace hs = haloshift;
using device = hs::memory::device;

struct tally {
  int passed = 0, failed = 0;
  void check(bool ok, const std::string& what) {
    ok ? ++passed : ++failed;
    if (!ok) std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  }
};

template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <class T>
std::vector<T> to_host(const T* d, std::size_t n) {
  std::vector<T> out(n);
  device::copy_to_host(out.data(), d, n * sizeof(T));
  return out;
}

template <class S>
void blocks(const hs::cartesian_grid& grid, int k, tally& t) {
  const int rank = grid.rank();
  std::vector<double> mine(static_cast<std::size_t>(rank % 3 + 1));
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = rank * 100.0 + static_cast<double>(i) + 0.5;
  auto plan = hs::make_plan<S, double>(grid, k, mine.size());
  const hs::halo<double> host = plan.forward(std::span<const double>(mine));
  double* d = device::allocate<double>(mine.size());
  device::copy_to_device(d, mine.data(), mine.size() * sizeof(double));
  hs::halo<double> halo = plan.make_halo(device{});
  plan.forward(device{}, std::span<const double>(d, mine.size()), halo);
  const std::vector<double> want(host.buffer().begin(), host.buffer().end());
  const std::string name = std::string(S::name) + " k=" + std::to_string(k);
  t.check(same(to_host(halo.buffer().data(), halo.buffer().size()), want), name + " forward");
  std::vector<double> own = mine;
  hs::halo<double> sums = plan.make_halo();
  std::copy(want.begin(), want.end(), sums.buffer().begin());
  plan.reverse(sums, std::span<double>(own));
  plan.reverse(device{}, halo, std::span<double>(d, mine.size()));
  t.check(same(to_host(d, mine.size()), own), name + " reverse");
  device::deallocate(d);
}

void migrate(const hs::cartesian_grid& grid, tally& t) {
  const hs::domain dom{{0, 0, 0}, {1, 1, 1}};
  const std::size_t n = 40, room = 64 * static_cast<std::size_t>(grid.size());
  std::vector<double> x(room * 4, 0.5);
  std::vector<int> id(room, -1);
  for (std::size_t i = 0; i < n; ++i) {
    x[i * 4] = static_cast<double>((grid.rank() * 7 + i * 13) % 64) / 64;  // anywhere in the domain
    id[i] = grid.rank() * 1000 + static_cast<int>(i);
  }
  double* dx = device::allocate<double>(x.size());
  int* did = device::allocate<int>(id.size());
  device::copy_to_device(dx, x.data(), x.size() * sizeof(double));
  device::copy_to_device(did, id.data(), id.size() * sizeof(int));
  for (bool keep_order : {true, false}) {
    const hs::detail::migrate_options how{.count = n, .capacity = room, .keep_order = keep_order};
    std::vector<double> hx = x;
    std::vector<int> hid = id;
    const std::size_t host_n = hs::migrate(grid, dom, how, hs::column(hx.data(), 4, 3), hs::column(hid.data()));
    device::copy_to_device(dx, x.data(), x.size() * sizeof(double));
    device::copy_to_device(did, id.data(), id.size() * sizeof(int));
    const std::size_t got = hs::migrate(device{}, grid, dom, how, hs::column(dx, 4, 3), hs::column(did));
    t.check(got == host_n && same(to_host(dx, x.size()), hx) && same(to_host(did, id.size()), hid),
            std::string("migrate") + (keep_order ? " in order" : " from the end"));
  }
  device::deallocate(dx);
  device::deallocate(did);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  tally t;
  try {
    const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
    for (int k : {1, 2, grid.size() + 1}) {
      blocks<hs::Shift>(grid, k, t);
      blocks<hs::TeamShift>(grid, k, t);
      blocks<hs::SingleHop>(grid, k, t);
      blocks<hs::TtlMultiHop>(grid, k, t);
      blocks<hs::NeighborAlltoall>(grid, k, t);
    }
    migrate(grid, t);
  } catch (const std::exception& e) {
    t.check(false, e.what());
  }
  int counts[2] = {t.passed, t.failed};
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("gpu_payloads: %d passed, %d failed\n", counts[0], counts[1]);
  MPI_Finalize();
  return counts[1] == 0 ? 0 : 1;
}

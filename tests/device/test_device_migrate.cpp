// SPDX-License-Identifier: BSD-3-Clause
// migrate in place of arrays in the emulated device space (hs::migrate(space,
// grid, dom, how, columns...)), which faults on any host access outside the
// executor: over every grid shape of the world size (periodic, not and mixed;
// displacements within the neighbours and beyond them), every layout of the
// host test (padded positions with companions, one array per coordinate, an
// array per particle, positions a member of a struct, unpadded floats), with a
// resize callback that moves the memory and with a reserved capacity, in order
// and from the end, the particles each rank holds afterwards equal the oracle
// of ../particles/migrate_in_place.hpp and, bit for bit, the same migrate in
// host memory. Hidden Catch2 tag: the ctest tests device_payloads.np<n>.

#include <algorithm>
#include <cstring>
#include <haloshift/haloshift.hpp>
#include <haloshift/memory/emulated_device.hpp>
#include <string>
#include <vector>

#include "../particles/migrate_in_place.hpp"
#include "../support/catch.hpp"
#include "../support/sweep.hpp"

namespace {

namespace hs = haloshift;
using device = hs::memory::emulated_device;
using in_place::record;

/// An array in emulated device memory: `data` is the pointer variable migrate follows, and
/// resize() moves it to new memory with the old contents, as a code's own resize would.
template <class T>
struct device_vector {
  T* data = nullptr;
  std::size_t size = 0;

  device_vector() = default;
  device_vector(const device_vector&) = delete;
  device_vector& operator=(const device_vector&) = delete;
  ~device_vector() { device::deallocate(data); }
  void assign(const std::vector<T>& host) {
    device::deallocate(std::exchange(data, device::allocate<T>(host.size())));
    size = host.size();
    device::copy_to_device(data, host.data(), size * sizeof(T));
  }
  void resize(std::size_t n) {
    std::vector<T> keep = download();
    keep.resize(n);
    assign(keep);
  }
  std::vector<T> download() const {
    std::vector<T> out(size);
    device::copy_to_host(out.data(), data, size * sizeof(T));
    return out;
  }
};

/// Each layout of the host test with its arrays in the device: load() fills the host layout and
/// copies its arrays over, run() migrates the device's and copies them back into the host layout,
/// whose at(i) reads particle `i`.
struct padded {
  in_place::padded h;
  device_vector<double> x, v;
  device_vector<int> t;
  void load(const std::vector<record>& ps, std::size_t room) {
    h.load(ps, room);
    x.assign(h.xs), v.assign(h.vs), t.assign(h.ts);
  }
  std::size_t run(const hs::cartesian_grid& g, const hs::domain& dom, hs::detail::migrate_options how) {
    if (!how.capacity) how.resize = [&](std::size_t n) { x.resize(n * 4 + 4), v.resize(n * 4 + 4), t.resize(n + 1); };
    const std::size_t n = how.capacity ? hs::migrate(device{}, g, dom, how, hs::column(+x.data, 4, 3),
                                                     hs::column(+v.data, 4, 3), hs::column(+t.data))
                                       : hs::migrate(device{}, g, dom, how, hs::column(x.data, 4, 3),
                                                     hs::column(v.data, 4, 3), hs::column(t.data));
    h.xs = x.download(), h.vs = v.download(), h.ts = t.download();
    h.x = h.xs.data(), h.v = h.vs.data(), h.t = h.ts.data();
    return n;
  }
};
struct split {
  in_place::split h;
  device_vector<float> x, y, z;
  device_vector<double> q;
  device_vector<std::int64_t> id;
  void load(const std::vector<record>& ps, std::size_t room) {
    h.load(ps, room);
    x.assign(h.x), y.assign(h.y), z.assign(h.z), q.assign(h.q), id.assign(h.id);
  }
  std::size_t run(const hs::cartesian_grid& g, const hs::domain& dom, hs::detail::migrate_options how) {
    if (!how.capacity)
      how.resize = [&](std::size_t n) { x.resize(n), y.resize(n), z.resize(n), q.resize(n), id.resize(n); };
    const std::size_t n = hs::migrate(device{}, g, dom, how, hs::coordinates(x.data, y.data, z.data),
                                      hs::column(q.data), hs::column(id.data));
    h.x = x.download(), h.y = y.download(), h.z = z.download(), h.q = q.download(), h.id = id.download();
    return n;
  }
};
struct per_particle {
  in_place::per_particle h;
  device_vector<std::array<float, 4>> p;
  device_vector<std::int64_t> id;
  void load(const std::vector<record>& ps, std::size_t room) {
    h.load(ps, room);
    p.assign(h.p), id.assign(h.id);
  }
  std::size_t run(const hs::cartesian_grid& g, const hs::domain& dom, hs::detail::migrate_options how) {
    if (!how.capacity) how.resize = [&](std::size_t n) { p.resize(n), id.resize(n); };
    const std::size_t n = hs::migrate(device{}, g, dom, how, hs::column(p.data), hs::column(id.data));
    h.p = p.download(), h.id = id.download();
    return n;
  }
};
struct member {
  in_place::member h;
  device_vector<in_place::member::atom> a;
  device_vector<double> v;
  void load(const std::vector<record>& ps, std::size_t room) {
    h.load(ps, room);
    a.assign(h.a), v.assign(h.v);
  }
  std::size_t run(const hs::cartesian_grid& g, const hs::domain& dom, hs::detail::migrate_options how) {
    if (!how.capacity) how.resize = [&](std::size_t n) { a.resize(n), v.resize(n * 4); };
    const std::size_t n =
        hs::migrate(device{}, g, dom, how, hs::column(a.data, &in_place::member::atom::x), hs::column(v.data, 4, 3));
    h.a = a.download(), h.v = v.download();
    return n;
  }
};
struct strided_float {
  in_place::strided_float h;
  device_vector<float> x;
  device_vector<std::int64_t> id;
  void load(const std::vector<record>& ps, std::size_t room) {
    h.load(ps, room);
    x.assign(h.x), id.assign(h.id);
  }
  std::size_t run(const hs::cartesian_grid& g, const hs::domain& dom, hs::detail::migrate_options how) {
    if (!how.capacity) how.resize = [&](std::size_t n) { x.resize(n * 3), id.resize(n); };
    const std::size_t n = hs::migrate(device{}, g, dom, how, hs::column(x.data, 3), hs::column(id.data));
    h.x = x.download(), h.id = id.download();
    h.first = h.x.data(), h.ids = h.id.data();
    return n;
  }
};

bool same_bits(const in_place::entry& a, const in_place::entry& b) {
  return a.r.id == b.r.id && a.consistent == b.consistent && std::memcmp(&a.r.x, &b.r.x, sizeof a.r.x) == 0;
}

/// Every mode of one layout on `mine`, in the device and (`Layout::h`) in host memory.
template <class Layout>
void check_in_device(const char* name, const hs::cartesian_grid& grid, const hs::domain& dom,
                     const std::vector<record>& mine, const std::vector<record>& want, std::size_t largest) {
  std::size_t survivors = 0;
  for (const record& p : mine)
    survivors += std::count_if(want.begin(), want.end(), [&](const record& q) { return q.id == p.id; });
  for (int mode = 0; mode < 4; ++mode) {
    const bool keep_order = mode % 2 == 0, reserved = mode >= 2;
    INFO(std::string(name) + (keep_order ? " in order" : " from the end") + (reserved ? ", capacity" : ", resize"));
    const hs::detail::migrate_options how{
        .count = mine.size(), .capacity = reserved ? largest : 0, .keep_order = keep_order};
    decltype(Layout::h) host;
    host.load(mine, reserved ? largest : mine.size());
    const std::size_t host_n = host.run(grid, dom, how);
    Layout in_device;
    in_device.load(mine, reserved ? largest : mine.size());
    const std::size_t n = in_device.run(grid, dom, how);
    std::vector<in_place::entry> got;
    bool as_host = n == host_n;
    for (std::size_t i = 0; i < n; ++i) {
      got.push_back(in_device.h.at(i));
      as_host = as_host && i < host_n && same_bits(got.back(), host.at(i));
    }
    CHECK(in_place::compare(got, mine, want, survivors, keep_order) == "");
    CHECK(as_host);
  }
}

/// Ranks in host memory (even) and in the device (odd) migrating together: the same messages,
/// so the oracle's result on every rank.
template <class Layout>
void check_mixed(const hs::cartesian_grid& grid, const hs::domain& dom, const std::vector<record>& mine,
                 const std::vector<record>& want) {
  std::size_t survivors = 0;
  for (const record& p : mine)
    survivors += std::count_if(want.begin(), want.end(), [&](const record& q) { return q.id == p.id; });
  INFO("host and device ranks together");
  Layout in_device;
  decltype(Layout::h)& host = in_device.h;
  const bool on_device = grid.rank() % 2 == 1;
  in_device.load(mine, mine.size());
  const hs::detail::migrate_options how{.count = mine.size()};
  const std::size_t n = on_device ? in_device.run(grid, dom, how) : host.run(grid, dom, how);
  std::vector<in_place::entry> got;
  for (std::size_t i = 0; i < n; ++i) got.push_back(host.at(i));
  CHECK(in_place::compare(got, mine, want, survivors, true) == "");
}

TEST_CASE("migrate in place in emulated device memory equals the oracle and host memory",
          "[.device-emulate][migrate]") {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto lo = particle_world::lo(), length = particle_world::length();
  const hs::domain dom{lo, {lo[0] + length[0], lo[1] + length[1], lo[2] + length[2]}};
  unsigned seed = 0;
  for (const sweep::shape& s : sweep::shapes(size)) {
    const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic});
    const double boxes = ++seed % 3 == 0 ? 2.5 : 0.4;  // every third shape beyond the neighbours
    INFO(s.name() + " displacements up to " + std::to_string(boxes) + " boxes");
    const std::vector<record> mine = in_place::make(grid, dom, boxes, seed);
    std::vector<std::size_t> totals;
    const auto want =
        in_place::expected(grid, dom, particle_world::gather_by_rank(mine, MPI_COMM_WORLD), grid.ndims(), totals);
    const std::size_t largest = *std::max_element(totals.begin(), totals.end()) + mine.size();
    check_in_device<padded>("padded", grid, dom, mine, want, largest);
    check_in_device<split>("split", grid, dom, mine, want, largest);
    check_in_device<per_particle>("per particle", grid, dom, mine, want, largest);
    check_in_device<member>("member", grid, dom, mine, want, largest);
    check_in_device<strided_float>("strided float", grid, dom, mine, want, largest);
    check_mixed<padded>(grid, dom, mine, want);
  }
  CHECK(seed > 0);
}

TEST_CASE("migrate in a device space refuses host vectors and checks like the host", "[.device-emulate][migrate]") {
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  const hs::domain dom{{0, 0, 0}, {1, 1, 1}};
  std::vector<double> host(8, 0.5);
  CHECK_THROWS_WITH(hs::migrate(device{}, grid, dom, {.count = 2, .capacity = 2}, hs::column(host, 4, 3)),
                    Catch::Contains("column 0 is a std::vector, in host memory"));
  device_vector<double> x;
  x.assign(host);
  CHECK_THROWS_WITH(hs::migrate(device{}, grid, dom, {.count = 2, .capacity = 2}, hs::column(x.data, 2, 3)),
                    Catch::Contains("column 0 has width 3 and stride 2"));
  CHECK_THROWS_WITH(hs::migrate(device{}, grid, dom, {.count = 2, .capacity = 1}, hs::column(x.data, 4, 3)),
                    Catch::Contains("the capacity 1 is below the count 2"));
  // Every rank empty: the callback hears 0, nothing else happens (a null pointer is never read).
  std::size_t resized = 99;
  double* none = nullptr;
  CHECK(hs::migrate(device{}, grid, dom, {.count = 0, .resize = [&](std::size_t n) { resized = n; }},
                    hs::column(none, 4, 3)) == 0);
  CHECK(resized == 0);
}

}  // namespace

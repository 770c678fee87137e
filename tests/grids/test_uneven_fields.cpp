// SPDX-License-Identifier: BSD-3-Clause
// Uneven splits (user-given cell cuts, issue #16) against an oracle computed
// from global coordinates alone: random cuts drawn alike on every rank (seeded),
// with boxes that own no cells and boxes one or two cells thin whose ghosts
// reach several boxes away or wrap around the domain; the even split with
// fewer cells than boxes; cuts along some dimensions only. Every selecting
// strategy, forward (blocking and split phase, fields, bundles and views)
// bit for bit, reverse (sum) against the sum of every holder's ghost copies,
// the exact reach; ghost widths drawn per side (0 on one side, wider than
// the boxes next door) and halo patterns (faces, faces and edges, full); and
// bad cuts raising the same error on every rank.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <haloshift/haloshift.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <tuple>

#include "../support/catch.hpp"
#include "../support/oracle.hpp"
#include "../support/sweep.hpp"
#include "../support/world.hpp"
#include "box_oracle.hpp"
#include "view_check.hpp"

namespace hs = haloshift;

namespace uneven {

/// What the oracle knows: the grid, each dimension's cell boundaries and the ghost widths
/// (box_oracle), and what the library is given. Its reach arithmetic is its own.
struct setup : box_oracle::boxes {
  hs::cell_cuts cuts{};  ///< what the library is given: the bounds, or nothing where the split is even

  int n(int d) const { return cells(d); }
  /// Boxes the ghosts reach along d: the farthest box owning a cell of some box's ghosts, found by
  /// walking every ghost cell (below and above) to its owner. The even split with a cell per box:
  /// ceil(wider side / narrowest).
  int reach(int d) const {
    const int p = g.dims[d], count = n(d), wider = std::max(ghost[d], ghost_high[d]);
    if (wider == 0) return 0;
    if (cuts[d].empty() && count >= p) return (wider + count / p - 1) / (count / p);
    int k = 0;
    for (int c = 0; c < p; ++c)
      for (int x = bounds[d][c] - ghost[d]; x < bounds[d][c + 1] + ghost_high[d]; ++x) {
        if (x >= bounds[d][c] && x < bounds[d][c + 1]) continue;
        if (!g.periodic[d] && (x < 0 || x >= count)) continue;
        int images = 0, w = x;
        while (w < 0) w += count, --images;
        while (w >= count) w -= count, ++images;
        int owner = 0;
        while (!(bounds[d][owner] <= w && w < bounds[d][owner + 1])) ++owner;
        k = std::max(k, std::abs(images * p + owner - c));
      }
    return k;
  }
};

double value_at(const std::array<int, 3>& w) { return w[0] + 1000.0 * w[1] + 1e6 * w[2] + 0.25; }
constexpr double sentinel = -7.5;
std::int64_t own_value(const std::array<int, 3>& w) { return w[0] * 7 + w[1] * 131 + w[2] * 9973; }
std::int64_t contribution(int holder, std::size_t index) { return holder * 100003 + static_cast<std::int64_t>(index); }

/// Random cuts along every dimension of `s` (seeded by `rng`, so alike on every rank): widths 0
/// (often), 1, 2 or up to 5 cells; now and then the even split instead, with fewer cells than
/// boxes when it may. Ghost widths 0 to 3, sometimes beyond the whole domain in 1D and 2D, half
/// the time another width above than below (0 included); any halo pattern. Redrawn until the
/// neighbourhood stays small enough for a quick run.
setup draw(const sweep::shape& s, std::mt19937& rng) {
  for (;;) {
    setup w;
    w.ndims = static_cast<int>(s.dims.size());
    for (int d = 0; d < w.ndims; ++d) {
      const int p = s.dims[static_cast<std::size_t>(d)];
      w.g.dims[d] = p;
      w.g.periodic[d] = s.periodic[static_cast<std::size_t>(d)];
      std::vector<int>& b = w.bounds[d];
      b.assign(1, 0);
      if (rng() % 5 == 0) {  // the even split, often of fewer cells than boxes
        const int cells = 1 + static_cast<int>(rng() % static_cast<unsigned>(2 * p + 1));
        for (int c = 1; c <= p; ++c) b.push_back(static_cast<int>(static_cast<long>(c) * cells / p));
      } else {
        for (int c = 0; c < p; ++c) {
          const unsigned r = rng() % 10;
          b.push_back(b.back() + (r < 3 ? 0 : r < 6 ? 1 : r < 8 ? 2 : 3 + static_cast<int>(rng() % 3)));
        }
        if (b.back() == 0) b.back() = 1;  // at least one cell: the last box takes it
        w.cuts[d] = b;
      }
      const int cells = b.back();
      w.ghost[d] = static_cast<int>(rng() % 4);
      if (w.ndims < 3 && rng() % 6 == 0) w.ghost[d] = cells + 1 + static_cast<int>(rng() % 3);  // wraps
      w.ghost_high[d] = rng() % 2 ? w.ghost[d] : static_cast<int>(rng() % 4);
    }
    w.pattern_dims = 1 + static_cast<int>(rng() % 3);
    double blocks = 1;
    for (int d = 0; d < w.ndims; ++d) blocks *= 2 * w.reach(d) + 1;
    if (blocks <= (w.ndims == 3 ? 125 : 81)) return w;
  }
}

/// A view of the caller's array, z fastest, one ghost layer more than the plan's on each side and
/// padded rows: filled from u's interior, forwarded by the plan, compared with u (the extra layers
/// untouched).
std::string check_view(const hs::grid_field<double>& u, hs::field_plan& plan, int ndims) {
  std::ostringstream why;
  const hs::field_shape& sh = u.shape();
  hs::offset low = sh.ghost, high = sh.ghost_high, padding{0, 0, 0};
  std::size_t size = 1;
  for (int d = 0; d < 3; ++d) {
    if (d < ndims) low[d] += 1, high[d] += 1, padding[d] = d;
    size *= static_cast<std::size_t>(low[d] + sh.interior[d] + high[d] + padding[d]);
  }
  std::vector<double> a(size, sentinel);
  const hs::field_view<double> v =
      hs::make_field_view(a.data(), sh.interior, low, high, hs::storage_order::z_fastest, padding);
  for (int k = 0; k < sh.interior[2]; ++k)
    for (int j = 0; j < sh.interior[1]; ++j)
      for (int i = 0; i < sh.interior[0]; ++i) view_check::cell_of(v, i, j, k) = u(i, j, k);
  plan.forward(v);
  view_check::compare(v, u, sentinel, "z-fastest", why);
  return why.str();
}

/// Builds a field of the setup's split the way a user would: from cuts alone, from a global size
/// alone (even split), or from a shape (cuts along some dimensions).
template <class T>
hs::grid_field<T> make_field(const hs::cartesian_grid& grid, const setup& w, const T& value) {
  const hs::offset low{w.ghost[0], w.ghost[1], w.ghost[2]}, high{w.ghost_high[0], w.ghost_high[1], w.ghost_high[2]};
  int given = 0;
  for (int d = 0; d < w.ndims; ++d) given += !w.cuts[d].empty();
  if (given == w.ndims) return hs::grid_field<T>(grid, w.cuts, low, high, value);
  const hs::offset global{w.n(0), w.n(1), w.n(2)};
  if (given == 0) return hs::grid_field<T>(grid, global, low, high, value);
  return hs::grid_field<T>(grid, hs::field_shape(grid.shape(), grid.coords(), global, w.cuts, low, high), value);
}

template <class Strategy>
std::string check(const hs::cartesian_grid& grid, const setup& w, int rank, int size, std::size_t& checked) {
  std::ostringstream why;
  hs::grid_field<double> u = make_field(grid, w, sentinel), split = make_field(grid, w, sentinel);
  const hs::field_shape& sh = u.shape();
  if (sh.size() != static_cast<std::size_t>(w.extent(rank)[0]) * w.extent(rank)[1] * w.extent(rank)[2])
    return "padded size " + std::to_string(sh.size()) + " differs from the oracle's";
  w.for_each_cell(rank, [&](std::size_t i, std::array<int, 3> p) {
    if (w.interior(rank, p)) u.storage()[i] = split.storage()[i] = value_at(p);
  });
  hs::field_plan plan =
      hs::make_field_plan<Strategy>(u, {.pattern = w.pattern(), .background = sweep::background(checked)});
  hs::offset want_reach{0, 0, 0};
  for (int d = 0; d < w.ndims; ++d) want_reach[d] = w.reach(d);
  if (want_reach == hs::offset{0, 0, 0})  // no ghosts: a plan over the direct neighbours that selects nothing
    for (int d = 0; d < w.ndims; ++d) want_reach[d] = 1;
  if (plan.reach() != want_reach)
    why << "reach " << hs::to_string(plan.reach()) << ", expected " << hs::to_string(want_reach) << "; ";
  plan.forward(u);
  {
    auto pending = plan.start_forward(split);
    pending.progress();
    pending.wait();
  }
  why << check_view(u, plan, w.ndims);
  hs::field_bundle<std::int32_t, double> both(grid, sh);
  w.for_each_cell(rank, [&](std::size_t i, std::array<int, 3> p) {
    const bool mine = w.interior(rank, p);
    both.get<0>().storage()[i] = mine ? static_cast<std::int32_t>(own_value(p)) : -1;
    both.get<1>().storage()[i] = mine ? value_at(p) : sentinel;
  });
  plan.forward(both);
  w.for_each_cell(rank, [&](std::size_t i, std::array<int, 3> p) {
    std::array<int, 3> q = p;
    const bool real = w.wrap(q) && w.in_pattern(rank, p);  // outside the pattern: kept as it was
    const double want = real ? value_at(q) : sentinel;
    const std::int32_t want_int = real ? static_cast<std::int32_t>(own_value(q)) : -1;
    const bool ok = std::memcmp(&u.storage()[i], &want, sizeof want) == 0 &&
                    std::memcmp(&split.storage()[i], &want, sizeof want) == 0 &&
                    both.get<0>().storage()[i] == want_int &&
                    std::memcmp(&both.get<1>().storage()[i], &want, sizeof want) == 0;
    if (!ok && why.tellp() < 600)
      why << "rank " << rank << " cell (" << p[0] << "," << p[1] << "," << p[2] << "): got " << u.storage()[i] << " / "
          << split.storage()[i] << " / " << both.get<0>().storage()[i] << ", expected " << want << " / " << want_int
          << "; ";
    ++checked;
  });

  // Reverse (sum): the owner's value plus every holder's ghost copies of the cell in the pattern,
  // each counted once.
  hs::grid_field<std::int64_t> sum = make_field(grid, w, std::int64_t{0}),
                               started = make_field(grid, w, std::int64_t{0});
  w.for_each_cell(rank, [&](std::size_t i, std::array<int, 3> p) {
    sum.storage()[i] = started.storage()[i] = w.interior(rank, p) ? own_value(p) : contribution(rank, i);
  });
  plan.reverse(sum);
  {
    auto pending = plan.start_reverse(started);
    while (!pending.test()) {
    }
  }
  std::vector<std::int64_t> expect(sh.size(), 0);
  w.for_each_cell(rank, [&](std::size_t i, std::array<int, 3> p) {
    if (w.interior(rank, p)) expect[i] = own_value(p);
  });
  const auto my_lo = w.lo(rank), my_extent = w.extent(rank);
  for (int h = 0; h < size; ++h)
    w.for_each_cell(h, [&](std::size_t i, std::array<int, 3> p) {
      if (w.interior(h, p) || !w.in_pattern(h, p)) return;
      std::array<int, 3> q = p;
      if (!w.wrap(q) || !w.interior(rank, q)) return;
      expect[static_cast<std::size_t>(q[0] - my_lo[0]) +
             static_cast<std::size_t>(my_extent[0]) *
                 (static_cast<std::size_t>(q[1] - my_lo[1]) +
                  static_cast<std::size_t>(my_extent[1]) * static_cast<std::size_t>(q[2] - my_lo[2]))] +=
          contribution(h, i);
    });
  w.for_each_cell(rank, [&](std::size_t i, std::array<int, 3> p) {
    if (!w.interior(rank, p)) return;
    if ((sum.storage()[i] != expect[i] || started.storage()[i] != expect[i]) && why.tellp() < 900)
      why << "reverse rank " << rank << " cell (" << p[0] << "," << p[1] << "," << p[2] << "): " << sum.storage()[i]
          << " / " << started.storage()[i] << ", expected " << expect[i] << "; ";
  });
  return why.str();
}

/// "cuts x:0,3,3,7 y:even 5 ghost 2,0" for INFO.
std::string describe(const sweep::shape& s, const setup& w) {
  std::ostringstream o;
  o << s.name() << " cuts";
  for (int d = 0; d < w.ndims; ++d) {
    o << " "
      << "xyz"[d] << (w.cuts[d].empty() ? ":even " : ":");
    if (w.cuts[d].empty()) o << w.n(d);
    for (std::size_t i = 0; i < w.cuts[d].size(); ++i) o << (i ? "," : "") << w.cuts[d][i];
  }
  o << " ghost " << w.ghost[0] << "," << w.ghost[1] << "," << w.ghost[2] << " ghost_high " << w.ghost_high[0] << ","
    << w.ghost_high[1] << "," << w.ghost_high[2] << " pattern dims " << w.pattern_dims;
  return o.str();
}

template <class Strategy>
void sweep_uneven() {
  const int size = world_size(), rank = world_rank();
  std::mt19937 rng(20240616u + static_cast<unsigned>(size));  // the same draws on every rank
  std::size_t checked = 0, configurations = 0, empty_boxes = 0, far = 0;
  const int draws = sweep::reduced() ? 1 : 2;
  for (const sweep::shape& s : sweep::shapes(size)) {
    hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = s.dims, .periodic = s.periodic});
    for (int draw = 0; draw < draws; ++draw) {
      const setup w = uneven::draw(s, rng);
      INFO(Strategy::name << " " << describe(s, w));
      CHECK(check<Strategy>(grid, w, rank, size, checked) == "");
      ++configurations;
      for (int d = 0; d < w.ndims; ++d) {
        for (std::size_t c = 0; c + 1 < w.bounds[d].size(); ++c) empty_boxes += w.bounds[d][c] == w.bounds[d][c + 1];
        far += w.reach(d) > 1;
      }
    }
  }
  CHECK(configurations > 0);
  CHECK(checked > 0);
  if (size > 1) {  // the draws do cover boxes without cells and ghosts reaching past the next box
    CHECK(empty_boxes > 0);
    CHECK(far > 0);
  }
}

}  // namespace uneven

using uneven_strategies = std::tuple<hs::Shift, hs::SingleHop, hs::TtlMultiHop, hs::NeighborAlltoall>;

TEMPLATE_LIST_TEST_CASE("uneven splits: ghosts and reverse match the oracle", "[grids][uneven]", uneven_strategies) {
  uneven::sweep_uneven<TestType>();
}

TEST_CASE("uneven splits: the remainder cells first or last and ranks x fastest match the oracle",
          "[grids][uneven][decomposition]") {
  const int size = world_size(), rank = world_rank();
  using order = hs::grid_options::rank_order;
  using rule = hs::grid_options::remainder_cells;
  const std::pair<order, rule> options[] = {{order::first_fastest, rule::first},
                                            {order::last_fastest, rule::last},
                                            {order::first_fastest, rule::last},
                                            {order::last_fastest, rule::first}};
  std::size_t checked = 0, uneven_dims = 0;
  for (int nd = 1; nd <= 3; ++nd) {
    const std::vector<bool> periodic{true, nd < 3, true};  // walls along y in 3D
    for (std::size_t i = 0; i < std::size(options); ++i) {
      const auto [o, r] = options[i];
      const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = std::vector<int>(static_cast<std::size_t>(nd), 0),
                                                     .periodic = std::vector<bool>(periodic.begin(), periodic.begin() + nd),
                                                     .order = o,
                                                     .remainder = r});
      uneven::setup w;  // the oracle: the split by hand, the box of a rank by its own numbering
      w.ndims = nd;
      w.g.x_fastest = o == order::first_fastest;
      for (int d = 0; d < nd; ++d) {
        const int p = grid.dim(d), n = d % 2 ? 3 * p - 1 : 2 * p + 1, narrow = n / p, extra = n % p;
        w.g.dims[d] = p;
        w.g.periodic[d] = periodic[static_cast<std::size_t>(d)];
        w.bounds[d].assign(1, 0);
        for (int c = 0; c < p; ++c)
          w.bounds[d].push_back(w.bounds[d].back() + narrow + ((r == rule::first ? c < extra : c >= p - extra) ? 1 : 0));
        w.ghost[d] = 2 - d % 2;
        w.ghost_high[d] = 1 + 2 * (d % 2);  // 3 above along y: past a box of 2 cells
        uneven_dims += extra != 0;
      }
      INFO(nd << "D " << hs::to_string(grid.shape()) << (w.g.x_fastest ? " x fastest" : " z fastest") << " remainder "
              << (r == rule::first ? "first" : "last"));
      CHECK(uneven::make_field(grid, w, 0.0).shape().remainder == r);
      const std::string why = (i + static_cast<std::size_t>(nd)) % 2
                                  ? uneven::check<hs::NeighborAlltoall>(grid, w, rank, size, checked)
                                  : uneven::check<hs::Shift>(grid, w, rank, size, checked);
      CHECK(why == "");
      // A shape split by another grid's rule is refused on every rank, not silently re-split.
      const hs::field_shape other(hs::grid_shape(std::vector<int>(grid.shape().dims().begin(),
                                                                  grid.shape().dims().begin() + nd),
                                                 std::vector<bool>(static_cast<std::size_t>(nd), true)),
                                  grid.coords(), {w.n(0), w.n(1), w.n(2)}, {1, nd > 1 ? 1 : 0, nd > 2 ? 1 : 0});
      CHECK_THROWS_WITH(hs::make_field_plan<hs::Shift>(grid, other),
                        Catch::Contains(std::string("field_shape: remainder spread but the grid's is ") +
                                        (r == rule::first ? "first" : "last")));
    }
  }
  CHECK(checked > 0);
  if (size > 1) CHECK(uneven_dims > 0);  // some dimension of some grid does split unevenly
}

TEST_CASE("uneven splits: a box without cells still gets its ghosts", "[grids][uneven]") {
  const int size = world_size(), rank = world_rank();
  // 1D periodic: every box but the last owns nothing, the last owns 3 cells; ghost 4 wraps past the
  // whole domain, so each box's ghosts reach every other box and the images beyond.
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {size}, .periodic = {true}});
  hs::cell_cuts cuts;
  cuts[0].assign(static_cast<std::size_t>(size), 0);
  cuts[0].push_back(3);
  hs::grid_field<double> u(grid, cuts, 4, uneven::sentinel);
  CHECK(u.shape().interior[0] == (rank == size - 1 ? 3 : 0));
  CHECK(u.shape().padded[0] == u.shape().interior[0] + 8);
  CHECK(u.shape().reach(grid.shape())[0] == 2 * size);  // the last box: its ghost cell -4 lies in box -size - 1
  for (int i = 0; i < u.shape().interior[0]; ++i) u(i) = i + 0.5;
  hs::fill_ghosts<hs::Shift>(u);
  const int lo = u.shape().lo[0];
  for (int i = -4; i < u.shape().interior[0] + 4; ++i) CHECK(u(i) == (((lo + i) % 3 + 3) % 3) + 0.5);
}

TEST_CASE("uneven splits: a view of a box without any cells may have no data", "[grids][uneven]") {
  const int size = world_size(), rank = world_rank();
  // 3D, boxes along x only: all but the last own no cells along x, and x has no ghosts, so their
  // padded arrays hold nothing; y and z (one box each, periodic) have ghosts.
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {size, 1, 1}, .periodic = {true, true, true}});
  hs::cell_cuts cuts;
  cuts[0].assign(static_cast<std::size_t>(size), 0);
  cuts[0].push_back(3);
  cuts[1] = {0, 2};
  cuts[2] = {0, 3};
  const hs::field_shape shape(grid.shape(), grid.coords(), cuts, {0, 1, 1});
  CHECK(shape.size() == (rank == size - 1 ? std::size_t{3 * 4 * 5} : 0));
  auto plan = hs::make_field_plan<hs::SingleHop>(grid, shape);
  std::vector<double> a(shape.size(), uneven::sentinel);  // empty on all but the last rank: data() may be null
  for (int k = 0; k < shape.interior[2]; ++k)
    for (int j = 0; j < shape.interior[1]; ++j)
      for (int i = 0; i < shape.interior[0]; ++i) a[shape.index(i, j, k)] = uneven::value_at({i, j, k});
  const hs::field_view<double> v = hs::make_field_view(rank == size - 1 ? a.data() : nullptr, shape);
  plan.forward(v);
  plan.reverse(v, hs::take_max{});
  for (int k = -1; k < shape.interior[2] + 1; ++k)
    for (int j = -1; j < shape.interior[1] + 1; ++j)
      for (int i = 0; i < shape.interior[0]; ++i)
        CHECK(a[shape.index(i, j, k)] == uneven::value_at({i, (j + 2) % 2, (k + 3) % 3}));
}

TEST_CASE("uneven splits: bad cuts raise the same error on every rank", "[grids][uneven][errors]") {
  const int size = world_size(), rank = world_rank();
  hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, false}});
  const int p0 = grid.dim(0), p1 = grid.dim(1);
  auto cuts_of = [](int boxes, int width) {  // boxes of `width` cells
    std::vector<int> c;
    for (int b = 0; b <= boxes; ++b) c.push_back(b * width);
    return c;
  };
  hs::cell_cuts good;
  good[0] = cuts_of(p0, 3);
  good[1] = cuts_of(p1, 2);
  REQUIRE_NOTHROW(hs::grid_field<double>(grid, good, 1));

  SECTION("too few values") {
    hs::cell_cuts c = good;
    c[1].pop_back();
    CHECK_THROWS_WITH(hs::grid_field<double>(grid, c, 1),
                      Catch::Contains("cuts[1] must have P_1 + 1 = " + std::to_string(p1 + 1) + " values, got " +
                                      std::to_string(p1)));
  }
  SECTION("no cuts along a dimension of the grid (the cuts-only form needs them all)") {
    hs::cell_cuts c = good;
    c[0].clear();
    CHECK_THROWS_WITH(hs::grid_field<float>(grid, c, 1),
                      Catch::Contains("cuts[0] must have P_0 + 1 = " + std::to_string(p0 + 1) + " values, got 0"));
  }
  SECTION("not starting at 0") {
    hs::cell_cuts c = good;
    c[0].front() = 2;
    c[0].back() = std::max(c[0].back(), 2);
    CHECK_THROWS_WITH(hs::grid_field<double>(grid, c, 1), Catch::Contains("cuts[0][0] = 2: the first cut must be 0"));
  }
  SECTION("decreasing") {
    hs::grid_shape line({3}, {false});  // the message, on a local shape: 3 boxes on any rank count
    hs::cell_cuts c;
    c[0] = {0, 9, 7, 12};
    CHECK_THROWS_WITH(hs::field_shape(line, {0, 0, 0}, c, {1, 0, 0}),
                      Catch::Contains("cuts[0][2] = 7 is below cuts[0][1] = 9: cuts must be nondecreasing"));
    if (p0 > 1) {  // and collectively
      c = good;
      c[0][1] = 9;
      CHECK_THROWS_WITH(hs::grid_field<double>(grid, c, 1),
                        Catch::Contains("cuts[0][2] = " + std::to_string(c[0][2]) +
                                        " is below cuts[0][1] = 9: cuts must be nondecreasing"));
    }
  }
  SECTION("negative") {
    hs::cell_cuts c = good;
    c[1][1] = -2;
    CHECK_THROWS_WITH(hs::grid_field<double>(grid, c, 1), Catch::Contains("cuts[1][1] = -2 is negative"));
  }
  SECTION("no cells at all") {
    hs::cell_cuts c = good;
    std::fill(c[1].begin(), c[1].end(), 0);
    CHECK_THROWS_WITH(hs::grid_field<double>(grid, c, 1), Catch::Contains("cuts[1] ends at 0"));
  }
  SECTION("cuts along a dimension the grid lacks") {
    hs::cell_cuts c = good;
    c[2] = {0, 4};
    CHECK_THROWS_WITH(hs::grid_field<double>(grid, c, 1),
                      Catch::Contains("cuts[2] must be empty: the grid has only 2 dimension(s), got 2 values"));
  }
  SECTION("cuts that do not end at the global size") {
    CHECK_THROWS_WITH(hs::field_shape(grid.shape(), grid.coords(), {3 * p0 + 1, 2 * p1}, good, {1, 1, 0}),
                      Catch::Contains("cuts[0] ends at " + std::to_string(3 * p0) +
                                      " but global[0] = " + std::to_string(3 * p0 + 1)));
  }
  SECTION("an error on one rank only reaches all ranks") {
    hs::cell_cuts c = good;
    if (rank == size - 1) c[1].push_back(c[1].back());
    if (size > 1)
      CHECK_THROWS_WITH(hs::grid_field<double>(grid, c, 1),
                        Catch::Contains("cuts[1] must have P_1 + 1 = " + std::to_string(p1 + 1) + " values, got " +
                                        std::to_string(p1 + 2)));
  }
  SECTION("cuts that differ on one rank only (each valid), raised on every rank") {
    hs::cell_cuts c = good;
    if (rank == 0) c[0].back() += 1;  // one box one cell wider
    if (size > 1) {
      CHECK_THROWS_WITH(hs::grid_field<double>(grid, c, 1),
                        Catch::Contains("cuts[0] (hash of the values) must be the same on all ranks"));
      CHECK_THROWS_WITH((hs::field_bundle<double, int>(grid, c, 1)),
                        Catch::Contains("cuts[0] (hash of the values) must be the same on all ranks"));
      // A shape is checked locally; the plan built from it agrees it on every rank.
      const hs::field_shape shape(grid.shape(), grid.coords(), c, {1, 1, 0});
      CHECK_THROWS_WITH(hs::make_field_plan<hs::SingleHop>(grid, shape),
                        Catch::Contains("cuts[0] (hash of the values) must be the same on all ranks"));
    }
  }
  SECTION("cuts on some ranks, the even split on others, raised on every rank") {
    hs::cell_cuts c;
    if (rank != 0) c[0] = cuts_of(p0, 3);  // exactly the even split of 3 p0, but given
    if (size > 1)
      CHECK_THROWS_WITH(
          hs::grid_field<double>(grid, hs::field_shape(grid.shape(), grid.coords(), {3 * p0, 2 * p1}, c, {1, 1, 0})),
          Catch::Contains("cuts[0] (number of values) must be the same on all ranks, got values from 0 to " +
                          std::to_string(p0 + 1)));
  }
  SECTION("TeamShift is refused with cuts too") {
    hs::grid_field<double> a(grid, good, 1);
    CHECK_THROWS_WITH(hs::make_field_plan<hs::TeamShift>(a, {.team = {1, 1, 1}}),
                      Catch::Contains("TeamShift carries block payloads only"));
  }
  SECTION("a shape of other cuts than the plan's") {
    hs::grid_field<double> a(grid, good, 1);
    auto plan = hs::make_field_plan<hs::Shift>(a);
    hs::cell_cuts wider = good;
    wider[0].back() += 2;  // on every rank: global[0] differs
    hs::grid_field<double> b(grid, wider, 1);
    CHECK_THROWS_WITH(plan.forward(b),
                      Catch::Contains("but the plan was built for global (" + std::to_string(3 * p0) + ","));
    CHECK_THROWS_WITH(plan.forward(b), Catch::Contains("cuts[0] "));
  }
}

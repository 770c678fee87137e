// SPDX-License-Identifier: BSD-3-Clause
// Grid fields, randomized: random grids, global extents not divisible by the
// boxes (and, along dimensions without ghosts, fewer cells than boxes: empty
// ranks), ghost widths per dimension from 0 to beyond the box and beyond the
// domain, every strategy that can select (Auto too), both protocols. After a
// forward every ghost cell holds the value of the cell it images (wrapped
// across periodic dimensions; beyond a non-periodic border it keeps what was
// there); reverse with a sum, a max or take_ghost_value equals a serial
// reduction over every rank's ghost copies. Now and then the same exchange
// runs on a z-fastest array of the caller's (a field_view) and must agree.

#include <cstring>
#include <optional>

#include "property_config.hpp"

namespace property_fields {

using namespace property;

enum class reduction { sum, max, ghost_value };
const char* to_string(reduction op) {
  return op == reduction::sum ? "sum" : op == reduction::max ? "max" : "take_ghost_value";
}

struct config {
  grid_config grid;
  std::array<int, 3> n{1, 1, 1}, ghost{0, 0, 0};
  std::string strategy;
  hs::protocol mode = hs::protocol::overlapping;
  driving forward = driving::blocking, reverse = driving::blocking;
  reduction op = reduction::sum;
  bool view = false;  ///< also through a z-fastest field_view

  /// First global cell of box `c` along `d` (c in any range: periodic images need no special case).
  long first(int d, long c) const {
    const long p = grid.dims[d];
    const long wraps = c >= 0 ? c / p : -((-c + p - 1) / p);
    return (c - wraps * p) * n[d] / p + wraps * n[d];
  }
  std::string describe() const {
    std::ostringstream s;
    s << strategy << " grid " << grid.describe() << " global " << n[0] << "," << n[1] << "," << n[2] << " ghost "
      << ghost[0] << "," << ghost[1] << "," << ghost[2] << " " << property::to_string(mode) << " forward "
      << property::to_string(forward) << " reverse " << to_string(op) << " " << property::to_string(reverse)
      << (view ? " z-fastest view" : "");
    return s.str();
  }
};

config draw(rng& r, int ranks) {
  config c;
  c.grid = random_grid(r, ranks);
  for (int attempt = 0;; ++attempt) {
    long offsets = 1, cells = 1;
    for (int d = 0; d < c.grid.ndims; ++d) {
      const int p = c.grid.dims[d];
      const bool empty_boxes = attempt < 20 && p > 1 && r.chance(0.12);  // fewer cells than boxes: no ghosts
      c.n[d] = empty_boxes ? r.uniform(1, p - 1) : r.uniform(p, 5 * p + 7);
      const int narrow = c.n[d] / p, wide = (c.n[d] + p - 1) / p;
      int g = 0;
      if (!empty_boxes && attempt < 20) switch (r.uniform(0, 9)) {
          case 0: case 1: g = 0; break;
          case 2: case 3: case 4: g = 1; break;
          case 5: case 6: g = r.uniform(2, 3); break;
          case 7: case 8: g = narrow + r.uniform(0, 3); break;  // the box's width and beyond
          default: g = c.n[d] + r.uniform(0, 3);                // the domain's and beyond
        }
      else if (!empty_boxes)
        g = 1;
      c.ghost[d] = g;
      if (narrow > 0) offsets *= 2 * ((g + narrow - 1) / narrow) + 1;
      cells *= wide + 2 * g;
    }
    if (offsets <= 125 && cells <= 12000) break;
  }
  c.strategy = r.pick(selective_strategies());
  c.mode = random_protocol(r, c.strategy);
  c.forward = random_driving(r);
  c.reverse = random_driving(r);
  c.op = static_cast<reduction>(r.uniform(0, 2));
  c.view = r.chance(0.25);
  for (int d = 0; d < c.grid.ndims; ++d) c.view = c.view && c.n[d] >= c.grid.dims[d];  // views need interior cells
  return c;
}

using cell = std::array<long, 3>;
constexpr std::int64_t sentinel = -7;
std::int64_t value_at(const cell& w) { return ((w[2] * 4096 + w[1]) * 4096 + w[0]) * 4 + 1; }
std::int64_t contribution(int holder, std::size_t index) {
  return holder * 1000003LL + static_cast<std::int64_t>(index) + 1;
}

/// Rank `r`'s padded box in unwrapped global cells: lower corner and extents (the oracle's own split).
struct padded_box {
  cell lo{}, extent{}, inner_lo{}, inner_hi{};
};
padded_box box_of(const config& c, int r) {
  const oracle::coords at = c.grid.as_oracle().coords_of(r);
  padded_box b;
  for (int d = 0; d < 3; ++d) {
    b.inner_lo[d] = c.first(d, at[d]);
    b.inner_hi[d] = c.first(d, at[d] + 1);
    b.lo[d] = b.inner_lo[d] - c.ghost[d];
    b.extent[d] = b.inner_hi[d] - b.inner_lo[d] + 2 * c.ghost[d];
  }
  return b;
}
bool inside(const padded_box& b, const cell& u) {
  for (int d = 0; d < 3; ++d)
    if (u[d] < b.inner_lo[d] || u[d] >= b.inner_hi[d]) return false;
  return true;
}
/// Wraps across periodic dimensions; false outside a non-periodic one.
bool wrap(const config& c, cell& u) {
  for (int d = 0; d < 3; ++d) {
    if (c.grid.periodic[d]) u[d] = ((u[d] % c.n[d]) + c.n[d]) % c.n[d];
    if (u[d] < 0 || u[d] >= c.n[d]) return false;
  }
  return true;
}
/// Calls f(storage index, unwrapped global cell) over rank r's padded box, x fastest.
template <class F>
void for_each_cell(const config& c, int r, F&& f) {
  const padded_box b = box_of(c, r);
  std::size_t i = 0;
  for (long z = 0; z < b.extent[2]; ++z)
    for (long y = 0; y < b.extent[1]; ++y)
      for (long x = 0; x < b.extent[0]; ++x) f(i++, cell{b.lo[0] + x, b.lo[1] + y, b.lo[2] + z});
}

std::string check_forward(const config& c, std::span<const std::int64_t> got) {
  const int me = world_rank();
  const padded_box mine = box_of(c, me);
  std::string why;
  for_each_cell(c, me, [&](std::size_t i, cell u) {
    if (!why.empty()) return;
    const cell unwrapped = u;
    const std::int64_t want = inside(mine, u) ? value_at(u) : wrap(c, u) ? value_at(u) : sentinel;
    if (i >= got.size() || got[i] != want)
      why = "forward: cell (" + std::to_string(unwrapped[0]) + "," + std::to_string(unwrapped[1]) + "," +
            std::to_string(unwrapped[2]) + ") holds " + (i < got.size() ? std::to_string(got[i]) : "nothing") +
            ", expected " + std::to_string(want);
  });
  return why;
}

/// The owner's cells after a reverse: its own value combined with every rank's ghost copies.
std::vector<std::int64_t> expected_reverse(const config& c) {
  const int me = world_rank();
  const padded_box mine = box_of(c, me);
  std::vector<std::int64_t> want;
  std::vector<std::pair<int, std::size_t>> winner;  // take_ghost_value: highest (rank, index) so far
  for_each_cell(c, me, [&](std::size_t, cell u) {
    want.push_back(inside(mine, u) ? value_at(u) : 0);
    winner.push_back({-1, 0});
  });
  auto index_in_mine = [&](const cell& w) {
    std::size_t i = 0, stride = 1;
    for (int d = 0; d < 3; ++d) {
      i += static_cast<std::size_t>(w[d] - mine.lo[d]) * stride;
      stride *= static_cast<std::size_t>(mine.extent[d]);
    }
    return i;
  };
  for (int holder = 0; holder < world_size(); ++holder) {
    const padded_box theirs = box_of(c, holder);
    for_each_cell(c, holder, [&](std::size_t i, cell u) {
      if (inside(theirs, u) || !wrap(c, u) || !inside(mine, u)) return;
      const std::size_t at = index_in_mine(u);
      const std::int64_t v = contribution(holder, i);
      switch (c.op) {
        case reduction::sum: want[at] += v; break;
        case reduction::max: want[at] = std::max(want[at], v); break;
        case reduction::ghost_value:
          if (std::pair{holder, i} > winner[at]) winner[at] = {holder, i}, want[at] = v;
      }
    });
  }
  return want;
}

std::string check_reverse(const config& c, std::span<const std::int64_t> got, const char* what) {
  const int me = world_rank();
  const padded_box mine = box_of(c, me);
  const std::vector<std::int64_t> want = expected_reverse(c);
  std::string why;
  for_each_cell(c, me, [&](std::size_t i, cell u) {
    if (why.empty() && inside(mine, u) && (i >= got.size() || got[i] != want[i]))
      why = std::string(what) + ": cell (" + std::to_string(u[0]) + "," + std::to_string(u[1]) + "," +
            std::to_string(u[2]) + ") holds " + (i < got.size() ? std::to_string(got[i]) : "nothing") +
            ", expected " + std::to_string(want[i]);
  });
  return why;
}

/// The cells of `f` (storage order of a grid_field) in a z-fastest array with its view.
struct z_fastest {
  std::vector<std::int64_t> data;
  hs::field_view<std::int64_t> view;
  std::size_t at(const hs::field_shape& s, int i, int j, int k) const {
    return static_cast<std::size_t>(i + s.ghost[0]) * view.stride[0] +
           static_cast<std::size_t>(j + s.ghost[1]) * view.stride[1] +
           static_cast<std::size_t>(k + s.ghost[2]) * view.stride[2];
  }
};
z_fastest to_z_fastest(const hs::grid_field<std::int64_t>& f) {
  const hs::field_shape& s = f.shape();
  z_fastest z;
  z.data.assign(s.size(), sentinel);
  z.view = hs::make_field_view(z.data.data(), s.interior, s.ghost, hs::storage_order::z_fastest);
  for (int k = -s.ghost[2]; k < s.interior[2] + s.ghost[2]; ++k)
    for (int j = -s.ghost[1]; j < s.interior[1] + s.ghost[1]; ++j)
      for (int i = -s.ghost[0]; i < s.interior[0] + s.ghost[0]; ++i) z.data[z.at(s, i, j, k)] = f(i, j, k);
  return z;
}
/// Back in a grid_field's storage order.
std::vector<std::int64_t> from_z_fastest(const z_fastest& z, const hs::field_shape& s) {
  std::vector<std::int64_t> out(s.size());
  for (int k = -s.ghost[2]; k < s.interior[2] + s.ghost[2]; ++k)
    for (int j = -s.ghost[1]; j < s.interior[1] + s.ghost[1]; ++j)
      for (int i = -s.ghost[0]; i < s.interior[0] + s.ghost[0]; ++i) out[s.index(i, j, k)] = z.data[z.at(s, i, j, k)];
  return out;
}

}  // namespace property_fields

TEST_CASE("property: random grid fields fill and reduce ghosts as the oracle says", "[property][fields]") {
  using namespace property_fields;
  const settings s = settings_from_environment();
  fixed_calibration calibration;
  grid_cache grids;
  failures failed("fields", s);
  const int ranks = world_size(), me = world_rank();
  for (int index = 0; index < s.count(); ++index) {
    rng r(s.config_seed(kind::fields, ranks, index));
    const config c = draw(r, ranks);
    if (!s.runs(index)) continue;
    const hs::cartesian_grid& grid = grids.get(c.grid);
    std::string where = c.describe(), why;
    try {
      const hs::offset global{c.n[0], c.n[1], c.n[2]}, ghost{c.ghost[0], c.ghost[1], c.ghost[2]};
      hs::grid_field<std::int64_t> u(grid, global, ghost, sentinel);
      const padded_box mine = box_of(c, me);
      if (u.storage().size() != static_cast<std::size_t>(mine.extent[0] * mine.extent[1] * mine.extent[2]))
        note(why, "the field holds " + std::to_string(u.storage().size()) + " cells, the oracle's padded box " +
                      std::to_string(mine.extent[0] * mine.extent[1] * mine.extent[2]));
      for_each_cell(c, me, [&](std::size_t i, cell p) {
        if (inside(mine, p) && i < u.storage().size()) u.storage()[i] = value_at(p);
      });
      hs::field_plan plan = hs::make_field_plan(grid, c.strategy, u.shape(), {.mode = c.mode}, sizeof(std::int64_t));
      where += " (ran " + std::string(plan.strategy()) + ", reach " + hs::to_string(plan.reach()) + ")";
      std::optional<z_fastest> z;
      if (c.view) z = to_z_fastest(u);  // before the forward: interior and sentinels
      if (c.forward == driving::blocking)
        plan.forward(u);
      else
        drive(plan.start_forward(u), c.forward);
      note(why, check_forward(c, u.storage()));
      if (z) {
        plan.forward(z->view);
        if (from_z_fastest(*z, u.shape()) != std::vector<std::int64_t>(u.storage().begin(), u.storage().end()))
          note(why, "forward on a z-fastest view differs from the field's");
      }

      // Reverse: interior cells their value, ghost cells this rank's contribution.
      for_each_cell(c, me, [&](std::size_t i, cell p) {
        if (i < u.storage().size()) u.storage()[i] = inside(mine, p) ? value_at(p) : contribution(me, i);
      });
      if (z) z = to_z_fastest(u);
      switch (c.op) {
        case reduction::ghost_value: plan.reverse(u, hs::take_ghost_value{}); break;
        case reduction::sum:
          if (c.reverse == driving::blocking)
            plan.reverse(u);
          else
            drive(plan.start_reverse(u), c.reverse);
          if (z) plan.reverse(z->view);
          break;
        case reduction::max:
          if (c.reverse == driving::blocking)
            plan.reverse(u, hs::take_max{});
          else
            drive(plan.start_reverse(u, hs::take_max{}), c.reverse);
          if (z) plan.reverse(z->view, hs::take_max{});
      }
      note(why, check_reverse(c, u.storage(), "reverse"));
      if (z && c.op != reduction::ghost_value) note(why, check_reverse(c, from_z_fastest(*z, u.shape()), "reverse on a view"));
    } catch (const std::exception& e) {
      note(why, std::string("exception: ") + e.what());
    }
    failed.check(index, where, why);
  }
  failed.summarise();
}

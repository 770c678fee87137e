// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// What the grid tests check of a field_view after an exchange: every cell of the
// plan's padded box equal, bit for bit, to a field the same plan filled, and the
// view's extra ghost layers untouched.

#include <cstddef>
#include <cstring>
#include <haloshift/haloshift.hpp>
#include <sstream>

namespace view_check {

/// Cell (i, j, k) of a view (interior from 0, ghosts below 0).
template <class T>
T& cell_of(const haloshift::field_view<T>& v, int i, int j, int k) {
  return v.data[static_cast<std::size_t>(i + v.ghost[0]) * v.stride[0] +
                static_cast<std::size_t>(j + v.ghost[1]) * v.stride[1] +
                static_cast<std::size_t>(k + v.ghost[2]) * v.stride[2]];
}

/// Appends to `why` (up to about 300 characters) the cells of `v` that differ from `u` inside u's
/// padded box, or from `outside` beyond it; `label` names the view.
template <class T>
void compare(const haloshift::field_view<T>& v, const haloshift::grid_field<T>& u, const T& outside, const char* label,
             std::ostringstream& why) {
  const haloshift::field_shape& sh = u.shape();
  const haloshift::offset high = v.high();
  for (int k = -v.ghost[2]; k < sh.interior[2] + high[2]; ++k)
    for (int j = -v.ghost[1]; j < sh.interior[1] + high[1]; ++j)
      for (int i = -v.ghost[0]; i < sh.interior[0] + high[0]; ++i) {
        const bool in_plan = i >= -sh.ghost[0] && i < sh.interior[0] + sh.ghost_high[0] && j >= -sh.ghost[1] &&
                             j < sh.interior[1] + sh.ghost_high[1] && k >= -sh.ghost[2] &&
                             k < sh.interior[2] + sh.ghost_high[2];
        const T want = in_plan ? u(i, j, k) : outside;
        if (std::memcmp(&cell_of(v, i, j, k), &want, sizeof want) != 0 && why.tellp() < 300)
          why << label << " view cell (" << i << "," << j << "," << k << "): got " << cell_of(v, i, j, k)
              << ", expected " << want << "; ";
      }
}

}  // namespace view_check

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Table III of msn-global-network (Berghoff, Kondov 2018), as printed.

#include <array>

namespace table_iii {

struct row {
  int processes;
  std::array<int, 9> diameter;  // degrees 2 to 10
};

inline constexpr std::array<row, 7> rows{{
    {10240, {102, 33, 21, 16, 15, 14, 13, 13, 13}},
    {22960, {152, 43, 25, 19, 17, 15, 15, 14, 14}},
    {114486, {339, 74, 37, 26, 21, 19, 18, 17, 17}},
    {185088, {431, 86, 42, 29, 23, 20, 19, 18, 17}},
    {361760, {602, 107, 50, 33, 26, 22, 20, 19, 19}},
    {2282544, {1511, 198, 78, 48, 35, 29, 25, 23, 22}},
    {10649600, {3264, 331, 115, 64, 45, 36, 31, 28, 26}},
}};

}  // namespace table_iii

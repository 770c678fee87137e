// SPDX-License-Identifier: BSD-3-Clause
// The plain kernel once more, a file and an address of its own: the control
// (plain again / plain) that shows how much placement alone moves the times.
#define INCLUDE_COST_ENTRY run_plain_again
#include "include_cost_kernel.hpp"

// SPDX-License-Identifier: BSD-3-Clause
// The stencil kernel with a face exchange written by hand next to its loops, as
// the code a user ports onto haloshift has it; no haloshift header (see include_cost_kernel.hpp).
#define INCLUDE_COST_ENTRY run_hand_written
#define INCLUDE_COST_HAND_WRITTEN
#include "include_cost_kernel.hpp"

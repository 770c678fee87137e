// SPDX-License-Identifier: BSD-3-Clause
// The stencil kernel with haloshift's headers included first, as a user's
// file would have them, and a plan built next to the loops (see include_cost_kernel.hpp).
#include <haloshift/haloshift.hpp>

#define INCLUDE_COST_ENTRY run_library
#define INCLUDE_COST_WITH_LIBRARY
#include "include_cost_kernel.hpp"

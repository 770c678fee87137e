// SPDX-License-Identifier: BSD-3-Clause
// The stencil kernel without haloshift (see include_cost_kernel.hpp).
#define INCLUDE_COST_ENTRY run_plain
#include "include_cost_kernel.hpp"

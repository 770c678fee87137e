#pragma once
/// @file haloshift.hpp
/// @brief Umbrella header: everything a user of haloshift needs.

#include "error.hpp"
#include "exchange/halo.hpp"
#include "exchange/plan.hpp"
#include "exchange/protocol.hpp"
#include "grid/cartesian_grid.hpp"
#include "grid/neighborhood.hpp"
#include "grid/offset.hpp"
#include "schedule/schedule.hpp"
#include "schedule/neighbor_alltoall.hpp"
#include "schedule/shift.hpp"
#include "schedule/single_hop.hpp"
#include "schedule/team_shift.hpp"
#include "schedule/ttl_multi_hop.hpp"
#include "strategy.hpp"
#include "version.hpp"

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file haloshift.hpp
/// @brief The core: grids, strategies, plans (block, particle, field),
/// migration and the information networks. It needs MPI and the C++20
/// standard library only. The cost model, calibration files, Auto and the
/// advisor are the layer above: <haloshift/auto.hpp> (target haloshift::auto).

#include "error.hpp"
#include "exchange/halo.hpp"
#include "exchange/plan.hpp"
#include "exchange/protocol.hpp"
#include "grid/cartesian_grid.hpp"
#include "grid/neighborhood.hpp"
#include "grid/nodes.hpp"
#include "grid/offset.hpp"
#include "memory/shared_array.hpp"
#include "network/announcement.hpp"
#include "network/local_exchange.hpp"
#include "network/message_codec.hpp"
#include "network/msn_announce.hpp"
#include "network/msn_distances.hpp"
#include "network/msn_topology.hpp"
#include "network/ttl_local_exchange.hpp"
#include "exchange/selection.hpp"
#include "payload/balance.hpp"
#include "payload/domain.hpp"
#include "payload/migrate.hpp"
#include "payload/particles.hpp"
#include "payload/grid_field.hpp"
#include "schedule/schedule.hpp"
#include "schedule/neighbor_alltoall.hpp"
#include "schedule/shift.hpp"
#include "schedule/single_hop.hpp"
#include "schedule/team_shift.hpp"
#include "schedule/ttl_multi_hop.hpp"
#include "log.hpp"
#include "auto_hook.hpp"
#include "strategy.hpp"
#include "strategy_registry.hpp"
#include "version.hpp"

/// @namespace haloshift
/// @brief haloshift's public API: grids, strategies, plans, payloads, the
/// information networks and (with `<haloshift/auto.hpp>`) the model layer.
/// Names in the nested namespaces `detail` and `mpi` are internal and may
/// change without notice.

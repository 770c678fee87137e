// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file auto.hpp
/// @brief The model layer above the core: the Hockney cost model, closed
/// forms, the schedule simulator, calibration (measurement and JSON files,
/// needs nlohmann_json), Auto for every plan kind, explain(), the advisor and
/// the announcement selector. Include it (and link haloshift::auto) when you
/// want them; the core (haloshift.hpp) needs none of it.

#include "haloshift.hpp"
#include "model/calibration.hpp"
#include "model/calibration_file.hpp"
#include "model/closed_form.hpp"
#include "model/hockney.hpp"
#include "model/measure.hpp"
#include "model/round_table.hpp"
#include "model/schedule_cost.hpp"
#include "model/simulator.hpp"
#include "model/staging.hpp"
#include "network/announce_selector.hpp"
#include "select/advisor.hpp"
#include "select/auto.hpp"

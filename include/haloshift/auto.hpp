// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file auto.hpp
/// @brief The model layer above the core: the Hockney cost model, the
/// papers' formulas, the max-plus schedule simulator, calibration (measurement and JSON files,
/// needs nlohmann_json), Auto for every plan kind, explain(), the advisor and
/// the announcement selector. Include it (and link haloshift::auto) when you
/// want them; the core (haloshift.hpp) needs none of it.

#include "haloshift.hpp"
#include "model/calibration/calibration.hpp"
#include "model/calibration/calibration_file.hpp"
#include "model/calibration/measure.hpp"
#include "model/calibration/measure_device.hpp"
#include "model/calibration/round_table.hpp"
#include "model/cost/hockney.hpp"
#include "model/cost/paper_formulas.hpp"
#include "model/simulation/simulator.hpp"
#include "model/simulation/staging.hpp"
#include "select/announce_selector.hpp"
#include "select/advisor.hpp"
#include "select/auto.hpp"
#include "select/auto_choice.hpp"

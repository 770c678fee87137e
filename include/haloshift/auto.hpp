// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file auto.hpp
/// @brief The model layer above the core: the Hockney cost model, calibration
/// (measurement and JSON files), the schedule simulator, Auto, explain() and
/// the advisor. Include it (and link haloshift::auto) when you want them;
/// the core (haloshift.hpp) needs none of it.

#include "haloshift.hpp"

// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file version.hpp
/// @brief haloshift's version. Kept in the tree so that `-I <clone>/include`
/// is all a consumer needs; CMake checks at configure time that it equals
/// project(VERSION) in CMakeLists.txt, so bump both together.

/// Major version: incompatible API changes.
#define HALOSHIFT_VERSION_MAJOR 0
/// Minor version: additions.
#define HALOSHIFT_VERSION_MINOR 1
/// Patch version: fixes.
#define HALOSHIFT_VERSION_PATCH 0
/// "MAJOR.MINOR.PATCH"
#define HALOSHIFT_VERSION_STRING "0.1.0"

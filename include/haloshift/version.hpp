// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file version.hpp
#define HALOSHIFT_VERSION_MAJOR 0
#define HALOSHIFT_VERSION_MINOR 1
#define HALOSHIFT_VERSION_PATCH 0

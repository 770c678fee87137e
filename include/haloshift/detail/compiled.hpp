// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file compiled.hpp
/// @brief Separate compilation of the builders. Header-only by default: every
/// definition is in the headers. With HALOSHIFT_COMPILED defined (what target
/// haloshift::compiled does), the builders (the non-template functions that
/// lay out grids and fields and build plans, below the templates a code calls)
/// are only declared in the headers and come from the library built from
/// src/compiled.cpp (which defines HALOSHIFT_SOURCE). A translation unit then
/// generates code for the templates it instantiates only, not for the
/// builders: docs/performance.md, "Compile time and binary size".

#if defined(HALOSHIFT_COMPILED) && !defined(HALOSHIFT_SOURCE)
#define HALOSHIFT_DEFINE_BUILDERS 0
#else
#define HALOSHIFT_DEFINE_BUILDERS 1
#endif

// On a builder's declaration and its definition: inline where every translation unit defines it.
#if defined(HALOSHIFT_COMPILED) || defined(HALOSHIFT_SOURCE)
#define HALOSHIFT_BUILDER
#else
#define HALOSHIFT_BUILDER inline
#endif

/// Explicit instantiations of templates with the arguments most codes use (a span of positions):
/// compiled once in the library (HALOSHIFT_SOURCE), declared `extern template` with
/// HALOSHIFT_COMPILED, absent header-only.
#if defined(HALOSHIFT_COMPILED) || defined(HALOSHIFT_SOURCE)
#define HALOSHIFT_SHARES_INSTANCES 1
#else
#define HALOSHIFT_SHARES_INSTANCES 0
#endif
#ifdef HALOSHIFT_SOURCE
#define HALOSHIFT_INSTANCE template
#else
#define HALOSHIFT_INSTANCE extern template
#endif

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
/// builders: docs/design.md, "Separate compilation"; docs/performance.md,
/// "Compile time and binary size".

#if defined(HALOSHIFT_COMPILED) && !defined(HALOSHIFT_SOURCE)
/// 1 where the builders' definitions are compiled (header-only, or libhaloshift's own source), else 0.
#define HALOSHIFT_DEFINE_BUILDERS 0
#else
/// 1 where the builders' definitions are compiled (header-only, or libhaloshift's own source), else 0.
#define HALOSHIFT_DEFINE_BUILDERS 1
#endif

#if defined(HALOSHIFT_COMPILED) || defined(HALOSHIFT_SOURCE)
/// On a builder's declaration and its definition: `inline` where every translation unit defines it
/// (header-only), nothing where libhaloshift holds the one definition.
#define HALOSHIFT_BUILDER
#else
/// On a builder's declaration and its definition: `inline` where every translation unit defines it
/// (header-only), nothing where libhaloshift holds the one definition.
#define HALOSHIFT_BUILDER inline
#endif

#if defined(HALOSHIFT_COMPILED) || defined(HALOSHIFT_SOURCE)
/// 1 where templates that most codes instantiate with the same arguments (a span of positions) are
/// explicit instantiations: defined in libhaloshift, `extern template` for its users; 0 header-only.
#define HALOSHIFT_SHARES_INSTANCES 1
#else
/// 1 where templates that most codes instantiate with the same arguments (a span of positions) are
/// explicit instantiations: defined in libhaloshift, `extern template` for its users; 0 header-only.
#define HALOSHIFT_SHARES_INSTANCES 0
#endif

#ifdef HALOSHIFT_SOURCE
/// Begins such an instantiation: a definition in libhaloshift, a declaration for its users.
#define HALOSHIFT_INSTANCE template
#else
/// Begins such an instantiation: a definition in libhaloshift, a declaration for its users.
#define HALOSHIFT_INSTANCE extern template
#endif

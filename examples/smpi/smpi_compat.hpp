// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Forced into every tool compiled with smpicxx (HALOSHIFT_SMPI=ON), after the
// <smpi/smpi_helpers.h> that smpicxx itself forces in. That header turns
// exit() into smpi_exit() with a function-like macro, which also rewrites
// member functions named exit (CLI11's App::exit) and breaks the build. The
// tools never call exit(): they return from main, which SMPI handles. The
// other replacements (malloc, sleep, gettimeofday, getopt, ...) stay.
#ifdef exit
#undef exit
#endif

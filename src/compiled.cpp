// SPDX-License-Identifier: BSD-3-Clause
// haloshift::compiled: the one definition of every builder (detail/compiled.hpp), so that
// translation units built with HALOSHIFT_COMPILED generate code only for the templates they use.
#define HALOSHIFT_SOURCE
#include <haloshift/haloshift.hpp>

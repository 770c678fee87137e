// SPDX-License-Identifier: BSD-3-Clause
// Poison for tests/packaging/core_only: the core (haloshift/haloshift.hpp) must not include <nlohmann/json.hpp>.
#error "haloshift core includes <nlohmann/json.hpp>: it must need MPI and the standard library only, without <filesystem>, <iostream>, <fstream> or nlohmann_json"

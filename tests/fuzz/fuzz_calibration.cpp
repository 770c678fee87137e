// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the calibration-file parser: any bytes either parse to
// a calibration or raise haloshift::error; every other exception, crash,
// sanitizer report or hang is a finding.

#include <haloshift/model/calibration/calibration_file.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const haloshift::calibration c = haloshift::detail::parse_calibration(text, "fuzz.json");
    // What loads must be usable: a finite, non-negative time for a few sizes.
    for (double bytes : {0.0, 1.0, 4096.0, 1e9})
      if (!(c.cost.time(bytes) >= 0)) std::abort();
  } catch (const haloshift::error&) {
    // The documented failure: a message naming the file and the field.
  }
  return 0;
}

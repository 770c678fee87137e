# SPDX-License-Identifier: BSD-3-Clause
# One fuzz smoke test (tests/fuzz/CMakeLists.txt): runs FUZZER on a fresh, empty scratch corpus
# SCRATCH followed by the checked-in seeds SEEDS. libFuzzer writes the inputs it finds into its
# first corpus directory; with the seeds first, every run would add files to the source tree, and a
# corpus grown by earlier runs would make the run depend on them. Fails if the fuzzer does.
#   cmake -DFUZZER=<exe> -DSCRATCH=<dir> -DSEEDS=<dir> -DMAX_LEN=<n> -P run_smoke.cmake
foreach(var FUZZER SCRATCH SEEDS MAX_LEN)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_smoke.cmake: -D${var}=... missing")
  endif()
endforeach()
file(REMOVE_RECURSE "${SCRATCH}")
file(MAKE_DIRECTORY "${SCRATCH}")
# 20000 inputs, fixed seed: the same inputs on every run (the long runs are in docs/fuzzing.md).
execute_process(COMMAND "${FUZZER}" -runs=20000 -seed=1 -max_len=${MAX_LEN} "${SCRATCH}" "${SEEDS}"
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (${status}); a crash-<sha1> file in the working directory "
                      "reproduces it (docs/fuzzing.md)")
endif()

# SPDX-License-Identifier: BSD-3-Clause
# Runs haloshift-advise on a small grid with a high-latency model (so every
# family wins somewhere is not required, only named) and checks its outputs.
file(REMOVE ${SVG})
execute_process(COMMAND ${ADVISE} --alpha 5us --beta 0.5ns --gamma 0.5us --grid 4x4x4 --k 1:3 --bytes 8:64K:4
                        --svg ${SVG}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "haloshift-advise failed (${rc}): ${err}")
endif()
foreach(word Shift "TeamShift (2,2,2)" SingleHop TtlMultiHop "trade-off" "k = 3")
  string(FIND "${out}" "${word}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "haloshift-advise output lacks '${word}':\n${out}")
  endif()
endforeach()
if(NOT EXISTS ${SVG})
  message(FATAL_ERROR "haloshift-advise wrote no SVG at ${SVG}")
endif()
file(READ ${SVG} svg)
foreach(word "<svg" "</svg>" ">Shift<" ">TeamShift (c = team size)<" ">SingleHop<" ">TtlMultiHop<" "TeamShift = Shift"
             "block size per rank" "k (neighbourhood width)")
  string(FIND "${svg}" "${word}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the SVG lacks '${word}'")
  endif()
endforeach()
message(STATUS "haloshift-advise: table and SVG name every strategy")

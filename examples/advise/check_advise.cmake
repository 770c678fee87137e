# SPDX-License-Identifier: BSD-3-Clause
# Runs haloshift-advise on a small grid with a high-latency model (so every
# family wins somewhere is not required, only named) and checks its outputs.
# Fails unless `text` holds every one of the words after it (`what` says whose text it is).
function(require_words text what)
  foreach(word IN LISTS ARGN)
    string(FIND "${text}" "${word}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${what} lacks '${word}':\n${text}")
    endif()
  endforeach()
endfunction()

file(REMOVE ${SVG})
execute_process(COMMAND ${ADVISE} --alpha 5us --beta 0.5ns --gamma 0.5us --grid 4x4x4 --k 1:3 --bytes 8:64K:4
                        --svg ${SVG}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "haloshift-advise failed (${rc}): ${err}")
endif()
require_words("${out}" "haloshift-advise output" Shift "TeamShift (2,2,2)" SingleHop TtlMultiHop "trade-off" "k = 3")
if(NOT EXISTS ${SVG})
  message(FATAL_ERROR "haloshift-advise wrote no SVG at ${SVG}")
endif()
file(READ ${SVG} svg)
require_words("${svg}" "the SVG" "<svg" "</svg>" ">Shift<" ">TeamShift (c = team size)<" ">SingleHop<" ">TtlMultiHop<"
              "TeamShift = Shift" "block size per rank" "k (neighbourhood width)")
string(FIND "${out}" "NodeAggregate" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "haloshift-advise priced NodeAggregate without nodes:\n${out}")
endif()
# With nodes of 8 ranks (8 nodes of the 4x4x4 grid): every strategy flat and +shm, NodeAggregate too.
execute_process(COMMAND ${ADVISE} --alpha 5us --beta 0.5ns --gamma 0.5us --grid 4x4x4 --k 1 --bytes 64,4K --node-size 8
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "haloshift-advise --node-size 8 failed (${rc}): ${err}")
endif()
require_words("${out}" "haloshift-advise --node-size 8 output" "8 ranks per node" "| NodeAggregate |"
              "| NodeAggregate+shm |" "| Shift+shm |")
message(STATUS "haloshift-advise: table and SVG name every strategy, NodeAggregate with nodes")

# SPDX-License-Identifier: BSD-3-Clause
# cmake -DSOURCE_DIR= -DWORK_DIR= -DCONSUMER_DIR= -DGIT_EXECUTABLE= -DGENERATOR= -DMPI_CXX_COMPILER=
#       -P fetch_content.cmake
# Clones SOURCE_DIR's repository into WORK_DIR and builds and runs the FetchContent
# consumer against that clone (file://), at SOURCE_DIR's HEAD. A clone has the
# committed files only: uncommitted changes in SOURCE_DIR are not tested here.
# Prints "haloshift-packaging-skip:" (the test's SKIP_REGULAR_EXPRESSION) when there is no git repository.
cmake_minimum_required(VERSION 3.21)
if(NOT GIT_EXECUTABLE)
  message("haloshift-packaging-skip: git not found, FetchContent from a git repository not tested")
  return()
endif()
execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --show-toplevel RESULT_VARIABLE _status
                OUTPUT_VARIABLE _top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT _status EQUAL 0)
  message("haloshift-packaging-skip: ${SOURCE_DIR} is not a git work tree, FetchContent from git not tested")
  return()
endif()
execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse HEAD OUTPUT_VARIABLE _head
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                OUTPUT_VARIABLE _dirty OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
if(_dirty)
  message(STATUS "note: ${SOURCE_DIR} has uncommitted changes; this test builds the committed ${_head} only")
endif()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${GIT_EXECUTABLE} clone --quiet --no-checkout ${_top} ${WORK_DIR}/haloshift.git
                COMMAND_ERROR_IS_FATAL ANY)
message(STATUS "FetchContent of file://${WORK_DIR}/haloshift.git at ${_head}")
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --build-and-test ${CONSUMER_DIR} ${WORK_DIR}/build
                        --build-generator ${GENERATOR}
                        --build-options -DHALOSHIFT_GIT_REPOSITORY=file://${WORK_DIR}/haloshift.git
                                        -DHALOSHIFT_GIT_TAG=${_head} -DMPI_CXX_COMPILER=${MPI_CXX_COMPILER}
                                        -DFETCHCONTENT_BASE_DIR=${WORK_DIR}/deps
                        --test-command ${CMAKE_CTEST_COMMAND} --output-on-failure
                COMMAND_ERROR_IS_FATAL ANY)

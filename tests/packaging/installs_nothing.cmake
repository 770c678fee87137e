# SPDX-License-Identifier: BSD-3-Clause
# cmake -DBUILD_DIR=<dir> -DSTAGE=<dir> -P installs_nothing.cmake
# Installs BUILD_DIR into STAGE and fails if anything was installed.
cmake_minimum_required(VERSION 3.21)
file(REMOVE_RECURSE ${STAGE})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${STAGE} COMMAND_ERROR_IS_FATAL ANY)
file(GLOB_RECURSE _installed LIST_DIRECTORIES false ${STAGE}/*)
if(_installed)
  list(JOIN _installed "\n  " _installed)
  message(FATAL_ERROR "installing a project that embeds haloshift installed haloshift's files:\n  ${_installed}")
endif()
message(STATUS "nothing installed")

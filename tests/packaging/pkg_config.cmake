# SPDX-License-Identifier: BSD-3-Clause
# cmake -DPREFIX= -DWORK_DIR= -DSOURCE= -DVERSION= -DPKG_CONFIG= -DMPI_CXX_COMPILER= -DCXX_COMPILER=
#       -DMPIEXEC= -DMPIEXEC_NUMPROC_FLAG= -DMPIEXEC_EXTRA= -P pkg_config.cmake
# A consumer of the haloshift installed in PREFIX through pkg-config: compiled with
# mpicxx $(pkg-config --cflags haloshift) and run on 2 ranks; when haloshift.pc
# requires the MPI's module, also with the plain compiler and --cflags --libs.
cmake_minimum_required(VERSION 3.21)
file(GLOB_RECURSE _pc ${PREFIX}/*/pkgconfig/haloshift.pc)
if(NOT _pc)
  message(FATAL_ERROR "no pkgconfig/haloshift.pc under ${PREFIX}")
endif()
get_filename_component(_pc_dir ${_pc} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${_pc_dir}:$ENV{PKG_CONFIG_PATH}")
message(STATUS "PKG_CONFIG_PATH=$ENV{PKG_CONFIG_PATH}")

function(pkg_config out)
  execute_process(COMMAND ${PKG_CONFIG} ${ARGN} haloshift OUTPUT_VARIABLE _out OUTPUT_STRIP_TRAILING_WHITESPACE
                  COMMAND_ERROR_IS_FATAL ANY)
  message(STATUS "pkg-config ${ARGN} haloshift: ${_out}")
  set(${out} "${_out}" PARENT_SCOPE)
endfunction()
function(run_on_two_ranks exe)
  separate_arguments(_extra UNIX_COMMAND "${MPIEXEC_EXTRA}")
  execute_process(COMMAND ${MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 2 ${_extra} ${exe} COMMAND_ECHO STDOUT
                  COMMAND_ERROR_IS_FATAL ANY)
endfunction()

pkg_config(_version --modversion)
if(NOT _version STREQUAL VERSION)
  message(FATAL_ERROR "haloshift.pc says version ${_version}, the project ${VERSION}")
endif()
pkg_config(_cflags --cflags)
separate_arguments(_cflags UNIX_COMMAND "${_cflags}")
if(NOT "-std=c++20" IN_LIST _cflags)
  message(FATAL_ERROR "pkg-config --cflags haloshift lacks -std=c++20")
endif()
pkg_config(_includedir --variable=includedir)
if(NOT EXISTS ${_includedir}/haloshift/haloshift.hpp)
  message(FATAL_ERROR "includedir ${_includedir} of haloshift.pc has no haloshift/haloshift.hpp (not relocated?)")
endif()

file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${MPI_CXX_COMPILER} ${_cflags} ${SOURCE} -o ${WORK_DIR}/consumer_pc COMMAND_ECHO STDOUT
                COMMAND_ERROR_IS_FATAL ANY)
run_on_two_ranks(${WORK_DIR}/consumer_pc)

pkg_config(_requires --print-requires)
if(_requires)
  pkg_config(_libs --libs)
  separate_arguments(_libs UNIX_COMMAND "${_libs}")
  execute_process(COMMAND ${CXX_COMPILER} ${_cflags} ${SOURCE} -o ${WORK_DIR}/consumer_pc_plain ${_libs}
                  COMMAND_ECHO STDOUT COMMAND_ERROR_IS_FATAL ANY)
  run_on_two_ranks(${WORK_DIR}/consumer_pc_plain)
else()
  message(STATUS "haloshift.pc requires no MPI module: the MPI compiler wrapper is expected")
endif()

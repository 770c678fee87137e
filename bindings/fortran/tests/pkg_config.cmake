# SPDX-License-Identifier: BSD-3-Clause
# cmake -DPREFIX= -DWORK_DIR= -DSOURCE= -DVERSION= -DPKG_CONFIG= -DFORTRAN_COMPILER= -DMPIEXEC=
#       -DMPIEXEC_NUMPROC_FLAG= -DMPIEXEC_EXTRA= -P pkg_config.cmake
# A Fortran consumer of the haloshift installed in PREFIX through pkg-config: the heat example
# compiled with the MPI's Fortran wrapper, $(pkg-config --cflags haloshift-fortran) and --libs,
# and run on 2 ranks (it checks itself against a serial run).
cmake_minimum_required(VERSION 3.21)
file(GLOB_RECURSE _pc ${PREFIX}/*/pkgconfig/haloshift-fortran.pc)
if(NOT _pc)
  message(FATAL_ERROR "no pkgconfig/haloshift-fortran.pc under ${PREFIX}")
endif()
get_filename_component(_pc_dir ${_pc} DIRECTORY)
file(GLOB_RECURSE _pc_all ${PREFIX}/*/pkgconfig/*.pc)
set(_path ${_pc_dir})
foreach(_other IN LISTS _pc_all)  # the modules it requires (haloshift-c) may lie in another pkgconfig folder
  get_filename_component(_other_dir ${_other} DIRECTORY)
  list(APPEND _path ${_other_dir})
endforeach()
list(REMOVE_DUPLICATES _path)
string(REPLACE ";" ":" _path "${_path}")
set(ENV{PKG_CONFIG_PATH} "${_path}:$ENV{PKG_CONFIG_PATH}")

function(pkg_config out)
  execute_process(COMMAND ${PKG_CONFIG} ${ARGN} haloshift-fortran OUTPUT_VARIABLE _out
                  OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  message(STATUS "pkg-config ${ARGN} haloshift-fortran: ${_out}")
  set(${out} "${_out}" PARENT_SCOPE)
endfunction()

pkg_config(_version --modversion)
if(NOT _version STREQUAL VERSION)
  message(FATAL_ERROR "haloshift-fortran.pc says version ${_version}, the project ${VERSION}")
endif()
pkg_config(_includedir --variable=includedir)
if(NOT EXISTS ${_includedir}/haloshift/fortran/haloshift.mod)
  message(FATAL_ERROR "no haloshift/fortran/haloshift.mod under the includedir ${_includedir} (not relocated?)")
endif()
pkg_config(_libdir --variable=libdir)
pkg_config(_cflags --cflags)
pkg_config(_libs --libs)
separate_arguments(_cflags UNIX_COMMAND "${_cflags}")
separate_arguments(_libs UNIX_COMMAND "${_libs}")

file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${FORTRAN_COMPILER} ${_cflags} ${SOURCE} -o ${WORK_DIR}/heat_pc ${_libs}
                        -Wl,-rpath,${_libdir}
                WORKING_DIRECTORY ${WORK_DIR} COMMAND_ECHO STDOUT COMMAND_ERROR_IS_FATAL ANY)
separate_arguments(_extra UNIX_COMMAND "${MPIEXEC_EXTRA}")
execute_process(COMMAND ${MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 2 ${_extra} ${WORK_DIR}/heat_pc COMMAND_ECHO STDOUT
                COMMAND_ERROR_IS_FATAL ANY)

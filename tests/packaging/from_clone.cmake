# SPDX-License-Identifier: BSD-3-Clause
# cmake -DSOURCE_DIR= -DWORK_DIR= -DMPI_CXX_COMPILER= [-DCLANG=] -DMPIEXEC= -DMPIEXEC_NUMPROC_FLAG=
#       -DMPIEXEC_EXTRA= -P from_clone.cmake
# The consumers of a Makefile-built code: plain `mpicxx -std=c++20 -I <clone>/include`, no CMake, no
# configure step, nothing generated. The model layer's umbrella, whose first line includes the core's
# (so the core umbrella is compiled on its own too; without nlohmann_json: packaging.core_only), is
# compiled with the MPI wrapper's own compiler and, when CLANG names one, with clang++ behind the same
# wrapper (OMPI_CXX, MPICH_CXX), warnings as errors, and run on 2 ranks.
cmake_minimum_required(VERSION 3.21)
file(MAKE_DIRECTORY ${WORK_DIR})
# Open MPI's deprecated C++ bindings (pulled in by mpicxx) warn under -Wextra; skip them as CMake's FindMPI does.
set(_flags -std=c++20 -Wall -Wextra -Wpedantic -Werror -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX -I${SOURCE_DIR}/include)
set(_compilers native)
if(CLANG)
  list(APPEND _compilers clang)
endif()
separate_arguments(_extra UNIX_COMMAND "${MPIEXEC_EXTRA}")
foreach(_compiler IN LISTS _compilers)
  if(_compiler STREQUAL "clang")
    set(ENV{OMPI_CXX} ${CLANG})
    set(ENV{MPICH_CXX} ${CLANG})
  endif()
  foreach(_consumer consumer_auto)
    set(_exe ${WORK_DIR}/${_consumer}_${_compiler})
    execute_process(COMMAND ${MPI_CXX_COMPILER} ${_flags} ${CMAKE_CURRENT_LIST_DIR}/${_consumer}.cpp -o ${_exe}
                    COMMAND_ECHO STDOUT COMMAND_ERROR_IS_FATAL ANY)
    execute_process(COMMAND ${MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 2 ${_extra} ${_exe} COMMAND_ECHO STDOUT
                    COMMAND_ERROR_IS_FATAL ANY)
  endforeach()
endforeach()

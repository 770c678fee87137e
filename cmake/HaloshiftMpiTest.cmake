# SPDX-License-Identifier: BSD-3-Clause
# haloshift_add_mpi_test(NAME <name> TARGET <target> RANKS <n>... [ARGS <args>...])
# Adds one CTest test per rank count, named <name>.np<n> and labelled "mpi" and
# "np<n>". Launches with the MPIEXEC_* variables of FindMPI; oversubscribes and
# allows root under Open MPI, since CI machines have two cores and run as root.
# PROCESSORS is the rank count, so `ctest -j <cores>` runs a test beside others
# only when the ranks fit (a test of more ranks than -j runs alone).
# HALOSHIFT_TEST_TIMEOUT: seconds per test (scripts/test lowers it under MPICH).

execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _haloshift_mpiexec_version
                ERROR_VARIABLE _haloshift_mpiexec_version)
if(_haloshift_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(HALOSHIFT_MPI_FLAVOR "openmpi")
  set(HALOSHIFT_MPIEXEC_EXTRA --oversubscribe)
else()
  set(HALOSHIFT_MPI_FLAVOR "mpich")
  set(HALOSHIFT_MPIEXEC_EXTRA)
endif()

set(HALOSHIFT_TEST_TIMEOUT 900 CACHE STRING "Time limit of each MPI test, in seconds")

function(haloshift_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;TARGET" "RANKS;ARGS" ${ARGN})
  foreach(n IN LISTS T_RANKS)
    add_test(NAME ${T_NAME}.np${n}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${HALOSHIFT_MPIEXEC_EXTRA} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${T_TARGET}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    set_tests_properties(${T_NAME}.np${n} PROPERTIES LABELS "mpi;np${n}" PROCESSORS ${n} TIMEOUT ${HALOSHIFT_TEST_TIMEOUT}
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;ASAN_OPTIONS=detect_leaks=0")
  endforeach()
endfunction()

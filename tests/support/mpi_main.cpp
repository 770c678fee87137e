// SPDX-License-Identifier: BSD-3-Clause
// Catch2 main for MPI tests: every rank runs the same tests; rank 0 prints,
// the other ranks print only when they failed; the exit code is reduced so
// that all ranks (and so mpiexec and CTest) agree on the result.
// Catch2 v3 (HALOSHIFT_CATCH2_V3, tests/CMakeLists.txt) links its runner from Catch2::Catch2; v2 compiles it here.
#if defined(HALOSHIFT_CATCH2_V3)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif
#include <mpi.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

int main(int argc, char** argv) {
  // Threads: plan_options::background calls MPI from a plan's thread, and test_split_phase.cpp
  // runs several such exchanges at once (MPI_THREAD_MULTIPLE; Open MPI and MPICH provide it).
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Catch::Session session;
  int status = session.applyCommandLine(argc, argv);
  std::string log;
  if (status == 0) {
    if (rank != 0) {
      log = "haloshift-test-rank" + std::to_string(rank) + "-" + std::to_string(::getpid()) + ".log";
#if defined(HALOSHIFT_CATCH2_V3)
      session.configData().defaultOutputFilename = log;  // the reporters without a file of their own
#else
      session.configData().outputFilename = log;
#endif
    }
    status = session.run();
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!log.empty()) {
    if (status != 0) {
      std::ifstream in(log);
      std::stringstream text;
      text << in.rdbuf();
      std::cerr << "---- rank " << rank << " ----\n" << text.str() << std::flush;
    }
    std::remove(log.c_str());
  }
  MPI_Finalize();
  return worst;
}

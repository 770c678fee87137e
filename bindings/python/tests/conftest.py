# SPDX-License-Identifier: BSD-3-Clause
"""Every rank runs the same tests in the same order, and most of them are collective: a test that
fails on one rank only would leave the others waiting in its next collective. A failure therefore
prints its report and aborts the whole job (mpiexec then exits nonzero), instead of hanging."""
import sys

from mpi4py import MPI


def pytest_runtest_logreport(report):
    if report.failed:
        sys.stderr.write(f"\nrank {MPI.COMM_WORLD.rank}: {report.nodeid} FAILED\n{report.longreprtext}\n")
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)

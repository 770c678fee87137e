# SPDX-License-Identifier: BSD-3-Clause
"""Bad input from Python: every rank raises haloshift.Error naming the problem, nothing crashes or
hangs, and the plan works as before afterwards. Run under mpiexec at 1 to 4 ranks (label python)."""
import functools

import numpy as np
import pytest
from mpi4py import MPI

import haloshift as hs
import oracle

COMM = MPI.COMM_WORLD
CELLS3 = (7, 6, 5)
PERIODIC = (True, False, True)


@functools.lru_cache(maxsize=None)
def plan():
    return hs.FieldPlan(hs.Grid(COMM, dims=(0, 0, 0), periodic=PERIODIC), CELLS3, ghost=1, strategy="Shift")


def still_works(p):
    """The plan's exchanges after an error are those of a plan that never saw one."""
    a = oracle.filled(p, np.float64, "C")
    p.forward(a)
    assert np.array_equal(a, oracle.expected_forward(p, CELLS3, PERIODIC, "full", np.float64))


def raises(match, call):
    with pytest.raises(hs.Error, match=match):
        call()


def test_error_is_a_runtime_and_a_value_error():
    assert issubclass(hs.Error, RuntimeError) and issubclass(hs.Error, ValueError)


@pytest.mark.parametrize("dtype", [np.float16, np.complex128, np.int16, np.uint32, np.dtype(">f8"), object])
def test_wrong_dtype(dtype):
    p = plan()
    raises("dtype", lambda: p.forward(np.zeros(p.shape.padded, dtype=dtype)))
    still_works(p)


def test_read_only():
    p = plan()
    a = p.zeros()
    a.setflags(write=False)
    raises("read-only", lambda: p.forward(a))
    raises("read-only", lambda: p.reverse(a))
    raises("read-only", lambda: p.start_forward(a))
    still_works(p)


def test_not_contiguous():
    p = plan()
    padded = p.shape.padded
    every_other = np.zeros(padded[:2] + (2 * padded[2],))[:, :, ::2]  # the right shape, stride 2 along z
    raises("not contiguous", lambda: p.forward(every_other))
    mixed = np.zeros((padded[1], padded[0], padded[2])).transpose(1, 0, 2)  # y fastest between x and z
    if padded[0] > 1 and padded[1] > 1:
        raises("not contiguous", lambda: p.forward(mixed))
    still_works(p)


def test_no_ghost_room():
    p = plan()
    raises(r"shape .* but the plan needs", lambda: p.forward(np.zeros(p.shape.interior)))
    raises(r"shape .* but the plan needs", lambda: p.forward(np.zeros(p.shape.padded[:2])))
    raises(r"shape .* but the plan needs", lambda: p.forward(np.zeros(p.shape.padded + (2,))))
    raises(r"shape .* but the plan needs", lambda: p.reverse(np.zeros(tuple(n + 1 for n in p.shape.padded))))
    still_works(p)


def test_not_an_array():
    p = plan()
    with pytest.raises(TypeError):
        p.forward([[0.0]])
    still_works(p)


def test_bad_op():
    p = plan()
    raises("op must be", lambda: p.reverse(p.zeros(), op="product"))
    still_works(p)


def test_bad_strategy_name_on_every_rank():
    grid = hs.Grid(COMM, dims=(0, 0, 0), periodic=PERIODIC)
    raises("Bogus", lambda: hs.FieldPlan(grid, CELLS3, strategy="Bogus"))
    # a strategy that cannot carry fields
    raises("TeamShift", lambda: hs.FieldPlan(grid, CELLS3, strategy="TeamShift"))


def test_bad_arguments_on_every_rank():
    grid = hs.Grid(COMM, dims=(0, 0, 0), periodic=PERIODIC)
    raises("ghost", lambda: hs.FieldPlan(grid, CELLS3, ghost=-1))
    raises("global", lambda: hs.FieldPlan(grid, (7, 0, 5)))
    raises("cells must have 3 entries", lambda: hs.FieldPlan(grid, (7, 6)))
    raises("pattern must be", lambda: hs.FieldPlan(grid, CELLS3, pattern="corners"))
    # differs between ranks: found collectively, the same error on every rank
    if COMM.size > 1:
        raises("same on all ranks", lambda: hs.FieldPlan(grid, (7 + COMM.rank, 6, 5)))
    raises("dims", lambda: hs.Grid(COMM, dims=(COMM.size + 1, 1, 1)))


def test_wrong_communicators():
    raises("mpi4py communicator", lambda: hs.Grid(42))
    raises("COMM_NULL", lambda: hs.Grid(MPI.COMM_NULL))
    if COMM.size > 1:
        half = COMM.Split(COMM.rank % 2, COMM.rank)
        inter = half.Create_intercomm(0, COMM, 1 - COMM.rank % 2, tag=7)  # leaders: ranks 0 and 1
        raises("intercommunicator", lambda: hs.Grid(inter))
        inter.Free()
        half.Free()


def test_in_flight():
    p = plan()
    a = oracle.filled(p, np.float64, "C")
    pending = p.start_forward(a)
    with pytest.raises(hs.Error):
        p.forward(p.zeros())  # one exchange per plan at a time
    pending.wait()
    assert np.array_equal(a, oracle.expected_forward(p, CELLS3, PERIODIC, "full", np.float64))


def test_calibration_file_missing():
    raises("calibration|/no/such/file", lambda: hs.use_calibration("/no/such/file.json"))

# SPDX-License-Identifier: BSD-3-Clause
"""Field plans from Python against the oracle from global coordinates (tests/oracle.py): every
strategy, periodic and not, ghost widths 1 to 3 and per side, patterns, C and Fortran order, the four
dtypes, padded views, uneven cuts, reverse with sum, min and max, split phase. Run under mpiexec at
1 to 4 ranks (CTest label python)."""
import functools

import numpy as np
import pytest
from mpi4py import MPI

import haloshift as hs
import oracle

COMM = MPI.COMM_WORLD
DTYPES = [np.float32, np.float64, np.int32, np.int64]
STRATEGIES = ["Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall", "Auto"]
CELLS3 = (7, 6, 5)


@functools.lru_cache(maxsize=None)
def grid(periodic):
    return hs.Grid(COMM, dims=[0] * len(periodic), periodic=periodic)


def agreed(ok, what):
    """Asserts `ok` here and on every other rank (a rank whose assertion failed fails them all)."""
    everywhere = COMM.allreduce(int(bool(ok)), op=MPI.MIN) == 1  # first: every rank reaches it
    assert ok, what
    assert everywhere, f"another rank failed: {what}"


def check_forward(plan, cells, periodic, pattern="full", dtype=np.float64, order="C"):
    a = oracle.filled(plan, dtype, order)
    plan.forward(a)
    want = oracle.expected_forward(plan, cells, periodic, pattern, dtype)
    bad = np.argwhere(a != want)
    agreed(bad.size == 0, f"{plan.strategy}: {len(bad)} cells differ, first at {bad[:1].tolist()}")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("periodic", [(True, True, True), (True, False, True), (False, False, False)])
@pytest.mark.parametrize("ghost", [1, 2])
def test_forward_every_strategy(strategy, periodic, ghost):
    plan = hs.FieldPlan(grid(periodic), CELLS3, ghost=ghost, strategy=strategy)
    if strategy != "Auto":
        assert plan.strategy.lower() == strategy.lower()
    check_forward(plan, CELLS3, periodic)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_forward_dtypes_and_orders(dtype, order):
    periodic = (True, False, True)
    plan = hs.FieldPlan(grid(periodic), CELLS3, ghost=1, strategy="Shift")
    check_forward(plan, CELLS3, periodic, dtype=dtype, order=order)


@pytest.mark.parametrize("strategy", ["Shift", "SingleHop"])
@pytest.mark.parametrize("pattern", ["faces", "faces_and_edges", "full"])
def test_per_side_widths_and_patterns(strategy, pattern):
    periodic = (True, True, False)
    plan = hs.FieldPlan(grid(periodic), CELLS3, ghost=(2, 1, 0), ghost_high=(0, 1, 1), strategy=strategy,
                        pattern=pattern)
    assert plan.shape.ghost_low == (2, 1, 0) and plan.shape.ghost_high == (0, 1, 1)
    check_forward(plan, CELLS3, periodic, pattern=pattern, order="F")


@pytest.mark.parametrize("strategy", ["Shift", "TtlMultiHop"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_2d_ghosts_wider_than_the_interior(strategy, order):
    periodic = (True, False)
    plan = hs.FieldPlan(grid(periodic), (9, 8), ghost=3, strategy=strategy)
    assert len(plan.shape.padded) == 2
    check_forward(plan, (9, 8), periodic, dtype=np.int32, order=order)


def test_padded_rows_are_used_in_place_and_left_alone():
    periodic = (True, True, True)
    plan = hs.FieldPlan(grid(periodic), CELLS3, ghost=1, strategy="Shift")
    rows = plan.shape.padded
    big = np.full(rows[:2] + (rows[2] + 3,), 99.0)
    view = big[:, :, :rows[2]]  # rows of the last axis padded by 3 elements
    view[...] = oracle.filled(plan, np.float64, "C")
    plan.forward(view)
    agreed(np.array_equal(view, oracle.expected_forward(plan, CELLS3, periodic, "full", np.float64)), "padded view")
    agreed(np.all(big[:, :, rows[2]:] == 99.0), "the padding was written")


def test_uneven_cuts_with_an_empty_box():
    periodic = (True, True, True)
    g = grid(periodic)
    sizes = [0 if c == 1 else 2 + c for c in range(g.dims[0])]  # box 1 (if any) owns no cells
    cuts_x = list(np.cumsum([0] + sizes))
    plan = hs.FieldPlan(g, (cuts_x[-1], 6, 5), ghost=2, cuts=(cuts_x, None, None), strategy="Shift")
    assert plan.shape.interior[0] == sizes[g.coords[0]]
    check_forward(plan, (cuts_x[-1], 6, 5), periodic)


@pytest.mark.parametrize("strategy", ["Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall"])
@pytest.mark.parametrize("periodic", [(True, True, True), (False, True, False)])
@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_reverse_sum(strategy, periodic, dtype):
    plan = hs.FieldPlan(grid(periodic), CELLS3, ghost=(1, 2, 1), strategy=strategy)
    g, _, _ = oracle.global_cells(plan, CELLS3, periodic)
    a = np.array(oracle.code(g), dtype=dtype)  # every cell, ghosts too, holds its global cell's code
    plan.reverse(a, op="sum")
    copies = oracle.ghost_copies(COMM, plan, CELLS3, periodic, "full")
    inner = plan.interior(a)
    gi = [plan.interior(gd) for gd in g]
    want = oracle.code(gi) * (1 + copies[tuple(gi)])
    agreed(np.array_equal(inner, want.astype(dtype)), f"{strategy}: reverse sum")


@pytest.mark.parametrize("op,sign", [("max", 1), ("min", -1)])
@pytest.mark.parametrize("strategy", ["Shift", "SingleHop"])
def test_reverse_min_max(op, sign, strategy):
    periodic = (True, False, True)
    plan = hs.FieldPlan(grid(periodic), CELLS3, ghost=1, strategy=strategy)
    g, written, ghost = oracle.global_cells(plan, CELLS3, periodic)
    a = oracle.code(g).astype(np.int32)
    a[ghost] += sign * 1000 * (COMM.rank + 1)  # each copy says which rank held it
    plan.reverse(a, op=op)
    holder = np.zeros(CELLS3, dtype=np.int64)  # 1 + the highest rank holding a copy, 0: none
    copies = written & ghost
    np.maximum.at(holder, tuple(gd[copies] for gd in g), COMM.rank + 1)
    COMM.Allreduce(MPI.IN_PLACE, holder, op=MPI.MAX)
    gi = tuple(plan.interior(gd) for gd in g)
    want = oracle.code(gi) + sign * 1000 * holder[gi]
    agreed(np.array_equal(plan.interior(a), want), f"{strategy}: reverse {op}")


@pytest.mark.parametrize("strategy", ["Shift", "SingleHop", "TtlMultiHop"])
def test_split_phase(strategy):
    periodic = (True, True, False)
    plan = hs.FieldPlan(grid(periodic), CELLS3, ghost=2, strategy=strategy)
    a = oracle.filled(plan, np.float64, "C")
    pending = plan.start_forward(a)
    pending.progress()
    while not pending.test():
        pending.progress()
    agreed(np.array_equal(a, oracle.expected_forward(plan, CELLS3, periodic, "full", np.float64)), "start_forward")
    g, _, _ = oracle.global_cells(plan, CELLS3, periodic)
    b = oracle.code(g).astype(np.int64)
    plan.start_reverse(b, "sum").wait()
    copies = oracle.ghost_copies(COMM, plan, CELLS3, periodic, "full")
    gi = tuple(plan.interior(gd) for gd in g)
    agreed(np.array_equal(plan.interior(b), oracle.code(gi) * (1 + copies[gi])), "start_reverse")


def test_grid_properties():
    g = hs.Grid(COMM, dims=(0, 0, 0), periodic=(True, False, True), order="first_fastest")
    assert g.size == COMM.size and g.rank == COMM.rank and g.ndims == 3
    assert int(np.prod(g.dims)) == g.size
    assert g.periodic == (True, False, True)
    x, y, z = g.coords
    assert g.rank == x + g.dims[0] * (y + g.dims[1] * z)  # first_fastest: x varies fastest
    assert g.comm.Get_size() == COMM.size and g.comm != COMM


def test_explain_and_auto():
    periodic = (True, True, True)
    table = hs.explain(grid(periodic), (32, 32, 32), ghost=1)
    assert table and all(set(row) == {"strategy", "team", "shared_memory", "seconds"} for row in table)
    assert [row["seconds"] for row in table] == sorted(row["seconds"] for row in table)
    plan = hs.FieldPlan(grid(periodic), (32, 32, 32), ghost=1, strategy="Auto")
    assert plan.strategy.lower() == table[0]["strategy"].lower()
    assert COMM.allgather(plan.strategy) == [plan.strategy] * COMM.size


def test_use_calibration(tmp_path):
    """Auto and explain read the calibration file given: a larger latency, a larger prediction."""
    folder = COMM.bcast(str(tmp_path) if COMM.rank == 0 else None)  # rank 0 writes, every rank reads
    predictions = []
    for alpha in (1e-6, 1e-3):
        path = f"{folder}/calibration-{alpha}.json"
        if COMM.rank == 0:
            with open(path, "w") as f:
                f.write(f'{{"haloshift_calibration": 1, "alpha_s": {alpha}, "beta_s_per_byte": 1e-10, "gamma_s": 0}}\n')
        COMM.Barrier()
        hs.use_calibration(path)
        table = hs.explain(grid((True, True, True)), (32, 32, 32), ghost=1)
        predictions.append({row["strategy"]: row["seconds"] for row in table}["Shift"])
    if COMM.size > 1:
        assert predictions[1] > predictions[0] > 0
    else:  # one rank: no message leaves it
        assert predictions == [0.0, 0.0]


@pytest.mark.parametrize("remainder", ["first", "last"])
def test_remainder_cells(remainder):
    """grid's remainder: the boxes that take the cells left over (PETSc: the first ones)."""
    g = hs.Grid(COMM, dims=(0, 0, 0), periodic=(True, True, True), remainder=remainder)
    plan = hs.FieldPlan(g, CELLS3, ghost=1, strategy="SingleHop")
    for d in range(3):
        n, p, c = CELLS3[d], g.dims[d], g.coords[d]
        wide = c < n % p if remainder == "first" else c >= p - n % p
        assert plan.shape.interior[d] == n // p + int(wide)
    check_forward(plan, CELLS3, (True, True, True))

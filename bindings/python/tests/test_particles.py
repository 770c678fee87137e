# SPDX-License-Identifier: BSD-3-Clause
"""Particles from Python: migrate (every particle lands in its owner's box with its companions, once,
in the documented order), particle plans (ghosts against a brute-force list from the allgathered
positions, tests/oracle.py), forward of companions, reverse sum, split phase, rebuild; positions as
(n, 3) and (n, 4) arrays or three 1D arrays, float64 and float32. mpiexec at 1 to 4 ranks."""
import functools

import numpy as np
import pytest
from mpi4py import MPI

import haloshift as hs
import oracle

COMM = MPI.COMM_WORLD
DOMAIN = ((0.0, 0.0, 0.0), (12.0, 10.0, 8.0))
LENGTHS = (12.0, 10.0, 8.0)
STRATEGIES = ["Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall", "Auto"]
ID_BASE = 100000  # particle ids: rank * ID_BASE + index


@functools.lru_cache(maxsize=None)
def grid(periodic=(True, True, True)):
    return hs.Grid(COMM, dims=(0, 0, 0), periodic=periodic, lengths=LENGTHS)


def scattered(n, seed, outside=False):
    """ids and (n, 3) positions anywhere in the domain, on multiples of 1/64 so that periodic shifts
    are exact; with `outside`, some lie one domain length away along x (migrate wraps them back)."""
    rng = np.random.default_rng(1000 * seed + COMM.rank)
    ids = COMM.rank * ID_BASE + np.arange(n, dtype=np.int64)
    x = np.stack([rng.integers(0, int(64 * L), n) / 64.0 for L in LENGTHS], axis=1)
    home = x.copy()
    if outside:
        x[::5, 0] += LENGTHS[0]
        x[1::5, 0] -= LENGTHS[0]
    return ids, x, home


def velocities(ids):
    return ids[:, None].astype(np.float64) * np.array([1.0, -2.0, 0.5])


def layout(x, kind):
    """Positions as the test's kind: "n3" (n, 3) float64, "n4" (n, 4) float32, "split" three float64 arrays."""
    if kind == "n3":
        return np.ascontiguousarray(x)
    if kind == "n4":
        padded = np.zeros((len(x), 4), dtype=np.float32)
        padded[:, :3] = x
        return padded
    return tuple(np.ascontiguousarray(x[:, d]) for d in range(3))


def as_rows(x):
    """(n, 3) float64 of any layout."""
    if isinstance(x, tuple):
        return np.stack(x, axis=1).astype(np.float64)
    return np.asarray(x[:, :3], dtype=np.float64)


def migrated(periodic=(True, True, True), n=None, seed=0):
    ids, x, _ = scattered(n or 150 + 37 * COMM.rank, seed)
    x, ids = hs.migrate(grid(periodic), DOMAIN, x, ids)
    return ids, x


@pytest.mark.parametrize("kind", ["n3", "n4", "split"])
@pytest.mark.parametrize("keep_order", [True, False])
def test_migrate(kind, keep_order):
    ids, x, home = scattered(150 + 37 * COMM.rank, 1, outside=True)
    v = velocities(ids)
    given = layout(x, kind)
    before = [np.copy(a) for a in (given if isinstance(given, tuple) else (given,))]
    x2, ids2, v2 = hs.migrate(grid(), DOMAIN, given, ids, v, keep_order=keep_order)
    assert all(np.array_equal(a, b) for a, b in zip(given if isinstance(given, tuple) else (given,), before))
    assert type(x2) is type(given)
    rows = as_rows(x2)
    box_lo, box_hi = oracle.box_edges(DOMAIN, grid())
    assert np.all((rows >= box_lo) & (rows < box_hi)), "a particle outside its owner's box"
    everyone = np.sort(np.concatenate(COMM.allgather(ids)))
    assert np.array_equal(np.sort(np.concatenate(COMM.allgather(ids2))), everyone)
    assert np.array_equal(v2, velocities(ids2))
    homes = dict(zip(np.concatenate(COMM.allgather(ids)).tolist(), np.concatenate(COMM.allgather(home))))
    assert np.array_equal(rows, np.array([homes[i] for i in ids2.tolist()]).reshape(-1, 3)), "positions not wrapped home"
    if keep_order:  # the particles that stayed, in their order, then the arrivals by source rank
        stayed = np.count_nonzero(ids2 // ID_BASE == COMM.rank)
        assert np.all(ids2[:stayed] // ID_BASE == COMM.rank)
        assert np.all(np.diff(ids2[:stayed]) > 0) and np.all(np.diff(ids2[stayed:]) > 0)


def ghost_rows(plan, x, ids):
    rows = as_rows(x)
    return sorted((int(ids[i]),) + tuple(float(v) for v in rows[i]) for i in range(plan.owned, plan.size))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("periodic", [(True, True, True), (True, False, True)])
@pytest.mark.parametrize("cutoff", [1.5, (3.0, 5.5, 2.0)])
def test_plan_forward_positions(strategy, periodic, cutoff):
    ids, x = migrated(periodic)
    plan = hs.ParticlePlan(grid(periodic), DOMAIN, cutoff, x, strategy=strategy)
    assert plan.owned == len(x)
    if strategy != "Auto":
        assert plan.strategy.lower() == strategy.lower()
    xx, idx = plan.extend(x), plan.extend(ids)
    plan.forward_positions(xx, idx)
    assert np.array_equal(xx[:plan.owned], x) and np.array_equal(idx[:plan.owned], ids)
    want = oracle.brute_force_ghosts(DOMAIN, grid(periodic), np.array(cutoff), ids, x)
    assert ghost_rows(plan, xx, idx) == want
    v = plan.extend(velocities(ids))  # companions alone, unshifted
    plan.forward(v)
    assert np.array_equal(v, velocities(idx))


@pytest.mark.parametrize("kind", ["n4", "split"])
@pytest.mark.parametrize("strategy", ["Shift", "SingleHop"])
def test_plan_layouts(kind, strategy):
    ids, x = migrated()
    given = layout(x, kind)
    plan = hs.ParticlePlan(grid(), DOMAIN, 2.0, given, strategy=strategy)
    xx, idx = plan.extend(given), plan.extend(ids)
    plan.forward_positions(xx, idx)
    dtype = np.float32 if kind == "n4" else np.float64
    assert ghost_rows(plan, xx, idx) == oracle.brute_force_ghosts(DOMAIN, grid(), 2.0, ids, x, dtype)


@pytest.mark.parametrize("strategy", ["Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall"])
def test_reverse_sum_and_split_phase(strategy):
    ids, x = migrated()
    plan = hs.ParticlePlan(grid(), DOMAIN, 2.5, x, strategy=strategy)
    xx, idx = plan.extend(x), plan.extend(ids)
    plan.start_forward_positions(xx, idx).wait()
    assert ghost_rows(plan, xx, idx) == oracle.brute_force_ghosts(DOMAIN, grid(), 2.5, ids, x)
    f = np.ones((plan.size, 3))
    f[:, 1] = 2.0
    plan.reverse(f, op="sum")
    copies = dict.fromkeys(ids.tolist(), 0)  # ghost copies of my particles on every rank
    for ghost_id in np.concatenate(COMM.allgather(idx[plan.owned:])).tolist():
        if ghost_id in copies:
            copies[ghost_id] += 1
    n = np.array([copies[i] for i in ids.tolist()], dtype=np.float64)
    assert np.array_equal(f[:plan.owned, 0], 1 + n) and np.array_equal(f[:plan.owned, 1], 2 * (1 + n))
    g = np.full(plan.size, 5, dtype=np.int32)
    g[plan.owned:] = 7 + COMM.rank
    pending = plan.start_reverse(g, op="max")
    while not pending.test():
        pending.progress()
    holders = {}
    for r, gids in enumerate(COMM.allgather(idx[plan.owned:])):
        for i in gids.tolist():
            holders[i] = max(holders.get(i, 5), 7 + r)
    assert np.array_equal(g[:plan.owned], np.array([holders.get(i, 5) for i in ids.tolist()], dtype=np.int32))


def test_rebuild_after_moving():
    ids, x = migrated(seed=3)
    plan = hs.ParticlePlan(grid(), DOMAIN, 1.5, x, strategy="Shift")
    moved = x + np.array([0.75, -0.5, 0.25])  # exact: multiples of 1/64
    moved, ids = hs.migrate(grid(), DOMAIN, moved, ids)
    plan.rebuild(moved)
    assert plan.owned == len(moved)
    xx, idx = plan.extend(moved), plan.extend(ids)
    plan.forward_positions(xx, idx)
    assert ghost_rows(plan, xx, idx) == oracle.brute_force_ghosts(DOMAIN, grid(), 1.5, ids, moved)


def test_explain_particles():
    table = hs.explain_particles(grid(), DOMAIN, 2.5, 1000)
    assert table and [r["seconds"] for r in table] == sorted(r["seconds"] for r in table)
    ids, x = migrated()
    plan = hs.ParticlePlan(grid(), DOMAIN, 2.5, x, strategy="Auto")
    assert COMM.allgather(plan.strategy) == [plan.strategy] * COMM.size


def test_particle_misuse():
    ids, x = migrated()
    plan = hs.ParticlePlan(grid(), DOMAIN, 1.5, x, strategy="Shift")
    assert plan.ghosts > 0
    with pytest.raises(hs.Error, match="rows, the plan needs"):
        plan.forward_positions(x, ids)  # no room for the ghosts
    xx, idx = plan.extend(x), plan.extend(ids)
    with pytest.raises(hs.Error, match="dtype"):
        plan.forward_positions(xx.astype(np.int32))
    with pytest.raises(hs.Error, match=r"\(n, 3\) or \(n, 4\)"):
        plan.forward_positions(np.zeros((plan.size, 2)))
    with pytest.raises(hs.Error, match="at most"):
        plan.forward(*[plan.extend(ids)] * (hs.MAX_COLUMNS + 1))
    ro = plan.extend(ids)
    ro.setflags(write=False)
    with pytest.raises(hs.Error, match="read-only"):
        plan.forward(ro)
    x_ro = xx.copy()
    x_ro.setflags(write=False)
    with pytest.raises(hs.Error, match="read-only"):
        plan.forward_positions(x_ro)
    x_ro = x.copy()
    x_ro.setflags(write=False)
    assert hs.ParticlePlan(grid(), DOMAIN, 1.5, x_ro, strategy="Shift").owned == len(x)  # a build only reads
    with pytest.raises(hs.Error, match="Bogus"):
        hs.ParticlePlan(grid(), DOMAIN, 1.5, x, strategy="Bogus")
    far = x.copy()
    if COMM.rank == 0 and len(far):
        far[0] = far[0] + np.array(LENGTHS) / 2 + 0.01  # outside rank 0's box (unless one rank)
    if COMM.size > 1:
        with pytest.raises(hs.Error):
            hs.ParticlePlan(grid(), DOMAIN, 1.5, far)  # found on one rank, raised on every rank
    plan.forward_positions(xx, idx)  # still works
    assert ghost_rows(plan, xx, idx) == oracle.brute_force_ghosts(DOMAIN, grid(), 1.5, ids, x)

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Python side of the binding's cost: bench/overhead.c's cases, call for call, from Python
(time.perf_counter around each call): a forward of a 128^3 float64 field per rank (ghost 1, Shift),
a forward_positions of 16k particles per rank (Shift, cutoff 2.5, boxes 20 wide; the same positions),
each rep a barrier, one call and the slowest rank's time, the median of `reps`; then the mean of
20000 back-to-back forwards of an 8^3 field (the per-call cost where the exchange is nearly free).

    mpiexec -n N python3 overhead.py [reps]      (beside: mpiexec -n N haloshift_python_bench_overhead_c)
"""
import sys
import time

import numpy as np
from mpi4py import MPI

import haloshift as hs

COMM = MPI.COMM_WORLD


def median_of_slowest(call, reps):
    times = np.empty(reps)
    for r in range(reps):
        COMM.Barrier()
        t0 = time.perf_counter()
        call()
        times[r] = COMM.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    return float(np.median(times))  # reps odd: the middle value, as the C driver's


def aligned(shape):
    """A C-order float64 array starting on a 2 MiB boundary, as overhead.c allocates its field (numpy
    asks for transparent huge pages from 4 MiB on; the same placement on both sides keeps the page
    layout, which the x faces' strided packing feels, out of the comparison)."""
    count, align = int(np.prod(shape)), (2 << 20) // 8
    buffer = np.empty(count + align)
    start = (-buffer.ctypes.data // 8) % align
    return buffer[start:start + count].reshape(shape)


def fields(grid, reps):
    plan = hs.FieldPlan(grid, [128 * p for p in grid.dims], ghost=1, strategy="Shift")
    u = aligned(plan.shape.padded)
    u[...] = 1.0
    plan.forward(u)  # warm
    t = median_of_slowest(lambda: plan.forward(u), reps)
    if COMM.rank == 0:
        print(f"field 128^3 per rank, float64, ghost 1, Shift: Python {t * 1e6:.2f} us")
    small = hs.FieldPlan(grid, [8 * p for p in grid.dims], ghost=1, strategy="Shift")
    v = small.empty(np.float64)
    v[...] = 1.0
    calls = 20000
    forward = small.forward
    forward(v)
    COMM.Barrier()
    t0 = time.perf_counter()
    for _ in range(calls):
        forward(v)
    per_call = COMM.allreduce((time.perf_counter() - t0) / calls, op=MPI.MAX)
    if COMM.rank == 0:
        print(f"field 8^3 per rank, {calls} calls back to back: Python {per_call * 1e6:.3f} us per call")


def positions(count, coords, width):
    """overhead.c's low-discrepancy positions, the same bits."""
    step = np.array([0.7548776662466927, 0.5698402909980532, 0.6180339887498949])
    v = np.arange(1, count + 1, dtype=np.float64)[:, None] * step
    return np.array(coords, dtype=np.float64) * width + width * (v - np.floor(v))


def particles(grid, reps):
    width = 20.0
    domain = ((0.0, 0.0, 0.0), tuple(width * p for p in grid.dims))
    x = positions(16384, grid.coords, width)
    plan = hs.ParticlePlan(grid, domain, 2.5, x, strategy="Shift")
    xx = plan.extend(x)
    plan.forward_positions(xx)  # warm
    t = median_of_slowest(lambda: plan.forward_positions(xx), reps)
    if COMM.rank == 0:
        print(f"particles 16k per rank ({plan.ghosts} ghosts on rank 0), forward_positions, Shift: "
              f"Python {t * 1e6:.2f} us")


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 101
    grid = hs.Grid(COMM)
    fields(grid, reps)
    particles(grid, 4 * reps)


if __name__ == "__main__":
    main()

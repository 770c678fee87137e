#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A 2D heat equation on numpy arrays over MPI.COMM_WORLD with haloshift's Python binding.

Explicit 5-point stencil on nx x ny cells, periodic along x, walls along y (the ghost row below
y = 0 holds 1.0, a hot wall, the one above y = ny - 1 holds 0.0: forward leaves ghosts beyond a wall
alone). Every rank then runs the same problem serially on the whole grid and compares its own cells,
bit for bit (the update is the same numpy expression, cell by cell, in both runs); the program exits
1 if any cell differs on any rank.

    mpiexec -n 4 python3 heat2d.py --size 96 64 --steps 50 --strategy Shift [--overlap]
"""
import argparse
import sys

import numpy as np
from mpi4py import MPI

import haloshift as hs

ALPHA = 0.2  # diffusion number: stable below 0.25


def initial(gx, gy):
    """The initial temperature at global cells (gx, gy): exact arithmetic only (no libm), so that
    every run computes the same bits."""
    return ((gx * 37 + gy * 11) % 23) / 23.0


def stencil(u, i0, i1, j0, j1):
    """New values of the interior cells [i0, i1) x [j0, j1) of `u`, an array with one ghost layer."""
    c = u[1 + i0:1 + i1, 1 + j0:1 + j1]
    west, east = u[i0:i1, 1 + j0:1 + j1], u[2 + i0:2 + i1, 1 + j0:1 + j1]
    south, north = u[1 + i0:1 + i1, j0:j1], u[1 + i0:1 + i1, 2 + j0:2 + j1]
    return c + ALPHA * ((west + east) + (south + north) - 4.0 * c)


def set_walls(u, lo_y, hi_y, ny):
    """The ghost rows beyond the walls: 1.0 below y = 0, 0.0 above y = ny - 1 (set once)."""
    if lo_y == 0:
        u[:, 0] = 1.0
    if hi_y == ny:
        u[:, -1] = 0.0


def serial(nx, ny, steps):
    """The reference: the whole grid on one rank, ghosts filled by numpy."""
    gx, gy = np.indices((nx, ny))
    u = np.zeros((nx + 2, ny + 2))
    u[1:-1, 1:-1] = initial(gx, gy)
    set_walls(u, 0, ny, ny)
    for _ in range(steps):
        u[0, 1:-1], u[-1, 1:-1] = u[-2, 1:-1], u[1, 1:-1]  # periodic along x
        u[1:-1, 1:-1] = stencil(u, 0, nx, 0, ny)
    return u[1:-1, 1:-1]


def parallel(nx, ny, steps, strategy, overlap):
    """The same run on haloshift's grid: returns this rank's interior, its first cell and the plan."""
    grid = hs.Grid(MPI.COMM_WORLD, dims=(0, 0), periodic=(True, False))
    # The 5-point stencil reads no corner: faces are all the plan needs to fill.
    plan = hs.FieldPlan(grid, (nx, ny), ghost=1, strategy=strategy, pattern="faces")
    (x0, y0), (mx, my) = plan.shape.lo, plan.shape.interior
    u = plan.zeros(np.float64)
    gx, gy = np.indices((mx, my))
    plan.interior(u)[...] = initial(x0 + gx, y0 + gy)
    set_walls(u, y0, y0 + my, ny)
    for _ in range(steps):
        if not overlap:
            plan.forward(u)
            plan.interior(u)[...] = stencil(u, 0, mx, 0, my)
            continue
        # Split phase: the cells whose stencil reads no ghost while the ghosts travel, then the rim.
        pending = plan.start_forward(u)
        new = np.empty((mx, my))
        new[1:-1, 1:-1] = stencil(u, 1, mx - 1, 1, my - 1)
        pending.wait()
        for i0, i1, j0, j1 in ((0, mx, 0, 1), (0, mx, my - 1, my), (0, 1, 1, my - 1), (mx - 1, mx, 1, my - 1)):
            if i1 > i0 and j1 > j0:
                new[i0:i1, j0:j1] = stencil(u, i0, i1, j0, j1)
        plan.interior(u)[...] = new
    return plan.interior(u), (x0, y0), plan


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, nargs=2, default=(96, 64), metavar=("NX", "NY"))
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--strategy", default="Auto")
    parser.add_argument("--overlap", action="store_true", help="split phase: compute the inner cells meanwhile")
    args = parser.parse_args()
    nx, ny = args.size
    comm = MPI.COMM_WORLD
    mine, (x0, y0), plan = parallel(nx, ny, args.steps, args.strategy, args.overlap)
    reference = serial(nx, ny, args.steps)[x0:x0 + mine.shape[0], y0:y0 + mine.shape[1]]
    differ = comm.allreduce(int(np.count_nonzero(mine != reference)))
    if comm.rank == 0:
        verdict = "identical to the serial run" if differ == 0 else f"{differ} cells DIFFER from the serial run"
        print(f"heat2d: {nx} x {ny} cells, {args.steps} steps, {comm.size} ranks {plan.grid.dims}, "
              f"{plan.strategy}{' split phase' if args.overlap else ''}: {verdict}")
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: BSD-3-Clause
"""Oracles of the Python binding's tests, computed from global coordinates alone (no exchange).

Fields: every cell holds code(global coordinate); a ghost cell the plan fills must hold the code of
the cell it images (wrapped along periodic dimensions), a ghost it does not fill (beyond a wall, or
outside the pattern) keeps what it held. Particles: the ghosts of a box are every particle image
(periodic shifts) within the cutoff of the box, from the allgathered positions.
"""
import itertools

import numpy as np
from mpi4py import MPI

SENTINEL = -7  # what an unfilled ghost cell holds
PATTERN_REACH = {"faces": 1, "faces_and_edges": 2, "full": 3}


def code(g):
    """A distinct small integer per global cell (exact in float32 for up to 2^24 cells)."""
    out = np.ones_like(g[0])
    for d, gd in enumerate(g):
        out = out + gd * (64 ** d)
    return out


def global_cells(plan, cells, periodic, pattern="full"):
    """For every cell of this rank's padded array: its global coordinates (wrapped) and whether the
    forward writes it (interior cells count as written: they hold their own code)."""
    shape = plan.shape
    index = np.indices(shape.padded)
    outside = np.zeros(shape.padded, dtype=int)
    inside_domain = np.ones(shape.padded, dtype=bool)
    g = []
    for d in range(len(shape.padded)):
        gd = shape.lo[d] + index[d] - shape.ghost_low[d]
        outside += (index[d] < shape.ghost_low[d]) | (index[d] >= shape.ghost_low[d] + shape.interior[d])
        if periodic[d]:
            gd = gd % cells[d]
        else:
            inside_domain &= (gd >= 0) & (gd < cells[d])
        g.append(gd)
    written = inside_domain & (outside <= PATTERN_REACH[pattern])
    return g, written, outside > 0


def filled(plan, dtype, order):
    """An array of the plan's shape: interior cells hold their codes, ghost cells SENTINEL."""
    g, _, ghost = global_cells(plan, [10 ** 6] * 3, [False] * 3)
    a = np.array(code(g), dtype=dtype, order=order)
    a[ghost] = SENTINEL
    return a


def expected_forward(plan, cells, periodic, pattern, dtype):
    g, written, _ = global_cells(plan, cells, periodic, pattern)
    out = np.full(plan.shape.padded, SENTINEL, dtype=dtype)
    out[written] = code(g)[written]
    return out


def ghost_copies(comm, plan, cells, periodic, pattern):
    """How many ghost cells, over all ranks, the reverse combines into each global cell."""
    g, written, ghost = global_cells(plan, cells, periodic, pattern)
    counts = np.zeros(tuple(cells), dtype=np.int64)
    copies = written & ghost
    np.add.at(counts, tuple(gd[copies] for gd in g), 1)
    comm.Allreduce(MPI.IN_PLACE, counts, op=MPI.SUM)
    return counts


def box_edges(domain, grid):
    """This rank's box [lo, hi) of the even split of `domain` (hs_domain's rule, lo + L c / P)."""
    lo, hi = (np.array(v, dtype=float) for v in domain)
    dims = np.array(grid.dims + (1,) * (3 - grid.ndims))
    c = np.array(grid.coords + (0,) * (3 - grid.ndims))
    return lo + (hi - lo) * c / dims, lo + (hi - lo) * (c + 1) / dims


def brute_force_ghosts(domain, grid, cutoff, ids, x, dtype=np.float64):
    """Sorted (id, x, y, z) of the ghosts this rank must receive, from every rank's positions:
    particle images within `cutoff` of this rank's box, other than its own particles. Shifted
    positions are rounded to `dtype`, as the exchange stores them."""
    comm = grid.comm
    all_ids = np.concatenate(comm.allgather(ids))
    all_x = np.concatenate(comm.allgather(np.asarray(x, dtype=np.float64)))
    lo, hi = (np.array(v, dtype=float) for v in domain)
    box_lo, box_hi = box_edges(domain, grid)
    periodic = grid.periodic + (True,) * (3 - grid.ndims)
    own = set(int(i) for i in ids)
    rows = []
    for image in itertools.product(*[(-1, 0, 1) if periodic[d] else (0,) for d in range(3)]):
        shifted = all_x + np.array(image) * (hi - lo)
        near = np.all((box_lo - shifted <= cutoff) & (shifted - box_hi <= cutoff), axis=1)
        for i in np.nonzero(near)[0]:
            if image == (0, 0, 0) and int(all_ids[i]) in own:
                continue
            rows.append((int(all_ids[i]),) + tuple(float(dtype(v)) for v in shifted[i]))
    return sorted(rows)

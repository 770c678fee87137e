# SPDX-License-Identifier: BSD-3-Clause
"""haloshift for Python: halo exchanges of numpy arrays over mpi4py communicators.

Built on haloshift's C interface (bindings/c/haloshift.h) by the extension module _haloshift; every
exchange works on the caller's numpy arrays in place, with no copy. bindings/python/README.md shows
a complete example.

    grid = haloshift.Grid(MPI.COMM_WORLD, dims=(0, 0), periodic=(True, False))
    plan = haloshift.FieldPlan(grid, cells=(512, 512), ghost=1, strategy="Shift")
    u = plan.empty(numpy.float64)        # this rank's cells and their ghost layers, C order
    plan.forward(u)                      # ghost cells filled from the neighbours

Arrays that the library cannot use in place (a wrong dtype, a read-only array, strides that are no
C or Fortran layout, a shape without the ghost layers) raise haloshift.Error naming the problem;
so do bad arguments, on every rank where a call is collective.
"""
import collections

import numpy as np
from mpi4py import MPI  # initializes MPI before any grid exists (mpi4py also finalizes it at exit)

from . import _haloshift
from ._haloshift import Error, use_calibration

__all__ = ["Error", "Grid", "FieldPlan", "FieldShape", "ParticlePlan", "Exchange", "migrate", "explain",
           "explain_particles", "use_calibration"]
__version__ = _haloshift.version()

# The names of the C interface's codes, with its values (taken from haloshift.h by the extension).
_ORDERS = _haloshift.RANK_ORDERS
_REMAINDERS = _haloshift.REMAINDERS
_PATTERNS = _haloshift.PATTERNS
MAX_COLUMNS = _haloshift.MAX_COLUMNS  # the most arrays one particle forward moves


def _choice(value, choices, what):
    if value not in choices:
        raise Error(f"haloshift: {what} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return choices[value]


def _is_number(value):
    return isinstance(value, (int, float, bool, np.integer, np.floating, np.bool_))


def _three(value, ndims, what, fill, convert=int):
    """`value` (one number for every dimension, or one per dimension) as three entries, `fill` beyond ndims."""
    if _is_number(value):
        entries = [convert(value)] * ndims
    else:
        try:
            entries = [convert(v) for v in value]
        except (TypeError, ValueError):
            raise Error(f"haloshift: {what} must be a number or {ndims} numbers, got {value!r}") from None
        if len(entries) != ndims:
            raise Error(f"haloshift: {what} must have {ndims} entries (one per dimension of the grid), "
                        f"got {len(entries)}: {value!r}")
    return tuple(entries + [fill] * (3 - ndims))


def _fortran_handle(comm):
    """The Fortran handle (MPI_Fint) of an mpi4py intracommunicator, for hs_grid_create_f."""
    if comm is None:
        comm = MPI.COMM_WORLD
    if not isinstance(comm, MPI.Comm):
        raise Error(f"haloshift: comm must be an mpi4py communicator (mpi4py.MPI.Comm), got {type(comm).__name__}")
    if comm == MPI.COMM_NULL:
        raise Error("haloshift: comm is MPI.COMM_NULL")
    if comm.Is_inter():
        raise Error("haloshift: comm is an intercommunicator: a grid needs an intracommunicator")
    return comm.py2f()


class Grid(_haloshift._Grid):
    """A Cartesian grid of boxes, one per rank of `comm` (duplicated; collective).

    dims: boxes per dimension (0: chosen), its length is the number of dimensions (1 to 3; else
    `ndims`, default 3). periodic: True, False or one per dimension. lengths: the domain's extent
    per dimension, to split with the smallest surface (particle codes). order: "last_fastest"
    (MPI_Cart_create's rank order) or "first_fastest" (x fastest: PETSc, LAMMPS). remainder:
    which boxes take the cells left over, "spread", "first" or "last".
    Properties: rank, size, ndims, dims, coords, periodic, comm (the grid's own communicator).
    """

    def __init__(self, comm=None, dims=None, periodic=True, lengths=None, order="last_fastest",
                 remainder="spread", ndims=None):
        if ndims is None:
            given = [v for v in (dims, periodic, lengths) if v is not None and not _is_number(v)]
            ndims = len(given[0]) if given else 3
        if ndims not in (1, 2, 3):
            raise Error(f"haloshift: a grid has 1, 2 or 3 dimensions, got {ndims}")
        handle = _fortran_handle(comm)
        super().__init__(handle, ndims, _three(0 if dims is None else dims, ndims, "dims", 0),
                         _three(periodic, ndims, "periodic", 1, lambda v: int(bool(v))),
                         _three(0.0 if lengths is None else lengths, ndims, "lengths",
                                0.0 if lengths is None else 1.0, float),
                         _choice(order, _ORDERS, "order"), _choice(remainder, _REMAINDERS, "remainder"))

    @property
    def comm(self):
        """The grid's own communicator (a duplicate of the one it was built on)."""
        return MPI.Comm.f2py(self._comm_f())


class Exchange:
    """An exchange in flight (start_forward, start_reverse): test(), progress(), wait()."""

    __slots__ = ("_plan",)

    def __init__(self, plan):
        self._plan = plan

    def test(self):
        """Whether the exchange is done (each call progresses it)."""
        return self._plan.test()

    def progress(self):
        """Post the next rounds of a multi-round strategy (Shift, TtlMultiHop)."""
        if hasattr(self._plan, "progress"):
            self._plan.progress()
        else:
            self._plan.test()

    def wait(self):
        """Wait until the exchange is done (the GIL is released meanwhile)."""
        self._plan.wait()


class FieldShape(collections.namedtuple("FieldShape", "lo interior ghost_low ghost_high")):
    """This rank's box of a field plan: global index of its first interior cell, interior cells, ghost layers."""

    @property
    def padded(self):
        """The shape of an array of this rank's cells with their ghost layers."""
        return tuple(g + n + h for g, n, h in zip(self.ghost_low, self.interior, self.ghost_high))


def _field_spec(grid, cells, ghost, ghost_high, pattern, cuts, dtype):
    n = grid.ndims
    cut_lists = [[], [], []]
    if cuts is not None:
        if _is_number(cuts) or len(cuts) != n:
            raise Error(f"haloshift: cuts must have {n} entries (a list of cuts or None per dimension)")
        cut_lists = [[] if c is None else [int(v) for v in c] for c in cuts] + [[]] * (3 - n)
    if cells is None:
        if cuts is None or any(not c for c in cut_lists[:n]):
            raise Error("haloshift: cells (the global cells per dimension) are needed unless every dimension has cuts")
        cells = [c[-1] for c in cut_lists[:n]]
    low = _three(ghost, n, "ghost", 0)
    high = low if ghost_high is None else _three(ghost_high, n, "ghost_high", 0)
    return (_three(cells, n, "cells", 1), low, high, _choice(pattern, _PATTERNS, "pattern"),
            np.dtype(dtype).itemsize, cut_lists)


class FieldPlan(_haloshift._FieldPlan):
    """Ghost-cell exchanges of this rank's part of a global array of `cells` (collective).

    ghost: layers per dimension (one number, or one per dimension) below the interior, and above
    unless ghost_high gives those. strategy: "Shift", "SingleHop", "TtlMultiHop",
    "NeighborAlltoall" or "Auto" (any case). pattern: "full", "faces" or "faces_and_edges".
    cuts: per dimension None (the even split) or the dims + 1 cuts from 0 to the cells.
    dtype: the element type Auto prices (the plan serves every dtype).

    Arrays: numpy float32, float64, int32 or int64 of shape `shape.padded`, in C order (z fastest)
    or Fortran order (x fastest), writeable; a slice of a larger array along its outer axes works
    too (padded rows or planes). They are used in place, never copied.
    """

    def __init__(self, grid, cells=None, ghost=1, ghost_high=None, strategy="Auto", pattern="full", cuts=None,
                 dtype=np.float64):
        super().__init__(grid, str(strategy), *_field_spec(grid, cells, ghost, ghost_high, pattern, cuts, dtype))
        self.grid = grid
        self.shape = FieldShape(*self._shape())

    def empty(self, dtype=np.float64, order="C"):
        """An uninitialized array of this rank's cells with the ghost layers."""
        return np.empty(self.shape.padded, dtype=dtype, order=order)

    def zeros(self, dtype=np.float64, order="C"):
        """A zeroed array of this rank's cells with the ghost layers."""
        return np.zeros(self.shape.padded, dtype=dtype, order=order)

    def interior(self, a):
        """The view of `a` holding this rank's interior cells."""
        return a[tuple(slice(g, g + n) for g, n in zip(self.shape.ghost_low, self.shape.interior))]

    def start_forward(self, a):
        """Start filling the ghost cells of `a`; `a` must stay untouched until the returned exchange is done."""
        self._start_forward(a)
        return Exchange(self)

    def start_reverse(self, a, op="sum"):
        """Start combining the ghost cells of `a` onto their owners."""
        self._start_reverse(a, op)
        return Exchange(self)


def _domain(domain):
    try:
        lo, hi = domain
        return tuple(float(v) for v in lo), tuple(float(v) for v in hi)
    except (TypeError, ValueError):
        raise Error(f"haloshift: domain must be (lo, hi), two sequences of 3 coordinates, got {domain!r}") from None


def _cutoff(cutoff):
    return _three(cutoff, 3, "cutoff", 0.0, float)


class ParticlePlan(_haloshift._ParticlePlan):
    """Ghosts within `cutoff` (a number or one per dimension) of this rank's box (collective).

    domain: (lo, hi), the box [lo, hi) the grid splits evenly. x: positions of the `count` owned
    particles (default: all rows), every one in this rank's box (see migrate): an (n, 3) or (n, 4)
    float32/float64 array, or three 1D arrays. Arrays that exchanges write hold owned + ghosts
    rows (plan.extend(a) makes one from the owned rows).
    """

    def __init__(self, grid, domain, cutoff, x, strategy="Auto", count=None):
        lo, hi = _domain(domain)
        super().__init__(grid, str(strategy), lo, hi, _cutoff(cutoff), x, count)
        self.grid = grid

    @property
    def size(self):
        """owned + ghosts: the rows every array of an exchange needs."""
        return self.owned + self.ghosts

    def extend(self, a):
        """A new array (or three) of owned + ghosts rows, the owned rows copied from `a`, the ghosts zero."""
        if isinstance(a, (tuple, list)):
            return tuple(self.extend(c) for c in a)
        a = np.asarray(a)
        out = np.zeros((self.size,) + a.shape[1:], dtype=a.dtype)
        out[:self.owned] = a[:self.owned]
        return out

    def start_forward_positions(self, x, *arrays):
        self._start_forward_positions(x, *arrays)
        return Exchange(self)

    def start_forward(self, *arrays):
        self._start_forward(*arrays)
        return Exchange(self)

    def start_reverse(self, f, op="sum"):
        self._start_reverse(f, op)
        return Exchange(self)


def migrate(grid, domain, x, *columns, keep_order=True):
    """Moves every particle to the rank whose box holds it (collective), with its columns.

    x: (n, 3) or (n, 4) positions, or three 1D arrays; columns: (n,) or (n, c) arrays. Returns new
    arrays, (x, *columns) with x as given (one array or three); the arguments are left as they were.
    Positions come back wrapped into the domain along periodic dimensions. keep_order: the particles
    that stay keep their order, arrivals follow by source rank (False: holes filled from the end).
    """
    lo, hi = _domain(domain)
    # The C interface compacts in place: it works on copies, and its resize callback allocates the results.
    if isinstance(x, (tuple, list)):
        x = tuple(np.array(c, order="C", copy=True) for c in x)
    else:
        x = np.array(x, order="C", copy=True)
    copies = [np.array(c, order="C", copy=True) for c in columns]
    out = _haloshift._migrate(grid, lo, hi, x, *copies, keep_order=keep_order)
    if isinstance(x, tuple):
        return (tuple(out[:3]),) + tuple(out[3:])
    return tuple(out)


def explain(grid, cells=None, ghost=1, ghost_high=None, pattern="full", cuts=None, dtype=np.float64):
    """The strategies Auto ranks for such a field plan, fastest first (collective):
    a list of dicts {"strategy", "team", "shared_memory", "seconds"}."""
    return _haloshift._explain_field(grid, *_field_spec(grid, cells, ghost, ghost_high, pattern, cuts, dtype))


def explain_particles(grid, domain, cutoff, count):
    """The strategies Auto ranks for particle plans of at most `count` owned particles per rank (collective)."""
    lo, hi = _domain(domain)
    return _haloshift._explain_particles(grid, lo, hi, _cutoff(cutoff), int(count))

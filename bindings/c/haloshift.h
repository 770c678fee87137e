/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file haloshift.h
 * @brief haloshift's C interface (the compiled library haloshift::c, CMake option HALOSHIFT_C):
 * grids, field plans over the caller's arrays, particle plans, migrate, strategies by name
 * (Auto included, with explain) and the calibration file, for C, Fortran (module haloshift,
 * bindings/fortran) and Python (package haloshift, bindings/python). docs/bindings.md.
 *
 * Conventions:
 *  - Every function returns an hs_status: HS_OK (0) or an error code; hs_last_error() gives
 *    the text (the haloshift::error message, naming the argument and the value). No C++
 *    exception ever crosses this interface.
 *  - Handles are opaque; hs_*_free sets the handle to NULL and accepts a NULL handle (a NULL
 *    address of one is HS_ERR_NULL). Plans keep what they need of their grid: free in any order.
 *  - Calls that build something (grids, plans, migrate, explain) are collective over the grid's
 *    communicator and check their arguments on every rank: an error that one rank finds
 *    is returned, with the same code and text, by every rank (a NULL grid handle cannot be:
 *    without it there is no communicator).
 *  - Exchange calls (forward, reverse, start, test, progress, wait) check their arguments on the
 *    calling rank only, as the C++ library does: a bad array on one rank is reported there while
 *    its peers wait for it. HALOSHIFT_CHECKS=collective in the environment makes the library's
 *    own checks (shapes, an exchange in flight) agreed per call.
 *  - Arrays stay the caller's: nothing is copied in or out, and a forward, reverse, start,
 *    test or wait allocates nothing (after the first exchange of an array layout, which sizes
 *    the plan's buffers once).
 *  - Cells and coordinates are numbered from 0 along x, y, z (dimension 0 is x).
 *  - The values of every enum below are the C++ library's (checked when the library is built).
 */
#ifndef HALOSHIFT_H
#define HALOSHIFT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- errors */

typedef enum hs_status {
  HS_OK = 0,
  HS_ERR_ARGUMENT = 1, /**< bad input (haloshift::error): the text names the argument and its value */
  HS_ERR_NULL = 2,     /**< a handle or a required pointer was NULL */
  HS_ERR_MPI = 3,      /**< an MPI call failed */
  HS_ERR_MEMORY = 4,   /**< out of memory */
  HS_ERR_INTERNAL = 5  /**< any other failure (a bug: please report the text) */
} hs_status;

/** The text of the last error on this thread ("" before any; at most 1023 characters). Valid
 * until the next failing call on this thread; successful calls leave it. */
const char* hs_last_error(void);
/** The library's version, "major.minor.patch". */
const char* hs_version(void);

/* ---------------------------------------------------------------- enums */

/** Element types: C's float and double (IEEE 754), int32_t, int64_t. */
typedef enum hs_type { HS_FLOAT = 0, HS_DOUBLE = 1, HS_INT32 = 2, HS_INT64 = 3 } hs_type;
/** Field storage: x fastest (Fortran a(x,y,z), C a[z][y][x]) or z fastest (C a[x][y][z]). */
typedef enum hs_order { HS_X_FASTEST = 0, HS_Z_FASTEST = 1 } hs_order;
/** Reverse: combine every ghost copy onto its owner by sum, minimum or maximum (the ghosts are
 * used as accumulators and hold partial results afterwards). Floating-point sums may round
 * differently per strategy; min, max and integer sums are identical for every strategy. */
typedef enum hs_op { HS_SUM = 0, HS_MIN = 1, HS_MAX = 2 } hs_op;
/** Which ghost cells a field plan fills (plan_options::pattern): all (faces, edges, corners),
 * those outside the interior along one dimension only (faces: a star stencil), or along at most
 * two (faces and edges). */
typedef enum hs_pattern { HS_PATTERN_FULL = 0, HS_PATTERN_FACES = 1, HS_PATTERN_FACES_AND_EDGES = 2 } hs_pattern;

/* ---------------------------------------------------------------- grids */

typedef struct hs_grid_s* hs_grid;

/** grid_options: fill with hs_grid_options_init, then change what differs. Entries beyond
 * `ndims` are ignored. */
typedef struct hs_grid_options {
  int ndims;          /**< 1, 2 or 3 (default 3) */
  int dims[3];        /**< boxes per dimension, 0: chosen (default 0) */
  int periodic[3];    /**< nonzero: the dimension wraps (default all) */
  double lengths[3];  /**< the domain's extent: dims with the smallest surface (MD codes; each > 0);
                           all 0: MPI_Dims_create's balanced split (default) */
  int first_fastest;  /**< rank order: 0 the last dimension varies fastest (MPI_Cart_create, default), 1 x fastest (PETSc, LAMMPS) */
  int remainder;      /**< who takes the cells left over: 0 spread (default), 1 the first boxes (PETSc), 2 the last */
} hs_grid_options;

/** The defaults: 3 dimensions, dims chosen, all periodic, no lengths, last dimension fastest,
 * remainder spread. */
void hs_grid_options_init(hs_grid_options* options);
/** A grid over `comm` (duplicated; collective). `options` NULL: the defaults. Options that are
 * out of range, do not fit the communicator's size or differ between ranks give the same
 * HS_ERR_ARGUMENT on every rank; MPI_COMM_NULL, or MPI not initialized, gives HS_ERR_ARGUMENT. */
hs_status hs_grid_create(MPI_Comm comm, const hs_grid_options* options, hs_grid* grid);
/** The same from a Fortran communicator (MPI_Comm_c2f; mpi_f08's comm%MPI_VAL). */
hs_status hs_grid_create_f(MPI_Fint comm, const hs_grid_options* options, hs_grid* grid);
hs_status hs_grid_free(hs_grid* grid);
/** This rank, the ranks, the boxes per dimension, this box's coordinates, which dimensions wrap
 * (3 entries each; 1, 0 and 0 beyond ndims). Any pointer may be NULL. */
hs_status hs_grid_info(hs_grid grid, int* ndims, int* rank, int* size, int dims[3], int coords[3], int periodic[3]);
/** The grid's own (duplicated) communicator, as C and as Fortran handle; it lives as long as the
 * grid and its plans (the library sends on it with tags 0 to 32767). */
hs_status hs_grid_comm(hs_grid grid, MPI_Comm* comm);
hs_status hs_grid_comm_f(hs_grid grid, MPI_Fint* comm);

/* ---------------------------------------------------------------- field plans */

typedef struct hs_field_plan_s* hs_field_plan;

/** A field plan's cells and ghost layers (field_shape; docs/grids.md). Box c of P along a
 * dimension of N cells owns [floor(c N / P), floor((c + 1) N / P)) (hs_grid_options::remainder
 * may put the wider boxes first or last), or the cells the cuts give it. */
typedef struct hs_field_spec {
  int global[3];        /**< global cells per dimension, >= 1 (1 beyond ndims) */
  const int* cuts[3];   /**< NULL: the even split; else dims[d] + 1 cuts from 0 to global[d], nondecreasing
                             (read when the plan is made; NULL beyond ndims) */
  int ghost_low[3];     /**< ghost layers below the interior, per dimension, >= 0 (0 beyond ndims); may
                             exceed the neighbours' interiors: the plan reaches as far as needed */
  int ghost_high[3];    /**< ghost layers above, >= 0 */
  int pattern;          /**< hs_pattern (default full) */
  size_t element_size;  /**< bytes per cell the plan will move, for Auto's pricing (0: 8) */
} hs_field_spec;

/** The defaults: 1 cell and no ghosts along every dimension, the even split, pattern full,
 * element_size 0 (8 bytes). */
void hs_field_spec_init(hs_field_spec* spec);
/** A field plan (collective). `strategy`: "Shift", "SingleHop", "TtlMultiHop",
 * "NeighborAlltoall", a registered one, or "Auto" (any case; the model layer ranks Shift,
 * SingleHop and TtlMultiHop, see hs_explain_field). TeamShift carries blocks only and is
 * refused. The spec, the strategy and the pattern must agree on all ranks; a mistake on any rank
 * (a negative width, cuts that differ, an unknown strategy) is the same HS_ERR_ARGUMENT on every
 * rank. Ghost cells beyond a non-periodic border are left untouched by forward and ignored by
 * reverse; on periodic dimensions ghosts wrap, as often as they need to. */
hs_status hs_field_plan_create(hs_grid grid, const char* strategy, const hs_field_spec* spec, hs_field_plan* plan);
hs_status hs_field_plan_free(hs_field_plan* plan);
/** This rank's box: global index of its first interior cell, interior cells, the plan's ghost
 * widths (3 entries each). Any pointer may be NULL. */
hs_status hs_field_plan_shape(hs_field_plan plan, int lo[3], int interior[3], int ghost_low[3], int ghost_high[3]);
/** The strategy that runs (Auto's choice after Auto), valid while the plan lives; "" for a NULL
 * plan (hs_last_error says so). */
const char* hs_field_plan_strategy(hs_field_plan plan);

/** One array of this rank's cells with ghost layers around them (field_view): this rank's
 * interior (hs_field_plan_shape) with ghost_low[d] layers below and ghost_high[d] above along each
 * dimension, then padding[d] unused elements, in `order`. Extent along d: ghost_low[d] +
 * interior[d] + ghost_high[d] + padding[d]; cell (i, j, k) of the interior (from 0; ghosts below
 * 0 and from interior[d]) at (i + ghost_low[0]) + extent[0] * ((j + ghost_low[1]) + extent[1] *
 * (k + ghost_low[2])) x fastest, the reverse nesting z fastest. Layers beyond the plan's widths and
 * the padding are left alone. */
typedef struct hs_field_array {
  void* data;         /**< the first element of the array (its lowest ghost cell); NULL only for a box
                           without cells and ghosts along some dimension */
  int type;           /**< hs_type */
  int order;          /**< hs_order */
  int ghost_low[3];   /**< ghost layers the array has, >= the plan's; -1: the plan's */
  int ghost_high[3];  /**< ghost layers above, >= the plan's; -1: the plan's */
  int padding[3];     /**< unused elements after each line along d (a row or plane pitch), >= 0, default 0 */
} hs_field_array;

/** An array laid out as the plan's shape with no padding, x fastest (ghost widths -1). */
void hs_field_array_init(hs_field_array* array, void* data, hs_type type);
/** Fill the array's ghost cells from the neighbours' interiors (collective over the plan's ranks). */
hs_status hs_field_forward(hs_field_plan plan, const hs_field_array* array);
/** Combine every ghost cell onto its owner with `op`: owner = owner op copy op copy ... */
hs_status hs_field_reverse(hs_field_plan plan, const hs_field_array* array, hs_op op);
/** Split phase: start, then hs_field_test (done: 1 once complete) and hs_field_progress (posts
 * later rounds of multi-round strategies) until done, or hs_field_wait. One exchange per plan at
 * a time (a second start is HS_ERR_ARGUMENT); until done, the interior cells within the ghost
 * widths of the faces must not change and the ghosts must not be read (docs/overlap.md). test and
 * wait with nothing in flight return done / HS_OK at once. The split phase allocates nothing: the
 * exchange in flight lives in the plan. */
hs_status hs_field_start_forward(hs_field_plan plan, const hs_field_array* array);
hs_status hs_field_start_reverse(hs_field_plan plan, const hs_field_array* array, hs_op op);
hs_status hs_field_test(hs_field_plan plan, int* done);
hs_status hs_field_progress(hs_field_plan plan);
hs_status hs_field_wait(hs_field_plan plan);

/* ---------------------------------------------------------------- particles */

typedef struct hs_particle_plan_s* hs_particle_plan;

/** Positions as the code stores them: interleaved (x only, `stride` elements per particle:
 * 3, or 4 padded) or one array per coordinate (x, y and z, stride 1). Always three coordinates
 * (a 1D or 2D grid ignores the others). Ownership is decided on the value as stored. */
typedef struct hs_positions {
  void* x;        /**< interleaved: x[i*stride + d]; split: the x coordinates */
  void* y;        /**< NULL for interleaved */
  void* z;        /**< NULL for interleaved */
  int type;       /**< HS_FLOAT or HS_DOUBLE */
  size_t stride;  /**< elements from one particle to the next in each array (0: 3 interleaved, 1 split;
                       interleaved >= 3: the padding is moved by hs_migrate, not by forwards) */
} hs_positions;

/** A per-particle array: `components` values of `type` per particle, `stride` elements apart
 * (0: components), e.g. velocities {v, HS_DOUBLE, 3, 4} for v[i*4 + d]. Exchanges move and
 * combine the `components` values only. */
typedef struct hs_column {
  void* data;
  int type;
  int components;
  size_t stride;
} hs_column;

/** The most columns one hs_particle_forward_positions or hs_particle_forward moves (in one message per
 * neighbour; hs_migrate takes any number). */
#define HS_MAX_COLUMNS 8

/** The domain [lo, hi) the grid splits (evenly: box c of P along d starts at lo + (hi - lo) c / P). */
typedef struct hs_domain {
  double lo[3];
  double hi[3];
} hs_domain;

/** Ghosts within `cutoff` (per dimension, closed) of this rank's box, from as many boxes away as
 * the cutoff reaches, shifted across periodic borders (collective): `count` owned particles at
 * `x`, every one inside this rank's box (after hs_migrate; one outside is the same
 * HS_ERR_ARGUMENT on every rank). `strategy` as for field plans ("Auto": explain_particles'
 * first, sized by the largest count). Ghosts come block by block in a canonical order, each
 * block in its owner's order: every strategy gives the same arrays. */
hs_status hs_particle_plan_create(hs_grid grid, const char* strategy, const hs_domain* domain, const double cutoff[3],
                                  const hs_positions* x, size_t count, hs_particle_plan* plan);
/** Re-neighbour with new positions in the plan's buffers (collective): the same strategy,
 * domain and cutoff; `count` owned particles, each inside this rank's box. */
hs_status hs_particle_plan_rebuild(hs_particle_plan plan, const hs_positions* x, size_t count);
hs_status hs_particle_plan_free(hs_particle_plan* plan);
/** Owned particles and ghosts: every array an exchange takes holds owned + ghosts entries (the
 * owned ones first, then room for the ghosts; more is left alone). The C interface cannot check
 * the arrays' lengths: shorter ones are written past their end. Either pointer may be NULL. */
hs_status hs_particle_plan_sizes(hs_particle_plan plan, size_t* owned, size_t* ghosts);
/** As hs_field_plan_strategy. */
const char* hs_particle_plan_strategy(hs_particle_plan plan);

/** Ghost positions (each ghost shifted by its periodic image times the domain's length, in
 * double, stored once in the positions' type; padding left alone) and `ncolumns` (0 to
 * HS_MAX_COLUMNS) companion arrays, unshifted, in the same messages (one per neighbour), written
 * after the owned particles. */
hs_status hs_particle_forward_positions(hs_particle_plan plan, const hs_positions* x, int ncolumns,
                                        const hs_column* columns);
/** Ghost values of `ncolumns` (1 to HS_MAX_COLUMNS) per-particle arrays, unshifted, in one
 * message per neighbour. */
hs_status hs_particle_forward(hs_particle_plan plan, int ncolumns, const hs_column* columns);
/** Each ghost's values combined onto its owner with `op` (forces: HS_SUM), value by value;
 * the ghost entries hold partial results afterwards. */
hs_status hs_particle_reverse(hs_particle_plan plan, const hs_column* column, hs_op op);
/** Split phase, as for fields (no progress call): start, then hs_particle_test until done, or
 * hs_particle_wait; one exchange per plan at a time, the arrays off-limits until done. */
hs_status hs_particle_start_forward_positions(hs_particle_plan plan, const hs_positions* x, int ncolumns,
                                              const hs_column* columns);
hs_status hs_particle_start_forward(hs_particle_plan plan, int ncolumns, const hs_column* columns);
hs_status hs_particle_start_reverse(hs_particle_plan plan, const hs_column* column, hs_op op);
hs_status hs_particle_test(hs_particle_plan plan, int* done);
hs_status hs_particle_wait(hs_particle_plan plan);

/** Called by hs_migrate on every rank, once, with the new count (the particles that stayed,
 * `kept`, already compacted to the front, plus the arrivals): make every array hold `count`
 * particles, keeping the first `kept` as they are (realloc does), and store the (possibly moved)
 * pointers back into `x` and `columns` (hs_migrate's own arguments). Return 0, or nonzero to fail
 * the migrate on this rank (HS_ERR_ARGUMENT; the arrivals are lost, the other ranks are done). */
typedef int (*hs_resize_fn)(size_t count, size_t kept, hs_positions* x, hs_column* columns, int ncolumns, void* user);

/** Moves every particle to the rank whose box holds it (collective), over any distance, with its
 * `ncolumns` columns (any number), in place: departures packed from the arrays, holes closed,
 * arrivals written after the particles that stay, ordered by source rank. Positions are wrapped
 * into the domain along periodic dimensions first (stored back in their type); a particle outside
 * a non-periodic dimension is the same HS_ERR_ARGUMENT on every rank before anything moves.
 * With `resize` NULL the arrays hold `capacity` particles and the arrivals must fit (else the same
 * HS_ERR_ARGUMENT on every rank, nothing moved); with `resize` `capacity` is ignored.
 * `keep_order` nonzero: the survivors keep their order; 0: holes are filled from the end (LAMMPS).
 * `*count` is the count before and after. */
hs_status hs_migrate(hs_grid grid, const hs_domain* domain, hs_positions* x, int ncolumns, hs_column* columns,
                     size_t* count, size_t capacity, int keep_order, hs_resize_fn resize, void* user);

/* ---------------------------------------------------------------- the model */

/** One strategy's predicted time (explain()). */
typedef struct hs_prediction {
  char strategy[32];  /**< its name, NUL-terminated (a longer registered name is an error) */
  int team[3];        /**< TeamShift's team sizes, 0 otherwise */
  int shared_memory;  /**< 1: with the shared-memory path inside nodes (Auto's plan then takes it) */
  double seconds;     /**< predicted time of one exchange (0 where no message leaves a rank) */
} hs_prediction;

/** The strategies Auto ranks for a field plan of `spec` (its element_size sizes the messages),
 * each flat and, where the model prices it on the grid's nodes, with the shared-memory path
 * (`shared_memory` 1; docs/node-aware.md), only the rows a plan can run, fastest first: the first min(capacity, *count) into `out`, their number in `*count`
 * (collective: the agreed model, the same on every rank; Auto runs the first). The model is read
 * or measured once per process: $HALOSHIFT_CALIBRATION, ~/.cache/haloshift/calibration.json, or
 * a quick measurement. */
hs_status hs_explain_field(hs_grid grid, const hs_field_spec* spec, hs_prediction* out, int capacity, int* count);
/** The same for particle plans of `count` owned particles (the largest over the ranks counts);
 * `*written` is the number of strategies ranked, as hs_explain_field's `*count`. */
hs_status hs_explain_particles(hs_grid grid, const hs_domain* domain, const double cutoff[3], size_t count,
                               hs_prediction* out, int capacity, int* written);
/** The ranking as text, as haloshift-advise prints it: a header line, then one line per prediction
 * in order ("1  Shift  team 0 0 0  12.345 us"; " +shm" after the name of a shared-memory row). Writes at most `capacity` bytes with the terminator
 * (NUL-terminated, cut if short; `text` may be NULL when `capacity` is 0); `*length` (may be NULL)
 * is the whole text's length without the terminator: call once with capacity 0 to size the buffer.
 * Local: no communication. */
hs_status hs_explain_text(const hs_prediction* predictions, int count, char* text, size_t capacity, size_t* length);
/** Make Auto and explain read the calibration file at `path` (written by haloshift-calibrate):
 * the file is read and checked now (HS_ERR_ARGUMENT naming it and what is wrong), then the
 * environment variable HALOSHIFT_CALIBRATION is set to it (the model layer's only hook: setenv,
 * so not thread-safe against getenv elsewhere) and the models agreed so far are forgotten. Call
 * it on every rank alike, before building the plans it should affect. */
hs_status hs_use_calibration(const char* path);

#ifdef __cplusplus
}
#endif

#endif /* HALOSHIFT_H */

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
 *  - Handles are opaque; hs_*_free sets the handle to NULL and accepts NULL.
 *  - Calls that build something (grids, plans, migrate) are collective over the grid's
 *    communicator and check their arguments on every rank: an error that one rank finds
 *    is returned, with the same text, by every rank.
 *  - Arrays stay the caller's: nothing is copied in or out, and a forward, reverse, start,
 *    test or wait allocates nothing.
 *  - Cells and coordinates are numbered from 0 along x, y, z (dimension 0 is x).
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

/** The text of the last error on this thread ("" before any). Valid until the next failing call. */
const char* hs_last_error(void);
/** The library's version, "major.minor.patch". */
const char* hs_version(void);

/* ---------------------------------------------------------------- enums */

typedef enum hs_type { HS_FLOAT = 0, HS_DOUBLE = 1, HS_INT32 = 2, HS_INT64 = 3 } hs_type;
/** Field storage: x fastest (Fortran a(x,y,z), C a[z][y][x]) or z fastest (C a[x][y][z]). */
typedef enum hs_order { HS_X_FASTEST = 0, HS_Z_FASTEST = 1 } hs_order;
/** Reverse: combine every ghost copy onto its owner by sum, minimum or maximum. */
typedef enum hs_op { HS_SUM = 0, HS_MIN = 1, HS_MAX = 2 } hs_op;
/** Which neighbours a field plan fills (plan_options::pattern). */
typedef enum hs_pattern { HS_PATTERN_FULL = 0, HS_PATTERN_FACES = 1, HS_PATTERN_FACES_AND_EDGES = 2 } hs_pattern;

/* ---------------------------------------------------------------- grids */

typedef struct hs_grid_s* hs_grid;

/** grid_options: fill with hs_grid_options_init, then change what differs. */
typedef struct hs_grid_options {
  int ndims;          /**< 1, 2 or 3 (default 3) */
  int dims[3];        /**< boxes per dimension, 0: chosen (default 0) */
  int periodic[3];    /**< nonzero: the dimension wraps (default all) */
  double lengths[3];  /**< all > 0: dims with the smallest surface (MD codes); 0: MPI_Dims_create (default) */
  int first_fastest;  /**< rank order: 0 the last dimension varies fastest (MPI_Cart_create, default), 1 x fastest (PETSc, LAMMPS) */
  int remainder;      /**< who takes the cells left over: 0 spread (default), 1 the first boxes (PETSc), 2 the last */
} hs_grid_options;

void hs_grid_options_init(hs_grid_options* options);
/** A grid over `comm` (duplicated; collective). `options` NULL: the defaults. */
hs_status hs_grid_create(MPI_Comm comm, const hs_grid_options* options, hs_grid* grid);
/** The same from a Fortran communicator (MPI_Comm_c2f; mpi_f08's comm%MPI_VAL). */
hs_status hs_grid_create_f(MPI_Fint comm, const hs_grid_options* options, hs_grid* grid);
hs_status hs_grid_free(hs_grid* grid);
/** This rank, the ranks, the boxes per dimension, this box's coordinates, which dimensions wrap
 * (3 entries each; 1, 0 and 0 beyond ndims). Any pointer may be NULL. */
hs_status hs_grid_info(hs_grid grid, int* ndims, int* rank, int* size, int dims[3], int coords[3], int periodic[3]);
/** The grid's own (duplicated) communicator, as C and as Fortran handle. */
hs_status hs_grid_comm(hs_grid grid, MPI_Comm* comm);
hs_status hs_grid_comm_f(hs_grid grid, MPI_Fint* comm);

/* ---------------------------------------------------------------- field plans */

typedef struct hs_field_plan_s* hs_field_plan;

/** A field plan's cells and ghost layers (field_shape). */
typedef struct hs_field_spec {
  int global[3];        /**< global cells per dimension (1 beyond ndims) */
  const int* cuts[3];   /**< NULL: the even split; else dims[d] + 1 cuts from 0 to global[d], nondecreasing */
  int ghost_low[3];     /**< ghost layers below the interior, per dimension, >= 0 */
  int ghost_high[3];    /**< ghost layers above */
  int pattern;          /**< hs_pattern (default full) */
  size_t element_size;  /**< bytes per cell the plan will move, for Auto's pricing (0: 8) */
} hs_field_spec;

void hs_field_spec_init(hs_field_spec* spec);
/** A field plan (collective). `strategy`: "Shift", "SingleHop", "TtlMultiHop",
 * "NeighborAlltoall", a registered one, or "Auto" (any case). */
hs_status hs_field_plan_create(hs_grid grid, const char* strategy, const hs_field_spec* spec, hs_field_plan* plan);
hs_status hs_field_plan_free(hs_field_plan* plan);
/** This rank's box: global index of its first interior cell, interior cells, the plan's ghost
 * widths (3 entries each). Any pointer may be NULL. */
hs_status hs_field_plan_shape(hs_field_plan plan, int lo[3], int interior[3], int ghost_low[3], int ghost_high[3]);
/** The strategy that runs (Auto's choice after Auto), valid while the plan lives. */
const char* hs_field_plan_strategy(hs_field_plan plan);

/** One array of this rank's cells with ghost layers around them (field_view). */
typedef struct hs_field_array {
  void* data;         /**< the first element of the array (its lowest ghost cell) */
  int type;           /**< hs_type */
  int order;          /**< hs_order */
  int ghost_low[3];   /**< ghost layers the array has, >= the plan's; -1: the plan's */
  int ghost_high[3];
  int padding[3];     /**< unused elements after each line along d (a row or plane pitch), default 0 */
} hs_field_array;

/** An array laid out as the plan's shape with no padding, x fastest. */
void hs_field_array_init(hs_field_array* array, void* data, hs_type type);
/** Fill the array's ghost cells from the neighbours' interiors. */
hs_status hs_field_forward(hs_field_plan plan, const hs_field_array* array);
/** Combine every ghost cell onto its owner with `op`. */
hs_status hs_field_reverse(hs_field_plan plan, const hs_field_array* array, hs_op op);
/** Split phase: start, then hs_field_test / hs_field_progress until done, or hs_field_wait.
 * One exchange per plan at a time; the array must stay alive and untouched until done. */
hs_status hs_field_start_forward(hs_field_plan plan, const hs_field_array* array);
hs_status hs_field_start_reverse(hs_field_plan plan, const hs_field_array* array, hs_op op);
hs_status hs_field_test(hs_field_plan plan, int* done);
hs_status hs_field_progress(hs_field_plan plan);
hs_status hs_field_wait(hs_field_plan plan);

/* ---------------------------------------------------------------- particles */

typedef struct hs_particle_plan_s* hs_particle_plan;

/** Positions as the code stores them: interleaved (x only, `stride` elements per particle:
 * 3, or 4 padded) or one array per coordinate (x, y and z, stride 1). */
typedef struct hs_positions {
  void* x;
  void* y;        /**< NULL for interleaved */
  void* z;        /**< NULL for interleaved */
  int type;       /**< HS_FLOAT or HS_DOUBLE */
  size_t stride;  /**< elements from one particle to the next in each array (0: 3 interleaved, 1 split) */
} hs_positions;

/** A per-particle array: `components` values of `type` per particle, `stride` elements apart
 * (0: components), e.g. velocities {v, HS_DOUBLE, 3, 4} for v[i*4 + d]. */
typedef struct hs_column {
  void* data;
  int type;
  int components;
  size_t stride;
} hs_column;

/** The most columns one hs_particle_forward_positions or hs_particle_forward moves (in one message per
 * neighbour; hs_migrate takes any number). */
#define HS_MAX_COLUMNS 8

/** The domain [lo, hi) the grid splits (evenly). */
typedef struct hs_domain {
  double lo[3];
  double hi[3];
} hs_domain;

/** Ghosts within `cutoff` (per dimension) of this rank's box (collective): `count` owned
 * particles at `x`, every one inside this rank's box (after hs_migrate). */
hs_status hs_particle_plan_create(hs_grid grid, const char* strategy, const hs_domain* domain, const double cutoff[3],
                                  const hs_positions* x, size_t count, hs_particle_plan* plan);
/** Re-neighbour with new positions in the plan's buffers (collective). */
hs_status hs_particle_plan_rebuild(hs_particle_plan plan, const hs_positions* x, size_t count);
hs_status hs_particle_plan_free(hs_particle_plan* plan);
/** Owned particles and ghosts: every array the plan writes holds owned + ghosts entries. */
hs_status hs_particle_plan_sizes(hs_particle_plan plan, size_t* owned, size_t* ghosts);
const char* hs_particle_plan_strategy(hs_particle_plan plan);

/** Ghost positions (shifted across periodic borders) and `ncolumns` companion arrays in the same
 * messages, written after the owned particles. */
hs_status hs_particle_forward_positions(hs_particle_plan plan, const hs_positions* x, int ncolumns,
                                        const hs_column* columns);
/** Ghost values of `ncolumns` per-particle arrays, unshifted, in one message per neighbour. */
hs_status hs_particle_forward(hs_particle_plan plan, int ncolumns, const hs_column* columns);
/** Each ghost's values combined onto its owner with `op` (forces: HS_SUM). */
hs_status hs_particle_reverse(hs_particle_plan plan, const hs_column* column, hs_op op);
hs_status hs_particle_start_forward_positions(hs_particle_plan plan, const hs_positions* x, int ncolumns,
                                              const hs_column* columns);
hs_status hs_particle_start_forward(hs_particle_plan plan, int ncolumns, const hs_column* columns);
hs_status hs_particle_start_reverse(hs_particle_plan plan, const hs_column* column, hs_op op);
hs_status hs_particle_test(hs_particle_plan plan, int* done);
hs_status hs_particle_wait(hs_particle_plan plan);

/** Called by hs_migrate with the new count: make every array hold `count` particles, keeping the
 * first `kept` as they are, and store the (possibly moved) pointers back into `x` and `columns`.
 * Return 0, or nonzero to fail the migrate. */
typedef int (*hs_resize_fn)(size_t count, size_t kept, hs_positions* x, hs_column* columns, int ncolumns, void* user);

/** Moves every particle to the rank whose box holds it (collective), with its columns. With
 * `resize` NULL, the arrivals must fit in `capacity` particles. `keep_order` nonzero: the
 * survivors keep their order (default); 0: holes are filled from the end (LAMMPS).
 * `*count` is the count before and after. */
hs_status hs_migrate(hs_grid grid, const hs_domain* domain, hs_positions* x, int ncolumns, hs_column* columns,
                     size_t* count, size_t capacity, int keep_order, hs_resize_fn resize, void* user);

/* ---------------------------------------------------------------- the model */

/** One strategy's predicted time (explain()). */
typedef struct hs_prediction {
  char strategy[32];
  int team[3];
  double seconds;
} hs_prediction;

/** The strategies Auto ranks for a field plan of `spec`, fastest first: up to `capacity` into
 * `out`, their number in `*count` (collective: the agreed model). */
hs_status hs_explain_field(hs_grid grid, const hs_field_spec* spec, hs_prediction* out, int capacity, int* count);
/** The same for particle plans: `count` owned particles at most per rank. */
hs_status hs_explain_particles(hs_grid grid, const hs_domain* domain, const double cutoff[3], size_t count,
                               hs_prediction* out, int capacity, int* written);
/** Make Auto read the calibration file at `path` (written by haloshift-calibrate), checked now. */
hs_status hs_use_calibration(const char* path);

#ifdef __cplusplus
}
#endif

#endif /* HALOSHIFT_H */

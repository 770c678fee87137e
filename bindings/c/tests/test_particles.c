/* SPDX-License-Identifier: BSD-3-Clause */
/* Particles through the C interface, against a brute-force oracle built from every rank's
 * positions (MPI_Allgatherv): migrate with companion columns and a resize callback, a plan of each
 * strategy, forward_positions with companions (blocking and split phase), forward of columns,
 * reverse (sum, min), rebuild; positions interleaved (double, float padded to 4) and split. */
#include <math.h>

#include "support.h"

enum { per_rank = 150, slots = 8 };

/* One layout of positions and the strategy of the plan. */
typedef struct particle_case {
  const char* strategy;
  int type;    /* HS_FLOAT or HS_DOUBLE */
  int split;   /* one array per coordinate */
  size_t pad;  /* interleaved: 3 or 4 values per particle */
  int periodic;
  int squeeze; /* nonzero: every particle in the lowest 45 % along x (the boxes above own none) */
} particle_case;

/* The code's arrays: positions, ids (int64), velocities v[i*4 + d] (double). */
typedef struct particles {
  hs_positions x;
  void* coord[3];
  int64_t* id;
  double* v;
  size_t count, room;
} particles;

static double velocity(int64_t id, int d) { return (double)(id % 977) + 0.25 * d; }
static float charge(int64_t id) { return (float)(id % 613) * 0.5f; }

/* Coordinate d of particle i, as stored (float or double), as a double. */
static double coordinate(const particles* p, size_t i, int d) {
  const size_t at = p->x.y ? i * p->x.stride : i * p->x.stride + (size_t)d;
  const void* base = p->x.y ? p->coord[d] : p->coord[0];
  return get_value(base, p->x.type, at);
}

static void point_arrays(particles* p) {
  p->x.x = p->coord[0];
  p->x.y = p->x.y ? p->coord[1] : NULL;
  p->x.z = p->x.z ? p->coord[2] : NULL;
}

/* Grows (or shrinks) every array to `n` particles, keeping their contents. */
static void resize_arrays(particles* p, size_t n) {
  const size_t room = n ? n : 1, size = size_of(p->x.type);
  if (p->x.y)
    for (int d = 0; d < 3; ++d) p->coord[d] = realloc(p->coord[d], room * size);
  else
    p->coord[0] = realloc(p->coord[0], room * p->x.stride * size);
  p->id = realloc(p->id, room * sizeof *p->id);
  p->v = realloc(p->v, room * 4 * sizeof *p->v);
  p->room = room;
  point_arrays(p);
}

static int resize_callback(size_t count, size_t kept, hs_positions* x, hs_column* columns, int ncolumns, void* user) {
  particles* p = (particles*)user;
  (void)kept;
  if (ncolumns != 2 || x != &p->x) return 1;
  resize_arrays(p, count);
  columns[0].data = p->id;
  columns[1].data = p->v;
  return 0;
}

static void make_particles(particles* p, const particle_case* c, const hs_domain* dom, int rank) {
  memset(p, 0, sizeof *p);
  p->x.type = c->type;
  p->x.stride = c->split ? 1 : c->pad;
  if (c->split) p->x.y = p->x.z = (void*)p; /* marks split; point_arrays sets them */
  resize_arrays(p, per_rank);
  p->count = per_rank;
  srand(1234u + 77u * (unsigned)rank);
  for (size_t i = 0; i < per_rank; ++i) {
    p->id[i] = (int64_t)rank * 100000 + (int64_t)i;
    for (int d = 0; d < 3; ++d) {
      const double fraction = c->squeeze && d == 0 ? 0.45 : 1.0;
      const double u = dom->lo[d] + (dom->hi[d] - dom->lo[d]) * fraction * ((double)rand() / ((double)RAND_MAX + 1.0));
      const size_t at = c->split ? i : i * c->pad + (size_t)d;
      set_value(c->split ? p->coord[d] : p->coord[0], c->type, at, u);
      if (!c->split && c->pad == 4) set_value(p->coord[0], c->type, i * 4 + 3, -1);
      p->v[i * 4 + (size_t)d] = velocity(p->id[i], d);
    }
  }
}

static void free_particles(particles* p) {
  for (int d = 0; d < 3; ++d)
    if (d == 0 || p->x.y) free(p->coord[d]);
  free(p->id);
  free(p->v);
}

/* Everyone's owned particles: ids, coordinates (as doubles of the stored values), owner ranks. */
typedef struct everyone {
  int n;
  int64_t* id;
  double* x; /* 3 per particle */
  int first;   /* this rank's first particle */
  int* coords; /* 3 per rank */
} everyone;

static everyone gather(const particles* p, int size, const int coords[3]) {
  everyone e;
  int mine = (int)p->count, *counts = malloc(sizeof(int) * (size_t)size), *at = malloc(sizeof(int) * (size_t)size);
  MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
  e.n = 0;
  for (int r = 0; r < size; ++r) {
    at[r] = e.n;
    e.n += counts[r];
  }
  e.id = malloc(sizeof(int64_t) * (size_t)(e.n + 1));
  e.x = malloc(sizeof(double) * 3 * (size_t)(e.n + 1));
  double* xs = malloc(sizeof(double) * 3 * (p->count + 1));
  for (size_t i = 0; i < p->count; ++i)
    for (int d = 0; d < 3; ++d) xs[3 * i + (size_t)d] = coordinate(p, i, d);
  MPI_Allgatherv(p->id, mine, MPI_INT64_T, e.id, counts, at, MPI_INT64_T, MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r) {
    counts[r] *= 3;
    at[r] *= 3;
  }
  MPI_Allgatherv(xs, 3 * mine, MPI_DOUBLE, e.x, counts, at, MPI_DOUBLE, MPI_COMM_WORLD);
  e.coords = malloc(sizeof(int) * 3 * (size_t)size);
  MPI_Allgather(coords, 3, MPI_INT, e.coords, 3, MPI_INT, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  e.first = at[rank] / 3;
  free(xs);
  free(counts);
  free(at);
  return e;
}

static void free_everyone(everyone* e) {
  free(e->id);
  free(e->x);
  free(e->coords);
}

/* The box edges of grid position c along d (domain::edge of the even split). */
static double edge(const hs_domain* dom, int d, int c, int n) {
  if (c <= 0) return dom->lo[d];
  if (c >= n) return dom->hi[d];
  const double length = dom->hi[d] - dom->lo[d], e = dom->lo[d] + length * c / n;
  return e < dom->hi[d] ? e : dom->hi[d];
}

/* One expected ghost: id and stored (shifted) coordinates. */
typedef struct ghost {
  int64_t id;
  double x[3];
} ghost;

static int compare_ghosts(const void* a, const void* b) {
  const ghost *g = (const ghost*)a, *h = (const ghost*)b;
  if (g->id != h->id) return g->id < h->id ? -1 : 1;
  for (int d = 0; d < 3; ++d)
    if (g->x[d] != h->x[d]) return g->x[d] < h->x[d] ? -1 : 1;
  return 0;
}

/* Particle j's coordinate d shifted by s domain lengths, stored in the positions' type. */
static double shifted(const everyone* e, int j, int d, int s, const hs_domain* dom, int type) {
  const double g = e->x[3 * j + d] + (double)s * (dom->hi[d] - dom->lo[d]);
  return type == HS_FLOAT ? (double)(float)g : g;
}

/* Whether gathered particle j lies in the box at `coords` (its owner's: every particle does after migrate). */
static int inside_box(const everyone* e, int j, const int coords[3], const int dims[3], const hs_domain* dom) {
  int inside = 1;
  for (int d = 0; d < 3; ++d)
    inside = inside && e->x[3 * j + d] >= edge(dom, d, coords[d], dims[d]) &&
             e->x[3 * j + d] < edge(dom, d, coords[d] + 1, dims[d]);
  return inside;
}

/* The ghosts of the box at `coords`: every periodic image of every particle within the cutoff of
 * the box (closed, as the library tests it), the box's own particles unshifted excepted. Writes
 * them to `out` (may be NULL), adds `weight` to `sum` and lowers `low` for each, returns their number. */
typedef struct tally {
  double* sum;
  int* low;
  int weight;
} tally;
static int ghosts_of(const everyone* e, const int coords[3], const int dims[3], int periodic, const hs_domain* dom,
                     double cutoff, int type, ghost* out, const tally* t) {
  int n = 0;
  for (int j = 0; j < e->n; ++j)
    for (int s = 0; s < 27; ++s) {
      const int shift[3] = {s % 3 - 1, s / 3 % 3 - 1, s / 9 - 1};
      int near = 1;
      for (int d = 0; d < 3 && near; ++d) {
        if (shift[d] && !(periodic >> d & 1)) near = 0;
        const double g = e->x[3 * j + d] + (double)shift[d] * (dom->hi[d] - dom->lo[d]);
        if (edge(dom, d, coords[d], dims[d]) - g > cutoff || g - edge(dom, d, coords[d] + 1, dims[d]) > cutoff) near = 0;
      }
      if (!near || (!shift[0] && !shift[1] && !shift[2] && inside_box(e, j, coords, dims, dom))) continue;
      if (t) {
        t->sum[j] += t->weight;
        if (t->weight < t->low[j]) t->low[j] = t->weight;
      }
      if (out) {
        out[n].id = e->id[j];
        for (int d = 0; d < 3; ++d) out[n].x[d] = shifted(e, j, d, shift[d], dom, type);
      }
      ++n;
    }
  return n;
}

/* One run's grid, domain and the oracle's view of it. */
typedef struct world {
  particle_case c;
  hs_grid grid;
  hs_domain dom;
  double cutoff;
  int rank, size, dims[3], coords[3];
} world;

/* After migrate: each particle in this rank's box with its velocity, none lost or duplicated. */
static void check_migrated(const world* w, const particles* p) {
  long long count = (long long)p->count, ids = 0, total = 0, id_total = 0;
  for (size_t i = 0; i < p->count; ++i) {
    ids += p->id[i];
    for (int d = 0; d < 3; ++d) {
      const double x = coordinate(p, i, d);
      EXPECT(x >= edge(&w->dom, d, w->coords[d], w->dims[d]) && x < edge(&w->dom, d, w->coords[d] + 1, w->dims[d]));
      EXPECT(p->v[i * 4 + (size_t)d] == velocity(p->id[i], d));
    }
  }
  MPI_Allreduce(&count, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&ids, &id_total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT(total == (long long)w->size * per_rank);
  const long long per = (long long)per_rank * (per_rank - 1) / 2;
  EXPECT(id_total == 100000LL * per_rank * ((long long)w->size * (w->size - 1) / 2) + per * w->size);
}

/* The ghosts forward_positions wrote (ids, coordinates, charges) against the oracle's. */
static void check_ghosts(const world* w, const particles* p, const everyone* e, size_t owned, size_t ghosts,
                         const float* q) {
  ghost* want = malloc(sizeof(ghost) * (ghosts + 1) * 2 + sizeof(ghost) * 64);
  const int n = ghosts_of(e, w->coords, w->dims, w->c.periodic, &w->dom, w->cutoff, w->c.type, NULL, NULL);
  EXPECT((size_t)n == ghosts);
  if ((size_t)n != ghosts) {
    free(want);
    return;
  }
  ghosts_of(e, w->coords, w->dims, w->c.periodic, &w->dom, w->cutoff, w->c.type, want, NULL);
  ghost* got = malloc(sizeof(ghost) * (ghosts + 1));
  for (size_t g = 0; g < ghosts; ++g) {
    got[g].id = p->id[owned + g];
    for (int d = 0; d < 3; ++d) got[g].x[d] = coordinate(p, owned + g, d);
    if (q) EXPECT(q[owned + g] == charge(p->id[owned + g]));
  }
  qsort(want, ghosts, sizeof(ghost), compare_ghosts);
  qsort(got, ghosts, sizeof(ghost), compare_ghosts);
  for (size_t g = 0; g < ghosts; ++g) EXPECT(compare_ghosts(&want[g], &got[g]) == 0);
  free(want);
  free(got);
}

/* Ghost entries cleared, then forward_positions with `ncolumns` companions: 0 (the ids and charges
 * stay from before), 2 (ids and charges) or 3 (and velocities v[i*4 + d]). */
static void forward_positions(hs_particle_plan plan, particles* p, size_t owned, size_t ghosts, float* q,
                              int split_phase, int ncolumns) {
  for (size_t g = owned; g < owned + ghosts; ++g) {
    if (ncolumns > 0) {
      p->id[g] = -1;
      q[g] = -1;
    }
    for (int d = 0; d < 3; ++d) {
      set_value(p->x.y ? p->coord[d] : p->coord[0], p->x.type, p->x.y ? g : g * p->x.stride + (size_t)d, 1e6);
      p->v[g * 4 + (size_t)d] = -1;
    }
  }
  const hs_column companions[3] = {{p->id, HS_INT64, 1, 0}, {q, HS_FLOAT, 1, 0}, {p->v, HS_DOUBLE, 3, 4}};
  if (split_phase) {
    OK(hs_particle_start_forward_positions(plan, &p->x, ncolumns, companions));
    int done = 0;
    hs_status status = HS_OK;
    while (!done && status == HS_OK) status = hs_particle_test(plan, &done);
    OK(status);
  } else {
    OK(hs_particle_forward_positions(plan, &p->x, ncolumns, companions));
  }
  for (size_t g = owned; g < owned + ghosts; ++g)
    for (int d = 0; d < 3; ++d) EXPECT(p->v[g * 4 + (size_t)d] == (ncolumns == 3 ? velocity(p->id[g], d) : -1));
}

/* Forward of velocities (v[i*4 + d]), types (int32) and charges in one exchange, then of the types
 * alone: the ghosts' match their ids. */
static void forward_columns(hs_particle_plan plan, particles* p, size_t owned, size_t ghosts, float* q) {
  int32_t* type = malloc(sizeof(int32_t) * (owned + ghosts + 1));
  for (size_t i = 0; i < owned + ghosts; ++i) {
    type[i] = i < owned ? (int32_t)(p->id[i] % 1000) : -1;
    if (i >= owned) q[i] = -1;
    for (int d = 0; d < 3 && i >= owned; ++d) p->v[i * 4 + (size_t)d] = -1;
  }
  const hs_column columns[3] = {{p->v, HS_DOUBLE, 3, 4}, {type, HS_INT32, 1, 0}, {q, HS_FLOAT, 1, 1}};
  OK(hs_particle_forward(plan, 3, columns));
  for (size_t g = owned; g < owned + ghosts; ++g) {
    EXPECT(type[g] == (int32_t)(p->id[g] % 1000) && q[g] == charge(p->id[g]));
    for (int d = 0; d < 3; ++d) EXPECT(p->v[g * 4 + (size_t)d] == velocity(p->id[g], d));
    type[g] = -1;
  }
  OK(hs_particle_start_forward(plan, 1, columns + 1));
  OK(hs_particle_wait(plan));
  for (size_t g = owned; g < owned + ghosts; ++g) EXPECT(type[g] == (int32_t)(p->id[g] % 1000));
  free(type);
}

/* Reverse: forces (3 doubles) summed and an int32 combined by min, against every box's ghosts. */
static void reverse(const world* w, hs_particle_plan plan, size_t owned, size_t ghosts, const everyone* e) {
  double* sum = calloc((size_t)e->n + 1, sizeof(double));
  int* low = malloc(sizeof(int) * ((size_t)e->n + 1));
  for (int j = 0; j < e->n; ++j) low[j] = 1000000;
  for (int r = 0; r < w->size; ++r) {
    const tally t = {sum, low, r + 1};
    ghosts_of(e, e->coords + 3 * r, w->dims, w->c.periodic, &w->dom, w->cutoff, w->c.type, NULL, &t);
  }
  double* f = malloc(sizeof(double) * 3 * (owned + ghosts + 1));
  int32_t* m = malloc(sizeof(int32_t) * (owned + ghosts + 1));
  for (size_t i = 0; i < owned + ghosts; ++i) {
    m[i] = i < owned ? 1000000 : w->rank + 1;
    for (int d = 0; d < 3; ++d) f[3 * i + (size_t)d] = i < owned ? 0 : (double)(w->rank + 1) * (d + 1);
  }
  const hs_column force = {f, HS_DOUBLE, 3, 0}, mark = {m, HS_INT32, 1, 1};
  OK(hs_particle_start_reverse(plan, &force, HS_SUM));
  OK(hs_particle_wait(plan));
  OK(hs_particle_reverse(plan, &mark, HS_MIN));
  for (size_t i = 0; i < owned; ++i) {
    const int j = e->first + (int)i;
    EXPECT(m[i] == low[j]);
    for (int d = 0; d < 3; ++d) EXPECT(f[3 * i + (size_t)d] == sum[j] * (d + 1));
  }
  free(sum);
  free(low);
  free(f);
  free(m);
}

static void run_case(const particle_case* c, int which) {
  world w = {*c, NULL, {{0, -1, 0.5}, {10, 7, 6.5}}, 1.2, 0, 0, {0, 0, 0}, {0, 0, 0}};
  hs_grid_options o;
  hs_grid_options_init(&o);
  for (int d = 0; d < 3; ++d) o.periodic[d] = c->periodic >> d & 1;
  OK(hs_grid_create(MPI_COMM_WORLD, &o, &w.grid));
  OK(hs_grid_info(w.grid, NULL, &w.rank, &w.size, w.dims, w.coords, NULL));
  particles p;
  make_particles(&p, c, &w.dom, w.rank);
  hs_column moved[2] = {{p.id, HS_INT64, 1, 0}, {p.v, HS_DOUBLE, 3, 4}};
  size_t count = p.count;
  OK(hs_migrate(w.grid, &w.dom, &p.x, 2, moved, &count, 0, which % 2, resize_callback, &p));
  p.count = count;
  check_migrated(&w, &p);
  everyone e = gather(&p, w.size, w.coords);
  const double cutoff[3] = {w.cutoff, w.cutoff, w.cutoff};
  hs_particle_plan plan = NULL;
  OK(hs_particle_plan_create(w.grid, c->strategy, &w.dom, cutoff, &p.x, p.count, &plan));
  size_t owned = 0, ghosts = 0;
  OK(hs_particle_plan_sizes(plan, &owned, &ghosts));
  EXPECT(owned == p.count);
  resize_arrays(&p, owned + ghosts);
  float* q = malloc(sizeof(float) * (owned + ghosts + 1));
  for (size_t i = 0; i < owned; ++i) q[i] = charge(p.id[i]);
  forward_positions(plan, &p, owned, ghosts, q, which % 2, 2);
  check_ghosts(&w, &p, &e, owned, ghosts, q);
  forward_columns(plan, &p, owned, ghosts, q);
  reverse(&w, plan, owned, ghosts, &e);
  OK(hs_particle_plan_rebuild(plan, &p.x, owned)); /* the same positions: the same ghosts */
  size_t again = 0;
  OK(hs_particle_plan_sizes(plan, NULL, &again));
  EXPECT(again == ghosts);
  forward_positions(plan, &p, owned, ghosts, q, 1 - which % 2, 3);
  check_ghosts(&w, &p, &e, owned, ghosts, q);
  forward_positions(plan, &p, owned, ghosts, q, which % 2, 0); /* positions alone */
  check_ghosts(&w, &p, &e, owned, ghosts, q);
  OK(hs_particle_plan_free(&plan));
  OK(hs_grid_free(&w.grid));
  free(q);
  free_everyone(&e);
  free_particles(&p);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const particle_case cases[] = {
      {"Shift", HS_DOUBLE, 0, 3, 7, 0},    {"SingleHop", HS_FLOAT, 0, 4, 7, 0}, {"TtlMultiHop", HS_DOUBLE, 1, 1, 7, 0},
      {"NeighborAlltoall", HS_DOUBLE, 0, 3, 5, 0}, {"Auto", HS_FLOAT, 1, 1, 7, 0},    {"Shift", HS_FLOAT, 1, 1, 0, 0},
      {"singlehop", HS_DOUBLE, 0, 4, 2, 0},
      {"TtlMultiHop", HS_FLOAT, 0, 3, 7, 1}, /* empty boxes along x */
      {"NeighborAlltoall", HS_DOUBLE, 1, 1, 6, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) run_case(&cases[i], (int)i);
  const int code = finish("test_particles");
  MPI_Finalize();
  return code;
}

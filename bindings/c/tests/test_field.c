/* SPDX-License-Identifier: BSD-3-Clause */
/* Field plans through the C interface, against an oracle from coordinates alone: every strategy,
 * periodic and not, ghost widths 1 and 2 and one case per side, a 2D grid, uneven cuts, the faces
 * pattern; each plan on arrays of every hs_type, both orders, with and without padding; forward
 * (blocking and split phase) and reverse (sum, min, max). */
#include "support.h"

enum { sentinel = -7, ghost_max = 100000 };

typedef struct field_case {
  const char* strategy;
  int ndims;
  int periodic; /* bit d: dimension d wraps */
  int global[3];
  int low[3], high[3];
  int cuts; /* nonzero: uneven cuts along x */
  int pattern;
} field_case;

/* One plan and what the oracle needs: the grid's boxes and every box's first cell per dimension. */
typedef struct setup {
  field_case c;
  hs_grid grid;
  hs_field_plan plan;
  int dims[3], coords[3];
  int first[3][65]; /* first[d][b]: first cell of box b along d, b = 0..dims[d] */
  int lo[3], n[3];
} setup;

/* One array: its type, order, padding, and its extents (ghosts and padding included). */
typedef struct layout {
  int type, order, padding[3], ext[3];
  size_t size;
} layout;

static double value_at(const int g[3]) { return 1.0 + g[0] + 100.0 * g[1] + 10000.0 * g[2]; }

/* Global coordinate `g` along `d` wrapped into the domain, or -1 beyond a non-periodic border. */
static int wrap(const setup* s, int d, int g) {
  const int n = s->c.global[d];
  if (g >= 0 && g < n) return g;
  if (!(s->c.periodic >> d & 1)) return -1;
  return ((g % n) + n) % n;
}

/* Dimensions along which local cell `c` of a box of `n` cells lies outside the interior. */
static int outside_dims(const int c[3], const int n[3]) {
  int out = 0;
  for (int d = 0; d < 3; ++d) out += c[d] < 0 || c[d] >= n[d];
  return out;
}
static int pattern_dims(const setup* s) {
  return s->c.pattern == HS_PATTERN_FACES ? 1 : s->c.pattern == HS_PATTERN_FACES_AND_EDGES ? 2 : 3;
}

/* Builds the grid and the plan of case `c`; fills the box table and checks the plan's shape. */
static int make_setup(setup* s, const field_case* c) {
  memset(s, 0, sizeof *s);
  s->c = *c;
  hs_grid_options o;
  hs_grid_options_init(&o);
  o.ndims = c->ndims;
  for (int d = 0; d < 3; ++d) o.periodic[d] = c->periodic >> d & 1;
  OK(hs_grid_create(MPI_COMM_WORLD, &o, &s->grid));
  int periodic[3];
  OK(hs_grid_info(s->grid, NULL, NULL, NULL, s->dims, s->coords, periodic));
  static int cuts[65];
  hs_field_spec spec;
  hs_field_spec_init(&spec);
  for (int d = 0; d < 3; ++d) {
    spec.global[d] = c->global[d];
    spec.ghost_low[d] = c->low[d];
    spec.ghost_high[d] = c->high[d];
    for (int b = 0; b <= s->dims[d]; ++b) {
      const int64_t p = s->dims[d];
      s->first[d][b] = (int)(d == 0 && c->cuts ? (int64_t)b * b * c->global[d] / (p * p) : b * (int64_t)c->global[d] / p);
      if (d == 0) cuts[b] = s->first[d][b];
    }
  }
  if (c->cuts) spec.cuts[0] = cuts;
  spec.pattern = c->pattern;
  spec.element_size = 4;
  OK(hs_field_plan_create(s->grid, c->strategy, &spec, &s->plan));
  if (!s->plan) return 0;
  int gl[3], gh[3];
  OK(hs_field_plan_shape(s->plan, s->lo, s->n, gl, gh));
  for (int d = 0; d < 3; ++d) {
    EXPECT(s->lo[d] == s->first[d][s->coords[d]]);
    EXPECT(s->n[d] == s->first[d][s->coords[d] + 1] - s->first[d][s->coords[d]]);
    EXPECT(gl[d] == c->low[d] && gh[d] == c->high[d]);
  }
  return 1;
}

static void free_setup(setup* s) {
  OK(hs_field_plan_free(&s->plan));
  OK(hs_grid_free(&s->grid));
  EXPECT(s->plan == NULL && s->grid == NULL);
}

static layout make_layout(const setup* s, int type, int order, int padded) {
  layout l = {type, order, {padded ? 1 : 0, 0, padded ? 2 : 0}, {0, 0, 0}, 1};
  for (int d = 0; d < 3; ++d) {
    l.ext[d] = s->c.low[d] + s->n[d] + s->c.high[d] + l.padding[d];
    l.size *= (size_t)l.ext[d];
  }
  return l;
}

static size_t index_of(const layout* l, const int a[3]) {
  if (l->order == HS_X_FASTEST) return (size_t)a[0] + (size_t)l->ext[0] * ((size_t)a[1] + (size_t)l->ext[1] * (size_t)a[2]);
  return (size_t)a[2] + (size_t)l->ext[2] * ((size_t)a[1] + (size_t)l->ext[1] * (size_t)a[0]);
}

/* What cell `a` (array coordinates) is: 0 padding, 1 interior, 2 a ghost of the plan's pattern
 * inside the domain (its wrapped global coordinates in `w`), 3 a ghost the plan leaves alone. */
static int classify(const setup* s, const layout* l, const int a[3], int w[3]) {
  int c[3];
  for (int d = 0; d < 3; ++d) {
    if (a[d] >= s->c.low[d] + s->n[d] + s->c.high[d]) return 0;
    c[d] = a[d] - s->c.low[d];
  }
  (void)l;
  const int out = outside_dims(c, s->n);
  for (int d = 0; d < 3; ++d) w[d] = wrap(s, d, s->lo[d] + c[d]);
  if (out == 0) return 1;
  if (out > pattern_dims(s)) return 3;
  for (int d = 0; d < 3; ++d)
    if (w[d] < 0) return 3;
  return 2;
}

/* Calls f(s, l, a, index, kind, w, user) for every element of the array. */
typedef void (*cell_fn)(const setup*, const layout*, void* data, size_t i, int kind, const int w[3], void* user);
static void each_cell(const setup* s, const layout* l, void* data, cell_fn f, void* user) {
  int a[3], w[3];
  for (a[2] = 0; a[2] < l->ext[2]; ++a[2])
    for (a[1] = 0; a[1] < l->ext[1]; ++a[1])
      for (a[0] = 0; a[0] < l->ext[0]; ++a[0]) f(s, l, data, index_of(l, a), classify(s, l, a, w), w, user);
}

/* Fill: interior from coordinates, ghosts with *(double*)user, padding with the sentinel. */
static void fill_cell(const setup* s, const layout* l, void* data, size_t i, int kind, const int w[3], void* user) {
  (void)s;
  set_value(data, l->type, i, kind == 1 ? value_at(w) : kind == 0 ? sentinel : *(const double*)user);
}
static void fill(const setup* s, const layout* l, void* data, double ghost) { each_cell(s, l, data, fill_cell, &ghost); }

/* After a forward: interior as filled, ghosts of the pattern the owner's value, the rest untouched. */
static void check_forward_cell(const setup* s, const layout* l, void* data, size_t i, int kind, const int w[3],
                               void* user) {
  (void)s;
  (void)user;
  const double want = kind == 1 || kind == 2 ? value_at(w) : sentinel;
  EXPECT(get_value(data, l->type, i) == want);
}

/* Copies of each of this rank's interior cells held as ghosts by all boxes (the reverse's oracle). */
static void count_copies(const setup* s, int* count) {
  const size_t cells = (size_t)s->n[0] * (size_t)s->n[1] * (size_t)s->n[2];
  memset(count, 0, cells * sizeof *count);
  int b[3], c[3];
  for (b[2] = 0; b[2] < s->dims[2]; ++b[2])
    for (b[1] = 0; b[1] < s->dims[1]; ++b[1])
      for (b[0] = 0; b[0] < s->dims[0]; ++b[0]) {
        int lo[3], n[3];
        for (int d = 0; d < 3; ++d) {
          lo[d] = s->first[d][b[d]];
          n[d] = s->first[d][b[d] + 1] - lo[d];
        }
        for (c[2] = -s->c.low[2]; c[2] < n[2] + s->c.high[2]; ++c[2])
          for (c[1] = -s->c.low[1]; c[1] < n[1] + s->c.high[1]; ++c[1])
            for (c[0] = -s->c.low[0]; c[0] < n[0] + s->c.high[0]; ++c[0]) {
              const int out = outside_dims(c, n);
              if (out == 0 || out > pattern_dims(s)) continue;
              int m[3], mine = 1;
              for (int d = 0; d < 3; ++d) {
                const int w = wrap(s, d, lo[d] + c[d]);
                m[d] = w - s->lo[d];
                mine = mine && w >= 0 && m[d] >= 0 && m[d] < s->n[d];
              }
              if (mine) ++count[m[0] + s->n[0] * (m[1] + s->n[1] * m[2])];
            }
      }
}

typedef struct reverse_check {
  const int* count;
  int op;
} reverse_check;

/* After a reverse: interior cells combined with their copies (filled as 1, 0 or ghost_max), padding untouched. */
static void check_reverse_cell(const setup* s, const layout* l, void* data, size_t i, int kind, const int w[3],
                               void* user) {
  const reverse_check* r = (const reverse_check*)user;
  if (kind == 0) EXPECT(get_value(data, l->type, i) == sentinel);
  if (kind != 1) return;
  const int k = r->count[(w[0] - s->lo[0]) + s->n[0] * ((w[1] - s->lo[1]) + s->n[1] * (w[2] - s->lo[2]))];
  const double v = value_at(w);
  const double want = r->op == HS_SUM ? v + k : r->op == HS_MIN ? (k ? 0 : v) : (k ? ghost_max : v);
  EXPECT(get_value(data, l->type, i) == want);
}

static void run_forwards(const setup* s, const layout* l, hs_field_array* a) {
  fill(s, l, a->data, sentinel);
  OK(hs_field_forward(s->plan, a));
  each_cell(s, l, a->data, check_forward_cell, NULL);
  fill(s, l, a->data, sentinel);
  OK(hs_field_start_forward(s->plan, a));
  int done = 0;
  for (int polls = 0; !done; ++polls) {
    OK(hs_field_test(s->plan, &done));
    if (!done) OK(hs_field_progress(s->plan));
    if (polls > 100000000) break;
  }
  each_cell(s, l, a->data, check_forward_cell, NULL);
}

static void run_reverse(const setup* s, const layout* l, hs_field_array* a, const int* count, hs_op op, int split) {
  const double ghost = op == HS_SUM ? 1 : op == HS_MIN ? 0 : ghost_max;
  fill(s, l, a->data, ghost);
  if (split) {
    OK(hs_field_start_reverse(s->plan, a, op));
    OK(hs_field_wait(s->plan));
  } else {
    OK(hs_field_reverse(s->plan, a, op));
  }
  reverse_check r = {count, op};
  each_cell(s, l, a->data, check_reverse_cell, &r);
}

/* Every type on plan `s`: orders and padding alternate; min and max on one type per case. */
static void run_case(const field_case* c, int which) {
  setup s;
  if (!make_setup(&s, c)) return;
  int* count = malloc(sizeof(int) * ((size_t)s.n[0] * s.n[1] * s.n[2] + 1));
  count_copies(&s, count);
  for (int type = HS_FLOAT; type <= HS_INT64; ++type) {
    const layout l = make_layout(&s, type, (type + which) % 2 ? HS_Z_FASTEST : HS_X_FASTEST, type >= HS_INT32);
    hs_field_array a;
    hs_field_array_init(&a, malloc(l.size * size_of(type) + 1), (hs_type)type);
    a.order = l.order;
    for (int d = 0; d < 3; ++d) a.padding[d] = l.padding[d];
    run_forwards(&s, &l, &a);
    run_reverse(&s, &l, &a, count, HS_SUM, type % 2);
    if (type == which % 4) {
      run_reverse(&s, &l, &a, count, HS_MIN, 1);
      run_reverse(&s, &l, &a, count, HS_MAX, 0);
    }
    free(a.data);
  }
  free(count);
  free_setup(&s);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  static const char* strategies[] = {"Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall", "Auto"};
  static const int widths[3][2][3] = {{{1, 1, 1}, {1, 1, 1}}, {{2, 2, 2}, {2, 2, 2}}, {{2, 1, 0}, {0, 1, 2}}};
  int which = 0;
  for (int st = 0; st < 5; ++st)
    for (int periodic = 0; periodic <= 7; periodic += 7)
      for (int w = 0; w < 3; ++w) {
        field_case c = {strategies[st], 3, periodic, {13, 9, 7}, {0, 0, 0}, {0, 0, 0}, 0, HS_PATTERN_FULL};
        memcpy(c.low, widths[w][0], sizeof c.low);
        memcpy(c.high, widths[w][1], sizeof c.high);
        run_case(&c, which++);
      }
  const field_case extra[] = {
      {"Shift", 2, 1, {11, 6, 1}, {2, 1, 0}, {2, 1, 0}, 0, HS_PATTERN_FULL},     /* 2D, periodic in x only */
      {"singlehop", 3, 5, {13, 5, 4}, {3, 1, 1}, {1, 1, 1}, 1, HS_PATTERN_FULL}, /* uneven cuts along x */
      {"Shift", 3, 7, {8, 8, 8}, {1, 1, 1}, {1, 1, 1}, 0, HS_PATTERN_FACES},
      {"TtlMultiHop", 3, 3, {8, 6, 5}, {2, 2, 1}, {2, 2, 1}, 0, HS_PATTERN_FACES_AND_EDGES},
      {"SingleHop", 3, 7, {1, 5, 4}, {2, 1, 1}, {1, 1, 1}, 0, HS_PATTERN_FULL}, /* boxes without cells along x */
      {"Shift", 3, 6, {1, 6, 5}, {1, 2, 1}, {1, 1, 2}, 0, HS_PATTERN_FULL},
  };
  for (size_t i = 0; i < sizeof extra / sizeof extra[0]; ++i) run_case(&extra[i], which++);
  const int code = finish("test_field");
  MPI_Finalize();
  return code;
}

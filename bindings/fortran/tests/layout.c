/* SPDX-License-Identifier: BSD-3-Clause */
/* The C side of test_layout.f90: the size and every member's offset and size of each struct of
 * haloshift.h, and the value of every enumerator, by name, as the C compiler lays them out. */
#include <haloshift.h>
#include <stddef.h>
#include <string.h>

typedef struct member {
  const char* type;
  const char* name;
  size_t offset, size;
} member;

#define MEMBER(s, m) {#s, #m, offsetof(s, m), sizeof(((s*)0)->m)}
#define WHOLE(s) {#s, "", 0, sizeof(s)}

static const member members[] = {
    WHOLE(hs_grid_options), MEMBER(hs_grid_options, ndims), MEMBER(hs_grid_options, dims),
    MEMBER(hs_grid_options, periodic), MEMBER(hs_grid_options, lengths), MEMBER(hs_grid_options, first_fastest),
    MEMBER(hs_grid_options, remainder),
    WHOLE(hs_field_spec), MEMBER(hs_field_spec, global), MEMBER(hs_field_spec, cuts), MEMBER(hs_field_spec, ghost_low),
    MEMBER(hs_field_spec, ghost_high), MEMBER(hs_field_spec, pattern), MEMBER(hs_field_spec, element_size),
    WHOLE(hs_field_array), MEMBER(hs_field_array, data), MEMBER(hs_field_array, type), MEMBER(hs_field_array, order),
    MEMBER(hs_field_array, ghost_low), MEMBER(hs_field_array, ghost_high), MEMBER(hs_field_array, padding),
    WHOLE(hs_positions), MEMBER(hs_positions, x), MEMBER(hs_positions, y), MEMBER(hs_positions, z),
    MEMBER(hs_positions, type), MEMBER(hs_positions, stride),
    WHOLE(hs_column), MEMBER(hs_column, data), MEMBER(hs_column, type), MEMBER(hs_column, components),
    MEMBER(hs_column, stride),
    WHOLE(hs_domain), MEMBER(hs_domain, lo), MEMBER(hs_domain, hi),
    WHOLE(hs_prediction), MEMBER(hs_prediction, strategy), MEMBER(hs_prediction, team), MEMBER(hs_prediction, shared_memory),
    MEMBER(hs_prediction, seconds),
};

typedef struct constant {
  const char* name;
  long value;
} constant;

#define CONSTANT(c) {#c, (long)(c)}

static const constant constants[] = {
    CONSTANT(HS_OK), CONSTANT(HS_ERR_ARGUMENT), CONSTANT(HS_ERR_NULL), CONSTANT(HS_ERR_MPI), CONSTANT(HS_ERR_MEMORY),
    CONSTANT(HS_ERR_INTERNAL), CONSTANT(HS_FLOAT), CONSTANT(HS_DOUBLE), CONSTANT(HS_INT32), CONSTANT(HS_INT64),
    CONSTANT(HS_X_FASTEST), CONSTANT(HS_Z_FASTEST), CONSTANT(HS_SUM), CONSTANT(HS_MIN), CONSTANT(HS_MAX),
    CONSTANT(HS_PATTERN_FULL), CONSTANT(HS_PATTERN_FACES), CONSTANT(HS_PATTERN_FACES_AND_EDGES), CONSTANT(HS_MAX_COLUMNS),
};

/* Rows in each table: the Fortran side must check as many. */
int layout_members(void) { return (int)(sizeof members / sizeof members[0]); }
int layout_constants(void) { return (int)(sizeof constants / sizeof constants[0]); }

/* The member `name` ("" for the whole struct) of struct `type`: 1 and its offset and size, or 0. */
int layout_member(const char* type, const char* name, size_t* offset, size_t* size) {
  for (size_t i = 0; i < sizeof members / sizeof members[0]; ++i)
    if (strcmp(members[i].type, type) == 0 && strcmp(members[i].name, name) == 0) {
      *offset = members[i].offset;
      *size = members[i].size;
      return 1;
    }
  return 0;
}

/* The enumerator `name`: 1 and its value, or 0. */
int layout_constant(const char* name, long* value) {
  for (size_t i = 0; i < sizeof constants / sizeof constants[0]; ++i)
    if (strcmp(constants[i].name, name) == 0) {
      *value = constants[i].value;
      return 1;
    }
  return 0;
}

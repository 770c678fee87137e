/* SPDX-License-Identifier: BSD-3-Clause */
/* For test_no_allocation.f90: malloc, defined in the program, counts every allocation of the
 * process (the module's, the C interface's, MPI's) and hands it to glibc. */
#include <stddef.h>

extern void* __libc_malloc(size_t size);

static long allocations;

void* malloc(size_t size) {
  ++allocations;
  return __libc_malloc(size);
}

long malloc_count(void) { return allocations; }

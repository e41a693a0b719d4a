/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Growable arrays: the one way an array makes room, with its size checked for overflow. */
#ifndef LABELPROF_ARRAY_H
#define LABELPROF_ARRAY_H

#include <stddef.h>

/*
 * Makes the array at *arrp (a pointer to any object pointer) hold at least
 * need elements of size bytes; *cap is its capacity in elements, doubled
 * from 16 (or from min_cap when larger) until need fits. On failure the
 * array and *cap are unchanged: -ENOMEM, or -EOVERFLOW when the size does
 * not fit in a size_t.
 */
int array__reserve(void *arrp, size_t *cap, size_t need, size_t size, size_t min_cap);

/* Room for need elements of arr, whose capacity is the size_t lvalue cap. */
#define ARRAY_RESERVE(arr, cap, need) array__reserve(&(arr), &(cap), (need), sizeof(*(arr)), 0)
/* The same, the first allocation holding at least min_cap elements. */
#define ARRAY_RESERVE_MIN(arr, cap, need, min_cap)                                                 \
	array__reserve(&(arr), &(cap), (need), sizeof(*(arr)), (min_cap))

#endif /* LABELPROF_ARRAY_H */

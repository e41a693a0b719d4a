/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Lookups in arrays sorted by a key. */
#ifndef LABELPROF_SORTED_H
#define LABELPROF_SORTED_H

#include <stddef.h>

/*
 * How many of the n elements of arr, sorted by their member key, have a key
 * of at most x: arr[result - 1] is the last one starting at or before x, none
 * when 0. A macro, so that the comparison is inlined as a hand-written search
 * would be: symbolization looks up every frame.
 */
#define SORTED_UPPER_BOUND(arr, n, key, x)                                                         \
	({                                                                                         \
		__typeof__(&(arr)[0]) __ub_v = (arr);                                              \
		__typeof__(x) __ub_x = (x);                                                        \
		size_t __ub_lo = 0, __ub_hi = (n);                                                 \
                                                                                                   \
		while (__ub_lo < __ub_hi) {                                                        \
			size_t __ub_mid = __ub_lo + (__ub_hi - __ub_lo) / 2;                       \
                                                                                                   \
			if (__ub_v[__ub_mid].key <= __ub_x)                                        \
				__ub_lo = __ub_mid + 1;                                            \
			else                                                                       \
				__ub_hi = __ub_mid;                                                \
		}                                                                                  \
		__ub_lo;                                                                           \
	})

#endif /* LABELPROF_SORTED_H */

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"

int array__reserve(void *arrp, size_t *cap, size_t need, size_t size, size_t min_cap)
{
	size_t ncap = *cap;
	void *arr, *n;

	if (need <= ncap)
		return 0;
	if (!ncap)
		ncap = min_cap > 16 ? min_cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -EOVERFLOW;
		ncap *= 2;
	}
	if (size && ncap > SIZE_MAX / size)
		return -EOVERFLOW;
	/* arrp points to a pointer of unknown type: copied as bytes, never accessed as void *. */
	memcpy(&arr, arrp, sizeof(arr));
	n = realloc(arr, ncap * size);
	if (!n)
		return -ENOMEM;
	memcpy(arrp, &n, sizeof(n));
	*cap = ncap;
	return 0;
}

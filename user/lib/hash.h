/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* FNV-1a over bytes, for the in-memory tables that key on strings and records. */
#ifndef LABELPROF_HASH_H
#define LABELPROF_HASH_H

#include <stddef.h>

#include <linux/types.h>

#define HASH_FNV1A_SEED 0xcbf29ce484222325ull

/* h continued over the n bytes at p; start from HASH_FNV1A_SEED. */
static inline __u64 hash_fnv1a(__u64 h, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

#endif /* LABELPROF_HASH_H */

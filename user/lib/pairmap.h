/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A hash table from two 64-bit words to a non-NULL pointer, with linear
 * probing. Zeroed, it is empty and holds no memory.
 */
#ifndef LABELPROF_PAIRMAP_H
#define LABELPROF_PAIRMAP_H

#include <stddef.h>

#include <linux/types.h>

struct pairmap_slot {
	__u64 k1, k2;
	void *val; /* NULL: empty */
};

struct pairmap {
	struct pairmap_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t count;
};

/* The value of (k1, k2), or NULL. */
void *pairmap__get(const struct pairmap *t, __u64 k1, __u64 k2);
/* Inserts or replaces; val is not NULL. 0 or -ENOMEM. */
int pairmap__put(struct pairmap *t, __u64 k1, __u64 k2, void *val);
void pairmap__del(struct pairmap *t, __u64 k1, __u64 k2);
/* Frees the slots (not the values) and empties t. */
void pairmap__free(struct pairmap *t);

#endif /* LABELPROF_PAIRMAP_H */

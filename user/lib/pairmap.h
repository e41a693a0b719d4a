/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A map from two 64-bit words to a non-NULL pointer: the entries in one
 * array, indexed by lib/hashmap.h. Zeroed, it is empty and holds no memory.
 */
#ifndef LABELPROF_PAIRMAP_H
#define LABELPROF_PAIRMAP_H

#include <stddef.h>

#include <linux/types.h>

#include "lib/hashmap.h"

struct pairmap_entry {
	__u64 k1, k2;
	void *val;
};

struct pairmap {
	struct hashmap index;
	/* entries[0, count), in no order: deleting one moves the last into its place */
	struct pairmap_entry *entries;
	size_t count, cap;
};

/* The value of (k1, k2), or NULL. */
void *pairmap__get(const struct pairmap *t, __u64 k1, __u64 k2);
/* Inserts or replaces; val is not NULL. 0 or -ENOMEM. */
int pairmap__put(struct pairmap *t, __u64 k1, __u64 k2, void *val);
void pairmap__del(struct pairmap *t, __u64 k1, __u64 k2);
/* Frees the entries (not the values) and empties t. */
void pairmap__free(struct pairmap *t);
/* The memory t holds. */
size_t pairmap__bytes(const struct pairmap *t);

#endif /* LABELPROF_PAIRMAP_H */

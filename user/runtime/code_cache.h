/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a runtime module named in one process (a method, a code object, a
 * function), by two words: where the runtime's object is and what tells
 * it from the next object there. Bounded: when full, the entries not asked
 * for again since they were added or since the last eviction go (all of
 * them if every one was), so the code a process keeps running stays named
 * while code run once makes room.
 */
#ifndef LABELPROF_RUNTIME_CODE_CACHE_H
#define LABELPROF_RUNTIME_CODE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "lib/pairmap.h"

/* Entries of one process, at most. */
#define CODE_CACHE_MAX_ENTRIES 65536

/* The head of a module's entry: its own fields follow (container_of). */
struct code_entry {
	__u64 checked_ns; /* when it was read, or last found unchanged */
	bool bad;	  /* holds nothing named: not read yet, or no code there */
	bool used;	  /* asked for again since it was added or the last eviction */
};

/* A module's entries: their size, how to free what one holds. */
struct code_cache_kind {
	size_t size;			    /* of the module's entry, its code_entry first */
	void (*free)(struct code_entry *e); /* what the entry holds (NULL: nothing) */
	__u64 check_ns;			    /* an entry is due to be read again this long after */
};

/* Zeroed, it is empty and holds no memory: a registry module's per-process state. */
struct code_cache {
	struct pairmap map; /* (k1, k2) -> struct code_entry */
};

/*
 * The entry of (k1, k2), a new one (bad, due) if none; *due says whether
 * it was read longer than kind->check_ns before now. NULL: out of memory.
 */
struct code_entry *code_cache__entry(struct code_cache *c, const struct code_cache_kind *kind,
				     __u64 k1, __u64 k2, __u64 now, bool *due);
/* Frees every entry: the process's image ended. */
void code_cache__clear(struct code_cache *c, const struct code_cache_kind *kind);

#endif /* LABELPROF_RUNTIME_CODE_CACHE_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The unwind tables in BPF (docs/design.md section 9): one table per object,
 * cached by build id, else device + inode + mtime, shared by every process
 * mapping it; per process, its text mappings. Objects are evicted least
 * recently used first when the rows would exceed the memory budget. The
 * work runs on a thread of its own.
 */
#ifndef LABELPROF_UNWIND_H
#define LABELPROF_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "labelprof.h"

/* The default budget of the rows in BPF, and its bounds (MiB). */
#define UNWIND_DEFAULT_MEMORY_MIB 256
#define UNWIND_MIN_MEMORY_MIB	  1
#define UNWIND_MAX_MEMORY_MIB	  16384

/* The BPF maps the tables go to (sampler__unwind_maps). */
struct unwind_maps {
	int shards;   /* array of maps: shard -> array of struct lp_unwind_page */
	int fences;   /* global page -> its first pc */
	int objects;  /* object id -> struct lp_unwind_object */
	int procs;    /* tgid -> struct lp_unwind_proc */
	int counters; /* struct lp_unwind_counters, per CPU */
	__u32 pages;  /* global pages the maps hold (the budget) */
};

struct unwind_stats {
	__u64 objects;	     /* objects with rows in BPF now */
	__u64 rows;	     /* their rows */
	__u64 bytes;	     /* BPF memory of their pages */
	__u64 shard_bytes;   /* BPF memory of the shards created (the high-water mark) */
	__u64 builds;	     /* tables derived */
	__u64 build_ns;	     /* time spent deriving them */
	__u64 evictions;     /* objects evicted for the budget */
	__u64 errors;	     /* objects whose CFI could not be read or loaded */
	__u64 processes;     /* processes whose mappings were loaded */
	__u64 procs_full;    /* ... that found no room (preallocated map): frame pointers */
	struct lp_unwind_counters bpf; /* the walker's counters, summed over CPUs */
};

struct unwind;

struct unwind *unwind__new(const struct unwind_maps *maps, bool verbose);
void unwind__free(struct unwind *u);

struct maps;

/*
 * Asks for the tables of the executable mappings in maps, pid's, and its
 * mapping list in BPF, made when the unwind thread comes to it (it takes a
 * reference to maps; a newer request replaces one still waiting): 0, or
 * -ENOMEM.
 */
int unwind__queue_update(struct unwind *u, pid_t pid, struct maps *maps);
/* Asks to drop pid's mapping list (the process exited), after what was asked before. */
int unwind__queue_forget(struct unwind *u, pid_t pid);
/* Waits until every request so far is handled. */
void unwind__wait_idle(struct unwind *u);

void unwind__stats(struct unwind *u, struct unwind_stats *out);

#endif /* LABELPROF_UNWIND_H */

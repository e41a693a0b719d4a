// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A runtime module's named code in one process (code_cache.h). */
#include <stdlib.h>

#include "runtime/code_cache.h"

static void drop(struct code_cache *c, const struct code_cache_kind *kind, size_t i)
{
	struct pairmap_entry *pe = &c->map.entries[i];
	struct code_entry *e = pe->val;

	pairmap__del(&c->map, pe->k1, pe->k2);
	if (kind->free)
		kind->free(e);
	free(e);
}

/* Makes room: the entries not used since the last eviction go, or all of them. */
static void evict(struct code_cache *c, const struct code_cache_kind *kind)
{
	size_t i = c->map.count;
	struct code_entry *e;

	/* downwards: a deletion moves the last entry, already seen, into place i */
	while (i-- > 0) {
		e = c->map.entries[i].val;
		if (!e->used)
			drop(c, kind, i);
		else
			e->used = false;
	}
	if (c->map.count >= CODE_CACHE_MAX_ENTRIES)
		code_cache__clear(c, kind);
}

struct code_entry *code_cache__entry(struct code_cache *c, const struct code_cache_kind *kind,
				     __u64 k1, __u64 k2, __u64 now, bool *due)
{
	struct code_entry *e = pairmap__get(&c->map, k1, k2);

	if (!e) {
		if (c->map.count >= CODE_CACHE_MAX_ENTRIES)
			evict(c, kind);
		e = calloc(1, kind->size);
		if (!e || pairmap__put(&c->map, k1, k2, e)) {
			free(e);
			return NULL;
		}
		e->bad = true;
	} else {
		e->used = true;
	}
	*due = !e->checked_ns || now - e->checked_ns >= kind->check_ns;
	return e;
}

void code_cache__clear(struct code_cache *c, const struct code_cache_kind *kind)
{
	size_t i;

	for (i = 0; i < c->map.count; i++) {
		if (kind->free)
			kind->free(c->map.entries[i].val);
		free(c->map.entries[i].val);
	}
	pairmap__free(&c->map);
}

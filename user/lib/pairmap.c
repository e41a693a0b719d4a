// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>

#include "lib/array.h"
#include "lib/pairmap.h"

struct pair_key {
	__u64 k1, k2;
};

static __u64 pairmap_hash(__u64 k1, __u64 k2)
{
	__u64 h = k1 * 0x9e3779b97f4a7c15ULL ^ (k2 + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;

	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 29);
}

static bool pairmap_eq(const void *ctx, __u32 id, const void *key)
{
	const struct pairmap_entry *e = &((const struct pairmap *)ctx)->entries[id];
	const struct pair_key *k = key;

	return e->k1 == k->k1 && e->k2 == k->k2;
}

static struct hashmap_slot *pairmap_find(const struct pairmap *t, __u64 h, __u64 k1, __u64 k2)
{
	struct pair_key k = {k1, k2};

	return hashmap__find(&t->index, h, pairmap_eq, t, &k);
}

void *pairmap__get(const struct pairmap *t, __u64 k1, __u64 k2)
{
	__u32 id;

	if (!hashmap_slot__id(pairmap_find(t, pairmap_hash(k1, k2), k1, k2), &id))
		return NULL;
	return t->entries[id].val;
}

int pairmap__put(struct pairmap *t, __u64 k1, __u64 k2, void *val)
{
	__u64 h = pairmap_hash(k1, k2);
	struct hashmap_slot *s;
	__u32 id;

	if (hashmap__reserve(&t->index, 0))
		return -ENOMEM;
	s = pairmap_find(t, h, k1, k2);
	if (hashmap_slot__id(s, &id)) {
		t->entries[id].val = val;
		return 0;
	}
	if (ARRAY_RESERVE(t->entries, t->cap, t->count + 1))
		return -ENOMEM;
	t->entries[t->count] = (struct pairmap_entry){k1, k2, val};
	hashmap__set(&t->index, s, h, t->count++);
	return 0;
}

void pairmap__del(struct pairmap *t, __u64 k1, __u64 k2)
{
	struct hashmap_slot *s = pairmap_find(t, pairmap_hash(k1, k2), k1, k2);
	__u32 id, last;

	if (!hashmap_slot__id(s, &id))
		return;
	hashmap__del(&t->index, s);
	last = --t->count;
	if (id != last) {
		t->entries[id] = t->entries[last];
		hashmap__renumber(&t->index, pairmap_hash(t->entries[id].k1, t->entries[id].k2),
				  last, id);
	}
}

void pairmap__free(struct pairmap *t)
{
	hashmap__free(&t->index);
	free(t->entries);
	*t = (struct pairmap){0};
}

size_t pairmap__bytes(const struct pairmap *t)
{
	return hashmap__bytes(&t->index) + t->cap * sizeof(*t->entries);
}

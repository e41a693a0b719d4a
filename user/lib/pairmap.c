// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>

#include "lib/pairmap.h"

static size_t pairmap_hash(__u64 k1, __u64 k2)
{
	__u64 h = k1 * 0x9e3779b97f4a7c15ULL ^ (k2 + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;

	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 29;
	return h;
}

static struct pairmap_slot *pairmap_find(const struct pairmap *t, __u64 k1, __u64 k2)
{
	size_t i;

	if (!t->cap)
		return NULL;
	for (i = pairmap_hash(k1, k2) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct pairmap_slot *s = &t->slots[i];

		if (!s->val || (s->k1 == k1 && s->k2 == k2))
			return s;
	}
}

void *pairmap__get(const struct pairmap *t, __u64 k1, __u64 k2)
{
	struct pairmap_slot *s = pairmap_find(t, k1, k2);

	return s ? s->val : NULL;
}

static int pairmap_grow(struct pairmap *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 64, i;
	struct pairmap old = *t;

	t->slots = calloc(ncap, sizeof(*t->slots));
	if (!t->slots) {
		*t = old;
		return -ENOMEM;
	}
	t->cap = ncap;
	for (i = 0; i < old.cap; i++)
		if (old.slots[i].val)
			*pairmap_find(t, old.slots[i].k1, old.slots[i].k2) = old.slots[i];
	free(old.slots);
	return 0;
}

int pairmap__put(struct pairmap *t, __u64 k1, __u64 k2, void *val)
{
	struct pairmap_slot *s;

	if ((t->count + 1) * 2 > t->cap && pairmap_grow(t))
		return -ENOMEM;
	s = pairmap_find(t, k1, k2);
	if (!s->val)
		t->count++;
	*s = (struct pairmap_slot){k1, k2, val};
	return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
void pairmap__del(struct pairmap *t, __u64 k1, __u64 k2)
{
	struct pairmap_slot *s = pairmap_find(t, k1, k2);
	size_t mask = t->cap - 1, i, j;

	if (!s || !s->val)
		return;
	i = s - t->slots;
	for (j = (i + 1) & mask; t->slots[j].val; j = (j + 1) & mask) {
		size_t home = pairmap_hash(t->slots[j].k1, t->slots[j].k2) & mask;

		/* Move j into the hole at i unless its home lies cyclically in (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].val = NULL;
	t->count--;
}

void pairmap__free(struct pairmap *t)
{
	free(t->slots);
	*t = (struct pairmap){0};
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hashmap.h"

#define HASHMAP_MIN_CAP 64

int hashmap__reserve(struct hashmap *m, size_t min_cap)
{
	size_t ncap = m->cap ? m->cap * 2 : min_cap ? min_cap : HASHMAP_MIN_CAP, i, j;
	struct hashmap_slot *n;

	if ((m->count + 1) * 2 <= m->cap)
		return 0;
	/* ids are 32 bits: more slots than that could never fill */
	if (ncap > (size_t)UINT32_MAX + 1)
		return -ENOMEM;
	n = calloc(ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		const struct hashmap_slot *s = &m->slots[i];

		if (!s->id1)
			continue;
		for (j = s->hash & (ncap - 1); n[j].id1; j = (j + 1) & (ncap - 1))
			;
		n[j] = *s;
	}
	free(m->slots);
	m->slots = n;
	m->cap = ncap;
	return 0;
}

void hashmap__set(struct hashmap *m, struct hashmap_slot *s, __u64 hash, __u32 id)
{
	*s = (struct hashmap_slot){(__u32)hash, id + 1};
	m->count++;
}

void hashmap__del(struct hashmap *m, struct hashmap_slot *s)
{
	size_t mask = m->cap - 1, i = s - m->slots, j, home;

	for (j = (i + 1) & mask; m->slots[j].id1; j = (j + 1) & mask) {
		home = m->slots[j].hash & mask;
		/* Move j into the hole at i unless its home lies cyclically in (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].id1 = 0;
	m->count--;
}

void hashmap__renumber(struct hashmap *m, __u64 hash, __u32 from, __u32 to)
{
	size_t mask = m->cap - 1, i;

	for (i = (__u32)hash & mask; m->slots[i].id1; i = (i + 1) & mask) {
		if (m->slots[i].id1 == from + 1) {
			m->slots[i].id1 = to + 1;
			return;
		}
	}
}

void hashmap__clear(struct hashmap *m)
{
	if (m->cap)
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->count = 0;
}

void hashmap__free(struct hashmap *m)
{
	free(m->slots);
	*m = (struct hashmap){0};
}

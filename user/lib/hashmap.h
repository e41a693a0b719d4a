/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one hash map: an index from an item's hash to its id, the items living
 * in the caller's arrays (lib/array.h). Open addressing with linear probing,
 * a load of at most one half, deletion by backward shift (no tombstones).
 * A slot keeps 32 bits of the hash, enough to place it again when the table
 * grows and to skip most unequal items without touching them; the caller's
 * equality decides the rest. The lookup is inline: the profile's hot path
 * finds an already seen stack with one hash pass and one comparison.
 * Zeroed, a map is empty and holds no memory.
 */
#ifndef LABELPROF_HASHMAP_H
#define LABELPROF_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/types.h>

struct hashmap_slot {
	__u32 hash; /* low bits of the item's hash */
	__u32 id1;  /* the item's id + 1; 0: empty */
};

struct hashmap {
	struct hashmap_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t count;
};

/* A hash of an integer key (a pid, an id), its bits mixed into the low ones a slot keeps. */
static inline __u64 hashmap__hash_u64(__u64 key)
{
	__u64 h = key * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 32);
}

/* Whether item id is the one key stands for. */
typedef bool (*hashmap_eq_fn)(const void *ctx, __u32 id, const void *key);

/*
 * The slot of the item equal to key, or the empty slot where it would go;
 * NULL while the map has no slots (hashmap__reserve makes them).
 */
static inline struct hashmap_slot *hashmap__find(const struct hashmap *m, __u64 hash,
						 hashmap_eq_fn eq, const void *ctx, const void *key)
{
	size_t mask = m->cap - 1, i;

	if (!m->cap)
		return NULL;
	for (i = (__u32)hash & mask;; i = (i + 1) & mask) {
		struct hashmap_slot *s = &m->slots[i];

		if (!s->id1 || (s->hash == (__u32)hash && eq(ctx, s->id1 - 1, key)))
			return s;
	}
}

/* The id in a slot hashmap__find returned; false if the slot is empty. */
static inline bool hashmap_slot__id(const struct hashmap_slot *s, __u32 *id)
{
	if (!s || !s->id1)
		return false;
	*id = s->id1 - 1;
	return true;
}

/*
 * Room for one more item, so that a slot hashmap__find returns afterwards
 * may be filled; the first allocation has min_cap slots (a power of two; 0:
 * 64). Slots found before are stale once it grew. 0 or -ENOMEM.
 */
int hashmap__reserve(struct hashmap *m, size_t min_cap);
/* Fills the empty slot s (from hashmap__find, after hashmap__reserve) with id. */
void hashmap__set(struct hashmap *m, struct hashmap_slot *s, __u64 hash, __u32 id);
/* Empties the used slot s. */
void hashmap__del(struct hashmap *m, struct hashmap_slot *s);
/* The item with hash whose id was from is now to (an array moved it). */
void hashmap__renumber(struct hashmap *m, __u64 hash, __u32 from, __u32 to);
/* Empties the map and keeps its slots. */
void hashmap__clear(struct hashmap *m);
/* Frees the slots and empties the map. */
void hashmap__free(struct hashmap *m);

static inline size_t hashmap__bytes(const struct hashmap *m)
{
	return m->cap * sizeof(*m->slots);
}

#endif /* LABELPROF_HASHMAP_H */

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The one hash map and the arrays it indexes: pairmap (lib/hashmap.h under
 * lib/pairmap.h) against a plain array of what it must hold, through
 * insertions, replacements and deletions that wrap around the table and
 * move entries, and array growth at its limits.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "lib/array.h"
#include "lib/hashmap.h"
#include "lib/pairmap.h"

#define KEYS 2000

/* The expected value of key i, 0: absent. */
static uintptr_t want[KEYS];

static __u64 k1_of(unsigned int i)
{
	return (__u64)i << 40 | i; /* keys of which many share low bits */
}

static void check_all(const struct pairmap *t)
{
	size_t present = 0, i;

	for (i = 0; i < KEYS; i++) {
		assert_ptr_equal(pairmap__get(t, k1_of(i), i % 7), (void *)want[i]);
		present += want[i] != 0;
	}
	assert_int_equal(t->count, present);
	assert_int_equal(t->index.count, present);
	/* every entry is reachable by its own key and holds its own value */
	for (i = 0; i < t->count; i++)
		assert_ptr_equal(pairmap__get(t, t->entries[i].k1, t->entries[i].k2),
				 t->entries[i].val);
}

static void test_pairmap_random(void **state)
{
	struct pairmap t = {0};
	unsigned int step, i;

	srandom(1);
	for (step = 0; step < 60000; step++) {
		i = random() % KEYS;
		if (random() % 3) {
			uintptr_t v = (uintptr_t)step * 8 + 8;

			assert_int_equal(pairmap__put(&t, k1_of(i), i % 7, (void *)v), 0);
			want[i] = v;
		} else {
			pairmap__del(&t, k1_of(i), i % 7);
			want[i] = 0;
		}
		if (step % 5000 == 0)
			check_all(&t);
	}
	check_all(&t);
	/* delete everything, in key order, checking as the table empties */
	for (i = 0; i < KEYS; i++) {
		pairmap__del(&t, k1_of(i), i % 7);
		want[i] = 0;
		if (i % 250 == 0)
			check_all(&t);
	}
	check_all(&t);
	assert_int_equal(t.count, 0);
	pairmap__free(&t);
}

struct ids {
	__u64 hash[64];
};

static bool id_eq(const void *ctx, __u32 id, const void *key)
{
	return ((const struct ids *)ctx)->hash[id] == *(const __u64 *)key;
}

/* Items whose hashes all fall on the table's last slots: probes wrap to slot 0 and back. */
static void test_hashmap_wraparound(void **state)
{
	struct hashmap m = {0};
	struct ids ids;
	__u32 id, i, gone;

	for (i = 0; i < 20; i++) {
		/* homes 62 and 63 of 64 slots, the high bits telling items apart */
		ids.hash[i] = (__u64)(i + 1) << 32 | (62 + i % 2);
		assert_int_equal(hashmap__reserve(&m, 64), 0);
		hashmap__set(&m, hashmap__find(&m, ids.hash[i], id_eq, &ids, &ids.hash[i]),
			     ids.hash[i], i);
	}
	assert_int_equal(m.cap, 64);
	for (gone = 0; gone < 20; gone += 3) {
		hashmap__del(&m, hashmap__find(&m, ids.hash[gone], id_eq, &ids, &ids.hash[gone]));
		for (i = 0; i < 20; i++) {
			bool found = hashmap_slot__id(
				hashmap__find(&m, ids.hash[i], id_eq, &ids, &ids.hash[i]), &id);

			assert_int_equal(found, i > gone ? true : i % 3 != 0);
			if (found)
				assert_int_equal(id, i);
		}
	}
	hashmap__clear(&m);
	assert_false(
		hashmap_slot__id(hashmap__find(&m, ids.hash[1], id_eq, &ids, &ids.hash[1]), &id));
	hashmap__free(&m);
	assert_null(hashmap__find(&m, 0, id_eq, &ids, &ids.hash[0]));
}

static void test_array_reserve(void **state)
{
	size_t cap = 0;
	int *a = NULL;
	char *big = NULL;
	size_t big_cap = 0;

	assert_int_equal(ARRAY_RESERVE(a, cap, 1), 0);
	assert_int_equal(cap, 16);
	assert_int_equal(ARRAY_RESERVE(a, cap, 17), 0);
	assert_int_equal(cap, 32);
	a[31] = 1;
	assert_int_equal(ARRAY_RESERVE(a, cap, 10), 0);
	assert_int_equal(cap, 32);
	/* a size that does not fit leaves the array as it was */
	assert_int_equal(ARRAY_RESERVE(a, cap, SIZE_MAX / 2), -EOVERFLOW);
	assert_int_equal(cap, 32);
	assert_int_equal(a[31], 1);
	free(a);
	assert_int_equal(ARRAY_RESERVE_MIN(big, big_cap, 5, 4096), 0);
	assert_int_equal(big_cap, 4096);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairmap_random),
		cmocka_unit_test(test_hashmap_wraparound),
		cmocka_unit_test(test_array_reserve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The runtimes' cache of named code: new entries are due, an entry read is
 * due again after the kind's delay, and a full cache keeps the entries asked
 * for again since they were added.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/compiler.h"
#include "runtime/code_cache.h"

struct test_entry {
	struct code_entry e;
	__u64 value;
};

static unsigned int freed;

static void free_entry(struct code_entry *e)
{
	freed++;
}

static const struct code_cache_kind kind = {
	.size = sizeof(struct test_entry),
	.free = free_entry,
	.check_ns = 100,
};

static struct code_entry *entry(struct code_cache *c, __u64 k, __u64 now, bool *due)
{
	struct code_entry *e = code_cache__entry(c, &kind, k, k ^ 1, now, due);

	assert_non_null(e);
	return e;
}

static void test_due(void **state)
{
	struct code_cache c = {};
	struct code_entry *e;
	bool due;

	freed = 0;
	e = entry(&c, 7, 1000, &due);
	assert_true(due);
	assert_true(e->bad);
	e->checked_ns = 1000;
	e->bad = false;
	container_of(e, struct test_entry, e)->value = 42;
	e = entry(&c, 7, 1099, &due);
	assert_false(due);
	assert_false(e->bad);
	assert_int_equal(container_of(e, struct test_entry, e)->value, 42);
	entry(&c, 7, 1100, &due);
	assert_true(due);
	code_cache__clear(&c, &kind);
	assert_int_equal(freed, 1);
	assert_int_equal(c.map.count, 0);
}

static void test_eviction_keeps_used(void **state)
{
	struct code_cache c = {};
	bool due;
	__u64 k;

	freed = 0;
	for (k = 0; k < CODE_CACHE_MAX_ENTRIES; k++)
		entry(&c, k, 1, &due)->checked_ns = 1;
	for (k = 0; k < 10; k++)
		entry(&c, k, 1, &due);
	/* full: what was asked for once only goes, the ten asked for again stay, named */
	entry(&c, 1ull << 40, 1, &due);
	assert_int_equal(freed, CODE_CACHE_MAX_ENTRIES - 10);
	assert_int_equal(c.map.count, 11);
	for (k = 0; k < 10; k++) {
		entry(&c, k, 50, &due);
		assert_false(due);
	}

	/* a cache where every entry was asked for again is emptied */
	code_cache__clear(&c, &kind);
	for (k = 0; k < CODE_CACHE_MAX_ENTRIES; k++)
		entry(&c, k, 1, &due);
	for (k = 0; k < CODE_CACHE_MAX_ENTRIES; k++)
		entry(&c, k, 1, &due);
	freed = 0;
	entry(&c, 1ull << 40, 1, &due);
	assert_int_equal(freed, CODE_CACHE_MAX_ENTRIES);
	assert_int_equal(c.map.count, 1);
	code_cache__clear(&c, &kind);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_due),
		cmocka_unit_test(test_eviction_keeps_used),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

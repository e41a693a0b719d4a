// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The frame kinds' table: every name a reader looks up leads back to its
 * kind, no two kinds share a name in one format, every runtime is marked in
 * every format, and a stored kind this version does not know reads as native.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/frame_kind.h"

typedef bool (*lookup_fn)(const void *name, size_t len, enum frame_kind *kind);

/* A name field of the table, and the reader's lookup by it (NULL: writers only). */
struct field {
	const char *what;
	size_t offset;
	lookup_fn lookup;
};

#define ROW_FIELD(f) #f, offsetof(struct frame_kind_row, f)

static const struct field fields[] = {
	{ROW_FIELD(name), NULL},
	{ROW_FIELD(json), frame_kind__by_json},
	{ROW_FIELD(folded), NULL},
	{ROW_FIELD(report), NULL},
	{ROW_FIELD(pprof_mapping), frame_kind__by_pprof_mapping},
	{ROW_FIELD(otlp_frame_type), frame_kind__by_otlp_frame_type},
};

static const char *field_of(const struct field *f, int kind)
{
	return *(const char *const *)((const char *)&frame_kinds[kind] + f->offset);
}

static bool is_runtime(int kind)
{
	return kind != FRAME_NATIVE && kind != FRAME_KERNEL;
}

static void test_names_round_trip(void **state)
{
	enum frame_kind found;
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct field *f = &fields[i];

		for (k = 0; k < FRAME_KINDS; k++) {
			const char *name = field_of(f, k);

			if (!f->lookup || !name)
				continue;
			found = FRAME_KINDS;
			if (!f->lookup(name, strlen(name), &found))
				fail_msg("%s \"%s\" of kind %d not found", f->what, name, k);
			assert_int_equal(found, k);
			assert_string_equal(field_of(f, found), name);
		}
	}
}

static void test_names_distinct(void **state)
{
	size_t i;
	int k, j;

	(void)state;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct field *f = &fields[i];

		for (k = 0; k < FRAME_KINDS; k++) {
			for (j = k + 1; j < FRAME_KINDS; j++) {
				const char *a = field_of(f, k), *b = field_of(f, j);

				if (a && b && !strcmp(a, b))
					fail_msg("kinds %d and %d share the %s \"%s\"", k, j,
						 f->what, a);
			}
		}
	}
	for (k = 0; k < FRAME_KINDS; k++)
		for (j = k + 1; j < FRAME_KINDS; j++)
			assert_int_not_equal(frame_kinds[k].html_kind, frame_kinds[j].html_kind);
}

/* A runtime's frames are tokens, not addresses: every format must tell them apart. */
static void test_runtimes_marked_everywhere(void **state)
{
	size_t i;
	int k;

	(void)state;
	for (k = 0; k < FRAME_KINDS; k++) {
		assert_non_null(frame_kinds[k].name);
		assert_non_null(frame_kinds[k].otlp_frame_type);
		assert_non_null(frame_kinds[k].folded);
		assert_non_null(frame_kinds[k].report);
		if (!is_runtime(k))
			continue;
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			const char *name = field_of(&fields[i], k);

			if (!name || !*name)
				fail_msg("kind %d has no %s", k, fields[i].what);
		}
	}
	/* native and kernel frames have real addresses: no mapping of their own */
	assert_null(frame_kinds[FRAME_NATIVE].pprof_mapping);
	assert_null(frame_kinds[FRAME_KERNEL].pprof_mapping);
	/* JSON says "kernel" in a field of its own and nothing for native code */
	assert_null(frame_kinds[FRAME_NATIVE].json);
	assert_null(frame_kinds[FRAME_KERNEL].json);
}

static void test_lookups_exact(void **state)
{
	enum frame_kind found = FRAME_KINDS;

	(void)state;
	assert_false(frame_kind__by_json("pytho", 5, &found));
	assert_false(frame_kind__by_json("pythonx", 7, &found));
	assert_false(frame_kind__by_json("", 0, &found));
	assert_false(frame_kind__by_json("native", 6, &found));
	assert_false(frame_kind__by_json("kernel", 6, &found));
	assert_false(frame_kind__by_pprof_mapping("[kernel.kallsyms]", 17, &found));
	assert_false(frame_kind__by_pprof_mapping("[python", 7, &found));
	assert_false(frame_kind__by_otlp_frame_type("dotnet", 6, &found));
	/* a name with a NUL inside is not the name before it */
	assert_false(frame_kind__by_otlp_frame_type("jvm\0x", 5, &found));
	assert_int_equal(found, FRAME_KINDS);
	assert_true(frame_kind__by_otlp_frame_type("kernel", 6, &found));
	assert_int_equal(found, FRAME_KERNEL);
}

static void test_stored_kinds(void **state)
{
	(void)state;
	assert_int_equal(frame_kind__known(FRAME_JS), FRAME_JS);
	assert_int_equal(frame_kind__known(FRAME_KERNEL), FRAME_NATIVE);
	assert_int_equal(frame_kind__known(FRAME_KINDS), FRAME_NATIVE);
	assert_int_equal(frame_kind__known(UINT32_MAX), FRAME_NATIVE);
	assert_int_equal(frame_kind__of(true, FRAME_PYTHON), FRAME_KERNEL);
	assert_int_equal(frame_kind__of(false, FRAME_PYTHON), FRAME_PYTHON);
	assert_int_equal(frame_kind__of(false, 1000), FRAME_NATIVE);
	/* calloc'd frames are native */
	assert_int_equal(FRAME_NATIVE, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_round_trip),
		cmocka_unit_test(test_names_distinct),
		cmocka_unit_test(test_runtimes_marked_everywhere),
		cmocka_unit_test(test_lookups_exact),
		cmocka_unit_test(test_stored_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * labelprof top's table (top_view): grouping by one key and by combinations
 * of keys with the "(not set)" bucket, the hottest functions of a row, the
 * default key, keys folded into KEY=* and trace ids kept out of the rows,
 * and a table that never outgrows its width or its rows (escaping and
 * cutting untrusted bytes: test_fmt).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format/labelfold.h"
#include "profile/symprof.h"
#include "cmd/top_view.h"

#define KEY(s)                                                                                     \
	{                                                                                          \
		(const unsigned char *)(s), sizeof(s) - 1                                          \
	}

/*
 * A stack of one frame in function fn (NULL: no frame); "inner<outer" is
 * function inner inlined into outer.
 */
static __u32 leaf_stack(struct symprof *sp, const char *fn, bool kernel)
{
	const char *lt = fn ? strchr(fn, '<') : NULL;
	struct sp_function inner = {.name = symprof__string(sp, fn, lt ? (size_t)(lt - fn) : 0)};
	struct sp_function outer = {.name = symprof__cstring(sp, lt ? lt + 1 : fn)};
	struct sp_line lines[2] = {
		{.function = symprof__function(sp, &inner)},
		{.function = symprof__function(sp, &outer)},
	};
	struct sp_location loc = {.kernel = kernel, .address = 0x1000 + outer.name};
	__u32 id;

	if (!fn)
		return 0;
	/* innermost first */
	id = lt ? symprof__location(sp, &loc, lines, 2) : symprof__location(sp, &loc, lines + 1, 1);
	return symprof__stack(sp, &id, 1);
}

/* Adds count samples of tid with labels kv ("key", "value", ..., NULL) in fn. */
static void sample(struct symprof *sp, __u32 tid, const char *fn, bool kernel, __u64 count,
		   const char *const *kv)
{
	struct sp_label labels[8];
	struct sp_sample s = {.pid = 1, .tid = tid, .count = count};
	size_t n = 0;

	for (; kv && kv[0]; kv += 2, n++)
		labels[n] = (struct sp_label){symprof__cstring(sp, kv[0]),
					      symprof__cstring(sp, kv[1]), LP_SRC_CUSTOM_LABELS};
	s.label_set = symprof__label_set(sp, labels, n);
	s.stack = leaf_stack(sp, fn, kernel);
	assert_int_equal(symprof__add_sample(sp, &s), 0);
}

#define LABELS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* 17 samples: acme 10 (f1 7, f2 3), globex 4, no tenant 3 (one with an endpoint). */
static struct symprof *demo_profile(void)
{
	struct symprof *sp = symprof__new();

	assert_non_null(sp);
	sample(sp, 1, "f1", false, 5, LABELS("tenant", "acme", "endpoint", "/a"));
	sample(sp, 1, "f2", false, 3, LABELS("tenant", "acme", "endpoint", "/b"));
	sample(sp, 2, "f1", false, 2, LABELS("endpoint", "/b", "tenant", "acme"));
	sample(sp, 1, "f3", false, 4, LABELS("tenant", "globex"));
	sample(sp, 1, "f1", false, 1, LABELS("endpoint", "/a"));
	sample(sp, 1, NULL, false, 2, NULL);
	assert_int_equal(symprof__error(sp), 0);
	return sp;
}

static void assert_value(const struct top_view *v, __u32 id, const char *want)
{
	const struct sp_string *s;

	if (!want) {
		assert_int_equal(id, TOP_UNSET);
		return;
	}
	assert_int_not_equal(id, TOP_UNSET);
	s = symprof__str(v->sp, id);
	assert_int_equal(s->len, strlen(want));
	assert_memory_equal(s->bytes, want, s->len);
}

static void assert_fn(const struct top_view *v, const struct top_fn *fn, const char *name,
		      __u32 flags, __u64 count)
{
	assert_int_equal(fn->count, count);
	assert_int_equal(fn->flags, flags);
	if (name)
		assert_string_equal((const char *)symprof__str(v->sp, fn->name)->bytes, name);
	else
		assert_int_equal(fn->name, 0);
}

static void test_group_by_key(void **state)
{
	static const struct top_key keys[] = {KEY("tenant")};
	struct symprof *sp = demo_profile();
	struct top_view v;

	assert_int_equal(top_view__build(&v, sp, keys, 1, NULL, 0), 0);
	assert_int_equal(v.total, 17);
	assert_int_equal(v.labelled, 15);
	assert_int_equal(v.row_count, 3);

	assert_value(&v, v.rows[0].values[0], "acme");
	assert_int_equal(v.rows[0].count, 10);
	/* f1 of two threads and two label sets is one function of the row */
	assert_fn(&v, &v.rows[0].fns[0], "f1", 0, 7);
	assert_fn(&v, &v.rows[0].fns[1], "f2", 0, 3);
	assert_int_equal(v.rows[0].fns[2].count, 0);

	assert_value(&v, v.rows[1].values[0], "globex");
	assert_int_equal(v.rows[1].count, 4);

	/* samples without the key, with other labels or none, share "(not set)" */
	assert_value(&v, v.rows[2].values[0], NULL);
	assert_int_equal(v.rows[2].count, 3);
	assert_fn(&v, &v.rows[2].fns[0], NULL, TOP_FN_NO_STACK, 2);
	assert_fn(&v, &v.rows[2].fns[1], "f1", 0, 1);
	top_view__free(&v);
	symprof__free(sp);
}

static void test_group_by_combination(void **state)
{
	static const struct top_key keys[] = {KEY("tenant"), KEY("endpoint")};
	static const char *const want[][2] = {
		{"acme", "/a"}, {"acme", "/b"}, {"globex", NULL}, {NULL, NULL}, {NULL, "/a"},
	};
	static const __u64 counts[] = {5, 5, 4, 2, 1};
	struct symprof *sp = demo_profile();
	struct top_view v;
	size_t i;

	assert_int_equal(top_view__build(&v, sp, keys, 2, NULL, 0), 0);
	assert_int_equal(v.row_count, 5);
	/* equal counts in value order; "(not set)" after the values */
	for (i = 0; i < 5; i++) {
		assert_int_equal(v.rows[i].count, counts[i]);
		assert_value(&v, v.rows[i].values[0], want[i][0]);
		assert_value(&v, v.rows[i].values[1], want[i][1]);
	}
	top_view__free(&v);
	symprof__free(sp);
}

static void test_no_such_key_and_no_key(void **state)
{
	static const struct top_key keys[] = {KEY("nope"), KEY("")};
	struct symprof *sp = demo_profile();
	struct top_view v;

	assert_int_equal(top_view__build(&v, sp, keys, 1, NULL, 0), 0);
	assert_int_equal(v.row_count, 1);
	assert_value(&v, v.rows[0].values[0], NULL);
	assert_int_equal(v.rows[0].count, 17);
	top_view__free(&v);

	assert_int_equal(top_view__build(&v, sp, keys, 0, NULL, 0), 0);
	assert_int_equal(v.row_count, 1);
	assert_int_equal(v.rows[0].count, 17);
	top_view__free(&v);

	assert_int_equal(top_view__build(&v, sp, keys, TOP_MAX_KEYS + 1, NULL, 0), -EINVAL);
	symprof__free(sp);

	sp = symprof__new();
	assert_int_equal(top_view__build(&v, sp, keys, 1, NULL, 0), 0);
	assert_int_equal(v.row_count, 0);
	assert_int_equal(v.total, 0);
	top_view__free(&v);
	symprof__free(sp);
}

static void test_hottest_functions(void **state)
{
	static const struct top_key keys[] = {KEY("k")};
	struct symprof *sp = symprof__new();
	struct top_view v;

	sample(sp, 1, "one", false, 1, LABELS("k", "v"));
	sample(sp, 1, "four", false, 4, LABELS("k", "v"));
	sample(sp, 1, "two", false, 2, LABELS("k", "v"));
	sample(sp, 1, "five", false, 5, LABELS("k", "v"));
	sample(sp, 1, "three", false, 3, LABELS("k", "v"));
	/* the kernel function of the same name is another function */
	sample(sp, 1, "four", true, 3, LABELS("k", "v"));
	/* code inlined into a function is its own */
	sample(sp, 2, "spin<four", false, 2, LABELS("k", "v"));
	assert_int_equal(top_view__build(&v, sp, keys, 1, NULL, 0), 0);
	assert_int_equal(v.row_count, 1);
	assert_int_equal(v.rows[0].count, 20);
	assert_fn(&v, &v.rows[0].fns[0], "four", 0, 6);
	assert_fn(&v, &v.rows[0].fns[1], "five", 0, 5);
	assert_int_equal(v.rows[0].fns[2].count, 3);
	top_view__free(&v);
	symprof__free(sp);
}

static void test_common_key(void **state)
{
	struct symprof *sp = symprof__new();
	unsigned char buf[16];
	char id[16];
	int i;

	assert_int_equal(top_view__common_key(sp, NULL, buf, sizeof(buf)), -ENOENT);
	sample(sp, 1, "f", false, 1, NULL);
	assert_int_equal(top_view__common_key(sp, NULL, buf, sizeof(buf)), -ENOENT);
	/* every sample sets both: the key with fewer values makes better rows */
	for (i = 0; i < 10; i++) {
		snprintf(id, sizeof(id), "req-%d", i);
		sample(sp, 1, "f", false, 2, LABELS("request_id", id, "tenant", i % 2 ? "a" : "b"));
	}
	assert_int_equal(top_view__common_key(sp, NULL, buf, sizeof(buf)), 6);
	assert_memory_equal(buf, "tenant", 6);
	/* set by more samples wins, whatever its values */
	sample(sp, 1, "f", false, 1, LABELS("request_id", "req-x"));
	assert_int_equal(top_view__common_key(sp, NULL, buf, sizeof(buf)), 10);
	assert_memory_equal(buf, "request_id", 10);
	assert_int_equal(top_view__common_key(sp, NULL, buf, 3), 3);
	assert_memory_equal(buf, "req", 3);
	symprof__free(sp);
}

static char *print(const struct top_view *v, const struct top_layout *l)
{
	struct top_status st = {.elapsed_s = 3725, .interval_s = 1, .freq_hz = 99};
	char *out = NULL;
	size_t len;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(top_view__print(f, v, &st, l), 0);
	fclose(f);
	return out;
}

static void test_print_plain(void **state)
{
	static const struct top_key keys[] = {KEY("tenant"), KEY("endpoint")};
	struct top_layout l = {.width = 100, .max_rows = 10};
	struct symprof *sp = demo_profile();
	struct top_view v;
	char *out;

	sample(sp, 1, "f1", false, 3, LABELS("tenant", "", "endpoint", "/a"));
	assert_int_equal(top_view__build(&v, sp, keys, 2, NULL, 0), 0);
	out = print(&v, &l);
	assert_string_equal(out, "labelprof top  by tenant,endpoint\n"
				 "1:02:05 elapsed  interval 1.0 s  99 Hz  refresh 0.0 ms\n"
				 "samples 20 (20/s)  labelled 90.0%  drops 0  read faults 0\n"
				 " SHARE  SAMPLES  tenant     endpoint   HOTTEST FUNCTIONS (SELF)\n"
				 " 25.0%        5  acme       /a         f1 100%\n"
				 " 25.0%        5  acme       /b         f2 60%, f1 40%\n"
				 " 20.0%        4  globex     (not set)  f3 100%\n"
				 " 15.0%        3  \"\"         /a         f1 100%\n"
				 " 10.0%        2  (not set)  (not set)  [no stack] 100%\n"
				 "  5.0%        1  (not set)  /a         f1 100%\n");
	free(out);
	top_view__free(&v);
	symprof__free(sp);
}

/* The keys top takes while it runs: s sorts by value, p picks one process. */
static void test_sort_and_pid(void **state)
{
	static const struct top_key keys[] = {KEY("tenant")};
	struct top_layout l = {.width = 100, .max_rows = 10};
	struct symprof *sp = demo_profile();
	struct sp_label initech = {symprof__cstring(sp, "tenant"), symprof__cstring(sp, "initech"),
				   LP_SRC_CUSTOM_LABELS};
	struct sp_sample other = {.pid = 2,
				  .tid = 2,
				  .count = 20,
				  .label_set = symprof__label_set(sp, &initech, 1),
				  .stack = leaf_stack(sp, "g", false)};
	struct top_view v;
	char *out;

	assert_int_equal(symprof__add_sample(sp, &other), 0);
	assert_int_equal(top_view__build(&v, sp, keys, 1, NULL, 0), 0);
	assert_int_equal(v.total, 37);
	assert_value(&v, v.rows[0].values[0], "initech");
	top_view__sort(&v, TOP_SORT_NAME);
	out = print(&v, &l);
	assert_string_equal(out, "labelprof top  by tenant  sorted by value\n"
				 "1:02:05 elapsed  interval 1.0 s  99 Hz  refresh 0.0 ms\n"
				 "samples 37 (37/s)  labelled 94.6%  drops 0  read faults 0\n"
				 " SHARE  SAMPLES  tenant     HOTTEST FUNCTIONS (SELF)\n"
				 " 27.0%       10  acme       f1 70%, f2 30%\n"
				 " 10.8%        4  globex     f3 100%\n"
				 " 54.1%       20  initech    g 100%\n"
				 "  8.1%        3  (not set)  [no stack] 67%, f1 33%\n");
	free(out);
	top_view__free(&v);

	/* one process: the others' samples count nowhere */
	assert_int_equal(top_view__build(&v, sp, keys, 1, NULL, 1), 0);
	assert_int_equal(v.total, 17);
	assert_int_equal(v.row_count, 3);
	assert_value(&v, v.rows[0].values[0], "acme");
	out = print(&v, &l);
	assert_non_null(strstr(out, "labelprof top  by tenant  pid 1\n"));
	free(out);
	top_view__free(&v);
	assert_int_equal(top_view__build(&v, sp, keys, 1, NULL, 3), 0);
	assert_int_equal(v.total, 0);
	assert_int_equal(v.row_count, 0);
	top_view__free(&v);
	symprof__free(sp);
}

static void test_print_fits(void **state)
{
	static const struct top_key keys[] = {KEY("tenant"), KEY("endpoint")};
	struct top_layout l = {.max_rows = 4, .erase = true, .color = true};
	struct symprof *sp = demo_profile();
	char long_value[300], long_fn[300];
	size_t lines, n;
	struct top_view v;
	char *out, *line, *end, *p;

	memset(long_value, 'v', sizeof(long_value) - 1);
	long_value[sizeof(long_value) - 1] = 0;
	memset(long_fn, 'f', sizeof(long_fn) - 1);
	long_fn[sizeof(long_fn) - 1] = 0;
	sample(sp, 1, long_fn, false, 20, LABELS("tenant", long_value, "endpoint", "\n\n\n\n"));
	assert_int_equal(top_view__build(&v, sp, keys, 2, NULL, 0), 0);
	for (l.width = 0; l.width < 200; l.width++) {
		out = print(&v, &l);
		lines = 0;
		for (line = out; *line; line = end + 1, lines++) {
			end = strchr(line, '\n');
			assert_non_null(end);
			/* drop the SGR and erase sequences; what is left must fit */
			for (p = line, n = 0; p < end; p++) {
				if (*p == '\033') {
					p += strcspn(p, "mK");
					continue;
				}
				/* one column per character: nothing wide here */
				n += (*p & 0xc0) != 0x80;
			}
			if (n > l.width)
				fail_msg("%zu columns in %u: %.*s", n, l.width, (int)(end - line),
					 line);
			assert_memory_equal(end - 3, "\033[K", 3);
		}
		/* header, blank line, column titles, 3 rows and the other 3 summed up */
		assert_int_equal(lines, 4 + 1 + l.max_rows);
		if (l.width >= 40)
			assert_non_null(strstr(out, "(3 more rows)"));
		free(out);
	}
	top_view__free(&v);
	symprof__free(sp);
}

/* --by a key no sample sets: a line names it and lists the keys seen, sorted. */
static void test_print_missing_key(void **state)
{
	static const struct top_key keys[] = {KEY("tenant"), KEY("nosuchkey")};
	struct top_layout l = {.width = 100, .max_rows = 10};
	struct symprof *sp = demo_profile();
	struct top_view v;
	char *out;

	assert_int_equal(top_view__build(&v, sp, keys, 2, NULL, 0), 0);
	out = print(&v, &l);
	assert_non_null(strstr(out, "read faults 0\nno sample sets nosuchkey; keys seen: endpoint, "
				    "tenant\n SHARE"));
	free(out);
	top_view__free(&v);
	assert_int_equal(top_view__build(&v, sp, keys, 1, NULL, 0), 0);
	out = print(&v, &l);
	assert_null(strstr(out, "no sample sets"));
	free(out);
	top_view__free(&v);
	symprof__free(sp);
}

/*
 * A key with more values than the limit is one row "*" beside "(not set)",
 * and a line says so; the default key is never a trace id nor a folded key
 * while another fits.
 */
static void test_folded_and_trace_keys(void **state)
{
	static const struct top_key keys[] = {KEY("request_id"), KEY("tenant")};
	struct top_layout l = {.width = 120, .max_rows = 10};
	struct symprof *sp = symprof__new();
	struct labelfold fold;
	unsigned char buf[16];
	struct top_view v;
	char id[16], *out;
	int i;

	assert_non_null(sp);
	for (i = 0; i < 6; i++) {
		snprintf(id, sizeof(id), "req-%d", i);
		sample(sp, 1, "f", false, 2,
		       LABELS("trace_id", id, "request_id", id, "tenant", i % 2 ? "a" : "b"));
	}
	sample(sp, 1, "f", false, 4, LABELS("trace_id", "t", "request_id", "req-x"));
	sample(sp, 1, "g", false, 3, LABELS("tenant", "a"));
	assert_int_equal(labelfold__init(&fold, sp, 4), 0);

	assert_int_equal(top_view__build(&v, sp, keys, 2, &fold, 0), 0);
	/* (*, a) 6, (*, b) 6, (*, not set) 4, (not set, a) 3 */
	assert_int_equal(v.row_count, 4);
	assert_int_equal(v.rows[0].values[0], TOP_FOLDED);
	assert_value(&v, v.rows[0].values[1], "a");
	assert_int_equal(v.rows[1].values[0], TOP_FOLDED);
	assert_value(&v, v.rows[1].values[1], "b");
	assert_int_equal(v.rows[2].values[0], TOP_FOLDED);
	assert_int_equal(v.rows[2].values[1], TOP_UNSET);
	assert_int_equal(v.rows[3].values[0], TOP_UNSET);
	assert_int_equal(v.rows[3].count, 3);
	out = print(&v, &l);
	assert_non_null(strstr(out, "read faults 0\nrequest_id has 7 values, shown as request_id=* "
				    "(--max-label-values 4)\n SHARE"));
	assert_non_null(strstr(out, "\n 31.6%        6  *           a          f 100%\n"));
	free(out);
	top_view__free(&v);

	/* trace_id and request_id are set by more samples than tenant (16, 15) */
	assert_int_equal(top_view__common_key(sp, NULL, buf, sizeof(buf)), 10);
	assert_memory_equal(buf, "request_id", 10);
	assert_int_equal(top_view__common_key(sp, &fold, buf, sizeof(buf)), 6);
	assert_memory_equal(buf, "tenant", 6);
	labelfold__free(&fold);
	symprof__free(sp);

	/* only trace ids: nothing to group by */
	sp = symprof__new();
	assert_non_null(sp);
	sample(sp, 1, "f", false, 1, LABELS("span_id", "s"));
	assert_int_equal(top_view__common_key(sp, NULL, buf, sizeof(buf)), -ENOENT);
	symprof__free(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_by_key),
		cmocka_unit_test(test_group_by_combination),
		cmocka_unit_test(test_no_such_key_and_no_key),
		cmocka_unit_test(test_hottest_functions),
		cmocka_unit_test(test_common_key),
		cmocka_unit_test(test_print_plain),
		cmocka_unit_test(test_sort_and_pid),
		cmocka_unit_test(test_print_fits),
		cmocka_unit_test(test_print_missing_key),
		cmocka_unit_test(test_folded_and_trace_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

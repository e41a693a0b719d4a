// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Label selection: pattern lists, keep and drop together, keys as bytes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format/labelfold.h"
#include "format/output.h"
#include "profile/labelsel.h"
#include "profile/symprof.h"

static struct labelsel *make(const char *keep, const char *drop)
{
	struct labelsel *s;
	char err[160] = "";
	bool bad_drop;

	s = labelsel__new(keep, drop, &bad_drop, err, sizeof(err));
	if (!s)
		fail_msg("%s: %s", bad_drop ? "drop" : "keep", err);
	return s;
}

static bool keeps(const struct labelsel *s, const char *key)
{
	return labelsel__keeps(s, key, strlen(key));
}

static void test_none_keeps_all(void **state)
{
	struct labelsel *s = make(NULL, NULL);

	assert_true(keeps(NULL, "request_id"));
	assert_true(keeps(s, "request_id"));
	assert_true(keeps(s, ""));
	labelsel__free(s);
	labelsel__free(NULL);
}

static void test_keep_globs(void **state)
{
	struct labelsel *s = make("ten*, endpoint ,http.[ms]*", NULL);

	assert_true(keeps(s, "tenant"));
	assert_true(keeps(s, "ten"));
	assert_true(keeps(s, "endpoint"));
	assert_true(keeps(s, "http.method"));
	assert_true(keeps(s, "http.status"));
	assert_false(keeps(s, "http.route"));
	assert_false(keeps(s, "request_id"));
	assert_false(keeps(s, "endpoints"));
	assert_false(keeps(s, "xtenant"));
	assert_false(keeps(s, ""));
	labelsel__free(s);
}

static void test_drop_globs(void **state)
{
	struct labelsel *s = make(NULL, "request_id,*span*");

	assert_false(keeps(s, "request_id"));
	assert_false(keeps(s, "span-id"));
	assert_false(keeps(s, "root-span-id"));
	assert_true(keeps(s, "request"));
	assert_true(keeps(s, "tenant"));
	labelsel__free(s);
}

static void test_keep_and_drop(void **state)
{
	/* drop wins over keep */
	struct labelsel *s = make("*_id,tenant", "request_*");

	assert_true(keeps(s, "trace_id"));
	assert_true(keeps(s, "tenant"));
	assert_false(keeps(s, "request_id"));
	assert_false(keeps(s, "endpoint"));
	labelsel__free(s);
}

static void test_key_bytes(void **state)
{
	struct labelsel *all = make(NULL, NULL), *keep = make("a*", NULL), *drop = make(NULL, "zz");
	char long_key[1000];

	/* a key with a NUL byte matches no pattern: dropped by a keep list only */
	assert_false(labelsel__keeps(keep, "a\0b", 3));
	assert_true(labelsel__keeps(drop, "zz\0", 3));
	assert_true(labelsel__keeps(all, "a\0b", 3));
	/* long keys are matched whole */
	memset(long_key, 'a', sizeof(long_key) - 1);
	long_key[sizeof(long_key) - 1] = 'z';
	assert_true(labelsel__keeps(keep, long_key, sizeof(long_key)));
	long_key[0] = 'b';
	assert_false(labelsel__keeps(keep, long_key, sizeof(long_key)));
	labelsel__free(all);
	labelsel__free(keep);
	labelsel__free(drop);
}

static void test_bad_lists(void **state)
{
	static const char *const bad[] = {"", ",", "a,", ",a", "a,,b", " , ", "[ab", "a,x[", "[!"};
	static const char *const good[] = {"a", "a,b", "[ab]", "[]]", "[!a]x", "\\[", "a , b"};
	char err[160];
	bool bad_drop;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(labelsel__check(bad[i], err, sizeof(err)), -EINVAL);
		assert_true(err[0]);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(labelsel__check(good[i], err, sizeof(err)), 0);
	assert_null(labelsel__new("a", "a,,b", &bad_drop, err, sizeof(err)));
	assert_true(bad_drop);
	assert_string_equal(err, "empty pattern in 'a,,b'");
	assert_null(labelsel__new("", "a", &bad_drop, err, sizeof(err)));
	assert_false(bad_drop);
	assert_string_equal(err, "no key given");
}

static void test_trace_keys(void **state)
{
	static const char *const ids[] = {"trace_id", "span_id", "trace-id", "span-id",
					  "root-span-id"};
	size_t i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		assert_true(labelsel__is_trace_key(ids[i], strlen(ids[i])));
	assert_false(labelsel__is_trace_key("request_id", 10));
	assert_false(labelsel__is_trace_key("trace_i", 7));
	assert_false(labelsel__is_trace_key("trace_idx", 9));
}

static bool keeps_key(const struct sp_string *key, void *sel)
{
	return labelsel__keeps(sel, key->bytes, key->len);
}

/* A profile read back (labelprof convert) loses the keys too; what became equal merges. */
static void test_filter_symprof(void **state)
{
	struct symprof *sp = symprof__new();
	struct labelsel *sel = make(NULL, "request_id");
	__u32 tenant, request_id, acme, r1, r2, s1, s2, s3, kept;
	struct sp_label l[2];

	assert_non_null(sp);
	tenant = symprof__cstring(sp, "tenant");
	request_id = symprof__cstring(sp, "request_id");
	acme = symprof__cstring(sp, "acme");
	r1 = symprof__cstring(sp, "req-1");
	r2 = symprof__cstring(sp, "req-2");
	l[0] = (struct sp_label){.key = tenant, .value = acme};
	l[1] = (struct sp_label){.key = request_id, .value = r1};
	s1 = symprof__label_set(sp, l, 2);
	l[1].value = r2;
	s2 = symprof__label_set(sp, l, 2);
	s3 = symprof__label_set(sp, &l[1], 1);
	assert_int_not_equal(s1, s2);
	assert_int_equal(symprof__add_sample(sp, &(struct sp_sample){1, 1, 0, s1, 0, 0, 3}), 0);
	assert_int_equal(symprof__add_sample(sp, &(struct sp_sample){1, 1, 0, s2, 0, 1, 4}), 0);
	assert_int_equal(symprof__add_sample(sp, &(struct sp_sample){1, 1, 0, s3, 0, 0, 5}), 0);
	assert_int_equal(symprof__add_sample(sp, &(struct sp_sample){2, 2, 0, 0, 0, 0, 6}), 0);
	assert_int_equal(sp->sample_count, 4);

	assert_int_equal(symprof__filter_labels(sp, keeps_key, sel), 0);
	assert_int_equal(sp->sample_count, 3);
	assert_int_equal(symprof__total(sp), 18);
	kept = sp->samples[0].label_set;
	assert_int_equal(sp->label_sets[kept].count, 1);
	assert_int_equal(sp->labels[sp->label_sets[kept].first].key, tenant);
	assert_int_equal(sp->samples[0].count, 7);
	assert_int_equal(sp->samples[0].status, 1);
	/* only request_id: no label left */
	assert_int_equal(sp->samples[1].label_set, 0);
	assert_int_equal(sp->samples[1].count, 5);
	assert_int_equal(sp->samples[2].pid, 2);
	/* adding the same set again finds it */
	assert_int_equal(symprof__label_set(sp, l, 1), kept);
	assert_int_equal(symprof__add_sample(sp, &(struct sp_sample){1, 1, 0, kept, 0, 0, 1}), 0);
	assert_int_equal(sp->sample_count, 3);
	assert_int_equal(sp->samples[0].count, 8);
	symprof__free(sp);
	labelsel__free(sel);
}

/*
 * 150 requests of two tenants, each with its own request_id and trace_id,
 * on one stack: the text views fold request_id and never show trace_id.
 */
static struct symprof *requests(void)
{
	struct symprof *sp = symprof__new();
	struct sp_label l[3];
	char buf[40];
	int i;

	assert_non_null(sp);
	for (i = 0; i < 150; i++) {
		l[0] = (struct sp_label){.key = symprof__cstring(sp, "tenant"),
					 .value = symprof__cstring(sp, i % 2 ? "acme" : "globex")};
		snprintf(buf, sizeof(buf), "req-%d", i);
		l[1] = (struct sp_label){.key = symprof__cstring(sp, "request_id"),
					 .value = symprof__cstring(sp, buf)};
		snprintf(buf, sizeof(buf), "%032x", i + 1);
		l[2] = (struct sp_label){.key = symprof__cstring(sp, "trace_id"),
					 .value = symprof__cstring(sp, buf)};
		assert_int_equal(
			symprof__add_sample(sp,
					    &(struct sp_sample){
						    .pid = 1,
						    .tid = 1,
						    .comm = symprof__cstring(sp, "srv"),
						    .label_set = symprof__label_set(sp, l, 3),
						    .count = 1,
					    }),
			0);
	}
	return sp;
}

static char *write(const struct symprof *sp, enum output_format fmt, unsigned int max_values)
{
	struct output_opts opts = {.max_label_values = max_values};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(output__write(f, fmt, sp, &opts), 0);
	fclose(f);
	return text;
}

static size_t count_lines(const char *text)
{
	size_t n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

static void test_fold_counts(void **state)
{
	struct symprof *sp = requests();
	struct labelfold lf;
	__u32 tenant = symprof__cstring(sp, "tenant"),
	      request_id = symprof__cstring(sp, "request_id"),
	      trace_id = symprof__cstring(sp, "trace_id");

	assert_int_equal(labelfold__init(&lf, sp, 100), 0);
	assert_int_equal(labelfold__shown(&lf, tenant), LABEL_SHOWN);
	assert_int_equal(labelfold__shown(&lf, request_id), LABEL_FOLDED);
	assert_int_equal(labelfold__shown(&lf, trace_id), LABEL_HIDDEN);
	assert_int_equal(lf.nfolded, 1);
	assert_int_equal(lf.folded[0].key, request_id);
	assert_int_equal(lf.folded[0].values, 150);
	labelfold__free(&lf);
	/* exactly at the limit: shown */
	assert_int_equal(labelfold__init(&lf, sp, 150), 0);
	assert_int_equal(labelfold__shown(&lf, request_id), LABEL_SHOWN);
	labelfold__free(&lf);
	/* 0: never folded, ids still hidden */
	assert_int_equal(labelfold__init(&lf, sp, 0), 0);
	assert_int_equal(labelfold__shown(&lf, request_id), LABEL_SHOWN);
	assert_int_equal(labelfold__shown(&lf, trace_id), LABEL_HIDDEN);
	assert_int_equal(lf.nfolded, 0);
	labelfold__free(&lf);
	symprof__free(sp);
}

static void test_fold_views(void **state)
{
	struct symprof *sp = requests();
	char *folded = write(sp, OUTPUT_FOLDED, 100), *raw = write(sp, OUTPUT_FOLDED, 0);
	char *report = write(sp, OUTPUT_REPORT, 100), *json = write(sp, OUTPUT_JSON, 100);
	char *html = write(sp, OUTPUT_HTML, 100);

	/* one line per tenant; trace ids never in a folded name */
	assert_string_equal(folded, "srv;[request_id=*,tenant=acme] 75\n"
				    "srv;[request_id=*,tenant=globex] 75\n");
	assert_int_equal(count_lines(raw), 150);
	assert_non_null(strstr(raw, "srv;[request_id=req-7,tenant=acme] 1\n"));
	assert_null(strstr(raw, "trace_id"));
	assert_non_null(strstr(report, "request_id has 150 values, shown as request_id=* "
				       "(--max-label-values 100)\n"));
	assert_null(strstr(report, "req-"));
	assert_null(strstr(report, "trace_id"));
	assert_non_null(strstr(html, "\"folded\":[["));
	assert_null(strstr(html, "req-1"));
	assert_null(strstr(html, "00000000000000000000000000000001"));
	/* the machine formats keep every value */
	assert_non_null(strstr(json, "req-149"));
	assert_non_null(strstr(json, "00000000000000000000000000000001"));
	free(folded);
	free(raw);
	free(report);
	free(json);
	free(html);
	symprof__free(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none_keeps_all), cmocka_unit_test(test_keep_globs),
		cmocka_unit_test(test_drop_globs),     cmocka_unit_test(test_keep_and_drop),
		cmocka_unit_test(test_key_bytes),      cmocka_unit_test(test_bad_lists),
		cmocka_unit_test(test_trace_keys),     cmocka_unit_test(test_filter_symprof),
		cmocka_unit_test(test_fold_counts),    cmocka_unit_test(test_fold_views),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

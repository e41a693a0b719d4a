// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where libcustomlabels puts a thread's label bytes, as a reader sees them
 * (default limits). labelprof copies a set's strings in one read only when
 * they lie within 4 KiB and span at most twice their bytes plus 256
 * (bpf/labels_custom.bpf.h, copy_labels; docs/design.md section 3), else it reads
 * each label by itself. A service's labels are short (tenant, route, trace
 * id, span id): after a realistic run of sets, replacements, deletes and
 * run_with, such a set must still pass that rule, with room to spare.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "customlabels.h"
#include "abi.h"

extern __thread struct abi_set *custom_labels_current_set;

#define WINDOW	   4096 /* labelprof's LP_LABEL_WINDOW */
#define SLACK	   256	/* labelprof's LP_LABEL_SLACK */
#define SHORT_SPAN 2048 /* what a set of short labels must fit in here */
#define REQUESTS   2000
#define MAX_TOTAL  45 /* key plus value of the labels used, at most */
#define MIN_TOTAL  20 /* ... and at least */

struct span {
	size_t count, kept, span, worst_span;
	double worst_ratio; /* span / (2 * kept + SLACK) */
};

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static unsigned int rnd(unsigned int n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (unsigned int)((rng * 0x2545f4914f6cdd1dULL >> 32) % n);
}

/* Sets key to a value of printable bytes making key plus value total bytes. */
static void set_total(const char *key, size_t total)
{
	char value[MAX_TOTAL + 1];
	size_t i, klen = strlen(key);

	assert_true(total > klen && total <= MAX_TOTAL);
	for (i = 0; i < total - klen; i++)
		value[i] = (char)('a' + rnd(26));
	assert_int_equal(custom_labels_set(key, klen, value, total - klen), 0);
}

static void set_short(const char *key)
{
	set_total(key, MIN_TOTAL + rnd(MAX_TOTAL - MIN_TOTAL + 1));
}

/* The current set's strings as a reader sees them: their span and bytes. */
static void check_bytes(struct span *s, size_t want_count)
{
	const struct abi_set *set = custom_labels_current_set;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	size_t i, kept = 0;
	double ratio;

	assert_non_null(set);
	assert_int_equal(set->count, want_count);
	for (i = 0; i < set->count; i++) {
		const struct abi_label *l = &set->storage[i];
		uintptr_t k = (uintptr_t)l->key.buf, v = (uintptr_t)l->value.buf;

		assert_true(l->key.len + l->value.len <= MAX_TOTAL);
		kept += l->key.len + l->value.len;
		lo = k < lo ? k : lo;
		lo = v < lo ? v : lo;
		hi = k + l->key.len > hi ? k + l->key.len : hi;
		hi = v + l->value.len > hi ? v + l->value.len : hi;
	}
	s->count++;
	s->kept = kept;
	s->span = hi - lo;
	ratio = (double)s->span / (double)(2 * kept + SLACK);
	if (s->span > s->worst_span)
		s->worst_span = s->span;
	if (ratio > s->worst_ratio)
		s->worst_ratio = ratio;
}

/* ... and labelprof's rule for one window, with short labels only. */
static void check_window(struct span *s, size_t want_count)
{
	check_bytes(s, want_count);
	assert_true(s->kept >= want_count * MIN_TOTAL);
	if (s->span > SHORT_SPAN || s->span > WINDOW || s->span > 2 * s->kept + SLACK)
		fail_msg("%zu labels of %zu bytes span %zu bytes (rule: <= %zu)", want_count,
			 s->kept, s->span, 2 * s->kept + SLACK);
}

static const char *const base_keys[] = {"tenant", "region", "service.version", "deployment"};
static const char *const request_keys[] = {"endpoint", "trace_id",    "span_id",
					   "user_id",  "http.method", "request_kind"};
#define NBASE	 (sizeof(base_keys) / sizeof(base_keys[0]))
#define NREQUEST (sizeof(request_keys) / sizeof(request_keys[0]))

struct nested {
	struct span *s;
};

static void in_query(void *arg)
{
	struct nested *n = arg;

	check_window(n->s, NBASE + NREQUEST + 1);
	set_short("span_id"); /* a child span inside the query */
	check_window(n->s, NBASE + NREQUEST + 1);
}

/*
 * A worker thread's life: its process-wide labels once, then requests that
 * add theirs, replace span ids (and values crossing a slot size) many times,
 * run a nested query with one more label, and delete their labels in any
 * order at the end (sometimes clearing everything instead).
 */
static void test_short_labels_stay_close(void **state)
{
	struct span s = {0};
	unsigned int r, i, j, k, order[NREQUEST];

	for (r = 0; r < REQUESTS; r++) {
		if (custom_labels_count() < NBASE) {
			for (i = 0; i < NBASE; i++)
				set_short(base_keys[i]);
		}
		for (i = 0; i < NREQUEST; i++)
			set_short(request_keys[i]);
		check_window(&s, NBASE + NREQUEST);
		for (i = rnd(8); i; i--) {
			set_short(request_keys[rnd(NREQUEST)]);
			check_window(&s, NBASE + NREQUEST);
		}
		/* the value of a label growing and shrinking across 32 bytes */
		set_total("user_id", 31 + rnd(2) * 2);
		check_window(&s, NBASE + NREQUEST);
		if (!rnd(4)) {
			char value[24];
			struct custom_labels_kv db = {"db.system", 9, value, 11 + rnd(14)};
			struct nested n = {&s};

			memset(value, 'p', sizeof(value));
			assert_int_equal(custom_labels_run_with(&db, 1, in_query, &n), 0);
			check_window(&s, NBASE + NREQUEST);
		}
		if (!rnd(50)) {
			custom_labels_clear();
			continue;
		}
		for (i = 0; i < NREQUEST; i++)
			order[i] = i;
		for (i = NREQUEST - 1; i > 0; i--) {
			j = rnd(i + 1);
			k = order[i];
			order[i] = order[j];
			order[j] = k;
		}
		for (i = 0; i < NREQUEST; i++)
			assert_int_equal(custom_labels_delete_str(request_keys[order[i]]), 0);
	}
	printf("  %zu sets checked: widest span %zu bytes, at most %.2f of the window rule's "
	       "limit; the last: %zu bytes of labels over %zu\n",
	       s.count, s.worst_span, s.worst_ratio, s.kept, s.span);
	custom_labels_clear();
}

/*
 * A prepared set keeps its labels' bytes packed: once installed, they span
 * exactly their bytes, whatever sets, replacements (values from the set
 * itself too) and deletes built it.
 */
static void test_prepared_set_packed(void **state)
{
	struct custom_labels_labelset *set = custom_labels_labelset_new(), *copy;
	const unsigned char *v;
	struct span s = {0};
	size_t len;
	unsigned int r, i;

	assert_non_null(set);
	for (r = 0; r < 500; r++) {
		const char *key = request_keys[rnd(NREQUEST)];
		char value[MAX_TOTAL];

		if (rnd(4)) {
			memset(value, 'a' + (int)rnd(26), sizeof(value));
			assert_int_equal(
				custom_labels_labelset_set(
					set, key, strlen(key), value,
					MIN_TOTAL + rnd(MAX_TOTAL - MIN_TOTAL + 1) - strlen(key)),
				0);
		} else if (!custom_labels_labelset_get(set, key, strlen(key), &v, &len) &&
			   len > 1) {
			/* a value from the set itself, one byte shorter */
			assert_int_equal(
				custom_labels_labelset_set(set, "user_id", 7, v + 1, len - 1), 0);
		} else {
			custom_labels_labelset_delete(set, key, strlen(key));
		}
		if (!rnd(3)) {
			for (i = 0; i < NBASE; i++) {
				memset(value, 'b', sizeof(value));
				custom_labels_labelset_set(set, base_keys[i], strlen(base_keys[i]),
							   value, MIN_TOTAL);
			}
		}
		assert_null(custom_labels_swap(set));
		if (custom_labels_labelset_count(set)) {
			/* packed: the strings span exactly their bytes */
			check_bytes(&s, custom_labels_labelset_count(set));
			assert_int_equal(s.span, s.kept);
		}
		copy = custom_labels_labelset_capture();
		assert_non_null(copy);
		assert_ptr_equal(custom_labels_swap(copy), set);
		if (custom_labels_labelset_count(copy)) {
			check_bytes(&s, custom_labels_labelset_count(copy));
			assert_int_equal(s.span, s.kept);
		}
		assert_ptr_equal(custom_labels_swap(NULL), copy);
		custom_labels_labelset_free(copy);
	}
	printf("  %zu prepared sets checked: their bytes packed\n", s.count);
	custom_labels_labelset_free(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_labels_stay_close),
		cmocka_unit_test(test_prepared_set_packed),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

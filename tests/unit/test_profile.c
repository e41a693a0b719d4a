// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Profile aggregation: records are built byte by byte as the BPF program
 * lays them out, including records that lie about their lengths.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "profile/profile.h"

struct lbl {
	const char *key;
	size_t key_len;
	const char *value;
	size_t value_len;
};

#define L(k, v)                                                                                    \
	{                                                                                          \
		k, sizeof(k) - 1, v, sizeof(v) - 1                                                 \
	}

struct rec {
	unsigned char buf[16384];
	size_t len;
};

/* Lays out a sample record; returns its size. */
static size_t build(struct rec *r, __u32 tgid, __u32 tid, const char *comm, __u32 status,
		    const __u64 *k, size_t nk, const __u64 *u, size_t nu, const struct lbl *l,
		    size_t nl)
{
	struct lp_sample h = {0};
	size_t off = sizeof(h), lstart, i;

	h.hdr.type = LP_EVENT_SAMPLE;
	h.tgid = tgid;
	h.tid = tid;
	h.cpu = 1;
	h.status = status;
	h.kstack_len = nk;
	h.ustack_len = nu;
	h.label_count = nl;
	memcpy(h.comm, comm, strnlen(comm, sizeof(h.comm)));
	if (nk)
		memcpy(r->buf + off, k, nk * 8);
	off += nk * 8;
	if (nu)
		memcpy(r->buf + off, u, nu * 8);
	off += nu * 8;
	lstart = off;
	for (i = 0; i < nl; i++) {
		struct lp_label_hdr lh = {l[i].key_len, l[i].value_len};

		memcpy(r->buf + off, &lh, sizeof(lh));
		off += sizeof(lh);
		memcpy(r->buf + off, l[i].key, l[i].key_len);
		off += l[i].key_len;
		memcpy(r->buf + off, l[i].value, l[i].value_len);
		off += l[i].value_len;
	}
	h.label_bytes = off - lstart;
	h.hdr.size = off;
	memcpy(r->buf, &h, sizeof(h));
	r->len = off;
	return off;
}

static struct lp_sample *hdr(struct rec *r)
{
	return (struct lp_sample *)r->buf;
}

#define MAX_SEEN 64

struct seen {
	struct profile_sample s[MAX_SEEN];
	size_t n;
};

static int collect(const struct profile_sample *s, void *ctx)
{
	struct seen *seen = ctx;

	assert_true(seen->n < MAX_SEEN);
	seen->s[seen->n++] = *s;
	return 0;
}

static struct seen *all(const struct profile *p)
{
	static struct seen seen;

	seen.n = 0;
	assert_int_equal(profile__for_each(p, collect, &seen), 0);
	return &seen;
}

static void expect_label(const struct profile_label *l, const char *k, size_t kl, const char *v,
			 size_t vl)
{
	assert_int_equal(l->key_len, kl);
	assert_int_equal(l->value_len, vl);
	assert_memory_equal(l->key, k, kl);
	assert_memory_equal(l->value, v, vl);
}

static const __u64 kst[] = {0xffffffff81000010ULL, 0xffffffff81000020ULL};
static const __u64 ust[] = {0x401010, 0x401020, 0x401030};

static void test_basic(void **state)
{
	const struct lbl l[] = {L("tenant", "acme"), L("endpoint", "/api")};
	struct profile *p = profile__new(NULL, NULL);
	struct profile_stats st;
	struct seen *seen;
	struct rec r;

	build(&r, 100, 101, "worker", LP_ST_LABELS_READ, kst, 2, ust, 3, l, 2);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	seen = all(p);
	assert_int_equal(seen->n, 1);
	assert_int_equal(seen->s[0].pid, 100);
	assert_int_equal(seen->s[0].tid, 101);
	assert_int_equal(seen->s[0].comm_len, 6);
	assert_string_equal(seen->s[0].comm, "worker");
	assert_int_equal(seen->s[0].count, 2);
	assert_int_equal(seen->s[0].status, LP_ST_LABELS_READ);
	assert_int_equal(seen->s[0].kstack_len, 2);
	assert_int_equal(seen->s[0].ustack_len, 3);
	assert_memory_equal(seen->s[0].kstack, kst, sizeof(kst));
	assert_memory_equal(seen->s[0].ustack, ust, sizeof(ust));
	assert_int_equal(seen->s[0].snapshot, 0);
	assert_int_equal(seen->s[0].label_count, 2);
	/* Sorted by key. */
	expect_label(&seen->s[0].labels[0], "endpoint", 8, "/api", 4);
	expect_label(&seen->s[0].labels[1], "tenant", 6, "acme", 4);
	profile__stats(p, &st);
	assert_int_equal(st.samples, 2);
	assert_int_equal(st.samples_with_labels, 2);
	assert_int_equal(st.rejected, 0);
	assert_int_equal(st.entries, 1);
	profile__free(p);
	profile__free(NULL);
}

/* A label's source rides in the top bits of key_len (enum lp_label_source): not part of its length. */
static void test_label_source_bits(void **state)
{
	const struct lbl l[] = {L("tenant", "acme")};
	struct profile *p = profile__new(NULL, NULL);
	struct seen *seen;
	struct rec r;

	build(&r, 1, 1, "c", LP_ST_LABELS_READ, NULL, 0, ust, 1, l, 1);
	/* the high byte of the first label's key_len */
	r.buf[sizeof(struct lp_sample) + sizeof(ust[0]) + 1] |= LP_SRC_GO_PPROF
							       << (LP_LABEL_SRC_SHIFT - 8);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	seen = all(p);
	assert_int_equal(seen->s[0].label_count, 1);
	expect_label(&seen->s[0].labels[0], "tenant", 6, "acme", 4);
	profile__free(p);
}

static void test_first_duplicate_wins(void **state)
{
	const struct lbl l[] = {L("a", "first"), L("b", "x"), L("a", "second"), L("a", "third")};
	const struct lbl l2[] = {L("b", "x"), L("a", "first")};
	struct profile *p = profile__new(NULL, NULL);
	struct seen *seen;
	struct rec r;

	build(&r, 1, 1, "c", 0, NULL, 0, ust, 1, l, 4);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	seen = all(p);
	assert_int_equal(seen->s[0].label_count, 2);
	expect_label(&seen->s[0].labels[0], "a", 1, "first", 5);
	expect_label(&seen->s[0].labels[1], "b", 1, "x", 1);
	/* The same set, deduplicated, is the same set. */
	build(&r, 1, 1, "c", 0, NULL, 0, ust, 1, l2, 2);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	seen = all(p);
	assert_int_equal(seen->n, 1);
	assert_int_equal(seen->s[0].count, 2);
	profile__free(p);
}

static void test_many_duplicates(void **state)
{
	/* Past the insertion-sort size: qsort must keep the first occurrence too. */
	struct lbl l[200];
	char vals[200][4];
	struct profile *p = profile__new(NULL, NULL);
	struct seen *seen;
	struct rec r;
	int i;

	for (i = 0; i < 200; i++) {
		snprintf(vals[i], sizeof(vals[i]), "%03d", i);
		l[i] = (struct lbl){i % 2 ? "odd" : "even", i % 2 ? 3 : 4, vals[i], 3};
	}
	build(&r, 1, 1, "c", 0, NULL, 0, NULL, 0, l, 200);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	seen = all(p);
	assert_int_equal(seen->s[0].label_count, 2);
	expect_label(&seen->s[0].labels[0], "even", 4, "000", 3);
	expect_label(&seen->s[0].labels[1], "odd", 3, "001", 3);
	profile__free(p);
}

static void test_order_insensitive(void **state)
{
	const struct lbl a[] = {L("x", "1"), L("y", "2"), L("z", "3")};
	const struct lbl b[] = {L("z", "3"), L("x", "1"), L("y", "2")};
	const struct lbl c[] = {L("z", "3"), L("x", "1"), L("y", "9")};
	struct profile *p = profile__new(NULL, NULL);
	struct seen *seen;
	struct rec r;

	build(&r, 1, 2, "c", 0, kst, 1, ust, 2, a, 3);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 1, 2, "c", 0, kst, 1, ust, 2, b, 3);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 1, 2, "c", 0, kst, 1, ust, 2, c, 3);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	seen = all(p);
	assert_int_equal(seen->n, 2);
	assert_int_equal(seen->s[0].count, 2);
	assert_int_equal(seen->s[1].count, 1);
	assert_int_not_equal(seen->s[0].label_set, seen->s[1].label_set);
	assert_int_equal(seen->s[0].stack, seen->s[1].stack);
	profile__free(p);
}

static void test_key_order_bytes(void **state)
{
	const struct lbl l[] = {
		{"b", 1, "1", 1}, {"ab", 2, "2", 2},	{"", 0, "empty-key", 9},
		{"a", 1, "", 0},  {"\xff", 1, "hi", 2}, {"a\0", 2, "nul", 3},
	};
	struct profile *p = profile__new(NULL, NULL);
	const struct profile_label *s;
	struct seen *seen;
	struct rec r;

	build(&r, 1, 1, "c", 0, NULL, 0, NULL, 0, l, 6);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	seen = all(p);
	assert_int_equal(seen->s[0].label_count, 6);
	s = seen->s[0].labels;
	expect_label(&s[0], "", 0, "empty-key", 9);
	expect_label(&s[1], "a", 1, "", 0);
	expect_label(&s[2], "a\0", 2, "nul", 3);
	expect_label(&s[3], "ab", 2, "2", 2);
	expect_label(&s[4], "b", 1, "1", 1);
	expect_label(&s[5], "\xff", 1, "hi", 2);
	profile__free(p);
}

static void test_identity(void **state)
{
	const struct lbl l[] = {L("k", "v")};
	const __u64 other[] = {0x401010, 0x401020, 0x401031};
	struct profile *p = profile__new(NULL, NULL);
	struct profile_stats st;
	struct seen *seen;
	struct rec r;

	build(&r, 1, 1, "a", LP_ST_TRUNCATED, kst, 2, ust, 3, l, 1);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 1, 1, "a", LP_ST_READ_FAULT, kst, 2, ust, 3, l, 1);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 1, 2, "a", 0, kst, 2, ust, 3, l, 1); /* tid */
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 2, 1, "a", 0, kst, 2, ust, 3, l, 1); /* pid */
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 1, 1, "b", 0, kst, 2, ust, 3, l, 1); /* comm */
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 1, 1, "a", 0, kst, 2, other, 3, l, 1); /* user stack */
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 1, 1, "a", 0, kst, 1, ust, 3, l, 1); /* kernel stack */
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	/* The kernel/user split is part of the stack. */
	build(&r, 1, 1, "a", 0, kst, 2, ust, 0, l, 1);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 1, 1, "a", 0, kst, 1, (const __u64[]){kst[1]}, 1, l, 1);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 1, 1, "a", 0, kst, 2, ust, 3, NULL, 0); /* no labels */
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	seen = all(p);
	assert_int_equal(seen->n, 9);
	assert_int_equal(seen->s[0].count, 2);
	assert_int_equal(seen->s[0].status, LP_ST_TRUNCATED | LP_ST_READ_FAULT);
	assert_int_equal(seen->s[8].label_count, 0);
	profile__stats(p, &st);
	assert_int_equal(st.samples, 10);
	assert_int_equal(st.samples_with_labels, 9);
	profile__free(p);
}

static void test_zero_ends_user_stack(void **state)
{
	const __u64 with_zero[] = {0x401010, 0x401020, 0, 0x12345678};
	const __u64 leaf_zero[] = {0, 0x401020};
	struct profile *p = profile__new(NULL, NULL);
	struct seen *seen;
	struct rec r;

	build(&r, 1, 1, "c", 0, kst, 1, with_zero, 4, NULL, 0);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 1, 1, "c", 0, kst, 1, ust, 2, NULL, 0);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 1, 1, "c", 0, kst, 1, leaf_zero, 2, NULL, 0);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	seen = all(p);
	assert_int_equal(seen->n, 2);
	assert_int_equal(seen->s[0].count, 2);
	assert_int_equal(seen->s[0].ustack_len, 2);
	assert_memory_equal(seen->s[0].ustack, ust, 2 * sizeof(__u64));
	assert_int_equal(seen->s[0].kstack_len, 1);
	assert_int_equal(seen->s[1].ustack_len, 0);
	assert_int_equal(seen->s[1].kstack_len, 1);
	profile__free(p);
}

static void test_comm_bytes(void **state)
{
	struct profile *p = profile__new(NULL, NULL);
	struct seen *seen;
	struct rec r;

	build(&r, 1, 1, "", 0, NULL, 0, NULL, 0, NULL, 0);
	/* Sixteen bytes without a NUL, then bytes after a NUL that must not matter. */
	memcpy(hdr(&r)->comm, "0123456789abcdef", 16);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	memcpy(hdr(&r)->comm, "x\xff\n\0garbage1234", 16);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	memcpy(hdr(&r)->comm, "x\xff\n\0other-junk!", 16);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	seen = all(p);
	assert_int_equal(seen->n, 2);
	assert_int_equal(seen->s[0].comm_len, 16);
	assert_memory_equal(seen->s[0].comm, "0123456789abcdef", 17);
	assert_int_equal(seen->s[1].comm_len, 3);
	assert_memory_equal(seen->s[1].comm, "x\xff\n", 4);
	assert_int_equal(seen->s[1].count, 2);
	profile__free(p);
}

static void test_trailing_bytes(void **state)
{
	const struct lbl l[] = {L("k", "v")};
	struct profile *p = profile__new(NULL, NULL);
	struct rec r;

	build(&r, 1, 1, "c", 0, kst, 2, ust, 3, l, 1);
	memset(r.buf + r.len, 0xee, 24);
	hdr(&r)->hdr.size += 24;
	assert_int_equal(profile__add_sample(p, r.buf, r.len + 24), 0);
	assert_int_equal(all(p)->s[0].label_count, 1);
	profile__free(p);
}

/* Each mutation makes the record lie; none may be read past its end. */
static void test_hostile_records(void **state)
{
	const struct lbl l[] = {L("key", "value"), L("k2", "v2")};
	struct profile *p = profile__new(NULL, NULL);
	struct profile_stats st;
	unsigned int rejected = 0;
	struct rec good, r;
	unsigned char *copy;
	size_t i;

	build(&good, 1, 1, "c", 0, kst, 2, ust, 3, l, 2);
	assert_int_equal(profile__add_sample(p, good.buf, good.len), 0);

	assert_int_equal(profile__add_sample(p, NULL, 100), -EINVAL);
	rejected++;
	for (i = 0; i < sizeof(struct lp_sample); i++, rejected++)
		assert_int_equal(profile__add_sample(p, good.buf, i), -EINVAL);
	/* One byte short of what the header claims. */
	assert_int_equal(profile__add_sample(p, good.buf, good.len - 1), -EINVAL);
	rejected++;

#define MUTATE(stmt)                                                                               \
	do {                                                                                       \
		r = good;                                                                          \
		stmt;                                                                              \
		/* A heap copy of exactly r.len bytes lets ASan catch any over-read. */            \
		copy = malloc(r.len);                                                              \
		memcpy(copy, r.buf, r.len);                                                        \
		assert_int_equal(profile__add_sample(p, copy, r.len), -EINVAL);                    \
		free(copy);                                                                        \
		rejected++;                                                                        \
	} while (0)

	MUTATE(hdr(&r)->hdr.type = LP_EVENT_EXEC);
	MUTATE(hdr(&r)->hdr.size = r.len + 1);
	MUTATE(hdr(&r)->hdr.size = sizeof(struct lp_sample) - 1);
	MUTATE(hdr(&r)->hdr.size = 0);
	MUTATE(hdr(&r)->kstack_len = 0xffff);
	MUTATE(hdr(&r)->ustack_len = 0xffff);
	MUTATE(hdr(&r)->kstack_len = 3);
	MUTATE(hdr(&r)->ustack_len = 4);
	MUTATE(hdr(&r)->label_count = 0xffff);
	MUTATE(hdr(&r)->label_count = 3);
	MUTATE(hdr(&r)->label_count = 1); /* bytes left over */
	MUTATE(hdr(&r)->label_count = 0);
	MUTATE(hdr(&r)->label_bytes = 0xffff);
	MUTATE(hdr(&r)->label_bytes += 1);
	MUTATE(hdr(&r)->label_bytes -= 1);
	MUTATE(hdr(&r)->label_bytes = 3);
	/* First label's key_len and value_len (at the start of the label part). */
	MUTATE(r.buf[sizeof(struct lp_sample) + 40] = 0xff);
	MUTATE(r.buf[sizeof(struct lp_sample) + 42] = 0xff);
	MUTATE(r.buf[sizeof(struct lp_sample) + 40] += 1);
	MUTATE(r.buf[sizeof(struct lp_sample) + 42] += 1);
	MUTATE((r.buf[sizeof(struct lp_sample) + 40] = 0,
		r.buf[sizeof(struct lp_sample) + 41] = 0x80));
	/* Second label's value runs past the end. */
	MUTATE(r.buf[sizeof(struct lp_sample) + 40 + 4 + 8 + 2] = 3);
	/* The record shrinks under its labels. */
	MUTATE((hdr(&r)->hdr.size -= 1, r.len -= 1));
#undef MUTATE

	profile__stats(p, &st);
	assert_int_equal(st.rejected, rejected);
	assert_int_equal(st.samples, 1);
	assert_int_equal(st.entries, 1);
	assert_int_equal(all(p)->s[0].count, 1);
	profile__free(p);
}

/* Random corruption of valid records: accepted or rejected, never misread (ASan). */
static void test_fuzz_records(void **state)
{
	const struct lbl l[] = {L("key", "value"), L("k2", "v2"), L("key", "dup")};
	struct profile *p = profile__new(NULL, NULL);
	unsigned int rng = 42;
	struct profile_stats st;
	struct rec good, r;
	size_t i, k;

	build(&good, 1, 1, "c", 0, kst, 2, ust, 3, l, 3);
	for (i = 0; i < 100000; i++) {
		unsigned char *copy;
		size_t len = good.len;
		int err;

		r = good;
		for (k = 0; k < 1 + i % 4; k++) {
			rng = rng * 1103515245 + 12345;
			r.buf[(rng >> 8) % good.len] = rng >> 20;
		}
		rng = rng * 1103515245 + 12345;
		if (i % 5 == 0)
			len = (rng >> 8) % (good.len + 1);
		copy = malloc(len ? len : 1);
		memcpy(copy, r.buf, len);
		err = profile__add_sample(p, copy, len);
		assert_true(err == 0 || err == -EINVAL);
		free(copy);
	}
	profile__stats(p, &st);
	assert_int_equal(st.samples + st.rejected, 100000);
	assert_true(st.rejected > 0 && st.samples > 0);
	profile__free(p);
}

static void test_memory_limit(void **state)
{
	const struct lbl a[] = {L("k", "a")}, b[] = {L("k", "b")};
	struct profile_opts opts;
	struct profile_stats st;
	struct profile *p;
	struct seen *seen;
	struct rec r;

	/*
	 * A limit a little above the empty profile's size: the first sample
	 * fits, and the entry table it creates takes the profile past the limit.
	 */
	p = profile__new(NULL, NULL);
	profile__stats(p, &st);
	profile__free(p);
	opts.max_bytes = st.bytes + 1024;
	p = profile__new(NULL, &opts);
	build(&r, 1, 1, "c", 0, NULL, 0, ust, 3, a, 1);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 1, 1, "c", LP_ST_LABELS_READ, NULL, 0, ust, 3, b, 1);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	build(&r, 1, 1, "c", 0, NULL, 0, ust, 3, a, 1);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	seen = all(p);
	assert_int_equal(seen->n, 2);
	assert_int_equal(seen->s[0].count, 2);
	assert_int_equal(seen->s[0].label_count, 1);
	assert_int_equal(seen->s[1].count, 2);
	assert_int_equal(seen->s[1].status, LP_ST_LABELS_READ | PROFILE_ST_DROPPED);
	assert_int_equal(seen->s[1].label_count, 0);
	assert_int_equal(seen->s[1].ustack_len, 0);
	profile__free(p);

	/* Far past the limit: new entries are only counted. */
	opts.max_bytes = 1;
	p = profile__new(NULL, &opts);
	assert_non_null(p);
	assert_int_equal(profile__add_sample(p, r.buf, r.len), -ENOSPC);
	profile__stats(p, &st);
	assert_int_equal(st.samples, 1);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.entries, 0);
	profile__free(p);
}

static int stop_at_second(const struct profile_sample *s, void *ctx)
{
	return ++*(int *)ctx == 2 ? 7 : 0;
}

static void test_stop_iteration(void **state)
{
	struct profile *p = profile__new(NULL, NULL);
	struct rec r;
	int calls = 0;
	__u32 tid;

	for (tid = 1; tid <= 3; tid++) {
		build(&r, 1, tid, "c", 0, NULL, 0, ust, 1, NULL, 0);
		assert_int_equal(profile__add_sample(p, r.buf, r.len), 0);
	}
	assert_int_equal(profile__for_each(p, stop_at_second, &calls), 7);
	assert_int_equal(calls, 2);
	profile__free(p);
}

/*
 * Replays a realistic mix (most records seen before): every record is
 * counted, and equal label sets and stacks are interned once.
 */
static void test_replay_mix(void **state)
{
	enum { SETS = 64, STACKS = 256, RECS = 1024, N = 300000 };
	static struct rec recs[RECS];
	struct profile *p = profile__new(NULL, NULL);
	struct profile_stats st;
	size_t i, j;

	for (i = 0; i < RECS; i++) {
		char tenant[16], span[24], route[32];
		__u64 stack[32];
		struct lbl l[4];

		snprintf(tenant, sizeof(tenant), "tenant-%zu", i % SETS % 8);
		snprintf(span, sizeof(span), "%016zx", i % SETS * 7919);
		snprintf(route, sizeof(route), "/api/v1/items/%zu", i % SETS % 5);
		l[0] = (struct lbl){"tenant", 6, tenant, strlen(tenant)};
		l[1] = (struct lbl){"span_id", 7, span, strlen(span)};
		l[2] = (struct lbl){"route", 5, route, strlen(route)};
		l[3] = (struct lbl){"region", 6, "eu-west-1", 9};
		for (j = 0; j < 32; j++)
			stack[j] = 0x400000 + (i % STACKS) * 64 + j * 4096;
		build(&recs[i], 1000 + i % 16, 2000 + i % 32, "server", LP_ST_LABELS_READ, kst, 2,
		      stack, 24 + i % 8, l, 4);
	}
	for (i = 0; i < N; i++) {
		const struct rec *r = &recs[(i * 7) % RECS];

		assert_int_equal(profile__add_sample(p, r->buf, r->len), 0);
	}
	profile__stats(p, &st);
	assert_int_equal(st.samples, N);
	assert_int_equal(st.samples_with_labels, N);
	/* the empty set and the empty stack are interned up front */
	assert_int_equal(st.label_sets, SETS + 1);
	assert_int_equal(st.stacks, STACKS + 1);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_label_source_bits),
		cmocka_unit_test(test_first_duplicate_wins),
		cmocka_unit_test(test_many_duplicates),
		cmocka_unit_test(test_order_insensitive),
		cmocka_unit_test(test_key_order_bytes),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_zero_ends_user_stack),
		cmocka_unit_test(test_comm_bytes),
		cmocka_unit_test(test_trailing_bytes),
		cmocka_unit_test(test_hostile_records),
		cmocka_unit_test(test_fuzz_records),
		cmocka_unit_test(test_memory_limit),
		cmocka_unit_test(test_stop_iteration),
		cmocka_unit_test(test_replay_mix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

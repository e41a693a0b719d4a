// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Delta sample records made whole: the very record BPF would have sent in full, or a refusal. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "sampling/deltas.h"

struct rec {
	unsigned char buf[4096];
	size_t len;
};

/* A sample record of cpu: kn kernel IPs, un user IPs (leaf first), then label bytes. */
static void build(struct rec *r, __u32 cpu, const __u64 *k, size_t kn, const __u64 *u, size_t un,
		  const char *labels, __u16 nlabels)
{
	struct lp_sample h = {.hdr.type = LP_EVENT_SAMPLE, .tgid = 42, .tid = 43, .cpu = cpu};
	size_t lb = labels ? strlen(labels) : 0;

	h.kstack_len = kn;
	h.ustack_len = un;
	h.label_count = nlabels;
	h.label_bytes = lb;
	memcpy(h.comm, "worker", 7);
	r->len = sizeof(h);
	/* no stack is a NULL array: memcpy must not see it */
	if (kn)
		memcpy(r->buf + r->len, k, kn * 8);
	r->len += kn * 8;
	if (un)
		memcpy(r->buf + r->len, u, un * 8);
	r->len += un * 8;
	memcpy(r->buf + r->len, labels ? labels : "", lb);
	r->len += lb;
	h.hdr.size = r->len;
	memcpy(r->buf, &h, sizeof(h));
}

/* full as a delta record: its outermost shared user frames left out, its labels too if said. */
static void delta(struct rec *d, const struct rec *full, __u32 base, __u16 shared, bool labels)
{
	struct lp_sample h;
	struct lp_sample_delta dl = {.base = base, .ustack_shared = shared};
	size_t stacks;

	memcpy(&h, full->buf, sizeof(h));
	stacks = ((size_t)h.kstack_len + h.ustack_len - shared) * 8;
	d->len = sizeof(h) + stacks;
	memcpy(d->buf + sizeof(h), full->buf + sizeof(h), stacks);
	if (!labels) {
		memcpy(d->buf + d->len, full->buf + sizeof(h) + stacks + shared * 8, h.label_bytes);
		d->len += h.label_bytes;
	} else {
		dl.flags = LP_DELTA_LABELS_SHARED;
		h.label_count = 0;
		h.label_bytes = 0;
	}
	memcpy(d->buf + d->len, &dl, sizeof(dl));
	d->len += sizeof(dl);
	h.hdr.type = LP_EVENT_SAMPLE_DELTA;
	h.hdr.size = d->len;
	h.ustack_len -= shared;
	memcpy(d->buf, &h, sizeof(h));
}

static void expect_whole(struct deltas *d, const struct rec *in, const struct rec *want)
{
	const void *out;
	size_t size;

	assert_int_equal(deltas__expand(d, in->buf, in->len, &out, &size), 0);
	assert_int_equal(size, want->len);
	assert_memory_equal(out, want->buf, want->len);
}

static int expand(struct deltas *d, const struct rec *in)
{
	const void *out;
	size_t size;

	return deltas__expand(d, in->buf, in->len, &out, &size);
}

static const __u64 k1[] = {0xffffffff81000010, 0xffffffff81000020};
static const __u64 u1[] = {0x401010, 0x401020, 0x401030, 0x401040, 0x401050};
static const __u64 u2[] = {0x401999, 0x401888, 0x401030, 0x401040, 0x401050};
static const char L1[] = "\x03\x00\x02\x00keyv1";
static const char L2[] = "\x03\x00\x02\x00keyv2";

static void test_full_and_deltas(void **state)
{
	struct deltas *d = deltas__new(4);
	struct rec a, b, c, x;

	build(&a, 2, k1, 2, u1, 5, L1, 1);
	expect_whole(d, &a, &a);
	/* same labels, three outer frames shared */
	build(&b, 2, NULL, 0, u2, 5, L1, 1);
	delta(&x, &b, 1, 3, true);
	expect_whole(d, &x, &b);
	/* other labels, the whole stack shared, against the record just made whole */
	build(&c, 2, NULL, 0, u2, 5, L2, 1);
	delta(&x, &c, 2, 5, false);
	expect_whole(d, &x, &c);
	/* a deeper stack than the last one's: its new outer frames come in the record */
	build(&a, 2, k1, 1, u1, 5, L2, 1);
	delta(&x, &a, 3, 0, true);
	expect_whole(d, &x, &a);
	/* another CPU has its own last record */
	build(&b, 0, NULL, 0, u1, 3, NULL, 0);
	expect_whole(d, &b, &b);
	build(&c, 0, NULL, 0, u1, 3, NULL, 0);
	delta(&x, &c, 1, 3, false);
	expect_whole(d, &x, &c);
	deltas__free(d);
}

static void test_missed_base(void **state)
{
	struct deltas *d = deltas__new(2);
	struct rec a, x;

	build(&a, 1, NULL, 0, u1, 5, L1, 1);
	assert_int_equal(expand(d, &a), 0);
	/* told against a record never seen (one more came before it) */
	delta(&x, &a, 7, 2, true);
	assert_int_equal(expand(d, &x), -EINVAL);
	/* and none after it until a full record */
	delta(&x, &a, 2, 2, true);
	assert_int_equal(expand(d, &x), -EINVAL);
	assert_int_equal(expand(d, &a), 0);
	delta(&x, &a, 4, 2, true);
	expect_whole(d, &x, &a);
	deltas__free(d);
}

static void test_malformed(void **state)
{
	struct deltas *d = deltas__new(2);
	struct rec a, x;
	struct lp_sample h;

	/* a delta with nothing before it */
	build(&a, 1, NULL, 0, u1, 5, L1, 1);
	delta(&x, &a, 0, 2, false);
	assert_int_equal(expand(d, &x), -EINVAL);
	/* a CPU past the possible ones */
	build(&x, 9, NULL, 0, u1, 5, L1, 1);
	assert_int_equal(expand(d, &x), -EINVAL);
	/* more shared frames than the last record had */
	build(&a, 1, NULL, 0, u1, 2, L1, 1);
	assert_int_equal(expand(d, &a), 0);
	build(&a, 1, NULL, 0, u1, 5, L1, 1);
	delta(&x, &a, 2, 3, true);
	assert_int_equal(expand(d, &x), -EINVAL);
	/* a size that does not add up, and a truncated record */
	build(&a, 1, NULL, 0, u1, 5, L1, 1);
	assert_int_equal(expand(d, &a), 0);
	delta(&x, &a, 4, 2, false);
	memcpy(&h, x.buf, sizeof(h));
	h.label_bytes++;
	memcpy(x.buf, &h, sizeof(h));
	assert_int_equal(expand(d, &x), -EINVAL);
	assert_int_equal(deltas__expand(d, x.buf, 10, &(const void *){NULL}, &(size_t){0}),
			 -EINVAL);
	/* a kept full record whose parts overrun it: nothing is told against it */
	build(&a, 1, NULL, 0, u1, 5, L1, 1);
	memcpy(&h, a.buf, sizeof(h));
	h.ustack_len = 200;
	memcpy(a.buf, &h, sizeof(h));
	assert_int_equal(expand(d, &a), 0);
	build(&a, 1, NULL, 0, u1, 5, L1, 1);
	delta(&x, &a, 6, 1, true);
	assert_int_equal(expand(d, &x), -EINVAL);
	deltas__free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_and_deltas),
		cmocka_unit_test(test_missed_base),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

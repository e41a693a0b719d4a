// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ring reader (sampling/ringreader.c): its thread, its queue of 64 KiB
 * chunks and its cap, against a ring filled by the test.
 *
 * A unit test runs no BPF program, so the BPF ring buffer is replaced at
 * link time: this file defines the libbpf ring_buffer__* functions the
 * reader calls, before liblabelprof.a and libbpf. The stand-in hands records
 * to the callback as libbpf 1.x does (in order, a record whose callback
 * fails counts as consumed, the epoll fd is readable after a wakeup), and
 * the test checks what reaches the reader's caller: every record's size and
 * bytes, in order, and when.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "labelprof.h"
#include "lib/clock.h"
#include "sampling/ringreader.h"

#define CHUNK	      (64u << 10) /* ringreader.c's CHUNK_BYTES */
#define NO_CAP	      (64u << 20)
#define WAIT_NS	      (10 * NS_PER_S) /* for what the reader does at once */
#define HANDS_OVER_NS (5 * NS_PER_S)  /* a poll with prompt records returns well before */
#define MAX_RECORDS   4096
#define RECORD_MIN    (sizeof(struct lp_event_hdr) + sizeof(uint32_t))

/* ---- the ring: records the test adds, consumed as libbpf does --------------------- */

struct fake_record {
	size_t size;
	unsigned char *data;
};

struct ring_buffer {
	ring_buffer_sample_fn fn;
	void *ctx;
	pthread_mutex_t lock;
	struct fake_record *recs;
	size_t added, consumed; /* recs[consumed, added) are in the ring */
	int wake_fd;		/* what ring_buffer__epoll_fd gives: readable after a wakeup */
	int fail;		/* the next consume's error, 0: none */
};

/* The ring of the reader under test. */
static struct ring_buffer *ring;

struct ring_buffer *ring_buffer__new(int map_fd, ring_buffer_sample_fn sample_cb, void *ctx,
				     const struct ring_buffer_opts *opts)
{
	struct ring_buffer *rb = calloc(1, sizeof(*rb));

	assert_non_null(rb);
	rb->fn = sample_cb;
	rb->ctx = ctx;
	pthread_mutex_init(&rb->lock, NULL);
	rb->recs = calloc(MAX_RECORDS, sizeof(*rb->recs));
	assert_non_null(rb->recs);
	rb->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	assert_true(rb->wake_fd >= 0);
	ring = rb;
	return rb;
}

void ring_buffer__free(struct ring_buffer *rb)
{
	size_t i;

	if (!rb)
		return;
	for (i = 0; i < rb->added; i++)
		free(rb->recs[i].data);
	free(rb->recs);
	close(rb->wake_fd);
	pthread_mutex_destroy(&rb->lock);
	free(rb);
	ring = NULL;
}

int ring_buffer__epoll_fd(const struct ring_buffer *rb)
{
	return rb->wake_fd;
}

int ring_buffer__consume(struct ring_buffer *rb)
{
	struct fake_record *rec;
	eventfd_t v;
	int n = 0, err;

	pthread_mutex_lock(&rb->lock);
	if (rb->fail) {
		err = rb->fail;
		rb->fail = 0;
		pthread_mutex_unlock(&rb->lock);
		return err;
	}
	while (rb->consumed < rb->added) {
		rec = &rb->recs[rb->consumed++];
		err = rb->fn(rb->ctx, rec->data, rec->size);
		if (err < 0) {
			pthread_mutex_unlock(&rb->lock);
			return err;
		}
		n++;
	}
	/* an empty ring is not readable until the next wakeup */
	eventfd_read(rb->wake_fd, &v);
	pthread_mutex_unlock(&rb->lock);
	return n;
}

int ring_buffer__poll(struct ring_buffer *rb, int timeout_ms)
{
	struct pollfd pfd = {.fd = rb->wake_fd, .events = POLLIN};

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return 0;
	return ring_buffer__consume(rb);
}

/* Record i: its header (type, size), i, then bytes that depend on i and their place. */
static unsigned char pattern(uint32_t i, size_t at)
{
	return (unsigned char)(i * 31 + at * 7);
}

/* Adds record i of size bytes, the ring's lock held. */
static void ring_add_locked(uint32_t i, __u32 type, size_t size)
{
	struct lp_event_hdr h = {type, size};
	unsigned char *p;
	size_t at;

	assert_true(size >= RECORD_MIN);
	p = malloc(size);
	assert_non_null(p);
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), &i, sizeof(i));
	for (at = RECORD_MIN; at < size; at++)
		p[at] = pattern(i, at);
	assert_int_equal(ring->added, i);
	assert_true(ring->added < MAX_RECORDS);
	ring->recs[ring->added++] = (struct fake_record){size, p};
}

/* Adds record i of size bytes; wake: as a record that forces a wakeup. */
static void ring_add(uint32_t i, __u32 type, size_t size, bool wake)
{
	pthread_mutex_lock(&ring->lock);
	ring_add_locked(i, type, size);
	pthread_mutex_unlock(&ring->lock);
	if (wake)
		eventfd_write(ring->wake_fd, 1);
}

static size_t ring_consumed(void)
{
	size_t n;

	pthread_mutex_lock(&ring->lock);
	n = ring->consumed;
	pthread_mutex_unlock(&ring->lock);
	return n;
}

/* Waits until the reader has taken n records out of the ring. */
static void wait_consumed(size_t n)
{
	__u64 deadline = now_ns() + WAIT_NS;
	struct timespec tick = {0, 1000000};

	while (ring_consumed() < n) {
		assert_true(now_ns() < deadline);
		nanosleep(&tick, NULL);
	}
	assert_int_equal(ring_consumed(), n);
}

static void sleep_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000};

	nanosleep(&t, NULL);
}

/* ---- the caller: checks each record it gets against the ring's -------------------- */

struct got {
	size_t n;	/* records handed over so far: the next one must be record n */
	size_t fail_at; /* the record fn fails on (its index + 1), 0: none */
};

static struct got got;

static int on_record(void *ctx, const void *data, size_t size)
{
	const struct fake_record *want;
	const unsigned char *p = data;
	struct lp_event_hdr h;
	uint32_t i;
	size_t at;

	assert_ptr_equal(ctx, &got);
	assert_true(size >= RECORD_MIN);
	memcpy(&h, p, sizeof(h));
	memcpy(&i, p + sizeof(h), sizeof(i));
	assert_int_equal(i, got.n);
	want = &ring->recs[i];
	assert_int_equal(size, want->size);
	assert_int_equal(h.size, size);
	for (at = RECORD_MIN; at < size; at++) {
		if (p[at] != pattern(i, at))
			fail_msg("record %u: byte %zu of %zu differs", i, at, size);
	}
	got.n++;
	return got.fail_at == got.n ? -EPROTO : 0;
}

static struct ringreader *start(size_t max_queued)
{
	struct ringreader *r;

	memset(&got, 0, sizeof(got));
	r = ringreader__new(-1, max_queued, on_record, &got);
	assert_non_null(r);
	assert_non_null(ring);
	return r;
}

/* ---- the tests ------------------------------------------------------------------- */

/*
 * Records of every size around the chunks' edges reach the caller whole and
 * in order: a chunk filled to its last byte, a record a few bytes too large
 * for what is left, records of a chunk's size and larger (a chunk of their
 * own). A record takes 8 bytes more than its size, rounded up to 8.
 */
static void test_chunk_edges(void **state)
{
	static const size_t sizes[] = {
		RECORD_MIN,
		RECORD_MIN + 1,
		16,
		17,
		23,
		24,
		25,
		CHUNK - 8,  /* a chunk exactly */
		CHUNK - 7,  /* one byte more: a chunk of its own */
		CHUNK,	    /* one of its own */
		RECORD_MIN, /* after a chunk of its own */
		200 << 10,  /* a large one after a partial chunk */
		CHUNK / 2,  /* a new chunk, half full */
		CHUNK / 2 - 16 /* the rest of it */,
		100,
	};
	struct ringreader *r = start(NO_CAP);
	size_t i, n = 0;
	__u64 t0;
	int ret;

	/* one batch for the reader: the chunks' edges fall where planned */
	pthread_mutex_lock(&ring->lock);
	/* 64 records of 1004 bytes leave 512 of a chunk, which one of 504 fills */
	for (i = 0; i < 64; i++)
		ring_add_locked(n++, LP_EVENT_SAMPLE, 1004);
	ring_add_locked(n++, LP_EVENT_SAMPLE, 504);
	/* 64 more leave 512, and 505 bytes need 520 */
	for (i = 0; i < 64; i++)
		ring_add_locked(n++, LP_EVENT_SAMPLE, 1004);
	ring_add_locked(n++, LP_EVENT_SAMPLE, 505);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		ring_add_locked(n++, LP_EVENT_SAMPLE, sizes[i]);
	srandom(1);
	for (i = 0; i < 500; i++)
		ring_add_locked(n++, LP_EVENT_SAMPLE, RECORD_MIN + random() % 6000);
	/* a record that wants handling now: everything before it comes along */
	ring_add_locked(n++, LP_EVENT_EXEC, RECORD_MIN);
	pthread_mutex_unlock(&ring->lock);
	eventfd_write(ring->wake_fd, 1);

	t0 = now_ns();
	ret = ringreader__poll(r, 60000);
	assert_true(now_ns() - t0 < HANDS_OVER_NS);
	assert_int_equal(ret, n);
	assert_int_equal(got.n, n);
	assert_int_equal(ringreader__poll(r, 0), 0);
	ringreader__free(r);
}

/* Samples wait in the queue for the caller's poll; a process event ends the wait. */
static void test_prompt_records(void **state)
{
	struct ringreader *r = start(NO_CAP);
	size_t i;
	__u64 t0;

	for (i = 0; i < 5; i++)
		ring_add(i, LP_EVENT_SAMPLE, 100, true);
	wait_consumed(5);
	/* queued, not handed over: a poll of 200 ms waits it out, then takes them */
	t0 = now_ns();
	assert_int_equal(ringreader__poll(r, 200), 5);
	assert_true(now_ns() - t0 >= 150 * 1000000ull);
	assert_int_equal(got.n, 5);

	ring_add(5, LP_EVENT_SAMPLE, 100, false);
	ring_add(6, LP_EVENT_EXIT, sizeof(struct lp_event_hdr) + 32, true);
	t0 = now_ns();
	assert_int_equal(ringreader__poll(r, 60000), 2);
	assert_true(now_ns() - t0 < HANDS_OVER_NS);
	assert_int_equal(got.n, 7);
	ringreader__free(r);
}

/*
 * Past max_queued bytes the reader leaves the rest in the ring (where BPF
 * counts what it drops) until the caller takes the queue; a full queue
 * ends the caller's wait.
 */
static void test_cap(void **state)
{
	struct ringreader *r = start(10 * 1024);
	size_t i;
	__u64 t0;

	for (i = 0; i < 100; i++)
		ring_add(i, LP_EVENT_SAMPLE, 1024, true);
	/* the record that fills the queue is kept: 10 of 1 KiB */
	wait_consumed(10);
	sleep_ms(300); /* the reader would have read again 3 times by now */
	assert_int_equal(ring_consumed(), 10);
	assert_int_equal(got.n, 0);

	for (i = 1; i <= 10; i++) {
		t0 = now_ns();
		assert_int_equal(ringreader__poll(r, 60000), 10);
		assert_true(now_ns() - t0 < HANDS_OVER_NS);
		assert_int_equal(got.n, 10 * i);
		if (i < 10)
			wait_consumed(10 * (i + 1));
	}
	/* freed with a full queue and records in the ring: nothing leaks */
	ring_add(100, LP_EVENT_SAMPLE, 6 * 1024, true);
	ring_add(101, LP_EVENT_SAMPLE, 6 * 1024, true);
	ring_add(102, LP_EVENT_SAMPLE, 6 * 1024, true);
	wait_consumed(102);
	ringreader__free(r);
}

/*
 * The record the caller's function fails on is consumed, as in the ring; the
 * ones after it come first at the next poll.
 */
static void test_caller_error(void **state)
{
	struct ringreader *r = start(NO_CAP);
	size_t i;

	for (i = 0; i < 5; i++)
		ring_add(i, LP_EVENT_SAMPLE, 64, false);
	ring_add(5, LP_EVENT_EXEC, 64, true);
	got.fail_at = 3;
	assert_int_equal(ringreader__poll(r, 60000), -EPROTO);
	assert_int_equal(got.n, 3);
	ring_add(6, LP_EVENT_EXEC, 64, true);
	wait_consumed(7);
	assert_int_equal(ringreader__poll(r, 60000), 4);
	assert_int_equal(got.n, 7);
	ringreader__free(r);
}

/* An error reading the ring reaches the caller's poll. */
static void test_ring_error(void **state)
{
	struct ringreader *r = start(NO_CAP);

	pthread_mutex_lock(&ring->lock);
	ring->fail = -EBADF;
	pthread_mutex_unlock(&ring->lock);
	eventfd_write(ring->wake_fd, 1);
	assert_int_equal(ringreader__poll(r, 60000), -EBADF);
	ringreader__free(r);
}

/*
 * Drain stops the reader and hands over the queue, then what is left in the
 * ring, in order; later polls read the ring themselves and count what they
 * hand over, woken or not.
 */
static void test_drain(void **state)
{
	struct ringreader *r = start(10 * 1024);
	size_t i;

	for (i = 0; i < 30; i++)
		ring_add(i, LP_EVENT_SAMPLE, 1024, true);
	wait_consumed(10);
	assert_int_equal(ringreader__drain(r), 30);
	assert_int_equal(got.n, 30);
	assert_int_equal(ringreader__drain(r), 0);

	for (i = 30; i < 35; i++)
		ring_add(i, LP_EVENT_SAMPLE, 1024, true);
	assert_int_equal(ringreader__poll(r, 60000), 5);
	for (i = 35; i < 38; i++)
		ring_add(i, LP_EVENT_SAMPLE, 1024, false);
	assert_int_equal(ringreader__poll(r, 10), 3);
	assert_int_equal(ringreader__poll(r, 0), 0);
	assert_int_equal(got.n, 38);
	ringreader__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunk_edges), cmocka_unit_test(test_prompt_records),
		cmocka_unit_test(test_cap),	    cmocka_unit_test(test_caller_error),
		cmocka_unit_test(test_ring_error),  cmocka_unit_test(test_drain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

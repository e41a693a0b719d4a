// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "labelprof.h"
#include "lib/compiler.h"
#include "sampling/ringreader.h"

/*
 * Samples do not wake the reader until a quarter of the ring is pending
 * (bpf/labelprof.bpf.c, on_sample): at a low rate that can take seconds, so
 * it also reads this often, as the caller's loop did before it had a reader.
 */
#define READ_INTERVAL_MS 100
/* Records are copied into chunks of this size (a larger record gets its own). */
#define CHUNK_BYTES (64u << 10)
/* Each record in a chunk: its size, then its bytes, 8-byte aligned as in the ring. */
#define RECORD_ALIGN 8u
#define RECORD_SPACE(size)                                                                         \
	((sizeof(struct record) + (size) + RECORD_ALIGN - 1) & ~(size_t)(RECORD_ALIGN - 1))
/* ring_buffer__consume's callback stops it with this when the queue is full. */
#define QUEUE_FULL (-ENOBUFS)

struct record {
	uint64_t size;
	unsigned char data[];
};

struct chunk {
	struct chunk *next;
	size_t start, len, cap; /* records in [start, len) */
	unsigned char data[];
};

/* Records in ring order; bytes counts their sizes. */
struct queue {
	struct chunk *head, *tail;
	size_t bytes;
	bool prompt; /* holds a record that wants handling now */
};

struct ringreader {
	struct ring_buffer *rb;
	ringreader_fn fn;
	void *ctx;
	size_t max_queued;
	int stop_fd; /* an eventfd: the reader stops waiting on the ring */
	pthread_t thread;
	bool threaded; /* a reader thread runs; changes only while none does */

	/* the reader thread's own */
	struct queue batch; /* read, not yet handed over */
	size_t batch_room;  /* bytes the queue had room for when the batch began */

	/* shared */
	pthread_mutex_t lock;
	pthread_cond_t ready; /* for the caller: prompt records, a full queue, an error */
	pthread_cond_t room;  /* for the reader: the queue was taken */
	struct queue queued;
	bool stopping;
	int error; /* the reader's, -errno */
};

static void queue_free(struct queue *q)
{
	struct chunk *c, *next;

	for (c = q->head; c; c = next) {
		next = c->next;
		free(c);
	}
	memset(q, 0, sizeof(*q));
}

static int queue_push(struct queue *q, const void *data, size_t size)
{
	size_t space = RECORD_SPACE(size), cap;
	struct chunk *c = q->tail;
	struct record *rec;

	if (!c || c->cap - c->len < space) {
		cap = space > CHUNK_BYTES ? space : CHUNK_BYTES;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return -ENOMEM;
		c->next = NULL;
		c->start = c->len = 0;
		c->cap = cap;
		if (q->tail)
			q->tail->next = c;
		else
			q->head = c;
		q->tail = c;
	}
	rec = (struct record *)(c->data + c->len);
	rec->size = size;
	memcpy(rec->data, data, size);
	c->len += space;
	q->bytes += size;
	return 0;
}

/* Appends src to dst and empties src. */
static void queue_splice(struct queue *dst, struct queue *src)
{
	if (!src->head)
		return;
	if (dst->tail)
		dst->tail->next = src->head;
	else
		dst->head = src->head;
	dst->tail = src->tail;
	dst->bytes += src->bytes;
	dst->prompt |= src->prompt;
	memset(src, 0, sizeof(*src));
}

static bool wants_prompt_handling(const void *data, size_t size)
{
	const struct lp_event_hdr *h = data;

	/* process events: the sooner a new process is inspected, the fewer samples miss labels */
	return size < sizeof(*h) || h->type != LP_EVENT_SAMPLE;
}

/* The ring's callback: queues on the reader thread, hands over at once without one. */
static int on_ring_record(void *ctx, void *data, size_t size)
{
	struct ringreader *r = ctx;

	if (!r->threaded)
		return r->fn(r->ctx, data, size);
	if (queue_push(&r->batch, data, size))
		return -ENOMEM;
	if (wants_prompt_handling(data, size))
		r->batch.prompt = true;
	/* the record that fills the queue is kept: a record consumed is never lost */
	return r->batch.bytes >= r->batch_room ? QUEUE_FULL : 0;
}

static void *read_ring(void *arg)
{
	struct ringreader *r = arg;
	struct pollfd fds[2] = {
		{.fd = ring_buffer__epoll_fd(r->rb), .events = POLLIN},
		{.fd = r->stop_fd, .events = POLLIN},
	};
	int n;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->stopping && r->queued.bytes >= r->max_queued)
			pthread_cond_wait(&r->room, &r->lock);
		if (r->stopping)
			break;
		r->batch_room = r->max_queued - r->queued.bytes;
		pthread_mutex_unlock(&r->lock);

		n = ring_buffer__consume(r->rb);

		pthread_mutex_lock(&r->lock);
		queue_splice(&r->queued, &r->batch);
		if (n < 0 && n != QUEUE_FULL && n != -EINTR)
			r->error = n;
		if (r->queued.prompt || r->queued.bytes >= r->max_queued || r->error)
			pthread_cond_signal(&r->ready);
		if (r->error)
			break;
		if (n == QUEUE_FULL)
			continue;
		pthread_mutex_unlock(&r->lock);

		/* the ring's epoll fd is ready once BPF forces a wakeup */
		poll(fds, ARRAY_SIZE(fds), READ_INTERVAL_MS);

		pthread_mutex_lock(&r->lock);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* Hands q's records to fn in order; on an error the records after the failed one stay in q. */
static int hand_over(struct ringreader *r, struct queue *q)
{
	struct record *rec;
	struct chunk *c;
	int n = 0, err;

	while ((c = q->head)) {
		while (c->start < c->len) {
			rec = (struct record *)(c->data + c->start);
			c->start += RECORD_SPACE(rec->size);
			q->bytes -= rec->size;
			/* as with the ring itself, the record fn failed on counts as consumed */
			err = r->fn(r->ctx, rec->data, rec->size);
			if (err < 0)
				return err;
			n++;
		}
		q->head = c->next;
		if (!q->head)
			q->tail = NULL;
		free(c);
	}
	return n;
}

static void deadline_after(struct timespec *ts, int timeout_ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += timeout_ms / 1000;
	ts->tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

/* Without a reader thread (after ringreader__drain): the ring is read here. */
static int poll_ring(struct ringreader *r, int timeout_ms)
{
	int n = ring_buffer__poll(r->rb, timeout_ms), more;

	if (n == -EINTR)
		n = 0;
	if (n < 0)
		return n;
	/* the poll hands over what woke it; samples may not have */
	more = ring_buffer__consume(r->rb);
	if (more == -EINTR)
		more = 0;
	return more < 0 ? more : n + more;
}

int ringreader__poll(struct ringreader *r, int timeout_ms)
{
	struct timespec deadline;
	struct queue taken;
	int n, err;

	if (!r->threaded)
		return poll_ring(r, timeout_ms);
	if (timeout_ms > 0)
		deadline_after(&deadline, timeout_ms);
	pthread_mutex_lock(&r->lock);
	while (!r->queued.prompt && r->queued.bytes < r->max_queued && !r->error && timeout_ms) {
		if (timeout_ms < 0)
			pthread_cond_wait(&r->ready, &r->lock);
		else if (pthread_cond_timedwait(&r->ready, &r->lock, &deadline) == ETIMEDOUT)
			break;
	}
	taken = r->queued;
	memset(&r->queued, 0, sizeof(r->queued));
	err = r->error;
	pthread_cond_signal(&r->room);
	pthread_mutex_unlock(&r->lock);

	n = hand_over(r, &taken);
	if (taken.head) {
		/* what fn did not get comes first next time */
		taken.prompt = false;
		pthread_mutex_lock(&r->lock);
		queue_splice(&taken, &r->queued);
		r->queued = taken;
		pthread_mutex_unlock(&r->lock);
	}
	return err ? err : n;
}

static void stop_reader(struct ringreader *r)
{
	if (!r->threaded)
		return;
	pthread_mutex_lock(&r->lock);
	r->stopping = true;
	pthread_cond_signal(&r->room);
	pthread_mutex_unlock(&r->lock);
	eventfd_write(r->stop_fd, 1);
	pthread_join(r->thread, NULL);
	r->threaded = false;
}

int ringreader__drain(struct ringreader *r)
{
	int n, more;

	/* the reader hands over each batch it reads: once it has stopped, all is in r->queued */
	stop_reader(r);
	n = hand_over(r, &r->queued);
	if (n < 0)
		return n;
	more = ring_buffer__consume(r->rb);
	return more < 0 ? more : n + more;
}

struct ringreader *ringreader__new(int map_fd, size_t max_queued, ringreader_fn fn, void *ctx)
{
	struct ringreader *r = calloc(1, sizeof(*r));
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	if (!r)
		return NULL;
	r->fn = fn;
	r->ctx = ctx;
	r->max_queued = max_queued;
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->ready, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&r->room, NULL);
	r->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->stop_fd < 0)
		goto fail;
	r->rb = ring_buffer__new(map_fd, on_ring_record, r, NULL);
	if (!r->rb)
		goto fail;
	/* signals are for the caller's thread: its handlers stop its loop */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r->threaded = true;
	err = pthread_create(&r->thread, NULL, read_ring, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		r->threaded = false;
		errno = err;
		goto fail;
	}
	return r;

fail:
	err = errno;
	ringreader__free(r);
	errno = err;
	return NULL;
}

void ringreader__free(struct ringreader *r)
{
	if (!r)
		return;
	stop_reader(r);
	queue_free(&r->queued);
	queue_free(&r->batch);
	ring_buffer__free(r->rb);
	if (r->stop_fd >= 0)
		close(r->stop_fd);
	pthread_cond_destroy(&r->room);
	pthread_cond_destroy(&r->ready);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

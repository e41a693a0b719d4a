// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The labelled process the benchmarks profile. Each thread sets its labels
 * through libcustomlabels, recurses to a given depth (so that the sampled
 * user stack has that many frames) and burns CPU there.
 *   bench_workload [--threads N] [--depth D] [--labels K] [--seconds S]
 *                  [--sleep-ms MS --burst-us US]
 * Busy (default): every thread burns until S seconds have passed (0: until
 * killed). With --sleep-ms, threads sleep and wake every MS milliseconds for
 * a burst of US microseconds of CPU: many such processes stand for an idle
 * fleet of labelled services. "ready" is printed once every thread has set
 * its labels.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "customlabels.h"

#define MAX_THREADS  256
#define MAX_DEPTH    1000
#define THREAD_STACK (512 * 1024)

/* Key names and value sizes as real services set them: trace ids, routes, tenants. */
static const struct {
	const char *key;
	int value_len;
} label_shapes[CUSTOM_LABELS_DEFAULT_MAX_LABELS] = {
	{"tenant", 12},		{"endpoint", 24},   {"trace_id", 32},	  {"span_id", 16},
	{"http.method", 4},	{"region", 9},	    {"user_id", 20},	  {"request_kind", 10},
	{"db.system", 8},	{"queue", 18},	    {"feature_flag", 14}, {"shard", 3},
	{"service.version", 7}, {"deployment", 11}, {"priority", 4},	  {"client_ip", 15},
};

struct options {
	int threads;
	int depth;
	int labels;
	double seconds;
	long sleep_ms;
	long burst_us;
};

static struct options opts = {.threads = 2, .depth = 32, .labels = 4};
static volatile int stop;
static pthread_barrier_t labelled;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t burn_until(uint64_t end_ns)
{
	uint64_t x = 88172645463325252ull;
	int i;

	while (!stop && (!end_ns || now_ns() < end_ns)) {
		for (i = 0; i < 100000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	}
	return x;
}

static uint64_t bottom(void)
{
	struct timespec ts;
	uint64_t x = 0;

	if (!opts.sleep_ms)
		return burn_until(opts.seconds > 0 ? now_ns() + (uint64_t)(opts.seconds * 1e9) : 0);
	ts.tv_sec = opts.sleep_ms / 1000;
	ts.tv_nsec = opts.sleep_ms % 1000 * 1000000;
	while (!stop) {
		x += burn_until(now_ns() + opts.burst_us * 1000);
		nanosleep(&ts, NULL);
	}
	return x;
}

/* One user frame per level: the volatile local whose address escapes keeps the frame. */
static __attribute__((noinline)) uint64_t descend(int level)
{
	volatile uint64_t pad = level;
	uint64_t r;

	r = level <= 1 ? bottom() : descend(level - 1);
	__asm__ volatile("" : : "r"(&pad) : "memory");
	return r + pad;
}

static void set_labels(long idx)
{
	char value[64];
	int i, err;

	for (i = 0; i < opts.labels; i++) {
		int len = label_shapes[i].value_len;

		snprintf(value, sizeof(value), "%ld-%s-%040d", idx, label_shapes[i].key, 0);
		err = custom_labels_set(label_shapes[i].key, strlen(label_shapes[i].key), value,
					len);
		if (err) {
			fprintf(stderr, "bench_workload: setting a label: %s\n", strerror(-err));
			exit(1);
		}
	}
}

static void *thread_main(void *arg)
{
	set_labels((long)arg);
	pthread_barrier_wait(&labelled);
	/* the thread start frames (clone, start_thread, thread_main) count toward the depth */
	return (void *)(uintptr_t)descend(opts.depth > 3 ? opts.depth - 3 : 1);
}

static long parse_long(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "bench_workload: invalid number '%s' (%ld..%ld)\n", s, min, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	pthread_t tids[MAX_THREADS];
	pthread_attr_t attr;
	int i, err;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--threads"))
			opts.threads = parse_long(argv[i + 1], 1, MAX_THREADS);
		else if (!strcmp(argv[i], "--depth"))
			opts.depth = parse_long(argv[i + 1], 1, MAX_DEPTH);
		else if (!strcmp(argv[i], "--labels"))
			opts.labels = parse_long(argv[i + 1], 0, CUSTOM_LABELS_DEFAULT_MAX_LABELS);
		else if (!strcmp(argv[i], "--seconds"))
			opts.seconds = parse_long(argv[i + 1], 0, 86400);
		else if (!strcmp(argv[i], "--sleep-ms"))
			opts.sleep_ms = parse_long(argv[i + 1], 1, 3600000);
		else if (!strcmp(argv[i], "--burst-us"))
			opts.burst_us = parse_long(argv[i + 1], 0, 1000000);
		else
			break;
	}
	if (i < argc) {
		fprintf(stderr,
			"usage: %s [--threads N] [--depth D] [--labels K] [--seconds S] "
			"[--sleep-ms MS --burst-us US]\n",
			argv[0]);
		return 2;
	}

	pthread_barrier_init(&labelled, NULL, opts.threads + 1);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	for (i = 0; i < opts.threads; i++) {
		err = pthread_create(&tids[i], &attr, thread_main, (void *)(long)i);
		if (err) {
			fprintf(stderr, "bench_workload: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	pthread_barrier_wait(&labelled);
	printf("ready\n");
	fflush(stdout);
	if (opts.sleep_ms && opts.seconds > 0) {
		usleep((useconds_t)(opts.seconds * 1e6));
		stop = 1;
	}
	for (i = 0; i < opts.threads; i++)
		pthread_join(tids[i], NULL);
	return 0;
}

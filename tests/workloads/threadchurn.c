// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * threadchurn: thousands of short-lived threads, a few alive at a time. Each
 * sets thread=SEQ and tid=TID (its own thread id), burns in burn_thread and
 * exits with its labels still set (the library clears them at thread exit).
 * The report lists every thread as [seq, tid].
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "customlabels.h"
#include "workload.h"

#define TC_MAX_THREADS	1000000
#define TC_MAX_PARALLEL 64

static struct {
	unsigned int count, parallel;
	uint64_t burn_us;
	struct wl_run run;
	uint64_t iters;
} env = {
	.count = 3000,
	.parallel = 8,
	.burn_us = 1000,
};

struct worker {
	pthread_t thread;
	unsigned int seq;
	int tid;
	uint64_t ret;
};

static WL_BURN uint64_t burn_thread(uint64_t iters)
{
	return wl_spin(iters, 0x5000);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char seq[32], tid[32];
	int rc;

	w->tid = wl_gettid();
	snprintf(seq, sizeof(seq), "%u", w->seq);
	snprintf(tid, sizeof(tid), "%d", w->tid);
	rc = custom_labels_set_str("thread", seq);
	if (!rc)
		rc = custom_labels_set_str("tid", tid);
	if (rc)
		wl_die("threadchurn: custom_labels_set_str failed (%d)", rc);
	w->ret = burn_thread(env.iters);
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: threadchurn [options]\n"
		"  -n, --count N      threads to start (default 3000)\n"
		"  -j, --parallel N   threads alive at once, 1-%d (default 8)\n"
		"  -b, --burn-us N    CPU each thread burns (default 1000)\n"
		"  -o, --output FILE  JSON report (default stdout)\n",
		TC_MAX_PARALLEL);
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{"count", required_argument, NULL, 'n'},
		{"parallel", required_argument, NULL, 'j'},
		{"burn-us", required_argument, NULL, 'b'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	int c;

	while ((c = getopt_long(argc, argv, "n:j:b:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			env.count = (unsigned int)wl_parse_u64(optarg, "count");
			if (env.count > TC_MAX_THREADS)
				wl_die("threadchurn: --count is at most %d", TC_MAX_THREADS);
			break;
		case 'j':
			env.parallel = (unsigned int)wl_parse_u64(optarg, "parallelism");
			if (env.parallel < 1 || env.parallel > TC_MAX_PARALLEL)
				wl_die("threadchurn: --parallel must be 1-%d", TC_MAX_PARALLEL);
			break;
		case 'b':
			env.burn_us = wl_parse_u64(optarg, "burn time");
			break;
		default:
			wl_run_option(&env.run, "threadchurn", c, optarg, usage);
		}
	}
	wl_no_operands("threadchurn", argc, argv);
}

int main(int argc, char **argv)
{
	static struct worker ws[TC_MAX_THREADS];
	unsigned int started = 0, joined = 0;
	uint64_t start_ns, end_ns, sink = 0;
	FILE *f;

	parse_args(argc, argv);
	wl_install_stop_handlers();
	env.iters = env.burn_us * wl_calibrate();

	wl_ready("threadchurn");
	start_ns = wl_clock_ns(CLOCK_REALTIME);
	/* A sliding window: the oldest thread is joined before the next starts. */
	while (started < env.count && !wl_stopping()) {
		int err;

		if (started - joined == env.parallel) {
			pthread_join(ws[joined].thread, NULL);
			sink += ws[joined++].ret;
		}
		ws[started].seq = started;
		err = pthread_create(&ws[started].thread, NULL, worker_main, &ws[started]);
		if (err)
			wl_die("threadchurn: pthread_create: %s", strerror(err));
		started++;
	}
	while (joined < started) {
		pthread_join(ws[joined].thread, NULL);
		sink += ws[joined++].ret;
	}
	end_ns = wl_clock_ns(CLOCK_REALTIME);
	__asm__ volatile("" : : "r"(sink));

	f = wl_open_report(env.run.output);
	fprintf(f, "{\"workload\":\"threadchurn\",\"pid\":%d,", (int)getpid());
	fprintf(f, "\"start_unix_ns\":%llu,\"end_unix_ns\":%llu,\"started\":%u,\"threads\":[",
		(unsigned long long)start_ns, (unsigned long long)end_ns, started);
	for (unsigned int i = 0; i < started; i++)
		fprintf(f, "%s[%u,%d]", i ? "," : "", ws[i].seq, ws[i].tid);
	fprintf(f, "]}\n");
	wl_close_report(f, env.run.output);
	return 0;
}

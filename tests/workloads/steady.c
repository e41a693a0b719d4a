// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steady: threads that each set one known label set through libcustomlabels
 * and keep it until the workload stops, for `labelprof labels`. The main
 * thread never sets a label; one worker sets labels and clears them; one
 * sets more labels than labelprof reads by default; one keeps burning CPU.
 * Labels and thread names hold bytes that are not UTF-8, NULs, '=', spaces
 * and newlines. Once every thread is set up, the report (JSON) says each
 * thread's tid, name and labels in the order they were set, then "ready"
 * goes to stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "customlabels.h"
#include "workload.h"

#ifndef STEADY_ABI
#error "build with -DSTEADY_ABI=0|1, the ABI of the libcustomlabels it links"
#endif

#define KV(k, v)                                                                                   \
	{                                                                                          \
		k, sizeof(k) - 1, v, sizeof(v) - 1                                                 \
	}

/* One past labelprof's default of 16 labels read per thread. */
#define MANY_LABELS 17

struct worker {
	const char *name; /* thread name: at most 15 bytes */
	const struct custom_labels_kv *kv;
	size_t n;
	bool clear; /* set the labels, then clear them */
	bool spin;  /* burn CPU instead of sleeping */
	/* filled by the thread */
	pthread_t thread;
	int tid;
	struct custom_labels_kv many[MANY_LABELS];
	char many_buf[MANY_LABELS][2][8];
};

static const struct custom_labels_kv plain[] = {KV("tenant", "acme"), KV("endpoint", "/checkout")};
static const struct custom_labels_kv bytes[] = {
	KV("\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87", "\xd0\xb7\xd0\xbd\xd0\xb0\xd1\x87 \xf0\x9f\x9a\x80"),
	KV("bin\0key", "\xff\xfe\0v"),
};
static const struct custom_labels_kv syntax[] = {
	KV("a=b", "c=d"),
	KV("sp ace", "line\nbreak\\ \t"),
	KV("", "empty key"),
	KV("empty value", ""),
};
static const struct custom_labels_kv cleared[] = {KV("tenant", "gone")};
static const struct custom_labels_kv spinning[] = {KV("state", "spinning")};

static struct worker workers[] = {
	{.name = "st-plain", .kv = plain, .n = 2},
	{.name = "st-bytes\xff", .kv = bytes, .n = 2},
	{.name = "st-syntax", .kv = syntax, .n = 4},
	{.name = "st-cleared", .kv = cleared, .n = 1, .clear = true},
	{.name = "st-many", .n = MANY_LABELS},
	{.name = "st-spin", .kv = spinning, .n = 1, .spin = true},
};

#define NWORKERS (sizeof(workers) / sizeof(workers[0]))

static pthread_barrier_t set_up;

WL_BURN uint64_t burn_steady(uint64_t iters, uint64_t x);
WL_BURN uint64_t burn_steady(uint64_t iters, uint64_t x)
{
	return wl_spin(iters, x);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t sink = 1;
	size_t i;

	w->tid = wl_gettid();
	for (i = 0; i < w->n; i++) {
		const struct custom_labels_kv *kv = w->kv ? &w->kv[i] : &w->many[i];
		int err = custom_labels_set(kv->key, kv->key_len, kv->value, kv->value_len);

		if (err)
			wl_die("steady: custom_labels_set: %s", strerror(-err));
	}
	if (w->clear)
		custom_labels_clear();
	pthread_barrier_wait(&set_up);
	while (!wl_stopping()) {
		if (w->spin)
			sink = burn_steady(100000, sink);
		else
			usleep(20000);
	}
	__asm__ volatile("" : : "r"(sink));
	return NULL;
}

/* The thread's name as the kernel has it (what a profiler reads). */
static size_t thread_comm(int tid, char *buf, size_t size)
{
	char path[64];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	f = fopen(path, "re");
	if (!f)
		wl_die("steady: %s: %s", path, strerror(errno));
	n = fread(buf, 1, size, f);
	fclose(f);
	return n && buf[n - 1] == '\n' ? n - 1 : n;
}

static void report_thread(FILE *f, int tid, const struct worker *w, bool first)
{
	char comm[64];
	size_t i;

	fprintf(f, "%s{\"tid\":%d,\"comm\":", first ? "" : ",", tid);
	wl_json_bytes(f, comm, thread_comm(tid, comm, sizeof(comm)));
	fputs(",\"labels\":[", f);
	for (i = 0; w && !w->clear && i < w->n; i++) {
		const struct custom_labels_kv *kv = w->kv ? &w->kv[i] : &w->many[i];

		fprintf(f, "%s[", i ? "," : "");
		wl_json_bytes(f, kv->key, kv->key_len);
		fputc(',', f);
		wl_json_bytes(f, kv->value, kv->value_len);
		fputc(']', f);
	}
	fputs("]}", f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	struct custom_labels_config cfg = {.max_labels = MANY_LABELS};
	const char *output = NULL;
	size_t i, j;
	FILE *f;
	int c;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'h':
			printf("usage: steady [-o REPORT]   (stops when stdin reaches end of "
			       "file)\n");
			return 0;
		default:
			return 2;
		}
	}
	if (custom_labels_configure(&cfg))
		wl_die("steady: custom_labels_configure failed");
	wl_install_stop_handlers();
	for (i = 0; i < NWORKERS; i++) {
		struct worker *w = &workers[i];

		for (j = 0; !w->kv && j < w->n; j++) {
			snprintf(w->many_buf[j][0], sizeof(w->many_buf[j][0]), "k%02u", (unsigned int)(j % 100));
			snprintf(w->many_buf[j][1], sizeof(w->many_buf[j][1]), "v%02u", (unsigned int)(j % 100));
			w->many[j] = (struct custom_labels_kv){w->many_buf[j][0], 3,
							       w->many_buf[j][1], 3};
		}
	}
	pthread_barrier_init(&set_up, NULL, NWORKERS + 1);
	for (i = 0; i < NWORKERS; i++) {
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]))
			wl_die("steady: pthread_create failed");
		pthread_setname_np(workers[i].thread, workers[i].name);
	}
	pthread_barrier_wait(&set_up);

	f = wl_open_report(output);
	fprintf(f, "{\"pid\":%d,\"abi\":%d,\"threads\":[", (int)getpid(), STEADY_ABI);
	report_thread(f, wl_gettid(), NULL, true);
	for (i = 0; i < NWORKERS; i++)
		report_thread(f, workers[i].tid, &workers[i], false);
	fputs("]}\n", f);
	wl_close_report(f, output);
	wl_ready("steady");

	wl_wait(0, true);
	for (i = 0; i < NWORKERS; i++)
		pthread_join(workers[i].thread, NULL);
	return 0;
}

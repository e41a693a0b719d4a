// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dlcycle: the label library comes and goes. Each cycle dlopen()s it by path,
 * starts a few threads that set cycle=C and tid=T through dlsym()ed functions,
 * burn in burn_labelled, clear, burn in burn_unlabelled and exit; then the
 * library is dlclose()d. The main thread never touches the library's TLS.
 *
 * The report lists every thread as [cycle, tid] and counts the cycles after
 * which the library was really gone from the address space (a library built
 * with -z nodelete, like libcustomlabels.so, never is).
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

#define DL_MAX_THREADS 16
#define DL_MAX_RECORDS (1u << 20)

static struct {
	unsigned int threads, cycles;
	uint64_t burn_us;
	struct wl_run run;
	const char *lib;
	uint64_t iters;
} env = {
	.threads = 2,
	.burn_us = 2000,
};

static int (*lib_set)(const void *key, size_t key_len, const void *value, size_t value_len);
static int (*lib_clear)(void);

struct worker {
	pthread_t thread;
	unsigned int cycle;
	int tid;
	uint64_t ret;
};

static WL_BURN uint64_t burn_labelled(uint64_t iters)
{
	return wl_spin(iters, 0x3000);
}

static WL_BURN uint64_t burn_unlabelled(uint64_t iters)
{
	return wl_spin(iters, 0x4000);
}

static void set_label(const char *key, const char *value)
{
	int rc = lib_set(key, strlen(key), value, strlen(value));

	if (rc)
		wl_die("dlcycle: custom_labels_set %s=%s failed (%d)", key, value, rc);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char cycle[32], tid[32];

	w->tid = wl_gettid();
	snprintf(cycle, sizeof(cycle), "%u", w->cycle);
	snprintf(tid, sizeof(tid), "%d", w->tid);
	set_label("cycle", cycle);
	set_label("tid", tid);
	w->ret = burn_labelled(env.iters);
	lib_clear();
	w->ret += burn_unlabelled(env.iters / 4);
	return NULL;
}

/* Whether a file mapping of path (a realpath) is in this process. */
static bool mapped(const char *path)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128];
	bool found = false;

	if (!f)
		wl_die("dlcycle: /proc/self/maps: %s", strerror(errno));
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p) {
			p[strcspn(p, "\n")] = '\0';
			found = !strcmp(p, path);
		}
	}
	fclose(f);
	return found;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dlcycle [options]\n"
		"  -c, --cycles N     dlopen/dlclose cycles (default: until stopped)\n"
		"  -t, --threads N    labelled threads per cycle, 1-%d (default 2)\n"
		"  -b, --burn-us N    CPU each thread burns labelled (default 2000)\n"
		"  -d, --duration SEC stop after SEC seconds\n"
		"  -w, --wait-stdin   stop when stdin reaches end of file\n"
		"  -o, --output FILE  JSON report (default stdout)\n"
		"      --lib PATH     library to dlopen (default ../lib/libcustomlabels.so)\n",
		DL_MAX_THREADS);
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{"cycles", required_argument, NULL, 'c'},
		{"threads", required_argument, NULL, 't'},
		{"burn-us", required_argument, NULL, 'b'},
		{"duration", required_argument, NULL, 'd'},
		{"wait-stdin", no_argument, NULL, 'w'},
		{"output", required_argument, NULL, 'o'},
		{"lib", required_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:t:b:d:wo:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			env.cycles = (unsigned int)wl_parse_u64(optarg, "cycles");
			break;
		case 't':
			env.threads = wl_parse_threads("dlcycle", optarg, DL_MAX_THREADS);
			break;
		case 'b':
			env.burn_us = wl_parse_u64(optarg, "burn time");
			break;
		case 'L':
			env.lib = optarg;
			break;
		default:
			wl_run_option(&env.run, "dlcycle", c, optarg, usage);
		}
	}
	wl_no_operands("dlcycle", argc, argv);
}

int main(int argc, char **argv)
{
	static unsigned int rec_cycle[DL_MAX_RECORDS];
	static int rec_tid[DL_MAX_RECORDS];
	char path[PATH_MAX], real[PATH_MAX];
	unsigned int cycle, unmapped = 0, nrec = 0;
	uint64_t start_ns, end_ns, deadline = 0, sink = 0;
	FILE *f;

	parse_args(argc, argv);
	wl_install_stop_handlers();
	if (!env.lib) {
		wl_sibling_path("../lib/libcustomlabels.so", path, sizeof(path));
		env.lib = path;
	}
	if (!realpath(env.lib, real))
		wl_die("dlcycle: %s: %s", env.lib, strerror(errno));
	env.iters = env.burn_us * wl_calibrate();
	if (env.run.duration > 0)
		deadline = wl_clock_ns(CLOCK_MONOTONIC) + (uint64_t)(env.run.duration * 1e9);

	wl_ready("dlcycle");
	start_ns = wl_clock_ns(CLOCK_REALTIME);
	for (cycle = 0; !env.cycles || cycle < env.cycles; cycle++) {
		struct worker ws[DL_MAX_THREADS] = {};
		void *h;

		if (wl_stopping() || (env.run.wait_stdin && wl_stdin_closed()) ||
		    (deadline && wl_clock_ns(CLOCK_MONOTONIC) >= deadline))
			break;
		h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			wl_die("dlcycle: dlopen %s: %s", real, dlerror());
		lib_set = (__typeof__(lib_set))dlsym(h, "custom_labels_set");
		lib_clear = (__typeof__(lib_clear))dlsym(h, "custom_labels_clear");
		if (!lib_set || !lib_clear)
			wl_die("dlcycle: %s lacks the custom_labels API", real);
		for (unsigned int i = 0; i < env.threads; i++) {
			int err;

			ws[i].cycle = cycle;
			err = pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]);
			if (err)
				wl_die("dlcycle: pthread_create: %s", strerror(err));
		}
		for (unsigned int i = 0; i < env.threads; i++) {
			pthread_join(ws[i].thread, NULL);
			sink += ws[i].ret;
			if (nrec < DL_MAX_RECORDS) {
				rec_cycle[nrec] = cycle;
				rec_tid[nrec++] = ws[i].tid;
			}
		}
		lib_set = NULL;
		lib_clear = NULL;
		if (dlclose(h))
			wl_die("dlcycle: dlclose: %s", dlerror());
		unmapped += !mapped(real);
	}
	end_ns = wl_clock_ns(CLOCK_REALTIME);
	__asm__ volatile("" : : "r"(sink));

	f = wl_open_report(env.run.output);
	fprintf(f, "{\"workload\":\"dlcycle\",\"pid\":%d,\"lib\":", (int)getpid());
	wl_json_str(f, real);
	fprintf(f,
		",\"start_unix_ns\":%llu,\"end_unix_ns\":%llu,\"cycles\":%u,"
		"\"unmapped_after_dlclose\":%u,\"threads\":[",
		(unsigned long long)start_ns, (unsigned long long)end_ns, cycle, unmapped);
	for (unsigned int i = 0; i < nrec; i++)
		fprintf(f, "%s[%u,%d]", i ? "," : "", rec_cycle[i], rec_tid[i]);
	fprintf(f, "]}\n");
	wl_close_report(f, env.run.output);
	return 0;
}

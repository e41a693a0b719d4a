// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The programs churn runs. Built three times:
 *   churn-child     labelled through libcustomlabels.so (v1), loaded at startup
 *   churn-child-v0  the same through libcustomlabels-v0.so
 *   churn-plain     (CHILD_PLAIN) no labels at all
 *
 * Spawned child (--seq): sets role/seq/pid labels, sleeps --delay-ms, burns
 * --iters in burn_child, writes its burn time to --report-fd, exits.
 * Exec cycle (--cycle): a labelled image sets phase/cycle/abi labels, sleeps,
 * burns in burn_labelled, then execs churn-plain, which burns in burn_plain
 * and execs the next labelled image (even cycles v1, odd cycles v0).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

#ifndef CHILD_PLAIN
#include "customlabels.h"
#endif

struct child_record {
	uint32_t seq;
	uint32_t pid;
	uint64_t burn_ns;
};

static struct {
	long long seq, cycle;
	uint64_t cycles, iters, delay_ms;
	int report_fd;
	bool until_eof;
} env = { .seq = -1, .cycle = -1, .report_fd = -1 };

static WL_BURN uint64_t burn_child(uint64_t iters)
{
	return wl_spin(iters, 0x3000);
}

static WL_BURN uint64_t burn_labelled(uint64_t iters)
{
	return wl_spin(iters, 0x3001);
}

static WL_BURN uint64_t burn_plain(uint64_t iters)
{
	return wl_spin(iters, 0x3002);
}

/* Thread CPU time of one burn (the calls cannot be dropped: see WL_BURN). */
static uint64_t timed(uint64_t (*fn)(uint64_t))
{
	uint64_t t0 = wl_clock_ns(CLOCK_THREAD_CPUTIME_ID);

	fn(env.iters);
	return wl_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

#ifndef CHILD_PLAIN
/* Time for the profiler to inspect this new image before it burns labelled CPU. */
static void sleep_delay(void)
{
	if (env.delay_ms)
		usleep((useconds_t)(env.delay_ms * 1000));
}

/*
 * Publishes the labels in one step (a prepared set swapped in), so a sample
 * sees all of them or none, never a partly built set.
 */
static void publish(const char *const *kv, size_t n)
{
	struct custom_labels_labelset *set = custom_labels_labelset_new();

	if (!set)
		wl_die("churn-child: custom_labels_labelset_new failed");
	for (size_t i = 0; i < n; i += 2)
		if (custom_labels_labelset_set_str(set, kv[i], kv[i + 1]))
			wl_die("churn-child: custom_labels_labelset_set_str(%s) failed", kv[i]);
	custom_labels_swap(set);
}
#else
/*
 * Decoys for a reader that keeps a labelled image's recipe after exec: every
 * word of this program's TLS points to a well-formed v1 label set, so reading
 * it at a stale offset yields labels (or a fault) instead of nothing.
 */
static const char decoy_key[] = "decoy", decoy_value[] = "stale-recipe";
static struct {
	size_t key_len;
	const char *key;
	size_t value_len;
	const char *value;
} decoy_label = { sizeof(decoy_key) - 1, decoy_key, sizeof(decoy_value) - 1, decoy_value };
static struct {
	void *storage;
	size_t count, capacity;
} decoy_set = { &decoy_label, 1, 1 };
static __thread void *decoy_tls[128];

static void plant_decoys(void)
{
	for (size_t i = 0; i < sizeof(decoy_tls) / sizeof(decoy_tls[0]); i++)
		((void *volatile *)decoy_tls)[i] = &decoy_set;
}
#endif

static __attribute__((noreturn)) void exec_next(char **argv, const char *name, long long cycle)
{
	char path[4096], cycle_arg[32];
	char *args[16];
	int n = 0;

	wl_sibling_path(name, path, sizeof(path));
	snprintf(cycle_arg, sizeof(cycle_arg), "%lld", cycle);
	/* Same options as this image, with the new cycle number. */
	args[n++] = (char *)name;
	for (int i = 1; argv[i] && n < 14; i++) {
		if (!strcmp(argv[i], "--cycle") && argv[i + 1]) {
			args[n++] = argv[i++];
			args[n++] = cycle_arg;
		} else {
			args[n++] = argv[i];
		}
	}
	args[n] = NULL;
	execv(path, args);
	wl_die("churn-child: exec %s: %s", path, strerror(errno));
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seq", required_argument, NULL, 's' },
		{ "cycle", required_argument, NULL, 'c' },
		{ "cycles", required_argument, NULL, 'C' },
		{ "iters", required_argument, NULL, 'i' },
		{ "delay-ms", required_argument, NULL, 'd' },
		{ "report-fd", required_argument, NULL, 'r' },
		{ "until-eof", no_argument, NULL, 'e' },
		{},
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			env.seq = (long long)wl_parse_u64(optarg, "sequence number");
			break;
		case 'c':
			env.cycle = (long long)wl_parse_u64(optarg, "cycle");
			break;
		case 'C':
			env.cycles = wl_parse_u64(optarg, "cycle count");
			break;
		case 'i':
			env.iters = wl_parse_u64(optarg, "iterations");
			break;
		case 'd':
			env.delay_ms = wl_parse_u64(optarg, "delay");
			break;
		case 'r':
			env.report_fd = (int)wl_parse_u64(optarg, "report fd");
			break;
		case 'e':
			env.until_eof = true;
			break;
		default:
			wl_die("usage: churn-child (--seq N | --cycle N [--cycles N] [--until-eof])"
			       " --iters N [--delay-ms N] [--report-fd FD]");
		}
	}
	if ((env.seq < 0) == (env.cycle < 0) || !env.iters)
		wl_die("churn-child: needs --iters and one of --seq or --cycle");
}

#ifndef CHILD_PLAIN
/* A spawned child: its own labels, a short burn, a report, exit. */
static int run_child(void)
{
	struct child_record r = { .seq = (uint32_t)env.seq, .pid = (uint32_t)getpid() };
	char seq[32], pid[32];
	const char *kv[] = { "role", "churn-child", "seq", seq, "pid", pid };

	snprintf(seq, sizeof(seq), "%lld", env.seq);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	publish(kv, sizeof(kv) / sizeof(kv[0]));
	sleep_delay();
	r.burn_ns = timed(burn_child);
	if (env.report_fd >= 0 && write(env.report_fd, &r, sizeof(r)) != sizeof(r))
		wl_die("churn-child: write report: %s", strerror(errno));
	return 0;
}

/* A labelled image of an exec cycle; execs the unlabelled one next. */
static int run_cycle(char **argv)
{
	char cycle[32];
	const char *kv[] = { "phase", "labelled", "cycle", cycle, "abi", CHILD_ABI ? "v1" : "v0" };

	snprintf(cycle, sizeof(cycle), "%lld", env.cycle);
	publish(kv, sizeof(kv) / sizeof(kv[0]));
	sleep_delay();
	timed(burn_labelled);
	if (env.until_eof && wl_stdin_closed())
		return 0;
	exec_next(argv, "churn-plain", env.cycle);
}
#else
static int run_child(void)
{
	wl_die("churn-plain: --seq needs a labelled build");
}

/* The unlabelled image of an exec cycle; execs the next labelled one. */
static int run_cycle(char **argv)
{
	plant_decoys();
	timed(burn_plain);
	if ((env.cycles && env.cycle + 1 >= (long long)env.cycles) ||
	    (env.until_eof && wl_stdin_closed()))
		return 0;
	exec_next(argv, (env.cycle + 1) % 2 ? "churn-child-v0" : "churn-child", env.cycle + 1);
}
#endif

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	return env.seq >= 0 ? run_child() : run_cycle(argv);
}

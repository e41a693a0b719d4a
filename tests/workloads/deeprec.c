// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * deeprec: the main thread calls a recursion of exactly DEPTH frames and burns
 * CPU at its bottom, for the whole-stack tests of deep user stacks
 * (tests/e2e/test_deep.py):
 *
 *   main → level_0 → level_1 → ... → level_9 → level_0 → ... → deep_burn
 *
 * Level i runs in level_{i % 10}, so a frame missing or out of order shows in
 * the names. Each level is its own function, never inlined, cloned or turned
 * into a loop (WL_BURN), and the work after each call keeps it from being a
 * tail call. Built without frame pointers (its stacks walked by CFI) and with
 * them. "deeprec: ready" on stderr once the burn runs; stops at the end of
 * stdin, on SIGINT/SIGTERM or after --seconds.
 */
#include <getopt.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>

#include "workload.h"

#define DR_MAX_DEPTH 100000
/* Stack per level, at most (the largest frame of -O0 and sanitized builds). */
#define DR_FRAME_BYTES 256

static struct {
	unsigned long depth;
	struct wl_run run;
} env = {.depth = 1000};

static volatile int stop;

WL_BURN uint64_t deep_burn(uint64_t x);
WL_BURN uint64_t deep_burn(uint64_t x)
{
	wl_ready("deeprec");
	while (!stop)
		x = wl_spin(100000, x);
	return x;
}

WL_BURN uint64_t level_0(unsigned long i, uint64_t x);
WL_BURN uint64_t level_1(unsigned long i, uint64_t x);
WL_BURN uint64_t level_2(unsigned long i, uint64_t x);
WL_BURN uint64_t level_3(unsigned long i, uint64_t x);
WL_BURN uint64_t level_4(unsigned long i, uint64_t x);
WL_BURN uint64_t level_5(unsigned long i, uint64_t x);
WL_BURN uint64_t level_6(unsigned long i, uint64_t x);
WL_BURN uint64_t level_7(unsigned long i, uint64_t x);
WL_BURN uint64_t level_8(unsigned long i, uint64_t x);
WL_BURN uint64_t level_9(unsigned long i, uint64_t x);

/* Level i calls level i + 1 (NEXT) or, at the last level, the burn. */
#define DR_LEVEL(THIS, NEXT)                                                                       \
	WL_BURN uint64_t THIS(unsigned long i, uint64_t x)                                         \
	{                                                                                          \
		if (i + 1 < env.depth)                                                             \
			x = NEXT(i + 1, x ^ i);                                                    \
		else                                                                               \
			x = deep_burn(x);                                                          \
		__asm__ volatile("" : "+r"(x) : : "memory");                                       \
		return x + i;                                                                      \
	}

DR_LEVEL(level_0, level_1)
DR_LEVEL(level_1, level_2)
DR_LEVEL(level_2, level_3)
DR_LEVEL(level_3, level_4)
DR_LEVEL(level_4, level_5)
DR_LEVEL(level_5, level_6)
DR_LEVEL(level_6, level_7)
DR_LEVEL(level_7, level_8)
DR_LEVEL(level_8, level_9)
DR_LEVEL(level_9, level_0)

/* Stops the burn after --seconds, on SIGINT/SIGTERM or at end of stdin. */
static void *waiter(void *arg)
{
	wl_wait(env.run.duration, true);
	stop = 1;
	return arg;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: deeprec [OPTIONS]   (stops when stdin reaches end of file)\n"
		"  -D, --depth N      recursion frames between main and deep_burn (default 1000)\n"
		"  -d, --seconds SEC  stop after SEC seconds\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"depth", required_argument, NULL, 'D'},
		{"seconds", required_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	pthread_t wait_thread;
	struct rlimit rl;
	uint64_t x;
	int c, err;

	while ((c = getopt_long(argc, argv, "D:d:h", opts, NULL)) != -1) {
		if (c == 'D')
			env.depth = wl_parse_u64(optarg, "depth");
		else
			wl_run_option(&env.run, "deeprec", c, optarg, usage);
	}
	wl_no_operands("deeprec", argc, argv);
	if (env.depth < 1 || env.depth > DR_MAX_DEPTH)
		wl_die("deeprec: depth must be 1..%d", DR_MAX_DEPTH);
	/* the main thread's stack grows up to RLIMIT_STACK */
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    env.depth * DR_FRAME_BYTES + (1u << 20) > rl.rlim_cur)
		wl_die("deeprec: depth %lu needs a stack of %lu bytes, the limit is %llu",
		       env.depth, env.depth * DR_FRAME_BYTES + (1u << 20),
		       (unsigned long long)rl.rlim_cur);
	wl_install_stop_handlers();
	err = pthread_create(&wait_thread, NULL, waiter, NULL);
	if (err)
		wl_die("deeprec: pthread_create: %s", strerror(err));
	x = level_0(0, (uint64_t)env.depth);
	__asm__ volatile("" : : "r"(x));
	pthread_join(wait_thread, NULL);
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwind_c: threads that burn CPU under call paths they know, in code built
 * -O2 -fomit-frame-pointer (by gcc and by clang), so that a profiler's user
 * stacks can be checked against the truth where frame pointers are no help:
 *
 *   main    main → chain_a (realigns its stack to 64 bytes by its frame
 *           pointer) → chain_b, a loop that moves the stack by 16 bytes
 *           more each round (of four) and calls chain_c → chain_realign
 *           (realigns its stack beside a dynamic allocation: gcc's CFA is
 *           then *(rbp - 8)) → chain_burn, a millisecond each call
 *   tiny    unwind_tiny_thread → tiny_loop → tiny_a → tiny_b → tiny_c,
 *           short functions that save registers and move the stack pointer
 *           around each call: many samples land in prologues and epilogues
 *   signal  unwind_signal_thread → signal_loop, a hot loop interrupted by
 *           SIGPROF from a timer on the thread's own CPU time; the handler
 *           burns about as long as the loop does between signals:
 *           ... signal_loop → (signal frame) → on_sigprof → signal_burn
 *   plt     unwind_plt_thread → plt_loop → unwind_lib_step and
 *           unwind_lib_work of libunwind_lib (built without frame pointers
 *           too), called through the PLT
 *   deep    unwind_deep_thread → recurse × DEPTH → deep_burn: deeper than
 *           any profiler's frame limit
 *
 * Each thread sets two labels through libcustomlabels and keeps them:
 * unwind.thread (its name above) and unwind.build (the program's name). The
 * report (JSON) says per thread its tid, name, labels, entry ("main" or
 * "thread"), path: the functions from its entry to where it spends its
 * time, outermost first, which every sample of the thread passes through,
 * and calls: every [caller, callee] below the path ("__restore_rt" calls the
 * handler, "[.plt]" and "[.plt.sec]" are the PLT stubs). Then "ready" goes to
 * stderr. Stops when stdin closes or after -d seconds.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "customlabels.h"
#include "unwind_lib.h"
#include "workload.h"

#define UW_MAX_DEPTH 100000

enum thread_id { T_MAIN, T_TINY, T_SIGNAL, T_PLT, T_DEEP, T_COUNT };

static const char *const thread_names[T_COUNT] = {"main", "tiny", "signal", "plt", "deep"};

static struct {
	unsigned long depth;
	struct wl_run run;
} env = {.depth = 300};

static int tids[T_COUNT];
/*
 * Set once the workload stops. The loops read it themselves: a call to
 * wl_stopping() would put one more function on their stacks now and then.
 */
static volatile int stopping;
static pthread_barrier_t started;
/* Spin iterations per microsecond of CPU. */
static uint64_t iters_per_us;

static void set_labels(enum thread_id t)
{
	if (custom_labels_set_str("unwind.thread", thread_names[t]) ||
	    custom_labels_set_str("unwind.build", program_invocation_short_name))
		wl_die("unwind: custom_labels_set failed");
	tids[t] = wl_gettid();
}

/* ---- main: a fixed chain, two frames realigning the stack -------------------- */

WL_BURN uint64_t chain_burn(uint64_t x);
WL_BURN uint64_t chain_burn(uint64_t x)
{
	return wl_spin(iters_per_us * 1000, x);
}

/*
 * A dynamic allocation beside an over-aligned local: gcc realigns the stack
 * through a register that holds the CFA, saves that below its frame record
 * and describes the CFA as *(rbp - 8). The frame record lies 16 to 64 bytes
 * below the CFA (the padding, and a copy of the return address): rbp + 16
 * is never the caller's stack pointer.
 */
WL_BURN uint64_t chain_realign(uint64_t x, unsigned int n);
WL_BURN uint64_t chain_realign(uint64_t x, unsigned int n)
{
	volatile uint64_t aligned[8] __attribute__((aligned(64))) = {x};
	volatile char dyn[n];

	dyn[0] = (char)x;
	return chain_burn(aligned[0] + dyn[0]);
}

/* A frame addressed by the stack pointer: its caller is found only from a right CFA above. */
WL_BURN uint64_t chain_c(uint64_t x);
WL_BURN uint64_t chain_c(uint64_t x)
{
	volatile uint64_t pad[5] = {x, x >> 1, x >> 2, x >> 3, x >> 4};

	return chain_realign(x ^ pad[2], 1 + (unsigned int)(x & 15)) + pad[4];
}

/* Each round calls on 16 bytes lower than the last (of four): every padding size occurs. */
WL_BURN uint64_t chain_b(uint64_t x);
WL_BURN uint64_t chain_b(uint64_t x)
{
	for (unsigned int round = 0; !stopping; round++) {
		volatile char shift[16 * (round % 4) + 1];

		shift[0] = (char)round;
		x = chain_c(x + shift[0]);
	}
	return x;
}

WL_BURN uint64_t chain_a(uint64_t x);
WL_BURN uint64_t chain_a(uint64_t x)
{
	/* Over-aligned: the stack pointer is realigned, the CFA kept by the frame pointer. */
	volatile uint64_t aligned[8] __attribute__((aligned(64))) = {x};

	return chain_b(x + aligned[0]) ^ aligned[0];
}

/* ---- tiny: calls short enough that samples hit prologues and epilogues -------- */

WL_BURN uint64_t tiny_c(uint64_t x);
WL_BURN uint64_t tiny_c(uint64_t x)
{
	return wl_spin(4, x);
}

WL_BURN uint64_t tiny_b(uint64_t x, uint64_t y);
WL_BURN uint64_t tiny_b(uint64_t x, uint64_t y)
{
	volatile uint64_t pad[3] = {x, y, x + y};
	uint64_t r = tiny_c(x ^ pad[2]);

	return r + pad[0] * pad[1];
}

/* Many values live across the calls: every callee-saved register is pushed and popped. */
WL_BURN uint64_t tiny_a(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f);
WL_BURN uint64_t tiny_a(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f)
{
	uint64_t r = tiny_b(a, b);

	r = tiny_b(r ^ c, d) * a;
	r += tiny_c(r + e) * b;
	return r ^ c ^ d ^ e ^ f ^ (a * f);
}

WL_BURN uint64_t tiny_loop(uint64_t x);
WL_BURN uint64_t tiny_loop(uint64_t x)
{
	while (!stopping)
		for (int i = 0; i < 1000; i++)
			x = tiny_a(x, x >> 1, x >> 2, x >> 3, x >> 4, (uint64_t)i);
	return x;
}

static void *unwind_tiny_thread(void *arg)
{
	uint64_t sink;

	set_labels(T_TINY);
	pthread_barrier_wait(&started);
	sink = tiny_loop((uintptr_t)arg);
	__asm__ volatile("" : : "r"(sink));
	return NULL;
}

/* ---- signal: a handler that burns, interrupting a hot loop --------------------- */

/* CPU time between two SIGPROFs, and spent in the handler for each. */
#define SIGNAL_PERIOD_US  2000
#define SIGNAL_HANDLER_US 1000

static volatile uint64_t handler_sink;

WL_BURN uint64_t signal_burn(uint64_t iters, uint64_t x);
WL_BURN uint64_t signal_burn(uint64_t iters, uint64_t x)
{
	return wl_spin(iters, x);
}

static void on_sigprof(int sig)
{
	handler_sink = signal_burn(iters_per_us * SIGNAL_HANDLER_US, handler_sink + (uint64_t)sig);
}

WL_BURN uint64_t signal_loop(uint64_t x);
WL_BURN uint64_t signal_loop(uint64_t x)
{
	while (!stopping)
		x = wl_spin(1000, x);
	return x;
}

static void *unwind_signal_thread(void *arg)
{
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF};
	struct itimerspec period = {
		.it_interval = {.tv_nsec = SIGNAL_PERIOD_US * 1000},
		.it_value = {.tv_nsec = SIGNAL_PERIOD_US * 1000},
	};
	timer_t timer;
	uint64_t sink;

	set_labels(T_SIGNAL);
	sev._sigev_un._tid = tids[T_SIGNAL];
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) || timer_settime(timer, 0, &period, NULL))
		wl_die("unwind: timer: %s", strerror(errno));
	pthread_barrier_wait(&started);
	sink = signal_loop((uintptr_t)arg);
	timer_delete(timer);
	__asm__ volatile("" : : "r"(sink));
	return NULL;
}

/* ---- plt: calls into a shared library through the PLT ------------------------- */

WL_BURN uint64_t plt_loop(uint64_t x);
WL_BURN uint64_t plt_loop(uint64_t x)
{
	while (!stopping) {
		for (int i = 0; i < 10000; i++)
			x = unwind_lib_step(x);
		x = unwind_lib_work(x, 10000);
	}
	return x;
}

static void *unwind_plt_thread(void *arg)
{
	uint64_t sink;

	set_labels(T_PLT);
	pthread_barrier_wait(&started);
	sink = plt_loop((uintptr_t)arg);
	__asm__ volatile("" : : "r"(sink));
	return NULL;
}

/* ---- deep: recursion beyond the frame limit ----------------------------------- */

WL_BURN uint64_t deep_burn(uint64_t x);
WL_BURN uint64_t deep_burn(uint64_t x)
{
	while (!stopping)
		x = wl_spin(100000, x);
	return x;
}

WL_BURN uint64_t recurse(unsigned long depth, uint64_t x);
WL_BURN uint64_t recurse(unsigned long depth, uint64_t x)
{
	/* Used after the call: no tail call, no loop. */
	volatile uint64_t keep = x;

	if (!depth)
		return deep_burn(x);
	return recurse(depth - 1, x + 1) ^ keep;
}

static void *unwind_deep_thread(void *arg)
{
	uint64_t sink;

	set_labels(T_DEEP);
	pthread_barrier_wait(&started);
	sink = recurse(env.depth, (uintptr_t)arg);
	__asm__ volatile("" : : "r"(sink));
	return NULL;
}

/* ---- setup and report --------------------------------------------------------- */

static void *waiter_thread(void *arg)
{
	wl_wait(env.run.duration, true);
	stopping = 1;
	return NULL;
}

static void report_path(FILE *f, enum thread_id t)
{
	static const char *const paths[T_COUNT][4] = {
		[T_MAIN] = {"main", "chain_a", "chain_b"},
		[T_TINY] = {"unwind_tiny_thread", "tiny_loop"},
		[T_SIGNAL] = {"unwind_signal_thread", "signal_loop"},
		[T_PLT] = {"unwind_plt_thread", "plt_loop"},
		[T_DEEP] = {"unwind_deep_thread"},
	};

	fputc('[', f);
	for (size_t i = 0; i < 4 && paths[t][i]; i++)
		fprintf(f, "%s\"%s\"", i ? "," : "", paths[t][i]);
	if (t == T_DEEP) {
		for (unsigned long i = 0; i <= env.depth; i++)
			fputs(",\"recurse\"", f);
		fputs(",\"deep_burn\"", f);
	}
	fputc(']', f);
}

static void report_calls(FILE *f, enum thread_id t)
{
	/* Below each thread's path: caller, callee. */
	static const char *const calls[T_COUNT][8][2] = {
		[T_MAIN] = {{"chain_b", "chain_c"}, {"chain_c", "chain_realign"},
			    {"chain_realign", "chain_burn"}},
		[T_TINY] = {{"tiny_loop", "tiny_a"}, {"tiny_a", "tiny_b"}, {"tiny_a", "tiny_c"},
			    {"tiny_b", "tiny_c"}},
		[T_SIGNAL] = {{"signal_loop", "__restore_rt"}, {"__restore_rt", "on_sigprof"},
			      {"on_sigprof", "signal_burn"}},
		[T_PLT] = {{"plt_loop", "[.plt]"}, {"plt_loop", "[.plt.sec]"},
			   {"plt_loop", "unwind_lib_step"}, {"plt_loop", "unwind_lib_work"},
			   {"unwind_lib_work", "lib_burn"}},
	};

	fputc('[', f);
	for (size_t i = 0; i < 8 && calls[t][i][0]; i++)
		fprintf(f, "%s[\"%s\",\"%s\"]", i ? "," : "", calls[t][i][0], calls[t][i][1]);
	fputc(']', f);
}

static void report(void)
{
	FILE *f = wl_open_report(env.run.output);

	fprintf(f, "{\"pid\":%d,\"depth\":%lu,\"threads\":[", (int)getpid(), env.depth);
	for (int t = 0; t < T_COUNT; t++) {
		fprintf(f, "%s{\"tid\":%d,\"name\":\"%s\",\"entry\":\"%s\",\"labels\":", t ? "," : "",
			tids[t], thread_names[t], t == T_MAIN ? "main" : "thread");
		fprintf(f, "{\"unwind.thread\":\"%s\",\"unwind.build\":", thread_names[t]);
		wl_json_str(f, program_invocation_short_name);
		fputs("},\"path\":", f);
		report_path(f, t);
		fputs(",\"calls\":", f);
		report_calls(f, t);
		fputc('}', f);
	}
	fputs("]}\n", f);
	wl_close_report(f, env.run.output);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s [OPTION...]\n"
		   "  -D, --depth N       recursion depth of the deep thread (default 300)\n"
		   "  -d, --seconds N     stop after N seconds (default: when stdin closes)\n"
		   "  -o, --output FILE   report: pid, each thread's tid, labels and path\n",
		program_invocation_short_name);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"depth", required_argument, NULL, 'D'},
		{"seconds", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	static void *(*const entries[T_COUNT])(void *) = {
		[T_TINY] = unwind_tiny_thread,
		[T_SIGNAL] = unwind_signal_thread,
		[T_PLT] = unwind_plt_thread,
		[T_DEEP] = unwind_deep_thread,
	};
	struct sigaction sa = {.sa_handler = on_sigprof, .sa_flags = SA_RESTART};
	pthread_t threads[T_COUNT], waiter;
	uint64_t sink;
	int c, err;

	while ((c = getopt_long(argc, argv, "D:d:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'D':
			env.depth = wl_parse_u64(optarg, "depth");
			if (env.depth > UW_MAX_DEPTH)
				wl_die("unwind: depth above %d", UW_MAX_DEPTH);
			break;
		default:
			wl_run_option(&env.run, "unwind", c, optarg, usage);
		}
	}
	wl_install_stop_handlers();
	iters_per_us = wl_calibrate();
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL))
		wl_die("unwind: sigaction: %s", strerror(errno));

	set_labels(T_MAIN);
	pthread_barrier_init(&started, NULL, T_COUNT);
	for (int t = 0; t < T_COUNT; t++) {
		if (!entries[t])
			continue;
		err = pthread_create(&threads[t], NULL, entries[t], (void *)(uintptr_t)(t + 1));
		if (err)
			wl_die("unwind: pthread_create: %s", strerror(err));
	}
	pthread_barrier_wait(&started);
	report();
	err = pthread_create(&waiter, NULL, waiter_thread, NULL);
	if (err)
		wl_die("unwind: pthread_create: %s", strerror(err));
	wl_ready(program_invocation_short_name);

	sink = chain_a(0x9e3779b97f4a7c15ull);
	__asm__ volatile("" : : "r"(sink));
	for (int t = 0; t < T_COUNT; t++)
		if (entries[t])
			pthread_join(threads[t], NULL);
	pthread_join(waiter, NULL);
	return 0;
}

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers shared by the test workloads: CPU burning the compiler cannot remove,
 * clocks, stop handling, JSON output of arbitrary bytes.
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/*
 * A function the tests look for by name in sampled stacks: never inlined,
 * cloned or folded into an identical twin, so its symbol is its own.
 */
#ifdef __clang__
#define WL_BURN __attribute__((noinline, used))
#else
#define WL_BURN __attribute__((noipa, used))
#endif

/* The loop every burn function runs; the asm keeps each step alive. */
static inline __attribute__((always_inline)) uint64_t wl_spin(uint64_t iters, uint64_t x)
{
	for (uint64_t i = 0; i < iters; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* Spin iterations per microsecond of CPU on this machine, measured once. */
uint64_t wl_calibrate(void);

uint64_t wl_clock_ns(clockid_t clock);
/* Thread id, for reports (labelprof's "tid"). */
int wl_gettid(void);

/*
 * The run options the workloads spell the same way: -d SEC (stop after SEC
 * seconds; 0: until stopped), -w (stop at the end of stdin), -o FILE (the
 * report), -h (usage on stdout, exit 0).
 */
struct wl_run {
	double duration;
	bool wait_stdin;
	const char *output;
};

/* Takes getopt's c if it is a run option; any other option prints usage on stderr, exit 2. */
void wl_run_option(struct wl_run *run, const char *name, int c, const char *arg,
		   void (*usage)(FILE *f));
/* Fails on operands left after the options. */
void wl_no_operands(const char *name, int argc, char **argv);
/* "MIN[,MAX]" microseconds into min and max, 0 < MIN <= MAX (arg is cut at the comma). */
void wl_parse_interval(const char *name, char *arg, uint64_t *min_us, uint64_t *max_us);
/* A thread count, 1 .. max. */
unsigned int wl_parse_threads(const char *name, const char *arg, unsigned int max);

/* Fails with a message naming what went wrong. */
void wl_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
uint64_t wl_parse_u64(const char *s, const char *what);

/*
 * Stopping: SIGINT and SIGTERM set the flag; wl_wait() returns when the flag
 * is set, after seconds (> 0), or when stdin reaches EOF (if watch_stdin).
 */
bool wl_stopping(void);
void wl_request_stop(void);
void wl_install_stop_handlers(void);
void wl_wait(double seconds, bool watch_stdin);

/* True once stdin has reached end of file (does not block). */
bool wl_stdin_closed(void);

/* Path of another workload binary in the same directory as this one. */
void wl_sibling_path(const char *name, char *buf, size_t size);

/* Tells the tests the workload is set up: one line on stderr. */
void wl_ready(const char *name);

/*
 * JSON strings of arbitrary bytes: valid UTF-8 passes through, every byte
 * that is not part of a valid sequence becomes a lone surrogate \udcXX (what
 * Python's surrogateescape decodes back to the same byte).
 */
void wl_json_bytes(FILE *f, const void *buf, size_t len);
void wl_json_str(FILE *f, const char *s);

/* Opens the report file ("-" or NULL: stdout). */
FILE *wl_open_report(const char *path);
void wl_close_report(FILE *f, const char *path);

#endif /* WORKLOAD_H */

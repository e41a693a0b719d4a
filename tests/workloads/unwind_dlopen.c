// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwind_dlopen: code without frame pointers that appears after a profiler
 * has inspected the process. Built -O2 -fomit-frame-pointer like unwind_c;
 * it does not link the library it burns in, but dlopen()s it by path (-l)
 * once a line arrives on stdin, then starts one thread:
 *
 *   unwind_dlopen_thread → dlopen_loop → unwind_lib_work → lib_burn
 *
 * (unwind_lib_work reached through a pointer from dlsym()). The thread sets
 * and keeps the labels unwind.thread=dlopen and unwind.build=(the program's
 * name) through libcustomlabels, linked in: the process is labelled from its
 * start, so a profiler has no reason to look at it again but the new code.
 * The report (JSON, in unwind_c's form) says its pid, and the thread's tid,
 * entry, labels, path and calls; "ready" goes to stderr at startup, "loaded" once the
 * thread runs and the report is written. Stops when stdin closes or after
 * -d seconds.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "customlabels.h"
#include "workload.h"

typedef uint64_t (*lib_work_fn)(uint64_t x, uint64_t iters);

static struct {
	const char *library;
	struct wl_run run;
} env;

/* Read by the loop itself: a call to wl_stopping() would put a frame on its stack. */
static volatile int stopping;
static int loop_tid;
static pthread_barrier_t started;

WL_BURN uint64_t dlopen_loop(lib_work_fn work, uint64_t x);
WL_BURN uint64_t dlopen_loop(lib_work_fn work, uint64_t x)
{
	while (!stopping)
		x = work(x, 100000);
	return x;
}

static void *unwind_dlopen_thread(void *arg)
{
	uint64_t sink;

	if (custom_labels_set_str("unwind.thread", "dlopen") ||
	    custom_labels_set_str("unwind.build", program_invocation_short_name))
		wl_die("unwind_dlopen: custom_labels_set failed");
	loop_tid = wl_gettid();
	pthread_barrier_wait(&started);
	sink = dlopen_loop((lib_work_fn)arg, 0x9e3779b97f4a7c15ull);
	__asm__ volatile("" : : "r"(sink));
	return NULL;
}

/* Waits for one line on stdin, read byte by byte: wl_wait() reads the rest. */
static bool wait_line(void)
{
	char c;
	ssize_t n;

	do {
		n = read(0, &c, 1);
		if (n < 0 && errno != EINTR)
			wl_die("unwind_dlopen: read stdin: %s", strerror(errno));
		if (n == 0)
			return false;
	} while (n < 0 || c != '\n');
	return true;
}

static void report(void)
{
	FILE *f = wl_open_report(env.run.output);

	fprintf(f, "{\"pid\":%d,\"library\":", (int)getpid());
	wl_json_str(f, env.library);
	fprintf(f, ",\"threads\":[{\"tid\":%d,\"name\":\"dlopen\",\"entry\":\"thread\","
		   "\"labels\":{\"unwind.thread\":\"dlopen\",\"unwind.build\":",
		loop_tid);
	wl_json_str(f, program_invocation_short_name);
	fputs("},\"path\":[\"unwind_dlopen_thread\",\"dlopen_loop\"],"
	      "\"calls\":[[\"dlopen_loop\",\"unwind_lib_work\"],[\"unwind_lib_work\",\"lib_burn\"]]}]}\n",
	      f);
	wl_close_report(f, env.run.output);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s -l LIBRARY [OPTION...]\n"
		   "  -l, --library PATH  libunwind_lib to dlopen() once a line arrives on stdin\n"
		   "  -d, --seconds N     stop after N seconds (default: when stdin closes)\n"
		   "  -o, --output FILE   report: pid, the thread's tid, labels and path\n",
		program_invocation_short_name);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"library", required_argument, NULL, 'l'},
		{"seconds", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	pthread_t thread;
	void *lib, *work;
	int c, err;

	while ((c = getopt_long(argc, argv, "l:d:o:h", opts, NULL)) != -1) {
		if (c == 'l')
			env.library = optarg;
		else
			wl_run_option(&env.run, "unwind_dlopen", c, optarg, usage);
	}
	wl_no_operands("unwind_dlopen", argc, argv);
	if (!env.library)
		wl_die("unwind_dlopen: no --library");
	wl_install_stop_handlers();
	wl_ready(program_invocation_short_name);
	if (!wait_line())
		return 0;

	lib = dlopen(env.library, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		wl_die("unwind_dlopen: %s", dlerror());
	work = dlsym(lib, "unwind_lib_work");
	if (!work)
		wl_die("unwind_dlopen: %s", dlerror());
	pthread_barrier_init(&started, NULL, 2);
	err = pthread_create(&thread, NULL, unwind_dlopen_thread, work);
	if (err)
		wl_die("unwind_dlopen: pthread_create: %s", strerror(err));
	pthread_barrier_wait(&started);
	report();
	fprintf(stderr, "%s: loaded\n", program_invocation_short_name);
	fflush(stderr);

	wl_wait(env.run.duration, true);
	stopping = 1;
	pthread_join(thread, NULL);
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwind_cxx: the C++ side of unwind_c (same report, same labels), built
 * -O2 -fomit-frame-pointer by g++ and by clang++:
 *
 *   throw   unwind_throw_thread → throw_loop → throw_a → throw_b, which
 *           throws; throw_loop catches: most samples are in the C++ runtime
 *           (libstdc++, libgcc_s, the dynamic loader), unwinding
 *   inline  unwind_inline_thread → inline_loop → sort_batch, where std::sort
 *           and a lambda comparator are inlined, the rest of the sort is
 *           out-of-line template code
 *
 * Below the paths, the calls are the compilers' and the C++ runtime's: the
 * report's "calls" are empty. The main thread waits for stdin to close (or
 * -d seconds).
 */
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <getopt.h>
#include <pthread.h>
#include <unistd.h>
#include <vector>

#include "customlabels.h"
extern "C" {
#include "workload.h"
}

namespace {

enum thread_id { T_THROW, T_INLINE, T_COUNT };

const char *const thread_names[T_COUNT] = {"throw", "inline"};
const char *const paths[T_COUNT][2] = {
	{"unwind_throw_thread", "throw_loop"},
	{"unwind_inline_thread", "inline_loop"},
};

struct {
	double seconds;
	const char *output;
} env;

int tids[T_COUNT];
pthread_barrier_t started;

struct thrown {
	uint64_t value;
};

void set_labels(thread_id t)
{
	if (custom_labels_set_str("unwind.thread", thread_names[t]) ||
	    custom_labels_set_str("unwind.build", program_invocation_short_name))
		wl_die("unwind: custom_labels_set failed");
	tids[t] = wl_gettid();
}

} // namespace

/* C linkage: plain symbol names for the tests, the same in every build. */
extern "C" {

WL_BURN void throw_b(uint64_t x);
WL_BURN void throw_b(uint64_t x)
{
	throw thrown{wl_spin(64, x)};
}

WL_BURN uint64_t throw_a(uint64_t x);
WL_BURN uint64_t throw_a(uint64_t x)
{
	volatile uint64_t keep[2] = {x, x >> 7};

	throw_b(x ^ keep[1]);
	return keep[0];
}

WL_BURN uint64_t throw_loop(uint64_t x);
WL_BURN uint64_t throw_loop(uint64_t x)
{
	while (!wl_stopping()) {
		try {
			x = throw_a(x);
		} catch (const thrown &e) {
			x += e.value;
		}
	}
	return x;
}

WL_BURN uint64_t sort_batch(std::vector<uint64_t> &v, uint64_t x);
WL_BURN uint64_t sort_batch(std::vector<uint64_t> &v, uint64_t x)
{
	for (auto &e : v)
		e = x = wl_spin(2, x);
	std::sort(v.begin(), v.end(), [](uint64_t a, uint64_t b) { return (a ^ 0x5555) < (b ^ 0x5555); });
	return v[v.size() / 2];
}

WL_BURN uint64_t inline_loop(uint64_t x);
WL_BURN uint64_t inline_loop(uint64_t x)
{
	std::vector<uint64_t> v(4096);

	while (!wl_stopping())
		x += sort_batch(v, x);
	return x;
}

void *unwind_throw_thread(void *arg);
void *unwind_throw_thread(void *arg)
{
	set_labels(T_THROW);
	pthread_barrier_wait(&started);
	uint64_t sink = throw_loop((uintptr_t)arg);
	__asm__ volatile("" : : "r"(sink));
	return nullptr;
}

void *unwind_inline_thread(void *arg);
void *unwind_inline_thread(void *arg)
{
	set_labels(T_INLINE);
	pthread_barrier_wait(&started);
	uint64_t sink = inline_loop((uintptr_t)arg);
	__asm__ volatile("" : : "r"(sink));
	return nullptr;
}

} // extern "C"

static void report()
{
	FILE *f = wl_open_report(env.output);

	fprintf(f, "{\"pid\":%d,\"threads\":[", (int)getpid());
	for (int t = 0; t < T_COUNT; t++) {
		fprintf(f,
			"%s{\"tid\":%d,\"name\":\"%s\",\"entry\":\"thread\","
			"\"labels\":{\"unwind.thread\":\"%s\",\"unwind.build\":",
			t ? "," : "", tids[t], thread_names[t], thread_names[t]);
		wl_json_str(f, program_invocation_short_name);
		fprintf(f, "},\"path\":[\"%s\",\"%s\"],\"calls\":[]}", paths[t][0], paths[t][1]);
	}
	fputs("]}\n", f);
	wl_close_report(f, env.output);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"seconds", required_argument, nullptr, 'd'},
		{"output", required_argument, nullptr, 'o'},
		{"help", no_argument, nullptr, 'h'},
		{},
	};
	void *(*const entries[T_COUNT])(void *) = {unwind_throw_thread, unwind_inline_thread};
	pthread_t threads[T_COUNT];
	int c, err;

	while ((c = getopt_long(argc, argv, "d:o:h", opts, nullptr)) != -1) {
		switch (c) {
		case 'd':
			env.seconds = (double)wl_parse_u64(optarg, "seconds");
			break;
		case 'o':
			env.output = optarg;
			break;
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"Usage: %s [-d SECONDS] [-o REPORT]\n", program_invocation_short_name);
			return c == 'h' ? 0 : 2;
		}
	}
	wl_install_stop_handlers();
	pthread_barrier_init(&started, nullptr, T_COUNT + 1);
	for (int t = 0; t < T_COUNT; t++) {
		err = pthread_create(&threads[t], nullptr, entries[t], (void *)(uintptr_t)(t + 1));
		if (err)
			wl_die("unwind: pthread_create: %s", strerror(err));
	}
	pthread_barrier_wait(&started);
	report();
	wl_ready(program_invocation_short_name);
	wl_wait(env.seconds, true);
	for (int t = 0; t < T_COUNT; t++)
		pthread_join(threads[t], nullptr);
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What a syscall costs: getppid(2) in a loop for a while, on one thread.
 * bench/run runs it with nothing attached and beside labelprof, whose mmap
 * hook runs on every syscall's exit. Prints one JSON object.
 *   bench_syscall SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0, start, end;
	unsigned long calls = 0, i;

	if (seconds <= 0) {
		fprintf(stderr, "usage: bench_syscall SECONDS\n");
		return 2;
	}
	start = now();
	do {
		/* the clock is read once per batch, not per call */
		for (i = 0; i < 10000; i++)
			syscall(SYS_getppid);
		calls += i;
		end = now();
	} while (end - start < seconds);
	printf("{\"calls\":%lu,\"seconds\":%.6f,\"ns_per_call\":%.2f}\n", calls, end - start,
	       (end - start) * 1e9 / calls);
	return 0;
}

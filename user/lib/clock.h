/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Clock readings in nanoseconds. */
#ifndef LABELPROF_CLOCK_H
#define LABELPROF_CLOCK_H

#include <time.h>
#include <linux/types.h>

#define NS_PER_S 1000000000ull

static inline __u64 clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* The monotonic clock: deadlines, intervals and durations are measured with it. */
static inline __u64 now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

#endif /* LABELPROF_CLOCK_H */

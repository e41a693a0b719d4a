/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The reason an operation failed, for callers that pass a buffer for one. */
#ifndef LABELPROF_MSG_H
#define LABELPROF_MSG_H

#include <stddef.h>

/* Formats into buf (len bytes); nothing when buf is NULL or len 0. */
void msg__set(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The ending of a counted noun: "%llu sample%s", n, msg__s(n) gives "1 sample", "2 samples". */
static inline const char *msg__s(unsigned long long n)
{
	return n == 1 ? "" : "s";
}

#endif /* LABELPROF_MSG_H */

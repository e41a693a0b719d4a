/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Directories of files the agent writes: their creation, and retention: which
 * of a series of files (profiles in the output directory, intervals in the
 * spool) to remove so that the rest stay within a total size and a maximum
 * age. The oldest always go first, so what is removed is a prefix of the
 * series.
 */
#ifndef LABELPROF_AGENT_RETENTION_H
#define LABELPROF_AGENT_RETENTION_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct retention_entry {
	char *name; /* NULL in series that are not files */
	__u64 time_ns;
	__u64 bytes;
};

/*
 * e: n entries, oldest first. Returns how many of the oldest to remove so that
 * the others hold at most max_bytes (0: no limit) and none is older than
 * max_age_ns at now_ns (0: no limit).
 */
size_t retention__select(const struct retention_entry *e, size_t n, __u64 max_bytes,
			 __u64 max_age_ns, __u64 now_ns);

/*
 * Applies it to the regular files of dir whose names start with prefix
 * (oldest by modification time, then by name; now_ns is wall-clock time).
 * Returns how many were removed, or -errno.
 */
int retention__apply_dir(const char *dir, const char *prefix, __u64 max_bytes, __u64 max_age_ns,
			 __u64 now_ns);

/* mkdir -p: creates path and its missing parents with mode. 0 or -errno. */
int retention__mkdirs(const char *path, mode_t mode);

#endif /* LABELPROF_AGENT_RETENTION_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A sampling session: the sampler, the process tracker, the symbolizer and
 * the profile being filled, wired together the same way for every command
 * that samples (record, top, agent). Records from the ring buffer are
 * aggregated into the current profile; process events go to the tracker and
 * the symbolizer.
 */
#ifndef LABELPROF_SESSION_H
#define LABELPROF_SESSION_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "sampling/sampler.h"

struct profile;
struct procs;
struct symbolizer;

struct session {
	struct sampler *sampler;
	struct procs *procs;
	struct symbolizer *symbolizer;
	struct profile *profile; /* filled until session__take_profile */
	__u64 received;		 /* sample records, since the session opened */
	__u64 bad_records;	 /* records too short or malformed */
	/* One of sampler_opts.pids exited since the flag was last cleared. */
	bool target_exited;
	/* private */
	const pid_t *targets;
	size_t target_count;
	size_t profile_max_bytes;
};

/*
 * Checks the system, loads the BPF program and starts tracking processes;
 * sampling starts with session__start. profile_max_bytes: 0 for the
 * default. Returns NULL with a message in err.
 */
struct session *session__open(const struct sampler_opts *opts, size_t profile_max_bytes, char *err,
			      size_t err_len);
/* Inspects the running processes, then starts sampling. 0, or -errno with a message in err. */
int session__start(struct session *s, char *err, size_t err_len);
/* Waits up to timeout_ms for records and handles them. Returns 0 or -errno. */
int session__poll(struct session *s, int timeout_ms);
/*
 * Returns the profile filled so far and starts a new one (NULL when that
 * fails: the old one stays). The caller frees it, after symbolizing it.
 */
struct profile *session__take_profile(struct session *s);
/* Stops sampling and handles what the ring buffer still holds. */
void session__stop(struct session *s);
void session__close(struct session *s);

#endif /* LABELPROF_SESSION_H */

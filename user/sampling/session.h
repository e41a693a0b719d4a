/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A sampling session: the sampler, the process registry, the symbolizer,
 * the unwind tables and the profile being filled, wired together the same
 * way for every command that samples (record, top, agent). Records from the
 * ring buffer are aggregated into the current profile; every other record
 * goes to the registry.
 */
#ifndef LABELPROF_SESSION_H
#define LABELPROF_SESSION_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "sampling/sampler.h"

struct labelsel;
struct profile;
struct registry;
struct symbolizer;
struct unwind;

struct session {
	struct sampler *sampler;
	struct registry *registry; /* every process the session knows */
	struct symbolizer *symbolizer;
	struct unwind *unwind;	  /* NULL: frame pointers only */
	struct profile *profile;  /* filled until session__take_profile */
	__u64 received;		  /* sample records, since the session opened */
	/*
	 * Of those: with at least one label, a label read that faulted, a
	 * label cut short, a malformed label. Counted with received, so never
	 * more: the BPF counters (lp_counters) count samples when they are
	 * taken, those still in the ring buffer or dropped there too.
	 */
	__u64 with_labels, read_faults, truncated, malformed;
	__u64 bad_records;	  /* records too short or malformed */
	/* One of sampler_opts.pids exited since the flag was last cleared. */
	bool target_exited;
	/* private */
	const pid_t *targets;
	size_t target_count;
	size_t profile_max_bytes;
	const struct labelsel *labels;
};

struct session_opts {
	size_t profile_max_bytes; /* 0: the default */
	/* symbol tables, DWARF and the lines it gave (symbolizer_opts.max_symbol_bytes); 0: default */
	size_t symbol_memory;
	/*
	 * Load the kernel symbols (a second or more) before sampling starts, so
	 * that the first profile is symbolized on time and covers its interval.
	 */
	bool preload_kernel_symbols;
	/* 0-terminated: signals that ask for a stop besides SIGINT and SIGTERM */
	const int *stop_signals;
	/* the label keys profiles keep (labelsel.h); NULL: all. Must outlive the session. */
	const struct labelsel *labels;
};

/*
 * How every sampling command starts. Checks privileges and the kernel
 * (sampler__check_system), that each pid of sampler runs and is a process,
 * not one of its threads (the BPF filter matches processes), and that the
 * cgroup exists; loads the BPF program and inspects the running processes;
 * makes SIGINT and SIGTERM ask for a stop (session__stop_requested); then
 * starts sampling. opts may be NULL. Returns NULL with a message in err.
 */
struct session *session__begin(const struct sampler_opts *sampler, const struct session_opts *opts,
			       char *err, size_t err_len);
/* Whether a stop signal came since the first session__begin (signals are process-wide). */
bool session__stop_requested(void);
/* Waits up to timeout_ms for records and handles them. Returns 0 or -errno. */
int session__poll(struct session *s, int timeout_ms);
/*
 * Returns the profile filled so far and starts a new one (NULL when that
 * fails: the old one stays). The caller frees it, after symbolizing it.
 */
struct profile *session__take_profile(struct session *s);
/*
 * The label selection of the profiles session__take_profile starts from now
 * on (NULL: every label); the current profile keeps the one it began with.
 */
void session__set_labels(struct session *s, const struct labelsel *labels);
/* Stops sampling and handles what the ring buffer still holds. */
void session__stop(struct session *s);
void session__close(struct session *s);

#endif /* LABELPROF_SESSION_H */

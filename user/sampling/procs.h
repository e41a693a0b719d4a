/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The process table: which processes exist, which label form each publishes,
 * and keeping the BPF recipes map in step with exec, exit and dlopen.
 */
#ifndef LABELPROF_PROCS_H
#define LABELPROF_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "labelprof.h"

struct sampler;
struct procs;

struct procs_stats {
	__u64 tracked;	     /* processes in the table now */
	__u64 labelled;	     /* of those, publishing labels */
	__u64 labelled_seen; /* processes found publishing labels, exited ones included */
	__u64 resolves;	     /* inspections run */
	__u64 retries;	     /* inspections repeated because a TLS descriptor was still lazy */
	__u64 errors;	     /* inspections that failed (unreadable or malformed files, ...) */
};

struct procs *procs__new(struct sampler *s, unsigned int max_processes, bool verbose);
void procs__free(struct procs *p);

/*
 * Inspects the given processes, or every process in /proc when count is 0,
 * and returns once their unwind tables are loaded.
 */
int procs__scan(struct procs *p, const pid_t *pids, size_t count);
/* Handles an EXEC, EXIT, UNKNOWN_PID or EXEC_MAP record from the sampler. */
void procs__handle_event(struct procs *p, const struct lp_proc_event *e);
/* Runs the inspections that are due (retries, follow-ups after exec). */
void procs__tick(struct procs *p);
/* Milliseconds until the next inspection is due (0: one is), -1 if none is scheduled. */
int procs__next_due_ms(const struct procs *p);

void procs__stats(const struct procs *p, struct procs_stats *out);
struct unwind_stats;
/* The unwind tables' figures; false when the sampler walks frame pointers only. */
bool procs__unwind_stats(const struct procs *p, struct unwind_stats *out);

/* Whether process pid has a recipe that reads any label source (custom labels, OTel, Go). */
bool procs__labelled(struct procs *p, pid_t pid);

/*
 * The process pid belongs to (pid itself for a process, not one of its
 * threads), from /proc/PID/status; needs no table. -ESRCH when it does not
 * run (gone, or a zombie), other -errno when the status cannot be read.
 */
pid_t procs__tgid(pid_t pid);

#endif /* LABELPROF_PROCS_H */

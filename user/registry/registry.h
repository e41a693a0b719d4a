/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The process registry (docs/design.md section 2): the one table of the
 * processes a session knows. It owns each process's life: the scan at the
 * start, exec and exit records, the samples' hints, the follow-up
 * inspections after an exec, forgetting. An inspection reads the process's
 * memory map once and hands it to every module (registry/module.h), then
 * installs the recipe the modules filled. Not thread-safe.
 */
#ifndef LABELPROF_REGISTRY_H
#define LABELPROF_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "labelprof.h"
#include "registry/module.h"

struct profile_label;
struct symbolizer;
struct unwind;

/* Where recipes go: the sampler's maps (sampling/sampler.h), or a test's. */
struct registry_target {
	int (*set_recipe)(void *ctx, pid_t pid, const struct lp_recipe *recipe);
	__u64 (*exec_seq)(void *ctx, pid_t pid);
	bool (*samples)(void *ctx, pid_t pid); /* the filter takes the process */
	bpf_counters_fn bpf_counters;	       /* NULL: no BPF counters (registry/module.h) */
	void *ctx;
};

/* Modules in one registry, at most. */
#define REGISTRY_MAX_MODULES 16

struct registry_opts {
	struct registry_target target;
	struct symbolizer *symbolizer;		  /* NULL: no snapshots */
	struct unwind *unwind;			  /* NULL: frame pointers only */
	unsigned int max_processes;		  /* beyond, processes go untracked */
	const struct proc_module *const *modules; /* NULL-terminated, in order */
	bool describe_only;			  /* for inspect and labels: no sampling */
	bool verbose;
};

struct registry_stats {
	__u64 tracked;	     /* processes in the table now */
	__u64 labelled;	     /* of those, publishing labels */
	__u64 labelled_seen; /* processes found publishing labels, exited ones included */
	__u64 resolves;	     /* inspections run */
	__u64 retries;	     /* inspections repeated because a label source was not ready */
	__u64 errors;	     /* inspections a module failed (unreadable or malformed files, ...) */
	__u64 maps_reads;    /* memory maps read for inspections: one each */
	/*
	 * Execs handled while sampling, and the time from each (or from the
	 * start of sampling, if later) to its new image's recipe in BPF: the
	 * samples in between have none, and so no labels. In nanoseconds.
	 */
	__u64 execs;
	__u64 exec_delay_sum_ns;
	__u64 exec_delay_max_ns;
};

/* Returns NULL with -errno in *err (-ENOMEM, or a module's). */
struct registry *registry__new(const struct registry_opts *opts, int *err);
void registry__free(struct registry *r);

/*
 * Inspects the given processes, or every process in /proc when count is 0.
 * Processes started less than the follow-ups' span before get them too.
 */
int registry__scan(struct registry *r, const pid_t *pids, size_t count);
/* Sampling starts: an exec before it delays no sample's inspection (registry_stats). */
void registry__sampling_started(struct registry *r);
/* Handles a record other than a sample: lifecycle, hints, or a module's own. */
void registry__handle_record(struct registry *r, const void *rec, size_t size);
/* Runs the inspections that are due (follow-ups). */
void registry__tick(struct registry *r);
/* Milliseconds until the next inspection is due (0: one is), -1 if none is scheduled. */
int registry__next_due_ms(const struct registry *r);

/*
 * What a profile's resolver asks of a record's process (profile/profile.h):
 * the labels the modules add to all its records, the naming of the labels
 * they read, the symbolizer snapshot of its image for its stacks. A process
 * the registry does not know yet (a child forked without exec inherits its
 * parent's recipe in BPF and sends no hint) is inspected at its snapshot.
 */
size_t registry__extra_labels(struct registry *r, pid_t pid, const struct profile_label **labels);
bool registry__label(struct registry *r, pid_t pid, struct profile_label *l);
__u32 registry__snapshot(struct registry *r, pid_t pid);
/*
 * A record's user stack (n frames in ips, room for cap) with the frames a
 * runtime's BPF walker added put in place by its module; the new length.
 */
size_t registry__frames(struct registry *r, pid_t pid, __u64 *ips, size_t n, size_t cap);

/*
 * For inspect and labels: inspects process pid now with every module, as
 * a session would, and returns its recipe and the label sources' diagnosis
 * (proc/tls.h). Returns 0 when a module found labels or none failed,
 * -ESRCH when the process is gone, else the first module's error (-EAGAIN:
 * a label library is not relocated yet, -EACCES, ...).
 */
struct tls_diag;
int registry__inspect_one(struct registry *r, pid_t pid, struct lp_recipe *recipe,
			  struct tls_diag *diag);
/* What each module found in process pid (proc_module.describe), in the modules' order. */
void registry__describe(struct registry *r, pid_t pid, const struct proc_report *rep);
/* Each module's counters (proc_module.counters) into out (room for cap): how many. */
size_t registry__counters(struct registry *r, struct proc_counters *out, size_t cap);

/* Whether a module found labels in process pid. */
bool registry__labelled(struct registry *r, pid_t pid);
void registry__stats(const struct registry *r, struct registry_stats *out);

#endif /* LABELPROF_REGISTRY_H */

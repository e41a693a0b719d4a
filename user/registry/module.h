/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The interface between the process registry and what learns something from
 * a process (docs/design.md section 2): label sources (sources/: custom
 * labels, the OpenTelemetry contexts, Go labels), language runtimes
 * (runtime/<name>/), the unwind tables and the symbolizer. The registry
 * reads a process's memory map once per event and hands the same view to
 * every module; each module recognises the process, fills its part of the
 * BPF recipe, names the frames its BPF walker added, and forgets the
 * process when its image ends. Each says what it found in a process
 * (describe, for inspect) and what it counted (counters, for record -v and
 * the agent's metrics), so that no command names a module. A module keeps
 * no pid table: its per-process state is a block the registry allocates
 * and passes in.
 */
#ifndef LABELPROF_REGISTRY_MODULE_H
#define LABELPROF_REGISTRY_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "labelprof.h"

struct maps;
struct profile_label;
struct registry;
struct symbolizer;
struct tls_diag;
struct tls_process;
struct unwind;

/* Why a process is inspected. */
enum proc_cause {
	PROC_SCAN = 0,	       /* running when sampling started */
	PROC_EXEC = 1,	       /* a new image */
	PROC_UNKNOWN = 2,      /* a sample came without a recipe, or without labels */
	PROC_MAPPED = 3,       /* code was mapped or unmapped since the last inspection */
	PROC_FOLLOW_UP = 4,    /* after an exec or a hint, while a label library may be loading */
	PROC_FIRST_SAMPLE = 5, /* a sample of a process not known yet (a forked child) */
};

/* How a process's image ends. */
enum proc_end {
	PROC_END_EXEC = 0, /* it exec'd: the next inspection sees the new image */
	PROC_END_EXIT = 1, /* it exited: its pid may be reused */
};

/*
 * The per-CPU counters of the session's BPF map named map (one entry of
 * size bytes of __u64 a CPU: a walker's), summed over CPUs: 0 or -errno.
 */
typedef int (*bpf_counters_fn)(void *ctx, const char *map, void *out, size_t size);

/* What a module may use, for the life of the registry. */
struct registry_env {
	struct symbolizer *symbolizer; /* NULL: no symbolization */
	struct unwind *unwind;	       /* NULL: frame pointers only */
	bpf_counters_fn bpf_counters;  /* NULL: no BPF (inspect) */
	void *bpf_ctx;
	/* One process looked at for inspect and labels: a runtime module needs no symbolizer. */
	bool describe_only;
	bool verbose;
};

/* One inspection of one process. */
struct proc_view {
	pid_t pid;
	enum proc_cause cause;
	struct maps *maps; /* every mapping, read once for this inspection (maps__get to keep) */
	__u64 exec_seq;	   /* the exec count BPF had when the maps were read */
	__u64 exec_vm;	   /* pages of executable mappings then (mm->exec_vm); 0: unknown */
	bool sampled;	   /* the sampler's filter takes this process */
	bool named;	   /* named to the registry's scan (record -p) */
	const struct registry_env *env;
	/* private: registry__tls */
	struct registry *registry;
	struct tls_process *tls;
	int tls_err;
	bool tls_tried;
};

/* What an inspection found: OR'd into the non-negative value inspect returns. */
enum proc_found {
	PROC_LABELS = 1 << 0,  /* the process publishes labels this module reads */
	PROC_SETTLED = 1 << 1, /* ... for good: no follow-up inspection is needed */
	/*
	 * Not done: what the module reads may change without new code mapped,
	 * so the process's samples keep asking (its recipe is not quiet).
	 */
	PROC_PENDING = 1 << 2,
};

/* One of a module's counters (proc_module.counters). */
struct proc_counter {
	const char *name; /* the agent's metric labelprof_NAME, a counter's with _total */
	const char *text; /* what it counts, after its value in record's line */
	__u64 value;
	bool gauge;   /* a level now, not a count since the session started */
	bool problem; /* record shows the line without -v when this is not 0 */
	bool clause;  /* starts a clause of record's line: "; " before it, not ", " */
};

#define PROC_MAX_COUNTERS 16

/* A module's counters: record -v's line "labelprof: TITLE: VALUE TEXT, ...". */
struct proc_counters {
	const char *title;
	size_t n;
	struct proc_counter c[PROC_MAX_COUNTERS];
};

/*
 * What describe writes with: a string as a JSON value (escaped, or null),
 * and a line of text whose bytes that are not printable are escaped (the
 * caller's writers, format/fmt.h).
 */
struct proc_report {
	FILE *out;
	bool json; /* one member of the process's object per module, each ",\"KEY\":VALUE" */
	void (*json_str)(FILE *out, const char *s);
	void (*text_line)(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
};

struct proc_module {
	const char *name;
	size_t state_size; /* per-process state, zeroed when the process is first seen */
	/* Module-wide state in *mod. 0, -ENODEV when it has no part in this session, -errno. */
	int (*open)(const struct registry_env *env, void **mod);
	void (*close)(void *mod);
	/*
	 * Looks at v and fills this module's part of recipe (which starts empty
	 * at every inspection). Returns enum proc_found flags, or -errno:
	 * -ESRCH (the process is gone), -EAGAIN (not ready: a follow-up will
	 * look again), others are counted as errors.
	 */
	int (*inspect)(void *mod, void *state, struct proc_view *v, struct lp_recipe *recipe);
	/*
	 * The process's image ended (may be NULL). The registry zeroes the state
	 * afterwards (frees it after PROC_END_EXIT).
	 */
	void (*end)(void *mod, void *state, pid_t pid, enum proc_end how);

	/* Optional, for the profile's resolver (profile/profile.h). */
	size_t (*extra_labels)(void *mod, void *state, const struct profile_label **labels);
	bool (*label)(void *mod, void *state, struct profile_label *l); /* false: left out */
	/* The symbolizer snapshot of the process's current image; 0: none. */
	__u32 (*snapshot)(void *mod, void *state, pid_t pid);
	/*
	 * A record's user stack, leaf first, that holds frames this module's
	 * BPF walker added after the native ones (a runtime's): rewritten in
	 * place (n frames, room for cap), the new length returned.
	 */
	size_t (*frames)(void *mod, void *state, pid_t pid, __u64 *ips, size_t n, size_t cap);

	/*
	 * Optional, for inspect: what the last inspection found in the process
	 * (state), as lines indented by two spaces or, for --json, members of
	 * the process's object; nothing when the module found nothing to say.
	 */
	void (*describe)(void *mod, void *state, pid_t pid, const struct proc_report *r);
	/*
	 * Optional, for record -v and the agent's metrics: the module's
	 * counters over the session (its BPF walker's too). 0 or -errno.
	 */
	int (*counters)(void *mod, struct proc_counters *out);

	/* Records of this type (enum lp_event_type) that the module handles; 0: none. */
	__u32 record_type;
	void (*handle_record)(void *mod, const void *rec, size_t size);
};

/*
 * The mapped ELF objects of v's process as the label sources see them
 * (proc/tls.h), inspected once per view and once per file; NULL with *err
 * set when they cannot be read. diag is the view's shared diagnosis.
 */
struct tls_process *registry__tls(struct proc_view *v, struct tls_diag **diag, int *err);

#endif /* LABELPROF_REGISTRY_MODULE_H */

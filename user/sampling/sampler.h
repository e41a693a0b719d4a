/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The BPF side as seen from userspace: load, attach, poll, configure. */
#ifndef LABELPROF_SAMPLER_H
#define LABELPROF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "labelprof.h"

/*
 * Limits of the options beside bpf/labelprof.h's LP_MAX_* and LP_DEFAULT_*.
 * Plain numbers, so that help texts can print them (__stringify).
 */
#define SAMPLER_MAX_FREQ_HZ	  100000
#define SAMPLER_DEFAULT_FREQ_HZ	  99
#define SAMPLER_AGENT_FREQ_HZ	  19 /* the agent's default: it samples all day */
#define SAMPLER_MIN_RINGBUF_BYTES 4096
#define SAMPLER_MAX_RINGBUF_MIB	  1024
/* The default ring buffer's size is bounded by these (sampler.c says why). */
#define SAMPLER_RINGBUF_MIN_KIB	      256
#define SAMPLER_RINGBUF_MAX_MIB	      64
#define SAMPLER_DEFAULT_MAX_PROCESSES 65536
#define SAMPLER_UNWIND_MAX_OBJECTS    65536 /* objects with unwind rows in BPF at once */
/*
 * Processes with mapping lists in BPF where the kernel needs them preallocated
 * (before 6.1): 8 KiB each. The stacks of processes beyond are walked by
 * frame pointers. A pid filter sizes them as it sizes itself.
 */
#define SAMPLER_UNWIND_PREALLOC_PROCS 4096

/* Options with bounds, for errors to name (sampler_opt__flag). */
enum sampler_opt {
	SAMPLER_OPT_NONE,
	SAMPLER_OPT_FREQ,
	SAMPLER_OPT_MAX_LABELS,
	SAMPLER_OPT_MAX_KEY_LEN,
	SAMPLER_OPT_MAX_VALUE_LEN,
	SAMPLER_OPT_RINGBUF,
	SAMPLER_OPT_UNWIND_MEMORY,
};

/* What to sample and how; start from SAMPLER_OPTS_INIT, check with sampler_opts__check. */
struct sampler_opts {
	unsigned int freq_hz; /* samples per second per CPU */
	enum lp_filter_mode filter_mode;
	const pid_t *pids; /* LP_FILTER_PIDS */
	size_t pid_count;
	const char *cgroup_path; /* LP_FILTER_CGROUP: a cgroup v2 directory */
	bool follow_children;	 /* LP_FILTER_PIDS: children forked later join the filter */
	bool read_labels;
	bool kernel_stacks;
	bool user_stacks;
	unsigned int max_labels;
	unsigned int max_key_len;
	unsigned int max_value_len;
	size_t ringbuf_bytes;	    /* 0: sized from the frequency; rounded up to a power of two */
	unsigned int max_processes; /* 0: SAMPLER_DEFAULT_MAX_PROCESSES */
	enum lp_unwind_mode unwind_mode; /* of user stacks; LP_UNWIND_AUTO (0) by default */
	unsigned int unwind_memory_mib;	 /* unwind rows in BPF; 0: UNWIND_DEFAULT_MEMORY_MIB */
	/* preallocate the mapping lists, as sampler__open does where the kernel needs it */
	bool unwind_prealloc;
	bool verbose;	      /* labelprof's own diagnostics (-v) */
	bool libbpf_messages; /* libbpf's own messages too (-vv) */
};

/* Every process, labels and both stacks, the default label limits. */
#define SAMPLER_OPTS_INIT(hz)                                                                      \
	{                                                                                          \
		.freq_hz = (hz), .read_labels = true, .kernel_stacks = true, .user_stacks = true,  \
		.max_labels = LP_DEFAULT_MAX_LABELS, .max_key_len = LP_DEFAULT_MAX_KEY_LEN,        \
		.max_value_len = LP_DEFAULT_MAX_VALUE_LEN,                                         \
	}

/*
 * The one check of the options against the sampler's limits: frequency,
 * label limits (each, and labels x (4 + key + value) <= LP_MAX_LABEL_BYTES),
 * ring buffer size. Returns 0, or -EINVAL with the option at fault in *bad
 * and what is wrong with it in err ("at most 64"), for the caller to name.
 */
int sampler_opts__check(const struct sampler_opts *o, enum sampler_opt *bad, char *err,
			size_t err_len);
/* The command-line flag of an option sampler_opts__check named: "--max-labels". */
const char *sampler_opt__flag(enum sampler_opt opt);

/* Called for every ring-buffer record (a struct lp_event_hdr first). */
typedef int (*sampler_event_fn)(void *ctx, const void *data, size_t size);

struct sampler;

/* Privileges and kernel features: 0, or -errno with what is missing in err. */
int sampler__check_system(char *err, size_t err_len);

/* Kernel features the BPF program needs beside BTF, each probed on its own. */
enum sampler_kernel_feature {
	SAMPLER_KF_RINGBUF,
	SAMPLER_KF_LOOP,
	SAMPLER_KF_LIFECYCLE,
	/*
	 * Without it (before 6.1) the sampler preallocates the mapping lists of
	 * CFI unwinding: SAMPLER_UNWIND_PREALLOC_PROCS processes at most.
	 */
	SAMPLER_KF_RUNTIME_HASH,
};

/* What the feature is, with the kernel version that brought it: "BPF ring buffer (5.8)". */
const char *sampler__kernel_feature_title(enum sampler_kernel_feature f);
/*
 * Whether this kernel has feature f: 1, or 0 with what is missing in why
 * when there is more to say than the title, or -errno when the probe itself
 * failed. Needs the privileges sampler__check_system checks.
 */
int sampler__probe_kernel(enum sampler_kernel_feature f, char *why, size_t why_len);

/*
 * Checks privileges and kernel features, loads the BPF program and attaches
 * its process-lifecycle programs. Sampling starts with sampler__start, so
 * recipes for the processes already running can be installed in between. On
 * failure returns NULL with a message in err.
 */
struct sampler *sampler__open(const struct sampler_opts *opts, sampler_event_fn fn, void *ctx,
			      char *err, size_t err_len);
/* Starts sampling on every online CPU; 0, or -errno with a message in err. */
int sampler__start(struct sampler *s, char *err, size_t err_len);
/* Stops sampling; what was sampled stays in the ring buffer for sampler__drain. */
void sampler__stop(struct sampler *s);
void sampler__close(struct sampler *s);

/* Waits up to timeout_ms for records and hands them to fn: count, or -errno. */
int sampler__poll(struct sampler *s, int timeout_ms);
/* Hands over every record already in the ring buffer without waiting. */
int sampler__drain(struct sampler *s);

int sampler__set_recipe(struct sampler *s, __u32 tgid, const struct lp_recipe *r);
/* The process's exec count as BPF saw it; read it before inspecting the process. */
__u64 sampler__exec_seq(struct sampler *s, __u32 tgid);

/* Whether libbpf's own messages go to stderr (otherwise they repeat ours in other words). */
void sampler__libbpf_messages(bool verbose);

/*
 * Reads the label set every thread of tgid has now, without stopping the
 * process: a BPF task iterator applies recipe r to each thread (loaded for
 * this call alone, beside no sampler). fn gets one LP_EVENT_SAMPLE record per
 * thread, without stacks; a non-zero return stops and is returned. Returns 0,
 * or -errno with a message in err. verbose: libbpf's own messages
 * (threads.c).
 */
int sampler__read_threads(__u32 tgid, const struct lp_recipe *r, bool verbose, sampler_event_fn fn,
			  void *ctx, char *err, size_t err_len);

/*
 * The same, loaded once and read as often as wanted (labelprof labels
 * --watch): open returns NULL with errno and a message in err; each read
 * walks the threads as they are then.
 */
struct sampler_threads;
struct sampler_threads *sampler__threads_open(__u32 tgid, const struct lp_recipe *r, bool verbose,
					      char *err, size_t err_len);
int sampler__threads_read(struct sampler_threads *t, sampler_event_fn fn, void *ctx, char *err,
			  size_t err_len);
void sampler__threads_close(struct sampler_threads *t);

/* Whether the pid filter lets tgid's samples through (always, without a pid filter). */
bool sampler__samples_tgid(struct sampler *s, __u32 tgid);

struct unwind_maps;
/* The unwind tables' maps: 0, or -ENOENT when the sampler walks frame pointers only. */
int sampler__unwind_maps(struct sampler *s, struct unwind_maps *m);

/* Counters summed over CPUs. */
int sampler__read_counters(struct sampler *s, struct lp_counters *out);
/*
 * The counters of the per-CPU map named map (a walker's, one entry of size
 * bytes a CPU: registry/module.h), summed over CPUs: 0, -ENOENT (no such
 * map), -EINVAL (another size), -errno.
 */
int sampler__read_map_counters(struct sampler *s, const char *map, void *out, size_t size);
/* Number of CPUs sampled. */
int sampler__cpu_count(const struct sampler *s);

#endif /* LABELPROF_SAMPLER_H */

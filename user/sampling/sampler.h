/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The BPF side as seen from userspace: load, attach, poll, configure. */
#ifndef LABELPROF_SAMPLER_H
#define LABELPROF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "labelprof.h"

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
	unsigned int max_labels; /* 0: defaults */
	unsigned int max_key_len;
	unsigned int max_value_len;
	size_t ringbuf_bytes;	    /* 0: default, rounded up to a power of two */
	unsigned int max_processes; /* 0: 65536 */
	bool verbose;		    /* libbpf's own messages */
};

/* Called for every ring-buffer record (a struct lp_event_hdr first). */
typedef int (*sampler_event_fn)(void *ctx, const void *data, size_t size);

struct sampler;

/* Privileges and kernel features: 0, or -errno with what is missing in err. */
int sampler__check_system(char *err, size_t err_len);

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
int sampler__delete_recipe(struct sampler *s, __u32 tgid);
/* The process's exec count as BPF saw it; read it before inspecting the process. */
__u64 sampler__exec_seq(struct sampler *s, __u32 tgid);
int sampler__add_pid(struct sampler *s, __u32 tgid);

/*
 * Reads the label set every thread of tgid has now, without stopping the
 * process: a BPF task iterator applies recipe r to each thread (loaded for
 * this call alone, beside no sampler). fn gets one LP_EVENT_SAMPLE record per
 * thread, without stacks; a non-zero return stops and is returned. Returns 0,
 * or -errno with a message in err. verbose: libbpf's own messages.
 */
int sampler__read_threads(__u32 tgid, const struct lp_recipe *r, bool verbose, sampler_event_fn fn,
			  void *ctx, char *err, size_t err_len);

/* Counters summed over CPUs. */
int sampler__read_counters(struct sampler *s, struct lp_counters *out);
/* Number of CPUs sampled. */
int sampler__cpu_count(const struct sampler *s);

#endif /* LABELPROF_SAMPLER_H */

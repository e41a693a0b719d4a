/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Aggregation of sample records into a profile: one entry per (pid, tid,
 * comm, label set, stack, address-space snapshot), with a count and the OR of
 * the records' status bits. Label sets and stacks are interned.
 *
 * Records are validated against the size the ring buffer reports; their own
 * lengths are never trusted. A user stack ends before its first zero address
 * (where a frame-pointer chain ends). Labels follow the reader rules: of the
 * labels with one key, the one of the first source (enum lp_label_source:
 * custom labels, OTel thread, Go pprof, OTel process; docs/design.md section
 * 1) wins, then the first occurrence; order has no meaning (a set is kept
 * sorted by key bytes, shorter first on a common prefix). Keys the label
 * selection drops are left out before anything else sees the set.
 *
 * Memory is bounded by profile_opts.max_bytes: past it, samples that would
 * need a new label set or stack are counted without them (PROFILE_ST_DROPPED);
 * past twice that, samples that would need a new entry are only counted in
 * profile_stats.dropped. Not thread-safe.
 */
#ifndef LABELPROF_PROFILE_H
#define LABELPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "labelprof.h"

struct labelsel;
struct symbolizer;

/* Status bit added by the profile, beyond enum lp_sample_status. */
#define PROFILE_ST_DROPPED (1u << 31) /* labels and stack dropped: memory limit */

struct profile_opts {
	size_t max_bytes; /* 0: 256 MiB */
	/* the label keys to keep (labelsel.h); NULL: all. Must outlive the profile. */
	const struct labelsel *labels;
};

struct profile_label {
	const unsigned char *key;
	const unsigned char *value;
	__u32 key_len;
	__u32 value_len;
	__u32 source; /* enum lp_label_source */
};

/*
 * Turns labels as BPF read them into labels as written (OTel key indices to
 * names, ids to hex...). For each record, extra is called first: it returns
 * the labels the process adds to every record (they may be none), and the
 * bytes it hands out stay valid until its next call; then label is called
 * for each label whose source is not LP_SRC_CUSTOM_LABELS, and may point its
 * key and value elsewhere, or return false: the label is left out.
 */
struct profile_resolver {
	size_t (*extra)(void *ctx, __u32 pid, const struct profile_label **labels);
	bool (*label)(void *ctx, __u32 pid, struct profile_label *l);
	/*
	 * The symbolizer snapshot of pid's current image, for records with a
	 * user stack (NULL, or 0 returned: the stack stays unsymbolized).
	 */
	__u32 (*snapshot)(void *ctx, __u32 pid);
	/*
	 * A user stack (n frames, room for cap) that ends with a runtime's
	 * frames (their top bits set), rewritten in place: the new length.
	 * NULL: such frames stay as they are.
	 */
	size_t (*frames)(void *ctx, __u32 pid, __u64 *ips, size_t n, size_t cap);
	void *ctx;
};

/* One aggregated sample, as handed to writers. Pointers live as long as the profile. */
struct profile_sample {
	__u32 pid; /* tgid */
	__u32 tid;
	const char *comm; /* comm_len bytes, NUL-terminated, any other byte value */
	size_t comm_len;
	const struct profile_label *labels; /* sorted by key, keys unique */
	size_t label_count;
	const __u64 *kstack; /* kernel IPs, leaf first */
	size_t kstack_len;
	const __u64 *ustack; /* user IPs, leaf first */
	size_t ustack_len;
	__u64 count;
	__u32 status;	 /* OR of enum lp_sample_status and PROFILE_ST_* over the samples */
	__u32 snapshot;	 /* symbolizer snapshot of the pid's address space; 0: none */
	__u32 label_set; /* interned ids: equal ids mean equal label sets */
	__u32 stack;	 /* equal ids mean equal (kstack, ustack) */
};

struct profile_stats {
	__u64 samples;		   /* records accepted */
	__u64 samples_with_labels; /* accepted with at least one label */
	__u64 rejected;		   /* records refused as malformed */
	__u64 dropped;		   /* accepted but not aggregated: twice the memory limit */
	size_t entries;
	size_t label_sets;
	size_t stacks;
	size_t bytes; /* memory held */
};

struct profile;

/* sym (may be NULL) is told about every pid and stack seen; opts may be NULL. */
struct profile *profile__new(struct symbolizer *sym, const struct profile_opts *opts);
void profile__free(struct profile *p);
/* Labels of the records added from now on go through r (copied; NULL: none). */
void profile__set_resolver(struct profile *p, const struct profile_resolver *r);

/*
 * Adds one LP_EVENT_SAMPLE record of size bytes (as the ring buffer reports
 * it). Returns 0; -EINVAL if the record is malformed (counted in rejected);
 * -ENOSPC if it was only counted (dropped); -ENOMEM.
 */
int profile__add_sample(struct profile *p, const void *rec, size_t size);

/* Calls fn for every aggregated sample in insertion order; stops at and returns fn's non-zero. */
typedef int (*profile_sample_fn)(const struct profile_sample *s, void *ctx);
int profile__for_each(const struct profile *p, profile_sample_fn fn, void *ctx);

void profile__stats(const struct profile *p, struct profile_stats *st);

#endif /* LABELPROF_PROFILE_H */

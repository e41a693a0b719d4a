/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * OpenTelemetry labels as written (docs/design.md section 1): BPF copies a
 * thread context's attributes (the last entry of each key index) with their
 * one-byte key index as key, and its trace and span ids as raw bytes; this
 * names the keys through the process context's threadlocal.attribute_key_map,
 * writes the ids in hex (W3C trace context form) and adds the process
 * context's resource attributes to every sample of the process (source
 * LP_SRC_OTEL_PROCESS). An attribute whose key index the map does not name is
 * left out, and asks for a new read of the context (at once after a read that
 * found none, else at most every OTEL_REFRESH_MIN_MS). Contexts are read once per process and checked again
 * at most every OTEL_RECHECK_MS. Whoever keeps a process's state (registry/)
 * hands it in. Not thread-safe.
 */
#ifndef LABELPROF_OTEL_LABELS_H
#define LABELPROF_OTEL_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "profile/profile.h"
#include "proc/otel_ctx.h"

/* How often a process's context header is checked for a new publication. */
#define OTEL_RECHECK_MS 1000
/* How often a process without a context is looked at again. */
#define OTEL_ABSENT_RECHECK_MS 5000
/* The soonest a context is read again after a key index it did not name. */
#define OTEL_REFRESH_MIN_MS 100

struct maps;

/* What is known of one process's context; zeroed before first use. */
struct otel_labels_proc {
	__u32 pid;
	bool stale;		     /* a key index no map named: read again */
	__u64 check_ns;		     /* when the context was last looked for or checked */
	struct otel_ctx *ctx;	     /* NULL: none found */
	struct profile_label *extra; /* the resource attributes as labels */
	size_t nr_extra;
	/*
	 * The last read found no context: the first attribute no map names is
	 * the sign the process published one since, read at once.
	 */
	bool read_on_miss;
	/* What the read before the last held: labels of the record being resolved may point into it. */
	struct otel_ctx *old_ctx;
	struct profile_label *old_extra;
};

/* The names every process's labels share (unnamed key indices, hex ids). */
struct otel_labels;

struct otel_labels *otel_labels__new(void);
void otel_labels__free(struct otel_labels *o);

/*
 * Reads pid's context (its mapping found in maps; NULL: in /proc/PID/maps),
 * dropping what p held: a new process, or a new image after exec.
 */
void otel_labels__proc_init(struct otel_labels_proc *p, __u32 pid, const struct maps *maps);
void otel_labels__proc_clear(struct otel_labels_proc *p);
/* p's context, checked or read again when it is time to; NULL: none. */
const struct otel_ctx *otel_labels__proc_ctx(struct otel_labels_proc *p);

/*
 * The two halves of a profile_resolver for a record of process p (NULL: a
 * process without a context): each OTel label named and its ids written in
 * hex (false: an attribute the key map does not name, to be left out), then
 * the labels p adds to every record. A record's labels stay valid through
 * the one read of the context its resolution may cause.
 */
size_t otel_labels__extra(struct otel_labels_proc *p, const struct profile_label **labels);
bool otel_labels__label(struct otel_labels *o, struct otel_labels_proc *p, struct profile_label *l);

/* A resolver for the records of process p alone (p must outlive its use). */
void otel_labels__resolver(struct otel_labels *o, struct otel_labels_proc *p,
			   struct profile_resolver *r);

#endif /* LABELPROF_OTEL_LABELS_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * OpenTelemetry labels as written (docs/design.md section 1): BPF copies a
 * thread context's attributes with their one-byte key index as key and its
 * trace and span ids as raw bytes; this names the keys through the process
 * context's threadlocal.attribute_key_map, writes the ids in hex (W3C trace
 * context form) and adds the process context's resource attributes to every
 * sample of the process (source LP_SRC_OTEL_PROCESS). A key index the map
 * does not name is written OTEL_UNNAMED_KEY_PREFIX and its number, and asks
 * for a new read of the context. Contexts are read once per process and
 * checked again at most every OTEL_RECHECK_MS. Not thread-safe.
 */
#ifndef LABELPROF_OTEL_LABELS_H
#define LABELPROF_OTEL_LABELS_H

#include <linux/types.h>

#include "profile/profile.h"
#include "proc/otel_ctx.h"

#define OTEL_UNNAMED_KEY_PREFIX "otel.key."
/* How often a process's context header is checked for a new publication. */
#define OTEL_RECHECK_MS 1000
/* How often a process without a context is looked at again. */
#define OTEL_ABSENT_RECHECK_MS 5000
/* The soonest a context is read again after a key index it did not name. */
#define OTEL_REFRESH_MIN_MS 100

struct otel_labels;

struct otel_labels *otel_labels__new(void);
void otel_labels__free(struct otel_labels *o);

/* Fills r with the resolver that profiles use (profile__set_resolver). */
void otel_labels__resolver(struct otel_labels *o, struct profile_resolver *r);

/* pid exec'd or exited: what was read of it is dropped. */
void otel_labels__forget(struct otel_labels *o, __u32 pid);

/* pid's process context as last read, reading it now if it never was; NULL: none. */
const struct otel_ctx *otel_labels__ctx(struct otel_labels *o, __u32 pid);

#endif /* LABELPROF_OTEL_LABELS_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What code a frame runs, and every name the profile formats give it: one
 * row per kind, which the writers consult to mark a frame and the readers
 * to take the mark back. Adding a runtime is adding its kind before
 * FRAME_KERNEL and its row in frame_kind.c (and, for a colour of its own,
 * its page kind in user/format/html/flamegraph.js); no format file names one.
 *
 * A frame stores its kind (sym_frame, sp_location) and, apart, whether it
 * is the kernel's: that flag says which address space the address is in,
 * as the mappings' own kernel flag does, while a runtime's frame is a token
 * in no mapping at all. So FRAME_KERNEL is never stored; it is the row of
 * the marks that the formats give a kernel frame in place of its kind's.
 */
#ifndef LABELPROF_FRAME_KIND_H
#define LABELPROF_FRAME_KIND_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/types.h>

enum frame_kind {
	FRAME_NATIVE = 0, /* machine code at its address */
	/* a runtime's function: the address is a token, not an address */
	FRAME_PYTHON,
	FRAME_JAVA,
	FRAME_JS,
	FRAME_KERNEL, /* the row of kernel frames: see above */
	FRAME_KINDS,
};

/* A kind's names; NULL (or "") where a format does not mark the kind. */
struct frame_kind_row {
	const char *name;	     /* what the kind is called */
	const char *json;	     /* the JSON frame's "kind" */
	const char *folded;	     /* folded: the suffix of each function's name */
	const char *report;	     /* report: the suffix of each frame in a stack */
	const char *pprof_mapping;   /* pprof: the pseudo path of the mapping of all such frames */
	const char *otlp_frame_type; /* OTLP: the profile.frame.type attribute */
	unsigned int html_kind;	     /* HTML: the page's kind (flamegraph.js: colour, name) */
};

extern const struct frame_kind_row frame_kinds[FRAME_KINDS];

/*
 * The stored kind of kind: native for one this version does not know, and for
 * FRAME_KERNEL (a kernel frame stores native and its kernel flag).
 */
static inline enum frame_kind frame_kind__known(__u32 kind)
{
	return kind < FRAME_KERNEL ? (enum frame_kind)kind : FRAME_NATIVE;
}

/* The row a format marks a frame with: the kernel's for a kernel frame, else its kind's. */
static inline enum frame_kind frame_kind__of(bool kernel, __u32 kind)
{
	return kernel ? FRAME_KERNEL : frame_kind__known(kind);
}

/*
 * The kind named name (len bytes) in a format: true and *kind, or false
 * when no row has that name there.
 */
bool frame_kind__by_json(const void *name, size_t len, enum frame_kind *kind);
bool frame_kind__by_pprof_mapping(const void *name, size_t len, enum frame_kind *kind);
bool frame_kind__by_otlp_frame_type(const void *name, size_t len, enum frame_kind *kind);

#endif /* LABELPROF_FRAME_KIND_H */

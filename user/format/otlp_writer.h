/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The OTLP profiles writer's state, shared by its two halves: the dictionary
 * (output_otlp_dict.c: the tables samples point into) and the request
 * (output_otlp.c: resources, profiles and samples). Included by those only.
 *
 * Every step sets w->err on failure and does nothing once it is set; a
 * function returning an index returns 0 then.
 */
#ifndef LABELPROF_OTLP_WRITER_H
#define LABELPROF_OTLP_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "format/otlp.h"
#include "lib/frame_kind.h"

struct symprof;

#define PROF(name)   opentelemetry__proto__profiles__v1development__##name##__descriptor
#define COMMON(name) opentelemetry__proto__common__v1__##name##__descriptor
#define MSG(p)	     ((ProtobufCMessage *)(p))

enum table_kind {
	TAB_MAPPING,
	TAB_LOCATION,
	TAB_FUNCTION,
	TAB_LINK,
	TAB_ATTRIBUTE,
	TAB_STACK,
	TAB_COUNT,
};
/* A table of messages interned on their encoding: keys' string i encodes entries[i]. */
struct table {
	struct symprof *keys;
	void **entries;
	size_t cap;
};

/* What a label set gives every sample that carries it. */
struct set_info {
	bool done;
	bool has_thread_id, has_thread_name; /* labels with those keys: they win */
	__u32 link;
	__u32 first, count; /* attribute indexes in writer.set_attrs */
};

struct writer {
	const struct symprof *sp;
	unsigned int extra_labels;
	otlp_request *req;
	otlp_dictionary *dict;
	struct symprof *strings; /* the string table, on escaped bytes */
	struct table tab[TAB_COUNT];
	/* symprof id -> dictionary index; 0: not computed yet */
	__u32 *string_idx, *mapping_idx, *function_idx, *location_idx, *stack_idx;
	struct set_info *sets;
	__u32 *set_attrs;
	size_t set_attrs_len, set_attrs_cap;
	__u32 kernel_mapping;	       /* for kernel frames in no mapping; 0: not made yet */
	__u32 frame_type[FRAME_KINDS]; /* by kind, its profile.frame.type; 0: not made yet */
	unsigned char *buf;	       /* scratch: escaped strings and encodings */
	size_t buf_cap;
	int err; /* sticky: every step returns 0 once it is set */
};

void *otlp_writer__calloc(struct writer *w, size_t n, size_t size);
void *otlp_writer__msg_new(struct writer *w, const ProtobufCMessageDescriptor *d);
/* w->buf with room for n bytes */
unsigned char *otlp_writer__reserve(struct writer *w, size_t n);
/* A malloc'ed copy of the escaped bytes, for a string field of the tree. */
char *otlp_writer__escaped_copy(struct writer *w, const void *p, size_t n);
otlp_any_value *otlp_writer__string_value(struct writer *w, const void *bytes, size_t n);
otlp_any_value *otlp_writer__int_value(struct writer *w, __s64 i);

/*
 * The dictionary of w->req and what builds it (w->sp set), freed with
 * otlp_writer__dict_free whatever point building reached.
 */
int otlp_writer__dict_new(struct writer *w);
void otlp_writer__dict_free(struct writer *w);
/* The string table, pointing into w->strings until otlp_writer__dict_free. */
int otlp_writer__dict_strings(struct writer *w);

/* Indexes in the string table, the attribute table, the stack table. */
__u32 otlp_writer__cstring(struct writer *w, const char *s);
/* A new attribute key = value (taking value) in the attribute table. */
__u32 otlp_writer__attribute(struct writer *w, __u32 key, otlp_any_value *value);
__u32 otlp_writer__stack(struct writer *w, __u32 id);
/* The attributes and link of label set id, computed once. */
const struct set_info *otlp_writer__set_info(struct writer *w, __u32 id);

#endif /* LABELPROF_OTLP_WRITER_H */

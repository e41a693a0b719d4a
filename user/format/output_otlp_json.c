// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A message tree of the OTLP writer (output_otlp.c) printed in OTLP's JSON
 * mapping: proto3's JSON mapping with OTLP's exceptions (trace and span ids
 * in hex, 64-bit integers as strings), driven by the protobuf-c descriptors (docs/design.md section 5).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "format/otlp.h"
#include "format/pb.h"

static void json_string(FILE *f, const char *s)
{
	/* every string of the tree went through escape(): valid UTF-8 */
	putc_unlocked('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\') {
			putc_unlocked('\\', f);
			putc_unlocked(c, f);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
		} else {
			putc_unlocked(c, f);
		}
	}
	putc_unlocked('"', f);
}

/* Ids are hex in OTLP JSON; other bytes base64 (RFC 4648, padded). */
static void json_bytes(FILE *f, const ProtobufCFieldDescriptor *fd, const ProtobufCBinaryData *b)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char two[2];
	size_t i;

	putc_unlocked('"', f);
	if (!strcmp(fd->name, "trace_id") || !strcmp(fd->name, "span_id") ||
	    !strcmp(fd->name, "profile_id")) {
		for (i = 0; i < b->len; i++) {
			pb__hex(b->data + i, 1, two);
			fwrite_unlocked(two, 1, 2, f);
		}
	} else {
		for (i = 0; i < b->len; i += 3) {
			__u32 v = b->data[i] << 16 | (i + 1 < b->len ? b->data[i + 1] << 8 : 0) |
				  (i + 2 < b->len ? b->data[i + 2] : 0);

			putc_unlocked(b64[v >> 18], f);
			putc_unlocked(b64[(v >> 12) & 63], f);
			putc_unlocked(i + 1 < b->len ? b64[(v >> 6) & 63] : '=', f);
			putc_unlocked(i + 2 < b->len ? b64[v & 63] : '=', f);
		}
	}
	putc_unlocked('"', f);
}

/* Size of one element in a repeated field; 0: a type the OTLP schema does not use. */
static size_t json_elem_size(ProtobufCType type)
{
	switch (type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_BOOL:
		return 4;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(ProtobufCMessage *);
	default:
		return 0;
	}
}

static bool json_is_default(const ProtobufCFieldDescriptor *fd, const void *p)
{
	static const unsigned char zero[8];

	if (fd->type == PROTOBUF_C_TYPE_STRING)
		return !**(char *const *)p;
	if (fd->type == PROTOBUF_C_TYPE_BYTES)
		return !((const ProtobufCBinaryData *)p)->len;
	return !memcmp(p, zero, json_elem_size(fd->type));
}

static int json_value(FILE *f, const ProtobufCFieldDescriptor *fd, const void *p)
{
	double d;

	switch (fd->type) {
	case PROTOBUF_C_TYPE_INT32:
		fprintf(f, "%" PRId32, *(const int32_t *)p);
		return 0;
	case PROTOBUF_C_TYPE_UINT32:
		fprintf(f, "%" PRIu32, *(const uint32_t *)p);
		return 0;
	/* 64-bit integers are strings: JavaScript numbers are doubles */
	case PROTOBUF_C_TYPE_INT64:
		fprintf(f, "\"%" PRId64 "\"", *(const int64_t *)p);
		return 0;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		fprintf(f, "\"%" PRIu64 "\"", *(const uint64_t *)p);
		return 0;
	case PROTOBUF_C_TYPE_BOOL:
		fputs_unlocked(*(const protobuf_c_boolean *)p ? "true" : "false", f);
		return 0;
	case PROTOBUF_C_TYPE_DOUBLE:
		d = *(const double *)p;
		if (isfinite(d))
			fprintf(f, "%.17g", d);
		else
			fputs_unlocked(isnan(d) ? "\"NaN\""
				       : d > 0	? "\"Infinity\""
						: "\"-Infinity\"",
				       f);
		return 0;
	case PROTOBUF_C_TYPE_STRING:
		json_string(f, *(char *const *)p);
		return 0;
	case PROTOBUF_C_TYPE_BYTES:
		json_bytes(f, fd, p);
		return 0;
	case PROTOBUF_C_TYPE_MESSAGE:
		return otlp_json__print(f, *(const ProtobufCMessage *const *)p);
	default:
		return -EINVAL;
	}
}

/* A field name in lowerCamelCase, as the JSON mapping requires. */
static void json_name(FILE *f, const char *name)
{
	putc_unlocked('"', f);
	for (; *name; name++) {
		if (*name == '_' && name[1]) {
			name++;
			putc_unlocked(*name >= 'a' && *name <= 'z' ? *name - 'a' + 'A' : *name, f);
		} else {
			putc_unlocked(*name, f);
		}
	}
	fputs_unlocked("\":", f);
}

/* Fields with their default value are left out (proto3); a set oneof member is not. */
int otlp_json__print(FILE *f, const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	const char *base = (const char *)m;
	bool first = true;
	int err = 0;
	unsigned int i;

	putc_unlocked('{', f);
	for (i = 0; i < d->n_fields && !err; i++) {
		const ProtobufCFieldDescriptor *fd = &d->fields[i];
		bool repeated = fd->label == PROTOBUF_C_LABEL_REPEATED;
		const char *p = base + fd->offset;
		size_t n = 1, k;

		if (repeated) {
			n = *(const size_t *)(base + fd->quantifier_offset);
			p = *(const char *const *)p;
			if (!n)
				continue;
		} else if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			if (*(const uint32_t *)(base + fd->quantifier_offset) != fd->id)
				continue;
		} else if (json_is_default(fd, p)) {
			continue;
		}
		if (!first)
			putc_unlocked(',', f);
		first = false;
		json_name(f, fd->name);
		if (repeated)
			putc_unlocked('[', f);
		for (k = 0; k < n && !err; k++) {
			if (k)
				putc_unlocked(',', f);
			err = json_value(f, fd, p + k * json_elem_size(fd->type));
		}
		if (repeated)
			putc_unlocked(']', f);
	}
	putc_unlocked('}', f);
	return err;
}

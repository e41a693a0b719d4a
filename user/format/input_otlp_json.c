// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * OTLP JSON reader: a request in OTLP's JSON mapping (what
 * output__write_otlp_json writes, and what OTLP/HTTP exporters send as
 * application/json) is transcoded into the binary protobuf encoding, walking
 * the message descriptors, and then read by the binary reader
 * (input_otlp.c), so that one set of checks and one mapping serve both.
 *
 * The JSON mapping is proto3's with OTLP's exceptions: field names in
 * lowerCamelCase or as in the .proto; 64-bit integers as strings or
 * numbers; bytes in base64 (standard or URL-safe, padded or not), except
 * trace_id, span_id and profile_id in hex; null for a default value;
 * unknown fields skipped. Repeated scalars are encoded unpacked, which
 * protobuf decoders accept as well as packed.
 *
 * Nothing recurses: open messages are a stack as deep as the JSON reader
 * allows, and a message's length prefix is inserted before its bytes once
 * it ends.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/input.h"
#include "format/json.h"
#include "format/otlp.h"
#include "format/pb.h"

#define WIRE_VARINT 0
#define WIRE_64BIT  1
#define WIRE_LEN    2

struct frame {
	const ProtobufCMessageDescriptor *d;
	const ProtobufCFieldDescriptor *array; /* the repeated field being read; NULL: members */
	size_t start;			       /* offset of the message's first byte in out */
	bool first, first_element;
};

struct transcoder {
	struct json j;
	unsigned char *out;
	size_t len, cap;
	struct frame stack[JSON_MAX_DEPTH];
	unsigned int depth;
};

static int reserve(struct transcoder *t, size_t n)
{
	if (n > PB_MAX_INFLATED - t->len)
		return json__fail(&t->j, t->j.pos, "the protobuf encoding would exceed %lu bytes",
				  PB_MAX_INFLATED);
	return json__reserve(&t->j, &t->out, &t->cap, t->len + n, 1);
}

static size_t varint_len(__u64 v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void put_varint_at(unsigned char *o, __u64 v)
{
	while (v >= 0x80) {
		*o++ = (v & 0x7f) | 0x80;
		v >>= 7;
	}
	*o = v;
}

static int put_varint(struct transcoder *t, __u64 v)
{
	int err = reserve(t, 10);

	if (err)
		return err;
	put_varint_at(t->out + t->len, v);
	t->len += varint_len(v);
	return 0;
}

static int put_tag(struct transcoder *t, const ProtobufCFieldDescriptor *fd, unsigned int wire)
{
	return put_varint(t, (__u64)fd->id << 3 | wire);
}

static int put_fixed64(struct transcoder *t, __u64 v)
{
	int err = reserve(t, 8), i;

	if (err)
		return err;
	for (i = 0; i < 8; i++)
		t->out[t->len++] = v >> (8 * i);
	return 0;
}

static int put_bytes(struct transcoder *t, const unsigned char *b, size_t n)
{
	int err = put_varint(t, n) ?: reserve(t, n);

	if (err)
		return err;
	memcpy(t->out + t->len, b, n);
	t->len += n;
	return 0;
}

/* Whether the JSON key in t->j.str names the field: as in the .proto or in lowerCamelCase. */
static bool name_matches(const struct transcoder *t, const char *name)
{
	const unsigned char *s = t->j.str, *end = s + t->j.str_len;
	size_t n = strlen(name);

	if (n == t->j.str_len && !memcmp(name, s, n))
		return true;
	/* as output_otlp.c writes it: "_x" becomes "X" */
	for (; *name && s < end; name++, s++) {
		if (*name == '_' && name[1]) {
			name++;
			if (*s != (*name >= 'a' && *name <= 'z' ? *name - 'a' + 'A' : *name))
				return false;
		} else if (*s != (unsigned char)*name) {
			return false;
		}
	}
	return !*name && s == end;
}

static const ProtobufCFieldDescriptor *field_by_key(const struct transcoder *t,
						    const ProtobufCMessageDescriptor *d)
{
	unsigned int i;

	for (i = 0; i < d->n_fields; i++)
		if (name_matches(t, d->fields[i].name))
			return &d->fields[i];
	return NULL;
}

/* Base64 (RFC 4648, either alphabet, padding optional) in t->j.str, decoded in place. */
static bool base64_decode(struct transcoder *t, size_t *n)
{
	unsigned char *s = t->j.str;
	size_t len = t->j.str_len, i, o = 0, bits = 0;
	__u32 acc = 0;

	while (len && s[len - 1] == '=')
		len--;
	if (t->j.str_len - len > 2 || len % 4 == 1)
		return false;
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];
		int v = c >= 'A' && c <= 'Z'   ? c - 'A'
			: c >= 'a' && c <= 'z' ? c - 'a' + 26
			: c >= '0' && c <= '9' ? c - '0' + 52
			: c == '+' || c == '-' ? 62
			: c == '/' || c == '_' ? 63
					       : -1;

		if (v < 0)
			return false;
		acc = acc << 6 | v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			s[o++] = acc >> bits;
		}
	}
	*n = o;
	return true;
}

static bool is_hex_id(const ProtobufCFieldDescriptor *fd)
{
	return !strcmp(fd->name, "trace_id") || !strcmp(fd->name, "span_id") ||
	       !strcmp(fd->name, "profile_id");
}

static int put_bytes_field(struct transcoder *t, const ProtobufCFieldDescriptor *fd)
{
	size_t at, n;
	int err;

	if (json__peek(&t->j) != '"')
		return json__wrong_type(&t->j, fd->name, "a string");
	at = t->j.pos;
	err = json__string(&t->j);
	if (err)
		return err;
	if (is_hex_id(fd)) {
		n = t->j.str_len / 2;
		if (t->j.str_len % 2 || !pb__unhex((const char *)t->j.str, t->j.str_len, t->j.str))
			return json__fail(&t->j, at, "\"%s\" must be hex digits", fd->name);
	} else if (!base64_decode(t, &n)) {
		return json__fail(&t->j, at, "\"%s\" must be base64", fd->name);
	}
	return put_tag(t, fd, WIRE_LEN) ?: put_bytes(t, t->j.str, n);
}

/* An integer of the field's type, in range, as its varint (int32: sign-extended). */
static int put_integer(struct transcoder *t, const ProtobufCFieldDescriptor *fd)
{
	__u64 v, max_pos, max_neg;
	size_t at;
	bool neg;
	int err;

	json__peek(&t->j);
	at = t->j.pos;
	switch (fd->type) {
	case PROTOBUF_C_TYPE_INT32:
		max_pos = INT32_MAX;
		max_neg = (__u64)INT32_MAX + 1;
		break;
	case PROTOBUF_C_TYPE_INT64:
		max_pos = INT64_MAX;
		max_neg = (__u64)INT64_MAX + 1;
		break;
	case PROTOBUF_C_TYPE_UINT32:
		max_pos = UINT32_MAX;
		max_neg = 0;
		break;
	default: /* uint64, fixed64 */
		max_pos = UINT64_MAX;
		max_neg = 0;
	}
	err = json__integer(&t->j, fd->name, &neg, &v);
	if (err)
		return err;
	if ((neg && v > max_neg) || (!neg && v > max_pos))
		return json__fail(&t->j, at, "\"%s\" is out of range", fd->name);
	if (neg)
		v = -v;
	if (fd->type == PROTOBUF_C_TYPE_FIXED64)
		return put_tag(t, fd, WIRE_64BIT) ?: put_fixed64(t, v);
	return put_tag(t, fd, WIRE_VARINT) ?: put_varint(t, v);
}

/* One value of field fd: a scalar is written, a message is opened (pushed). */
static int put_value(struct transcoder *t, const ProtobufCFieldDescriptor *fd)
{
	union {
		double d;
		__u64 u;
	} num;
	bool b;
	int err;

	switch (fd->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return put_integer(t, fd);
	case PROTOBUF_C_TYPE_BOOL:
		err = json__bool(&t->j, fd->name, &b);
		return err ?: put_tag(t, fd, WIRE_VARINT) ?: put_varint(t, b);
	case PROTOBUF_C_TYPE_DOUBLE:
		err = json__double(&t->j, fd->name, &num.d);
		return err ?: put_tag(t, fd, WIRE_64BIT) ?: put_fixed64(t, num.u);
	case PROTOBUF_C_TYPE_STRING:
		if (json__peek(&t->j) != '"')
			return json__wrong_type(&t->j, fd->name, "a string");
		err = json__string(&t->j);
		return err ?: put_tag(t, fd, WIRE_LEN) ?: put_bytes(t, t->j.str, t->j.str_len);
	case PROTOBUF_C_TYPE_BYTES:
		return put_bytes_field(t, fd);
	case PROTOBUF_C_TYPE_MESSAGE:
		if (t->depth == JSON_MAX_DEPTH)
			return json__fail(&t->j, t->j.pos, "nesting deeper than %d",
					  JSON_MAX_DEPTH);
		err = json__begin(&t->j, fd->name, '{') ?: put_tag(t, fd, WIRE_LEN);
		if (err)
			return err;
		t->stack[t->depth++] = (struct frame){.d = fd->descriptor, .start = t->len,
						      .first = true};
		return 0;
	default:
		return json__fail(&t->j, t->j.pos, "\"%s\": a field type OTLP does not use",
				  fd->name);
	}
}

/* Ends the message on top: its length goes in front of its bytes. */
static int close_message(struct transcoder *t)
{
	struct frame *f = &t->stack[--t->depth];
	size_t n = t->len - f->start, k = varint_len(n);
	int err;

	if (!t->depth)
		return 0;
	err = reserve(t, k);
	if (err)
		return err;
	memmove(t->out + f->start + k, t->out + f->start, n);
	put_varint_at(t->out + f->start, n);
	t->len += k;
	return 0;
}

/* The next step inside the message on top: a member, an array element, or its end. */
static int step(struct transcoder *t)
{
	struct frame *f = &t->stack[t->depth - 1];
	const ProtobufCFieldDescriptor *fd;
	int r;

	if (f->array) {
		r = json__next_element(&t->j, &f->first_element);
		if (r <= 0) {
			f->array = NULL;
			return r;
		}
		if (json__peek(&t->j) == 'n')
			return json__fail(&t->j, t->j.pos, "null in the array \"%s\"",
					  f->array->name);
		return put_value(t, f->array);
	}
	r = json__next_member(&t->j, &f->first);
	if (!r)
		return close_message(t);
	if (r < 0)
		return r;
	fd = field_by_key(t, f->d);
	if (!fd)
		return json__skip(&t->j);
	if (json__null(&t->j))
		return 0;
	if (fd->label != PROTOBUF_C_LABEL_REPEATED)
		return put_value(t, fd);
	r = json__begin(&t->j, fd->name, '[');
	if (!r) {
		f->array = fd;
		f->first_element = true;
	}
	return r;
}

static int transcode(struct transcoder *t)
{
	int err;

	err = json__begin(&t->j, "the document", '{');
	if (err)
		return err;
	t->stack[t->depth++] = (struct frame){.d = &OTLP_REQUEST_DESCRIPTOR, .first = true};
	while (t->depth) {
		err = step(t);
		if (err)
			return err;
	}
	if (json__peek(&t->j) >= 0)
		return json__fail(&t->j, t->j.pos, "data after the end of the document");
	return 0;
}

int input__read_otlp_json(const void *buf, size_t len, struct symprof *sp, char *err,
			  size_t errlen)
{
	struct transcoder t = {.j = {.buf = buf, .len = len, .err = err, .errlen = errlen}};
	int ret;

	if (errlen)
		err[0] = 0;
	ret = transcode(&t);
	if (ret == -EINVAL && errlen) {
		/* "otlp-json: line L column C: ..." like the other readers' "FORMAT: ..." */
		char msg[256];

		snprintf(msg, sizeof(msg), "otlp-json: %s", err);
		snprintf(err, errlen, "%s", msg);
	}
	if (!ret)
		ret = input__read_otlp_as(t.out, t.len, "otlp-json", sp, err, errlen);
	free(t.out);
	free(t.j.str);
	return ret;
}

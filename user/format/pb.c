// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Protobuf helpers shared by the pprof and OTLP writers and readers (pb.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/hex.h"
#include "format/output.h"
#include "format/pb.h"

#define BUDGET_FACTOR 32
#define BUDGET_SLACK  (64ul << 20)
#define BUDGET_MAX    (4ul << 30)

void pb__hex(const void *bytes, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *b = bytes;
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
}

size_t pb__escape(const void *bytes, size_t n, unsigned char *out)
{
	const unsigned char *s = bytes;
	size_t i = 0, o = 0, k;

	while (i < n) {
		unsigned char c = s[i];

		if (c != '\\' && c >= 0x20 && c != 0x7f && (k = output__utf8_len(s + i, n - i))) {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		pb__hex(&c, 1, (char *)out + o);
		o += 2;
		i++;
	}
	out[o] = 0;
	return o;
}

size_t pb__unescape(const void *p, size_t n, unsigned char *out)
{
	const unsigned char *s = p;
	size_t i, o = 0;
	int hi, lo;

	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x' &&
		    (hi = hex__digit(s[i + 2])) >= 0 && (lo = hex__digit(s[i + 3])) >= 0) {
			out[o++] = hi << 4 | lo;
			i += 3;
		} else {
			out[o++] = s[i];
		}
	}
	return o;
}

bool pb__unhex(const char *s, size_t n, unsigned char *out)
{
	size_t i;
	int hi, lo;

	if (n % 2)
		return false;
	for (i = 0; i < n; i += 2) {
		hi = hex__digit(s[i]);
		lo = hex__digit(s[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i / 2] = hi << 4 | lo;
	}
	return true;
}

int pb__grow(void **arr, size_t *cap, size_t n, size_t size)
{
	void *na;

	if (n <= *cap)
		return 0;
	if (n / 2 < *cap && *cap <= SIZE_MAX / 2)
		n = 2 * *cap;
	na = reallocarray(*arr, n, size);
	if (!na)
		return -ENOMEM;
	*arr = na;
	*cap = n;
	return 0;
}

int pb__fail(const struct pb_err *e, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!e->len)
		return -EINVAL;
	n = snprintf(e->buf, e->len, "%s: ", e->format);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < e->len)
		vsnprintf(e->buf + n, e->len - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * One pass over the gzip members of in: into out, which has room for
 * *out_len bytes, or with out NULL only counting. *out_len: what it
 * inflated to, more than PB_MAX_INFLATED only on failure.
 */
static int inflate_pass(const struct pb_err *e, const unsigned char *in, size_t len,
			unsigned char *out, size_t *out_len)
{
	unsigned char scratch[16384];
	size_t used = 0, left = len, room;
	z_stream z = {};
	int ret, err = 0;

	/* 15 + 16: the gzip wrapper, not zlib's */
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return -ENOMEM;
	for (;;) {
		if (!z.avail_in && left) {
			z.next_in = (Bytef *)in + (len - left);
			z.avail_in = left > UINT32_MAX ? UINT32_MAX : left;
			left -= z.avail_in;
		}
		z.next_out = out ? out + used : scratch;
		room = out ? *out_len - used : sizeof(scratch);
		z.avail_out = room > UINT32_MAX ? UINT32_MAX : room;
		room = z.avail_out;
		ret = inflate(&z, Z_NO_FLUSH);
		used += room - z.avail_out;
		if (used > PB_MAX_INFLATED) {
			err = pb__fail(e, "more than %lu MiB once decompressed",
				       PB_MAX_INFLATED >> 20);
			break;
		}
		if (ret == Z_STREAM_END) {
			if (!z.avail_in && !left)
				break;
			/* another member follows */
			if (inflateReset(&z) != Z_OK) {
				err = pb__fail(e, "bad gzip stream");
				break;
			}
		} else if (ret == Z_MEM_ERROR) {
			err = -ENOMEM;
			break;
		} else if (ret == Z_BUF_ERROR && !z.avail_in && !left) {
			err = pb__fail(e, "truncated gzip stream");
			break;
		} else if (ret != Z_OK && (ret != Z_BUF_ERROR || !z.avail_out)) {
			/* (out full: the stream inflates to more than it did when counted) */
			err = pb__fail(e, "bad gzip data: %s", z.msg ? z.msg : "corrupt stream");
			break;
		}
	}
	inflateEnd(&z);
	*out_len = used;
	return err;
}

/* Counts first, so that a gzip bomb costs time but no memory, then inflates. */
static int gunzip(const struct pb_err *e, const unsigned char *in, size_t len, unsigned char **out,
		  size_t *out_len)
{
	size_t n;
	int err = inflate_pass(e, in, len, NULL, &n);

	if (err)
		return err;
	*out = malloc(n + 1); /* + 1: the stream ends before its room does */
	if (!*out)
		return -ENOMEM;
	*out_len = n + 1;
	err = inflate_pass(e, in, len, *out, out_len);
	if (!err && *out_len != n)
		err = pb__fail(e, "gzip stream inflated to %zu bytes, then to %zu", n, *out_len);
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}

/* Each block starts with its size, so that freeing gives the budget back. */
#define BLOCK_HDR 16

static void *budget_alloc(void *data, size_t size)
{
	struct pb_budget *b = data;
	unsigned char *p;

	if (b->left < BLOCK_HDR || size > b->left - BLOCK_HDR) {
		b->exceeded = true;
		return NULL;
	}
	p = malloc(size + BLOCK_HDR);
	if (!p) {
		b->failed = true;
		return NULL;
	}
	b->left -= size + BLOCK_HDR;
	*(size_t *)p = size + BLOCK_HDR;
	return p + BLOCK_HDR;
}

static void budget_free(void *data, void *ptr)
{
	struct pb_budget *b = data;
	unsigned char *p = ptr;

	if (!p)
		return;
	p -= BLOCK_HDR;
	b->left += *(size_t *)p;
	free(p);
}

int pb__unpack(const ProtobufCMessageDescriptor *d, const void *buf, size_t len,
	       struct pb_budget *b, const struct pb_err *e, ProtobufCMessage **out)
{
	const unsigned char *data = buf;
	unsigned char *inflated = NULL;
	size_t budget;
	int err;

	*out = NULL;
	if (e->len)
		e->buf[0] = 0;
	if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		err = gunzip(e, data, len, &inflated, &len);
		if (err)
			return err;
		data = inflated;
	} else if (len > PB_MAX_INFLATED) {
		return pb__fail(e, "larger than %lu MiB", PB_MAX_INFLATED >> 20);
	}
	budget = len < (BUDGET_MAX - BUDGET_SLACK) / BUDGET_FACTOR
			 ? BUDGET_FACTOR * len + BUDGET_SLACK
			 : BUDGET_MAX;
	*b = (struct pb_budget){.allocator = {budget_alloc, budget_free, b}, .left = budget};
	*out = protobuf_c_message_unpack(d, &b->allocator, len, data);
	/* strings and bytes are copies */
	free(inflated);
	if (*out)
		return 0;
	if (b->failed)
		return -ENOMEM;
	if (b->exceeded)
		return pb__fail(e, "decoding the %zu-byte message would take more than %zu MiB",
				len, budget >> 20);
	return pb__fail(e, "not a valid %s message (malformed protobuf)", d->short_name);
}

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers for the protobuf formats (pprof, OTLP): the string escaping that
 * keeps label bytes lossless in UTF-8-only string fields (output.h, next to
 * output__write_pprof), and the decoding of untrusted input, gzipped or not,
 * with a cap on what decompression and decoding may take.
 */
#ifndef LABELPROF_PB_H
#define LABELPROF_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <protobuf-c/protobuf-c.h>

/* A gzip bomb stops here, and so does a larger message that is not gzipped. */
#define PB_MAX_INFLATED (1ul << 30)

/*
 * Writes the n bytes escaped into out (room for 4 * n + 1 bytes) and a NUL;
 * returns the length without the NUL. Backslash, 0x00-0x1f, 0x7f and every
 * byte outside valid UTF-8 become \xHH (lowercase hex); other bytes stay.
 */
size_t pb__escape(const void *bytes, size_t n, unsigned char *out);

/* Undoes pb__escape into out (room for n bytes); returns the length. Lone backslashes stay. */
size_t pb__unescape(const void *s, size_t n, unsigned char *out);

/* Writes n bytes as 2 * n lowercase hex digits to out (no NUL). */
void pb__hex(const void *bytes, size_t n, char *out);

/* Decodes n hex digits (n even, either case) into out (n / 2 bytes); false if not hex. */
bool pb__unhex(const char *s, size_t n, unsigned char *out);

/* Grows *arr (elements of size bytes, room for *cap) to hold n, at least doubling. */
int pb__grow(void **arr, size_t *cap, size_t n, size_t size);

/* Where a reader of format says what is wrong, as "FORMAT: what" (nothing when len is 0). */
struct pb_err {
	const char *format;
	char *buf;
	size_t len;
};

/* Writes the message into e; returns -EINVAL. */
__attribute__((format(printf, 2, 3))) int pb__fail(const struct pb_err *e, const char *fmt, ...);

/*
 * The protobuf-c allocator of a decoded message: it holds at most a budget
 * at once, a few times the encoded size, which real profiles never need
 * (about 10 times) and hostile messages of tiny repeated entries would (up
 * to 60 times).
 */
struct pb_budget {
	ProtobufCAllocator allocator;
	size_t left;
	bool exceeded; /* an allocation went over the budget */
	bool failed;   /* malloc failed */
};

/*
 * Decodes a message of type d from len bytes at buf: gzip members (one or
 * more, as `cat a.gz b.gz` makes) are inflated first, counted before any
 * memory is taken, at most PB_MAX_INFLATED bytes. Returns 0 with *out, which
 * protobuf_c_message_free_unpacked(*out, &b->allocator) frees; -ENOMEM; or
 * -EINVAL, with e saying what is wrong. e starts empty.
 */
int pb__unpack(const ProtobufCMessageDescriptor *d, const void *buf, size_t len,
	       struct pb_budget *b, const struct pb_err *e, ProtobufCMessage **out);

#endif /* LABELPROF_PB_H */

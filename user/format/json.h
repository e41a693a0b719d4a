/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A strict (RFC 8259), small, non-recursive JSON reader for labelprof's
 * readers of JSON formats. Our own because labelprof's byte strings write
 * bytes that are not UTF-8 as the lone surrogate escapes \udc80..\udcff,
 * which general JSON libraries reject: json__string decodes them back to the
 * bytes. A reader walks a document's known shape with these calls and skips
 * what it does not know with json__skip (an explicit stack of bounded depth).
 *
 * Every call returns 0 or a negative errno (-EINVAL for bad input, with
 * "line L column C: what" in err; -ENOMEM) unless it says otherwise.
 */
#ifndef LABELPROF_FORMAT_JSON_H
#define LABELPROF_FORMAT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Deeper than any document labelprof writes (7) by far, shallow enough to be cheap. */
#define JSON_MAX_DEPTH 128

struct json {
	const unsigned char *buf;
	size_t len, pos;
	unsigned int depth;
	unsigned char open[JSON_MAX_DEPTH]; /* '{' or '[' of each open container */
	unsigned char *str;		    /* the last string read, decoded, NUL-terminated */
	size_t str_len, str_cap;
	size_t key_at; /* offset of the last object key read */
	char *err;
	size_t errlen;
};

/* Sets err to "line L column C: " and the message for the byte at offset at; -EINVAL. */
int json__fail(struct json *p, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Sets err to "out of memory"; -ENOMEM. */
int json__oom(struct json *p);
/* Grows *arr (elements of sz bytes) to hold at least n; -ENOMEM with err set. */
int json__reserve(struct json *p, void *arr, size_t *cap, size_t n, size_t sz);

/* The next byte after white space, or -1 at the end of the input. */
int json__peek(struct json *p);
/* An error naming what the next byte is and what was expected instead. */
int json__unexpected(struct json *p, const char *expected);
/* An error for a value of key that is not of the type expected ("an object"). */
int json__wrong_type(struct json *p, const char *key, const char *expected);
/* The literal word (true, false, null) next. */
int json__literal(struct json *p, const char *word);
/* The string next, decoded into p->str (p->str_len bytes). */
int json__string(struct json *p);

/* Enters the object or array ('{' or '[') next. */
int json__enter(struct json *p, unsigned char open);
/*
 * Steps to the next member of the object entered last: 1 when one follows
 * (its key decoded in p->str, the ':' read), 0 when the object ended, or an
 * error. *first is true before the first member.
 */
int json__next_member(struct json *p, bool *first);
/* The same for the array entered last: 1 when an element follows. */
int json__next_element(struct json *p, bool *first);
/* Checks and skips any value, however nested (up to JSON_MAX_DEPTH). */
int json__skip(struct json *p);

/* Enters the object or array (open) that key's value must be. */
int json__begin(struct json *p, const char *key, unsigned char open);
int json__u64(struct json *p, const char *key, __u64 *v);
int json__u32(struct json *p, const char *key, __u32 *v);
int json__bool(struct json *p, const char *key, bool *v);
/*
 * An integer, as a number or as a string that holds one (proto3's JSON
 * mapping writes 64-bit integers as strings): *neg its sign, *v its magnitude.
 */
int json__integer(struct json *p, const char *key, bool *neg, __u64 *v);
/* A number, or one of the strings "NaN", "Infinity", "-Infinity" (proto3's JSON mapping). */
int json__double(struct json *p, const char *key, double *v);
/* Reads a null if one is next: true then. */
bool json__null(struct json *p);
/* A string "0x" followed by 1 to 16 hex digits. */
int json__hex_u64(struct json *p, const char *key, __u64 *v);
/*
 * The index in keys[0..n) of the key just read, or -1 for a key the reader
 * does not know (ignored, as formats require). A known key twice in one
 * object is an error: which value was meant is unclear. seen: bit i for
 * keys[i], n <= 64.
 */
int json__match_key(struct json *p, const char *const *keys, int n, __u64 *seen, int *k);

#endif /* LABELPROF_FORMAT_JSON_H */

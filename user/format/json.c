// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The JSON reader of format/json.h. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/compiler.h"
#include "lib/hex.h"
#include "format/json.h"
#include "format/output.h"

int json__fail(struct json *p, size_t at, const char *fmt, ...)
{
	size_t line = 1, col = 1, i;
	char msg[256];
	va_list ap;

	/* columns count characters: the document is UTF-8 up to any error past it */
	for (i = 0; i < at && i < p->len; i++) {
		if (p->buf[i] == '\n') {
			line++;
			col = 1;
		} else if ((p->buf[i] & 0xc0) != 0x80) {
			col++;
		}
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->errlen)
		snprintf(p->err, p->errlen, "line %zu column %zu: %s", line, col, msg);
	return -EINVAL;
}

int json__oom(struct json *p)
{
	if (p->errlen)
		snprintf(p->err, p->errlen, "out of memory");
	return -ENOMEM;
}

/* Grows *arr (elements of sz bytes) to hold at least n. */
int json__reserve(struct json *p, void *arr, size_t *cap, size_t n, size_t sz)
{
	return array__reserve(arr, cap, n, sz, 0) ? json__oom(p) : 0;
}

/* ---- lexer ---------------------------------------------------------------- */

/* The next byte after white space, or -1 at the end of the input. */
int json__peek(struct json *p)
{
	while (p->pos < p->len) {
		unsigned char c = p->buf[p->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return c;
		p->pos++;
	}
	return -1;
}

int json__unexpected(struct json *p, const char *expected)
{
	int c = json__peek(p);

	if (c < 0)
		return json__fail(p, p->pos, "unexpected end of input, expected %s", expected);
	if (c >= 0x20 && c < 0x7f)
		return json__fail(p, p->pos, "unexpected '%c', expected %s", c, expected);
	return json__fail(p, p->pos, "unexpected byte 0x%02x, expected %s", c, expected);
}

/* A value of the wrong type for key: names both types. */
int json__wrong_type(struct json *p, const char *key, const char *expected)
{
	const char *got;

	switch (json__peek(p)) {
	case '"':
		got = "a string";
		break;
	case '{':
		got = "an object";
		break;
	case '[':
		got = "an array";
		break;
	case 't':
	case 'f':
		got = "a boolean";
		break;
	case 'n':
		got = "null";
		break;
	case '-':
	case '0' ... '9':
		got = "a number";
		break;
	default:
		return json__unexpected(p, expected);
	}
	return json__fail(p, p->pos, "\"%s\" must be %s, not %s", key, expected, got);
}

int json__literal(struct json *p, const char *word)
{
	size_t n = strlen(word);

	if (p->len - p->pos < n || memcmp(p->buf + p->pos, word, n))
		return json__unexpected(p, "a value");
	p->pos += n;
	return 0;
}

/* The four hex digits at pos as *v, or -1. */
static int hex4(const struct json *p, size_t pos, unsigned int *v)
{
	size_t i;

	*v = 0;
	if (p->len - pos < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		int d = hex__digit(p->buf[pos + i]);

		if (d < 0)
			return -1;
		*v = *v << 4 | d;
	}
	return 0;
}

static void put_utf8(struct json *p, __u32 cp)
{
	unsigned char *o = p->str + p->str_len;

	if (cp < 0x80) {
		o[0] = cp;
		p->str_len += 1;
	} else if (cp < 0x800) {
		o[0] = 0xc0 | cp >> 6;
		o[1] = 0x80 | (cp & 0x3f);
		p->str_len += 2;
	} else if (cp < 0x10000) {
		o[0] = 0xe0 | cp >> 12;
		o[1] = 0x80 | (cp >> 6 & 0x3f);
		o[2] = 0x80 | (cp & 0x3f);
		p->str_len += 3;
	} else {
		o[0] = 0xf0 | cp >> 18;
		o[1] = 0x80 | (cp >> 12 & 0x3f);
		o[2] = 0x80 | (cp >> 6 & 0x3f);
		o[3] = 0x80 | (cp & 0x3f);
		p->str_len += 4;
	}
}

/*
 * The escape at pos (a backslash) into p->str. \udc80..\udcff stand for the
 * bytes 0x80..0xff; other escapes are code points, written as UTF-8.
 */
static int read_escape(struct json *p)
{
	static const char simple_in[] = "\"\\/bfnrt", simple_out[] = "\"\\/\b\f\n\r\t";
	size_t at = p->pos;
	unsigned int cp, lo;
	const char *s;

	if (p->len - p->pos < 2)
		return json__fail(p, at, "unterminated string");
	s = memchr(simple_in, p->buf[p->pos + 1], sizeof(simple_in) - 1);
	if (s) {
		p->str[p->str_len++] = simple_out[s - simple_in];
		p->pos += 2;
		return 0;
	}
	if (p->buf[p->pos + 1] != 'u')
		return json__fail(p, at, "invalid escape sequence");
	if (hex4(p, p->pos + 2, &cp))
		return json__fail(p, at, "invalid \\u escape: expected four hex digits");
	p->pos += 6;
	if (cp >= 0xdc80 && cp <= 0xdcff) {
		p->str[p->str_len++] = cp & 0xff;
		return 0;
	}
	if (cp >= 0xd800 && cp <= 0xdbff) {
		/* a high surrogate is only valid as the first half of a pair */
		if (p->len - p->pos >= 6 && p->buf[p->pos] == '\\' && p->buf[p->pos + 1] == 'u' &&
		    !hex4(p, p->pos + 2, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
			p->pos += 6;
			put_utf8(p, 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00));
			return 0;
		}
		return json__fail(p, at, "lone surrogate \\u%04x (not followed by a low surrogate)",
				  cp);
	}
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return json__fail(
			p, at, "lone surrogate \\u%04x (only \\udc80-\\udcff stand for bytes)", cp);
	put_utf8(p, cp);
	return 0;
}

/* The string at pos, decoded into p->str (p->str_len bytes, NUL-terminated). */
int json__string(struct json *p)
{
	size_t start;
	int err;

	if (json__peek(p) != '"')
		return json__unexpected(p, "a string");
	start = p->pos++;
	p->str_len = 0;
	for (;;) {
		unsigned char c;
		size_t n;

		/* room for the longest decoded piece (4 bytes) and a NUL */
		err = json__reserve(p, &p->str, &p->str_cap, p->str_len + 5, 1);
		if (err)
			return err;
		if (p->pos >= p->len)
			return json__fail(p, start, "unterminated string");
		c = p->buf[p->pos];
		if (c == '"') {
			p->pos++;
			p->str[p->str_len] = 0;
			return 0;
		}
		if (c == '\\') {
			err = read_escape(p);
			if (err)
				return err;
			continue;
		}
		if (c < 0x20)
			return json__fail(p, p->pos,
					  "control character 0x%02x in a string (write \\u%04x)", c,
					  c);
		n = output__utf8_len(p->buf + p->pos, p->len - p->pos);
		if (!n)
			return json__fail(
				p, p->pos,
				"byte 0x%02x in a string is not UTF-8 (write bytes as \\udcXX)", c);
		memcpy(p->str + p->str_len, p->buf + p->pos, n);
		p->str_len += n;
		p->pos += n;
	}
}

static size_t skip_digits(struct json *p)
{
	size_t start = p->pos;

	while (p->pos < p->len && p->buf[p->pos] >= '0' && p->buf[p->pos] <= '9')
		p->pos++;
	return p->pos - start;
}

enum num_kind {
	NUM_U64,   /* a non-negative integer that fits in 64 bits */
	NUM_NEG,   /* a negative integer whose magnitude fits in 64 bits */
	NUM_BIG,   /* an integer whose magnitude is past 2^64 - 1 */
	NUM_OTHER, /* with a fraction or an exponent */
};

/* The number at pos; *v is its magnitude when *kind is NUM_U64 or NUM_NEG. */
static int read_number(struct json *p, __u64 *v, enum num_kind *kind)
{
	size_t at = p->pos;
	bool neg = false;
	__u64 x = 0;

	*kind = NUM_U64;
	if (p->pos < p->len && p->buf[p->pos] == '-') {
		neg = true;
		p->pos++;
	}
	if (p->pos >= p->len || p->buf[p->pos] < '0' || p->buf[p->pos] > '9')
		return json__fail(p, at, "invalid number");
	if (p->buf[p->pos] == '0') {
		p->pos++;
		if (p->pos < p->len && p->buf[p->pos] >= '0' && p->buf[p->pos] <= '9')
			return json__fail(p, at, "invalid number: leading zero");
	} else {
		while (p->pos < p->len && p->buf[p->pos] >= '0' && p->buf[p->pos] <= '9') {
			unsigned int d = p->buf[p->pos++] - '0';

			if (x > (UINT64_MAX - d) / 10)
				*kind = NUM_BIG;
			else
				x = x * 10 + d;
		}
	}
	if (neg && *kind == NUM_U64)
		*kind = NUM_NEG;
	if (p->pos < p->len && p->buf[p->pos] == '.') {
		p->pos++;
		if (!skip_digits(p))
			return json__fail(p, at, "invalid number: no digit after '.'");
		*kind = NUM_OTHER;
	}
	if (p->pos < p->len && (p->buf[p->pos] == 'e' || p->buf[p->pos] == 'E')) {
		p->pos++;
		if (p->pos < p->len && (p->buf[p->pos] == '+' || p->buf[p->pos] == '-'))
			p->pos++;
		if (!skip_digits(p))
			return json__fail(p, at, "invalid number: no digit in the exponent");
		*kind = NUM_OTHER;
	}
	*v = x;
	return 0;
}

/* ---- structure -------------------------------------------------------------- */

/* Enters the object or array ('{' or '[') at pos. */
int json__enter(struct json *p, unsigned char open)
{
	if (p->depth >= JSON_MAX_DEPTH)
		return json__fail(p, p->pos, "nesting deeper than %d", JSON_MAX_DEPTH);
	p->open[p->depth++] = open;
	p->pos++;
	return 0;
}

/* An object key and its ':', the key decoded in p->str. */
static int read_key(struct json *p)
{
	int err;

	if (json__peek(p) != '"')
		return json__unexpected(p, "a key string");
	p->key_at = p->pos;
	err = json__string(p);
	if (err)
		return err;
	if (json__peek(p) != ':')
		return json__unexpected(p, "':'");
	p->pos++;
	return 0;
}

/*
 * Steps to the next member of the object entered last: 1 when one follows
 * (its key read, see read_key), 0 when the object ended, or an error. *first
 * is true before the first member.
 */
int json__next_member(struct json *p, bool *first)
{
	int c = json__peek(p), err;

	if (c == '}') {
		p->pos++;
		p->depth--;
		return 0;
	}
	if (!*first) {
		if (c != ',')
			return json__unexpected(p, "',' or '}'");
		p->pos++;
	}
	*first = false;
	err = read_key(p);
	return err ? err : 1;
}

/* The same for the array entered last: 1 when an element follows. */
int json__next_element(struct json *p, bool *first)
{
	int c = json__peek(p);

	if (c == ']') {
		p->pos++;
		p->depth--;
		return 0;
	}
	if (!*first) {
		if (c != ',')
			return json__unexpected(p, "',' or ']'");
		p->pos++;
		if (json__peek(p) == ']')
			return json__unexpected(p, "a value");
	}
	*first = false;
	return 1;
}

/* Checks and skips any value, however nested (up to JSON_MAX_DEPTH). */
int json__skip(struct json *p)
{
	unsigned int base = p->depth;
	enum num_kind kind;
	int c, err;
	__u64 v;

	for (;;) {
		c = json__peek(p);
		switch (c) {
		case '{':
		case '[':
			err = json__enter(p, c);
			if (err)
				return err;
			if (json__peek(p) == (c == '{' ? '}' : ']')) {
				p->pos++;
				p->depth--;
				break;
			}
			if (c == '{') {
				err = read_key(p);
				if (err)
					return err;
			}
			continue; /* to the first member's value */
		case '"':
			err = json__string(p);
			break;
		case 't':
			err = json__literal(p, "true");
			break;
		case 'f':
			err = json__literal(p, "false");
			break;
		case 'n':
			err = json__literal(p, "null");
			break;
		case '-':
		case '0' ... '9':
			err = read_number(p, &v, &kind);
			break;
		default:
			return json__unexpected(p, "a value");
		}
		if (err)
			return err;
		/* after a value: close what ends here, or go on to the next value */
		for (;;) {
			unsigned char close;

			if (p->depth == base)
				return 0;
			close = p->open[p->depth - 1] == '{' ? '}' : ']';
			c = json__peek(p);
			if (c == close) {
				p->pos++;
				p->depth--;
				continue;
			}
			if (c != ',')
				return json__unexpected(p,
							close == '}' ? "',' or '}'" : "',' or ']'");
			p->pos++;
			if (close == '}') {
				err = read_key(p);
				if (err)
					return err;
			}
			break;
		}
	}
}

/* ---- typed values ----------------------------------------------------------- */

int json__begin(struct json *p, const char *key, unsigned char open)
{
	if (json__peek(p) != open)
		return json__wrong_type(p, key, open == '{' ? "an object" : "an array");
	return json__enter(p, open);
}

static bool neg_sign(const struct json *p, size_t at)
{
	return p->buf[at] == '-';
}

int json__u64(struct json *p, const char *key, __u64 *v)
{
	size_t at;
	enum num_kind kind;
	int c = json__peek(p), err;

	if (c != '-' && (c < '0' || c > '9'))
		return json__wrong_type(p, key, "a non-negative integer");
	at = p->pos;
	err = read_number(p, v, &kind);
	if (err)
		return err;
	if (kind == NUM_BIG && !neg_sign(p, at))
		return json__fail(p, at, "\"%s\" exceeds 2^64 - 1", key);
	if (kind != NUM_U64)
		return json__fail(p, at, "\"%s\" must be a non-negative integer", key);
	return 0;
}

int json__u32(struct json *p, const char *key, __u32 *v)
{
	size_t at;
	__u64 x;
	int err;

	json__peek(p);
	at = p->pos;
	err = json__u64(p, key, &x);
	if (err)
		return err;
	if (x > UINT32_MAX)
		return json__fail(p, at, "\"%s\" exceeds 2^32 - 1", key);
	*v = x;
	return 0;
}

int json__bool(struct json *p, const char *key, bool *v)
{
	int c = json__peek(p);

	if (c != 't' && c != 'f')
		return json__wrong_type(p, key, "true or false");
	*v = c == 't';
	return json__literal(p, *v ? "true" : "false");
}

int json__integer(struct json *p, const char *key, bool *neg, __u64 *v)
{
	struct json text = {};
	enum num_kind kind;
	size_t at;
	int c = json__peek(p), err;

	at = p->pos;
	if (c == '"') {
		err = json__string(p);
		if (err)
			return err;
		/* the string's bytes through the same grammar, errors left to the message below */
		text.buf = p->str;
		text.len = p->str_len;
		if (!text.len || read_number(&text, v, &kind) || text.pos != text.len)
			return json__fail(p, at, "\"%s\" must be an integer, not \"%s\"", key,
					  (const char *)p->str);
		*neg = text.buf[0] == '-';
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		err = read_number(p, v, &kind);
		if (err)
			return err;
		*neg = neg_sign(p, at);
	} else {
		return json__wrong_type(p, key, "an integer");
	}
	if (kind == NUM_BIG)
		return json__fail(p, at, "\"%s\" does not fit in 64 bits", key);
	if (kind == NUM_OTHER)
		return json__fail(p, at, "\"%s\" must be an integer", key);
	return 0;
}

int json__double(struct json *p, const char *key, double *v)
{
	static const char *const words[] = {"NaN", "Infinity", "-Infinity"};
	const double values[] = {NAN, INFINITY, -INFINITY};
	enum num_kind kind;
	size_t at, i, n;
	int c = json__peek(p), err;
	__u64 x;

	at = p->pos;
	if (c == '"') {
		err = json__string(p);
		if (err)
			return err;
		for (i = 0; i < ARRAY_SIZE(words); i++)
			if (!strcmp((const char *)p->str, words[i])) {
				*v = values[i];
				return 0;
			}
		return json__fail(p, at, "\"%s\" must be a number, NaN, Infinity or -Infinity",
				  key);
	}
	if (c != '-' && (c < '0' || c > '9'))
		return json__wrong_type(p, key, "a number");
	err = read_number(p, &x, &kind);
	if (err)
		return err;
	/* strtod wants a NUL-terminated copy: the grammar was checked, the bytes are ASCII */
	n = p->pos - at;
	err = json__reserve(p, &p->str, &p->str_cap, n + 1, 1);
	if (err)
		return err;
	memcpy(p->str, p->buf + at, n);
	p->str[n] = 0;
	p->str_len = n;
	*v = strtod((const char *)p->str, NULL);
	return 0;
}

/* Reads a null if one is next. */
bool json__null(struct json *p)
{
	if (json__peek(p) != 'n' || p->len - p->pos < 4 || memcmp(p->buf + p->pos, "null", 4))
		return false;
	p->pos += 4;
	return true;
}

/* A string "0x" followed by 1 to 16 hex digits. */
int json__hex_u64(struct json *p, const char *key, __u64 *v)
{
	size_t at, i;
	int err;

	if (json__peek(p) != '"')
		return json__wrong_type(p, key, "a hex string");
	at = p->pos;
	err = json__string(p);
	if (err)
		return err;
	if (p->str_len < 3 || p->str_len > 18 || p->str[0] != '0' || p->str[1] != 'x')
		return json__fail(p, at, "\"%s\" must be \"0x\" and 1 to 16 hex digits", key);
	*v = 0;
	for (i = 2; i < p->str_len; i++) {
		int d = hex__digit(p->str[i]);

		if (d < 0)
			return json__fail(p, at, "\"%s\" must be \"0x\" and 1 to 16 hex digits",
					  key);
		*v = *v << 4 | d;
	}
	return 0;
}

/*
 * The index in keys[0..n) of the key just read, or -1 for a key this reader
 * does not know (ignored, as the format requires). A known key twice in one
 * object is an error: which value was meant is unclear.
 */
int json__match_key(struct json *p, const char *const *keys, int n, __u64 *seen, int *k)
{
	int i;

	*k = -1;
	for (i = 0; i < n; i++) {
		if (strlen(keys[i]) != p->str_len || memcmp(keys[i], p->str, p->str_len))
			continue;
		if (*seen & (1ull << i))
			return json__fail(p, p->key_at, "duplicate key \"%s\"", keys[i]);
		*seen |= 1ull << i;
		*k = i;
		return 0;
	}
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reader of labelprof's JSON format (docs/json-format.md) into a symprof.
 *
 * The JSON parser is our own, strict (RFC 8259) and small, because the
 * format's byte strings write bytes that are not UTF-8 as the lone surrogate
 * escapes \udc80..\udcff, which general JSON libraries reject.
 *
 * Two passes over the bytes: the first checks the syntax of the whole
 * document and reads "format" and "version" (which may come last), so a
 * document of another version fails with that error rather than one about
 * its contents; the second maps the document onto the symprof. Nothing
 * recurses: the document's shape is walked by fixed code, values the reader
 * does not know are skipped with an explicit stack of bounded depth.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/compiler.h"
#include "lib/hex.h"
#include "format/fmt.h"
#include "format/input.h"
#include "format/output.h"
#include "profile/profile.h"
#include "profile/symprof.h"

/* Deeper than any document labelprof writes (7) by far, shallow enough to be cheap. */
#define JSON_MAX_DEPTH 128

struct label_in {
	struct sp_label label;
	size_t at; /* offset of the key, for errors */
};

struct jp {
	const unsigned char *buf;
	size_t len, pos;
	unsigned int depth;
	unsigned char open[JSON_MAX_DEPTH]; /* '{' or '[' of each open container */
	unsigned char *str;		    /* the last string read, decoded */
	size_t str_len, str_cap;
	size_t key_at; /* offset of the last object key read */
	char *err;
	size_t errlen;
	struct symprof *sp;
	/* per sample and per frame scratch, reused */
	struct label_in *labels_in;
	size_t labels_in_cap;
	struct sp_label *labels;
	size_t labels_cap;
	__u32 *frames;
	size_t frames_cap;
	struct sp_line *lines;
	size_t lines_cap;
	__u64 total; /* sum of the sample counts */
};

__attribute__((format(printf, 3, 4))) static int fail(struct jp *p, size_t at, const char *fmt, ...)
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

static int out_of_memory(struct jp *p)
{
	if (p->errlen)
		snprintf(p->err, p->errlen, "out of memory");
	return -ENOMEM;
}

/* Grows *arr (elements of sz bytes) to hold at least n. */
static int reserve(struct jp *p, void *arr, size_t *cap, size_t n, size_t sz)
{
	void **a = arr, *na;
	size_t ncap;

	if (n <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < n)
		ncap *= 2;
	if (ncap > SIZE_MAX / sz)
		return out_of_memory(p);
	na = realloc(*a, ncap * sz);
	if (!na)
		return out_of_memory(p);
	*a = na;
	*cap = ncap;
	return 0;
}

/* ---- lexer ---------------------------------------------------------------- */

/* The next byte after white space, or -1 at the end of the input. */
static int peek(struct jp *p)
{
	while (p->pos < p->len) {
		unsigned char c = p->buf[p->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return c;
		p->pos++;
	}
	return -1;
}

static int unexpected(struct jp *p, const char *expected)
{
	int c = peek(p);

	if (c < 0)
		return fail(p, p->pos, "unexpected end of input, expected %s", expected);
	if (c >= 0x20 && c < 0x7f)
		return fail(p, p->pos, "unexpected '%c', expected %s", c, expected);
	return fail(p, p->pos, "unexpected byte 0x%02x, expected %s", c, expected);
}

/* A value of the wrong type for key: names both types. */
static int wrong_type(struct jp *p, const char *key, const char *expected)
{
	const char *got;

	switch (peek(p)) {
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
		return unexpected(p, expected);
	}
	return fail(p, p->pos, "\"%s\" must be %s, not %s", key, expected, got);
}

static int read_literal(struct jp *p, const char *word)
{
	size_t n = strlen(word);

	if (p->len - p->pos < n || memcmp(p->buf + p->pos, word, n))
		return unexpected(p, "a value");
	p->pos += n;
	return 0;
}

/* The four hex digits at pos as *v, or -1. */
static int hex4(const struct jp *p, size_t pos, unsigned int *v)
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

static void put_utf8(struct jp *p, __u32 cp)
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
static int read_escape(struct jp *p)
{
	static const char simple_in[] = "\"\\/bfnrt", simple_out[] = "\"\\/\b\f\n\r\t";
	size_t at = p->pos;
	unsigned int cp, lo;
	const char *s;

	if (p->len - p->pos < 2)
		return fail(p, at, "unterminated string");
	s = memchr(simple_in, p->buf[p->pos + 1], sizeof(simple_in) - 1);
	if (s) {
		p->str[p->str_len++] = simple_out[s - simple_in];
		p->pos += 2;
		return 0;
	}
	if (p->buf[p->pos + 1] != 'u')
		return fail(p, at, "invalid escape sequence");
	if (hex4(p, p->pos + 2, &cp))
		return fail(p, at, "invalid \\u escape: expected four hex digits");
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
		return fail(p, at, "lone surrogate \\u%04x (not followed by a low surrogate)", cp);
	}
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail(p, at, "lone surrogate \\u%04x (only \\udc80-\\udcff stand for bytes)",
			    cp);
	put_utf8(p, cp);
	return 0;
}

/* The string at pos, decoded into p->str (p->str_len bytes, NUL-terminated). */
static int read_string(struct jp *p)
{
	size_t start;
	int err;

	if (peek(p) != '"')
		return unexpected(p, "a string");
	start = p->pos++;
	p->str_len = 0;
	for (;;) {
		unsigned char c;
		size_t n;

		/* room for the longest decoded piece (4 bytes) and a NUL */
		err = reserve(p, &p->str, &p->str_cap, p->str_len + 5, 1);
		if (err)
			return err;
		if (p->pos >= p->len)
			return fail(p, start, "unterminated string");
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
			return fail(p, p->pos,
				    "control character 0x%02x in a string (write \\u%04x)", c, c);
		n = output__utf8_len(p->buf + p->pos, p->len - p->pos);
		if (!n)
			return fail(p, p->pos,
				    "byte 0x%02x in a string is not UTF-8 (write bytes as \\udcXX)",
				    c);
		memcpy(p->str + p->str_len, p->buf + p->pos, n);
		p->str_len += n;
		p->pos += n;
	}
}

static size_t skip_digits(struct jp *p)
{
	size_t start = p->pos;

	while (p->pos < p->len && p->buf[p->pos] >= '0' && p->buf[p->pos] <= '9')
		p->pos++;
	return p->pos - start;
}

enum num_kind {
	NUM_U64,   /* a non-negative integer that fits in 64 bits */
	NUM_BIG,   /* a non-negative integer past 2^64 - 1 */
	NUM_OTHER, /* negative, or with a fraction or an exponent */
};

/* The number at pos; *v is its value when *kind is NUM_U64. */
static int read_number(struct jp *p, __u64 *v, enum num_kind *kind)
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
		return fail(p, at, "invalid number");
	if (p->buf[p->pos] == '0') {
		p->pos++;
		if (p->pos < p->len && p->buf[p->pos] >= '0' && p->buf[p->pos] <= '9')
			return fail(p, at, "invalid number: leading zero");
	} else {
		while (p->pos < p->len && p->buf[p->pos] >= '0' && p->buf[p->pos] <= '9') {
			unsigned int d = p->buf[p->pos++] - '0';

			if (x > (UINT64_MAX - d) / 10)
				*kind = NUM_BIG;
			else
				x = x * 10 + d;
		}
	}
	if (neg)
		*kind = NUM_OTHER;
	if (p->pos < p->len && p->buf[p->pos] == '.') {
		p->pos++;
		if (!skip_digits(p))
			return fail(p, at, "invalid number: no digit after '.'");
		*kind = NUM_OTHER;
	}
	if (p->pos < p->len && (p->buf[p->pos] == 'e' || p->buf[p->pos] == 'E')) {
		p->pos++;
		if (p->pos < p->len && (p->buf[p->pos] == '+' || p->buf[p->pos] == '-'))
			p->pos++;
		if (!skip_digits(p))
			return fail(p, at, "invalid number: no digit in the exponent");
		*kind = NUM_OTHER;
	}
	*v = x;
	return 0;
}

/* ---- structure -------------------------------------------------------------- */

/* Enters the object or array ('{' or '[') at pos. */
static int enter(struct jp *p, unsigned char open)
{
	if (p->depth >= JSON_MAX_DEPTH)
		return fail(p, p->pos, "nesting deeper than %d", JSON_MAX_DEPTH);
	p->open[p->depth++] = open;
	p->pos++;
	return 0;
}

/* An object key and its ':', the key decoded in p->str. */
static int read_key(struct jp *p)
{
	int err;

	if (peek(p) != '"')
		return unexpected(p, "a key string");
	p->key_at = p->pos;
	err = read_string(p);
	if (err)
		return err;
	if (peek(p) != ':')
		return unexpected(p, "':'");
	p->pos++;
	return 0;
}

/*
 * Steps to the next member of the object entered last: 1 when one follows
 * (its key read, see read_key), 0 when the object ended, or an error. *first
 * is true before the first member.
 */
static int next_member(struct jp *p, bool *first)
{
	int c = peek(p), err;

	if (c == '}') {
		p->pos++;
		p->depth--;
		return 0;
	}
	if (!*first) {
		if (c != ',')
			return unexpected(p, "',' or '}'");
		p->pos++;
	}
	*first = false;
	err = read_key(p);
	return err ? err : 1;
}

/* The same for the array entered last: 1 when an element follows. */
static int next_element(struct jp *p, bool *first)
{
	int c = peek(p);

	if (c == ']') {
		p->pos++;
		p->depth--;
		return 0;
	}
	if (!*first) {
		if (c != ',')
			return unexpected(p, "',' or ']'");
		p->pos++;
		if (peek(p) == ']')
			return unexpected(p, "a value");
	}
	*first = false;
	return 1;
}

/* Checks and skips any value, however nested (up to JSON_MAX_DEPTH). */
static int skip_value(struct jp *p)
{
	unsigned int base = p->depth;
	enum num_kind kind;
	int c, err;
	__u64 v;

	for (;;) {
		c = peek(p);
		switch (c) {
		case '{':
		case '[':
			err = enter(p, c);
			if (err)
				return err;
			if (peek(p) == (c == '{' ? '}' : ']')) {
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
			err = read_string(p);
			break;
		case 't':
			err = read_literal(p, "true");
			break;
		case 'f':
			err = read_literal(p, "false");
			break;
		case 'n':
			err = read_literal(p, "null");
			break;
		case '-':
		case '0' ... '9':
			err = read_number(p, &v, &kind);
			break;
		default:
			return unexpected(p, "a value");
		}
		if (err)
			return err;
		/* after a value: close what ends here, or go on to the next value */
		for (;;) {
			unsigned char close;

			if (p->depth == base)
				return 0;
			close = p->open[p->depth - 1] == '{' ? '}' : ']';
			c = peek(p);
			if (c == close) {
				p->pos++;
				p->depth--;
				continue;
			}
			if (c != ',')
				return unexpected(p, close == '}' ? "',' or '}'" : "',' or ']'");
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

static int begin(struct jp *p, const char *key, unsigned char open)
{
	if (peek(p) != open)
		return wrong_type(p, key, open == '{' ? "an object" : "an array");
	return enter(p, open);
}

static int read_u64(struct jp *p, const char *key, __u64 *v)
{
	size_t at;
	enum num_kind kind;
	int c = peek(p), err;

	if (c != '-' && (c < '0' || c > '9'))
		return wrong_type(p, key, "a non-negative integer");
	at = p->pos;
	err = read_number(p, v, &kind);
	if (err)
		return err;
	if (kind == NUM_BIG)
		return fail(p, at, "\"%s\" exceeds 2^64 - 1", key);
	if (kind == NUM_OTHER)
		return fail(p, at, "\"%s\" must be a non-negative integer", key);
	return 0;
}

static int read_u32(struct jp *p, const char *key, __u32 *v)
{
	size_t at;
	__u64 x;
	int err;

	peek(p);
	at = p->pos;
	err = read_u64(p, key, &x);
	if (err)
		return err;
	if (x > UINT32_MAX)
		return fail(p, at, "\"%s\" exceeds 2^32 - 1", key);
	*v = x;
	return 0;
}

static int read_bool(struct jp *p, const char *key, bool *v)
{
	int c = peek(p);

	if (c != 't' && c != 'f')
		return wrong_type(p, key, "true or false");
	*v = c == 't';
	return read_literal(p, *v ? "true" : "false");
}

/* Reads a null if one is next. */
static bool is_null(struct jp *p)
{
	if (peek(p) != 'n' || p->len - p->pos < 4 || memcmp(p->buf + p->pos, "null", 4))
		return false;
	p->pos += 4;
	return true;
}

/* A byte string as a string id (0 for ""). */
static int read_bytes(struct jp *p, const char *key, __u32 *id)
{
	int err;

	if (peek(p) != '"')
		return wrong_type(p, key, "a string");
	err = read_string(p);
	if (err)
		return err;
	*id = symprof__string(p->sp, p->str, p->str_len);
	return 0;
}

/* A byte string or null (*present false, *id 0). */
static int read_bytes_or_null(struct jp *p, const char *key, __u32 *id, bool *present)
{
	*present = !is_null(p);
	*id = 0;
	if (!*present)
		return 0;
	if (peek(p) != '"')
		return wrong_type(p, key, "a string or null");
	return read_bytes(p, key, id);
}

/* A string "0x" followed by 1 to 16 hex digits. */
static int read_hex_u64(struct jp *p, const char *key, __u64 *v)
{
	size_t at, i;
	int err;

	if (peek(p) != '"')
		return wrong_type(p, key, "a hex string");
	at = p->pos;
	err = read_string(p);
	if (err)
		return err;
	if (p->str_len < 3 || p->str_len > 18 || p->str[0] != '0' || p->str[1] != 'x')
		return fail(p, at, "\"%s\" must be \"0x\" and 1 to 16 hex digits", key);
	*v = 0;
	for (i = 2; i < p->str_len; i++) {
		int d = hex__digit(p->str[i]);

		if (d < 0)
			return fail(p, at, "\"%s\" must be \"0x\" and 1 to 16 hex digits", key);
		*v = *v << 4 | d;
	}
	return 0;
}

/* A non-empty string of hex digit pairs as a string id of the raw bytes. */
static int read_hex_bytes(struct jp *p, const char *key, __u32 *id)
{
	size_t at, i;
	int err;

	if (peek(p) != '"')
		return wrong_type(p, key, "a hex string or null");
	at = p->pos;
	err = read_string(p);
	if (err)
		return err;
	if (!p->str_len || p->str_len % 2)
		return fail(p, at, "\"%s\" must be pairs of hex digits", key);
	/* decoded in place: byte i/2 is written after digits i and i + 1 are read */
	for (i = 0; i < p->str_len; i += 2) {
		int hi = hex__digit(p->str[i]), lo = hex__digit(p->str[i + 1]);

		if (hi < 0 || lo < 0)
			return fail(p, at, "\"%s\" must be pairs of hex digits", key);
		p->str[i / 2] = hi << 4 | lo;
	}
	*id = symprof__string(p->sp, p->str, p->str_len / 2);
	return 0;
}

/*
 * The index in keys[0..n) of the key just read, or -1 for a key this reader
 * does not know (ignored, as the format requires). A known key twice in one
 * object is an error: which value was meant is unclear.
 */
static int match_key(struct jp *p, const char *const *keys, int n, __u64 *seen, int *k)
{
	int i;

	*k = -1;
	for (i = 0; i < n; i++) {
		if (strlen(keys[i]) != p->str_len || memcmp(keys[i], p->str, p->str_len))
			continue;
		if (*seen & (1ull << i))
			return fail(p, p->key_at, "duplicate key \"%s\"", keys[i]);
		*seen |= 1ull << i;
		*k = i;
		return 0;
	}
	return 0;
}

/* ---- the document ----------------------------------------------------------- */

enum doc_key {
	D_FORMAT,
	D_VERSION,
	D_FREQUENCY_HZ,
	D_START_TIME,
	D_DURATION,
	D_HOST_NAME,
	D_PERIOD,
	D_COUNTERS,
	D_PROCESSES,
	D_SAMPLES,
	D_COUNT,
};

static const char *const doc_keys[D_COUNT] = {
	[D_FORMAT] = "format",
	[D_VERSION] = "version",
	[D_FREQUENCY_HZ] = "frequency_hz",
	[D_START_TIME] = "start_time_unix_ns",
	[D_DURATION] = "duration_ns",
	[D_HOST_NAME] = "host_name",
	[D_PERIOD] = "period_ns",
	[D_COUNTERS] = "counters",
	[D_PROCESSES] = "processes",
	[D_SAMPLES] = "samples",
};

static const char *const counter_keys[] = {
	"samples",	    "samples_with_labels", "label_read_faults", "truncations",
	"malformed_labels", "ringbuf_drops",	   "event_drops",	"unknown_pids",
	"filtered",	    "kernel_threads",	   "samples_received",	"records_rejected",
	"samples_dropped",
};

#define N_COUNTER_KEYS ((int)ARRAY_SIZE(counter_keys))

static int read_counters(struct jp *p)
{
	struct sp_meta *m = &p->sp->meta;
	struct lp_counters *c = &m->counters;
	__u64 *const fields[] = {
		&c->samples,	     &c->samples_with_labels, &c->label_read_faults,
		&c->truncations,     &c->malformed_labels,    &c->ringbuf_drops,
		&c->event_drops,     &c->unknown_pids,	      &c->filtered,
		&c->kernel_threads,  &m->samples_received,    &m->records_rejected,
		&m->samples_dropped,
	};
	_Static_assert(ARRAY_SIZE(fields) == N_COUNTER_KEYS, "counter_keys");
	bool first = true;
	__u64 seen = 0;
	int r, k;

	r = begin(p, "counters", '{');
	while (!r && (r = next_member(p, &first)) > 0) {
		r = match_key(p, counter_keys, N_COUNTER_KEYS, &seen, &k);
		if (!r)
			r = k < 0 ? skip_value(p) : read_u64(p, counter_keys[k], fields[k]);
	}
	return r;
}

enum process_key {
	P_PID,
	P_NAME,
	P_EXECUTABLE,
	P_COUNT,
};

static const char *const process_keys[P_COUNT] = {
	[P_PID] = "pid",
	[P_NAME] = "name",
	[P_EXECUTABLE] = "executable",
};

static int read_process(struct jp *p)
{
	struct sp_process proc = {};
	bool first = true, present;
	__u64 seen = 0;
	size_t at;
	int r, k;

	if (peek(p) != '{')
		return wrong_type(p, "processes", "an array of objects");
	at = p->pos;
	r = enter(p, '{');
	while (!r && (r = next_member(p, &first)) > 0) {
		r = match_key(p, process_keys, P_COUNT, &seen, &k);
		if (r)
			return r;
		if (k == P_PID)
			r = read_u32(p, "pid", &proc.pid);
		else if (k == P_NAME)
			r = read_bytes_or_null(p, "name", &proc.name, &present);
		else if (k == P_EXECUTABLE)
			r = read_bytes_or_null(p, "executable", &proc.executable, &present);
		else
			r = skip_value(p);
	}
	if (r)
		return r;
	if (!(seen & (1ull << P_PID)))
		return fail(p, at, "process without \"pid\"");
	if (symprof__process(p->sp, proc.pid))
		return fail(p, at, "a second process with pid %u", proc.pid);
	return symprof__set_process(p->sp, &proc) ? out_of_memory(p) : 0;
}

static int read_processes(struct jp *p)
{
	bool first = true;
	int r;

	r = begin(p, "processes", '[');
	while (!r && (r = next_element(p, &first)) > 0)
		r = read_process(p);
	return r;
}

/* The status bit the flag in p->str names, or -1. */
static int flag_bit(const struct jp *p)
{
	const char *s = (const char *)p->str;
	unsigned int bit;
	size_t n = p->str_len;

	for (bit = 0; bit < 32; bit++)
		if (fmt__status_name(bit) && strlen(fmt__status_name(bit)) == n &&
		    !memcmp(fmt__status_name(bit), s, n))
			return bit;
	/* "bit_N", N in 0..31 without leading zeros */
	if (n < 5 || n > 6 || memcmp(s, "bit_", 4) || s[4] < '0' || s[4] > '9' ||
	    (n == 6 && (s[4] == '0' || s[5] < '0' || s[5] > '9')))
		return -1;
	bit = n == 5 ? s[4] - '0' : (s[4] - '0') * 10 + (s[5] - '0');
	return bit < 32 ? (int)bit : -1;
}

static int read_flags(struct jp *p, __u32 *status)
{
	bool first = true;
	int r, bit;

	r = begin(p, "flags", '[');
	while (!r && (r = next_element(p, &first)) > 0) {
		if (peek(p) != '"')
			return wrong_type(p, "flags", "an array of strings");
		r = read_string(p);
		/* a flag a later writer names: its bit is unknown here, so it is left out */
		bit = r ? -1 : flag_bit(p);
		if (bit >= 0)
			*status |= 1u << bit;
	}
	return r;
}

/* By key bytes as the label set orders them (unsigned, shorter first), then by position. */
static int label_cmp(const void *a, const void *b, void *arg)
{
	const struct label_in *x = a, *y = b;
	const struct sp_string *kx = symprof__str(arg, x->label.key);
	const struct sp_string *ky = symprof__str(arg, y->label.key);
	int c = symprof__bytes_cmp(kx->bytes, kx->len, ky->bytes, ky->len);

	if (c)
		return c;
	return x->at < y->at ? -1 : x->at > y->at;
}

static int read_labels(struct jp *p, __u32 *set)
{
	size_t n = 0, i;
	bool first = true;
	int r;

	r = begin(p, "labels", '{');
	while (!r && (r = next_member(p, &first)) > 0) {
		struct label_in *l;

		r = reserve(p, &p->labels_in, &p->labels_in_cap, n + 1, sizeof(*p->labels_in));
		if (r)
			return r;
		l = &p->labels_in[n++];
		l->at = p->key_at;
		l->label.key = symprof__string(p->sp, p->str, p->str_len);
		r = read_bytes(p, "label value", &l->label.value);
	}
	if (r)
		return r;
	/*
	 * Sorted, duplicates are neighbours, and symprof__label_set (an insertion
	 * sort, for small sets) takes linear time on a set of any size.
	 */
	if (n > 1)
		qsort_r(p->labels_in, n, sizeof(*p->labels_in), label_cmp, p->sp);
	r = reserve(p, &p->labels, &p->labels_cap, n, sizeof(*p->labels));
	if (r)
		return r;
	for (i = 0; i < n; i++) {
		if (i && p->labels_in[i].label.key == p->labels_in[i - 1].label.key &&
		    !symprof__error(p->sp))
			return fail(p, p->labels_in[i].at, "duplicate label key");
		p->labels[i] = p->labels_in[i].label;
	}
	*set = symprof__label_set(p->sp, p->labels, n);
	return 0;
}

/* An unknown function is the zero entry, not a second entry equal to it. */
static __u32 function_id(struct jp *p, const struct sp_function *fn)
{
	return fn->name || fn->file ? symprof__function(p->sp, fn) : 0;
}

enum inline_key {
	I_FUNCTION,
	I_FILE,
	I_LINE,
	I_COUNT,
};

static const char *const inline_keys[I_COUNT] = {
	[I_FUNCTION] = "function",
	[I_FILE] = "file",
	[I_LINE] = "line",
};

/* "inlined": {function, file, line} innermost first, appended to p->lines. */
static int read_inlined(struct jp *p, size_t *n)
{
	bool first = true;
	int r;

	r = begin(p, "inlined", '[');
	while (!r && (r = next_element(p, &first)) > 0) {
		struct sp_function fn = {};
		bool ofirst = true, present;
		__u32 line = 0;
		__u64 seen = 0;
		int k;

		r = begin(p, "inlined", '{');
		while (!r && (r = next_member(p, &ofirst)) > 0) {
			r = match_key(p, inline_keys, I_COUNT, &seen, &k);
			if (r)
				break;
			if (k == I_FUNCTION)
				r = read_bytes_or_null(p, "function", &fn.name, &present);
			else if (k == I_FILE)
				r = read_bytes_or_null(p, "file", &fn.file, &present);
			else if (k == I_LINE && !is_null(p))
				r = read_u32(p, "line", &line);
			else if (k < 0)
				r = skip_value(p);
		}
		if (r)
			break;
		r = reserve(p, &p->lines, &p->lines_cap, *n + 1, sizeof(*p->lines));
		if (r)
			break;
		p->lines[(*n)++] = (struct sp_line){.function = function_id(p, &fn), .line = line};
	}
	return r;
}

enum frame_key {
	F_ADDRESS,
	F_KERNEL,
	F_MODULE,
	F_FUNCTION,
	F_OFFSET,
	F_MODULE_OFFSET,
	F_BUILD_ID,
	F_FILE,
	F_LINE,
	F_INLINED,
	F_COUNT,
};

static const char *const frame_keys[F_COUNT] = {
	[F_ADDRESS] = "address",   [F_KERNEL] = "kernel", [F_MODULE] = "module",
	[F_FUNCTION] = "function", [F_OFFSET] = "offset", [F_MODULE_OFFSET] = "module_offset",
	[F_BUILD_ID] = "build_id", [F_FILE] = "file",	  [F_LINE] = "line",
	[F_INLINED] = "inlined",
};

/*
 * One frame into a location. The mapping is the module with its build id;
 * JSON does not carry where it was mapped, so start, limit and file offset
 * are 0 (for the kernel, the whole address space, as the profile builder
 * does). The lines are the inlined functions, innermost first, then the
 * function that holds the address.
 */
static int read_frame(struct jp *p, __u32 *id)
{
	struct sp_location loc = {.module_offset = SP_UNKNOWN, .function_offset = SP_UNKNOWN};
	struct sp_mapping m = {};
	struct sp_function fn = {};
	bool first = true, has_module = false, has_function = false, has_file = false;
	size_t at, n = 0;
	__u32 line = 0;
	__u64 seen = 0;
	int r, k;

	r = begin(p, "frames", '{');
	at = p->pos - 1;
	while (!r && (r = next_member(p, &first)) > 0) {
		r = match_key(p, frame_keys, F_COUNT, &seen, &k);
		if (r)
			return r;
		switch (k) {
		case F_ADDRESS:
			r = read_hex_u64(p, "address", &loc.address);
			break;
		case F_KERNEL:
			r = read_bool(p, "kernel", &loc.kernel);
			break;
		case F_MODULE:
			r = read_bytes_or_null(p, "module", &m.file, &has_module);
			break;
		case F_FUNCTION:
			r = read_bytes_or_null(p, "function", &fn.name, &has_function);
			break;
		case F_OFFSET:
			if (!is_null(p))
				r = read_u64(p, "offset", &loc.function_offset);
			break;
		case F_MODULE_OFFSET:
			if (!is_null(p))
				r = read_hex_u64(p, "module_offset", &loc.module_offset);
			break;
		case F_BUILD_ID:
			if (!is_null(p))
				r = read_hex_bytes(p, "build_id", &m.build_id);
			break;
		case F_FILE:
			r = read_bytes_or_null(p, "file", &fn.file, &has_file);
			break;
		case F_LINE:
			if (!is_null(p))
				r = read_u32(p, "line", &line);
			break;
		case F_INLINED:
			r = read_inlined(p, &n);
			break;
		default:
			r = skip_value(p);
		}
	}
	if (r)
		return r;
	if (!(seen & (1ull << F_ADDRESS)))
		return fail(p, at, "frame without \"address\"");
	if (has_module || m.build_id) {
		m.kernel = loc.kernel;
		m.limit = loc.kernel ? SP_UNKNOWN : 0;
		loc.mapping = symprof__mapping(p->sp, &m);
	}
	if (has_function || has_file || line || n) {
		r = reserve(p, &p->lines, &p->lines_cap, n + 1, sizeof(*p->lines));
		if (r)
			return r;
		p->lines[n++] = (struct sp_line){.function = function_id(p, &fn), .line = line};
	}
	*id = symprof__location(p->sp, &loc, p->lines, n);
	return 0;
}

static int read_frames(struct jp *p, __u32 *stack)
{
	bool first = true;
	size_t n = 0;
	int r;

	r = begin(p, "frames", '[');
	while (!r && (r = next_element(p, &first)) > 0) {
		r = reserve(p, &p->frames, &p->frames_cap, n + 1, sizeof(*p->frames));
		if (!r)
			r = read_frame(p, &p->frames[n++]);
	}
	if (r)
		return r;
	*stack = symprof__stack(p->sp, p->frames, n);
	return 0;
}

enum sample_key {
	S_PID,
	S_TID,
	S_COMM,
	S_LABELS,
	S_FLAGS,
	S_COUNT,
	S_FRAMES,
	S_KEYS,
};

static const char *const sample_keys[S_KEYS] = {
	[S_PID] = "pid",     [S_TID] = "tid",	  [S_COMM] = "comm",	 [S_LABELS] = "labels",
	[S_FLAGS] = "flags", [S_COUNT] = "count", [S_FRAMES] = "frames",
};

/* pid, tid and count make a sample; the rest may be missing (none, empty). */
#define SAMPLE_REQUIRED ((1ull << S_PID) | (1ull << S_TID) | (1ull << S_COUNT))

static int read_sample(struct jp *p)
{
	struct sp_sample s = {};
	bool first = true;
	__u64 seen = 0;
	size_t at;
	int r, k;

	if (peek(p) != '{')
		return wrong_type(p, "samples", "an array of objects");
	at = p->pos;
	r = enter(p, '{');
	while (!r && (r = next_member(p, &first)) > 0) {
		r = match_key(p, sample_keys, S_KEYS, &seen, &k);
		if (r)
			return r;
		switch (k) {
		case S_PID:
			r = read_u32(p, "pid", &s.pid);
			break;
		case S_TID:
			r = read_u32(p, "tid", &s.tid);
			break;
		case S_COMM:
			r = read_bytes(p, "comm", &s.comm);
			break;
		case S_LABELS:
			r = read_labels(p, &s.label_set);
			break;
		case S_FLAGS:
			r = read_flags(p, &s.status);
			break;
		case S_COUNT:
			r = read_u64(p, "count", &s.count);
			break;
		case S_FRAMES:
			r = read_frames(p, &s.stack);
			break;
		default:
			r = skip_value(p);
		}
	}
	if (r)
		return r;
	if ((seen & SAMPLE_REQUIRED) != SAMPLE_REQUIRED)
		return fail(p, at, "sample without \"%s\"",
			    sample_keys[!(seen & (1ull << S_PID))   ? S_PID
					: !(seen & (1ull << S_TID)) ? S_TID
								    : S_COUNT]);
	if (p->total + s.count < p->total)
		return fail(p, at, "the sample counts add up past 2^64 - 1");
	p->total += s.count;
	if (symprof__error(p->sp) || symprof__add_sample(p->sp, &s))
		return out_of_memory(p);
	return 0;
}

static int read_samples(struct jp *p)
{
	bool first = true;
	int r;

	r = begin(p, "samples", '[');
	while (!r && (r = next_element(p, &first)) > 0)
		r = read_sample(p);
	return r;
}

/*
 * Pass 1: the whole document's syntax, "format" and "version". Other values
 * are skipped, which checks them.
 */
static int check_header(struct jp *p)
{
	bool first = true, format_ok = false;
	__u64 seen = 0, version = 0;
	size_t version_at = 0;
	int r, k;

	if (peek(p) < 0)
		return fail(p, p->pos, "empty document");
	if (peek(p) != '{')
		return unexpected(p, "'{' (a labelprof JSON document is an object)");
	r = enter(p, '{');
	while (!r && (r = next_member(p, &first)) > 0) {
		/* only the first two keys: others may repeat until pass 2 says so */
		r = match_key(p, doc_keys, D_VERSION + 1, &seen, &k);
		if (r)
			return r;
		if (k == D_FORMAT) {
			if (peek(p) != '"')
				return wrong_type(p, "format", "a string");
			r = read_string(p);
			format_ok = !r && p->str_len == 14 && !memcmp(p->str, "labelprof-json", 14);
		} else if (k == D_VERSION) {
			version_at = p->pos;
			r = read_u64(p, "version", &version);
		} else {
			r = skip_value(p);
		}
	}
	if (r)
		return r;
	if (peek(p) >= 0)
		return fail(p, p->pos, "data after the end of the document");
	if (!(seen & (1ull << D_FORMAT)))
		return fail(p, 0, "not a labelprof JSON document: no \"format\" key");
	if (!format_ok)
		return fail(p, 0,
			    "not a labelprof JSON document: \"format\" is not \"labelprof-json\"");
	if (!(seen & (1ull << D_VERSION)))
		return fail(p, 0, "no \"version\" key");
	if (version != 1)
		return fail(p, version_at,
			    "version %llu is not supported: this labelprof reads version 1",
			    (unsigned long long)version);
	return 0;
}

/* Pass 2: the document into p->sp. */
static int read_document(struct jp *p)
{
	struct sp_meta *m = &p->sp->meta;
	bool first = true, present;
	__u64 seen = 0;
	int r, k;

	p->pos = 0;
	p->depth = 0;
	peek(p);
	r = enter(p, '{');
	while (!r && (r = next_member(p, &first)) > 0) {
		r = match_key(p, doc_keys, D_COUNT, &seen, &k);
		if (r)
			return r;
		switch (k) {
		case D_FREQUENCY_HZ:
			r = read_u64(p, doc_keys[k], &m->frequency_hz);
			break;
		case D_START_TIME:
			r = read_u64(p, doc_keys[k], &m->start_time_unix_ns);
			break;
		case D_DURATION:
			r = read_u64(p, doc_keys[k], &m->duration_ns);
			break;
		case D_HOST_NAME:
			r = read_bytes_or_null(p, doc_keys[k], &m->host_name, &present);
			break;
		case D_PERIOD:
			r = read_u64(p, doc_keys[k], &m->period_ns);
			break;
		case D_COUNTERS:
			r = read_counters(p);
			break;
		case D_PROCESSES:
			r = read_processes(p);
			break;
		case D_SAMPLES:
			r = read_samples(p);
			break;
		default: /* format and version: checked by pass 1 */
			r = skip_value(p);
		}
	}
	if (r)
		return r;
	if (!(seen & (1ull << D_SAMPLES)))
		return fail(p, 0, "no \"samples\" key");
	/* documents from before period_ns was written */
	if (!(seen & (1ull << D_PERIOD)) && m->frequency_hz)
		m->period_ns = 1000000000ull / m->frequency_hz;
	return symprof__error(p->sp) ? out_of_memory(p) : 0;
}

int input__read_json(const void *buf, size_t len, struct symprof *sp, char *err, size_t errlen)
{
	struct jp p = {.buf = buf, .len = len, .sp = sp, .err = err, .errlen = errlen};
	int r;

	if (errlen)
		err[0] = 0;
	r = check_header(&p);
	if (!r)
		r = read_document(&p);
	free(p.str);
	free(p.labels_in);
	free(p.labels);
	free(p.frames);
	free(p.lines);
	return r;
}

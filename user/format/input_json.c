// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reader of labelprof's JSON format (docs/json-format.md) into a symprof,
 * with the JSON reader of format/json.h.
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
#include "lib/frame_kind.h"
#include "lib/hex.h"
#include "format/fmt.h"
#include "format/input.h"
#include "format/json.h"
#include "format/output.h"
#include "profile/profile.h"
#include "profile/symprof.h"

struct label_in {
	struct sp_label label;
	size_t at; /* offset of the key, for errors */
};

struct jp {
	struct json j;
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
	struct sp_label *sources; /* a sample's label_sources: key, source */
	size_t sources_cap;
	__u64 total; /* sum of the sample counts */
};

/* A byte string as a string id (0 for ""). */
static int read_bytes(struct jp *p, const char *key, __u32 *id)
{
	int err;

	if (json__peek(&p->j) != '"')
		return json__wrong_type(&p->j, key, "a string");
	err = json__string(&p->j);
	if (err)
		return err;
	*id = symprof__string(p->sp, p->j.str, p->j.str_len);
	return 0;
}

/* A byte string or null (*present false, *id 0). */
static int read_bytes_or_null(struct jp *p, const char *key, __u32 *id, bool *present)
{
	*present = !json__null(&p->j);
	*id = 0;
	if (!*present)
		return 0;
	if (json__peek(&p->j) != '"')
		return json__wrong_type(&p->j, key, "a string or null");
	return read_bytes(p, key, id);
}

/* A non-empty string of hex digit pairs as a string id of the raw bytes. */
static int read_hex_bytes(struct jp *p, const char *key, __u32 *id)
{
	size_t at, i;
	int err;

	if (json__peek(&p->j) != '"')
		return json__wrong_type(&p->j, key, "a hex string or null");
	at = p->j.pos;
	err = json__string(&p->j);
	if (err)
		return err;
	if (!p->j.str_len || p->j.str_len % 2)
		return json__fail(&p->j, at, "\"%s\" must be pairs of hex digits", key);
	/* decoded in place: byte i/2 is written after digits i and i + 1 are read */
	for (i = 0; i < p->j.str_len; i += 2) {
		int hi = hex__digit(p->j.str[i]), lo = hex__digit(p->j.str[i + 1]);

		if (hi < 0 || lo < 0)
			return json__fail(&p->j, at, "\"%s\" must be pairs of hex digits", key);
		p->j.str[i / 2] = hi << 4 | lo;
	}
	*id = symprof__string(p->sp, p->j.str, p->j.str_len / 2);
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
	"samples_dropped",  "unwind_misses", "null_values",
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
		&m->samples_dropped, &m->unwind_misses, &c->null_values,
	};
	_Static_assert(ARRAY_SIZE(fields) == N_COUNTER_KEYS, "counter_keys");
	bool first = true;
	__u64 seen = 0;
	int r, k;

	r = json__begin(&p->j, "counters", '{');
	while (!r && (r = json__next_member(&p->j, &first)) > 0) {
		r = json__match_key(&p->j, counter_keys, N_COUNTER_KEYS, &seen, &k);
		if (!r)
			r = k < 0 ? json__skip(&p->j)
				  : json__u64(&p->j, counter_keys[k], fields[k]);
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

	if (json__peek(&p->j) != '{')
		return json__wrong_type(&p->j, "processes", "an array of objects");
	at = p->j.pos;
	r = json__enter(&p->j, '{');
	while (!r && (r = json__next_member(&p->j, &first)) > 0) {
		r = json__match_key(&p->j, process_keys, P_COUNT, &seen, &k);
		if (r)
			return r;
		if (k == P_PID)
			r = json__u32(&p->j, "pid", &proc.pid);
		else if (k == P_NAME)
			r = read_bytes_or_null(p, "name", &proc.name, &present);
		else if (k == P_EXECUTABLE)
			r = read_bytes_or_null(p, "executable", &proc.executable, &present);
		else
			r = json__skip(&p->j);
	}
	if (r)
		return r;
	if (!(seen & (1ull << P_PID)))
		return json__fail(&p->j, at, "process without \"pid\"");
	if (symprof__process(p->sp, proc.pid))
		return json__fail(&p->j, at, "a second process with pid %u", proc.pid);
	return symprof__set_process(p->sp, &proc) ? json__oom(&p->j) : 0;
}

static int read_processes(struct jp *p)
{
	bool first = true;
	int r;

	r = json__begin(&p->j, "processes", '[');
	while (!r && (r = json__next_element(&p->j, &first)) > 0)
		r = read_process(p);
	return r;
}

/* The status bit the flag in p->j.str names, or -1. */
static int flag_bit(const struct jp *p)
{
	const char *s = (const char *)p->j.str;
	unsigned int bit;
	size_t n = p->j.str_len;

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

	r = json__begin(&p->j, "flags", '[');
	while (!r && (r = json__next_element(&p->j, &first)) > 0) {
		if (json__peek(&p->j) != '"')
			return json__wrong_type(&p->j, "flags", "an array of strings");
		r = json__string(&p->j);
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

	r = json__begin(&p->j, "labels", '{');
	while (!r && (r = json__next_member(&p->j, &first)) > 0) {
		struct label_in *l;

		r = json__reserve(&p->j, &p->labels_in, &p->labels_in_cap, n + 1,
				  sizeof(*p->labels_in));
		if (r)
			return r;
		l = &p->labels_in[n++];
		l->at = p->j.key_at;
		l->label.key = symprof__string(p->sp, p->j.str, p->j.str_len);
		l->label.source = LP_SRC_CUSTOM_LABELS;
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
	r = json__reserve(&p->j, &p->labels, &p->labels_cap, n, sizeof(*p->labels));
	if (r)
		return r;
	for (i = 0; i < n; i++) {
		if (i && p->labels_in[i].label.key == p->labels_in[i - 1].label.key &&
		    !symprof__error(p->sp))
			return json__fail(&p->j, p->labels_in[i].at, "duplicate label key");
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
	I_SYMBOL,
	I_FILE,
	I_LINE,
	I_COUNT,
};

static const char *const inline_keys[I_COUNT] = {
	[I_FUNCTION] = "function",
	[I_SYMBOL] = "symbol",
	[I_FILE] = "file",
	[I_LINE] = "line",
};

/* "inlined": {function, file, line} innermost first, appended to p->lines. */
static int read_inlined(struct jp *p, size_t *n)
{
	bool first = true;
	int r;

	r = json__begin(&p->j, "inlined", '[');
	while (!r && (r = json__next_element(&p->j, &first)) > 0) {
		struct sp_function fn = {};
		bool ofirst = true, present;
		__u32 line = 0;
		__u64 seen = 0;
		int k;

		r = json__begin(&p->j, "inlined", '{');
		while (!r && (r = json__next_member(&p->j, &ofirst)) > 0) {
			r = json__match_key(&p->j, inline_keys, I_COUNT, &seen, &k);
			if (r)
				break;
			if (k == I_FUNCTION)
				r = read_bytes_or_null(p, "function", &fn.name, &present);
			else if (k == I_SYMBOL)
				r = read_bytes_or_null(p, "symbol", &fn.system_name, &present);
			else if (k == I_FILE)
				r = read_bytes_or_null(p, "file", &fn.file, &present);
			else if (k == I_LINE && !json__null(&p->j))
				r = json__u32(&p->j, "line", &line);
			else if (k < 0)
				r = json__skip(&p->j);
		}
		if (r)
			break;
		r = json__reserve(&p->j, &p->lines, &p->lines_cap, *n + 1, sizeof(*p->lines));
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
	F_SYMBOL,
	F_OFFSET,
	F_MODULE_OFFSET,
	F_BUILD_ID,
	F_FILE,
	F_LINE,
	F_INLINED,
	F_KIND,
	F_COUNT,
};

static const char *const frame_keys[F_COUNT] = {
	[F_ADDRESS] = "address",   [F_KERNEL] = "kernel", [F_MODULE] = "module",
	[F_FUNCTION] = "function", [F_SYMBOL] = "symbol", [F_OFFSET] = "offset",
	[F_MODULE_OFFSET] = "module_offset",
	[F_BUILD_ID] = "build_id", [F_FILE] = "file",	  [F_LINE] = "line",
	[F_INLINED] = "inlined",   [F_KIND] = "kind",
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
	bool first = true, has_module = false, has_function = false, has_symbol = false;
	bool has_file = false;
	enum frame_kind kind;
	size_t at, n = 0;
	__u32 line = 0;
	__u64 seen = 0;
	int r, k;

	r = json__begin(&p->j, "frames", '{');
	at = p->j.pos - 1;
	while (!r && (r = json__next_member(&p->j, &first)) > 0) {
		r = json__match_key(&p->j, frame_keys, F_COUNT, &seen, &k);
		if (r)
			return r;
		switch (k) {
		case F_ADDRESS:
			r = json__hex_u64(&p->j, "address", &loc.address);
			break;
		case F_KERNEL:
			r = json__bool(&p->j, "kernel", &loc.kernel);
			break;
		case F_MODULE:
			r = read_bytes_or_null(p, "module", &m.file, &has_module);
			break;
		case F_FUNCTION:
			r = read_bytes_or_null(p, "function", &fn.name, &has_function);
			break;
		case F_SYMBOL:
			r = read_bytes_or_null(p, "symbol", &fn.system_name, &has_symbol);
			break;
		case F_OFFSET:
			if (!json__null(&p->j))
				r = json__u64(&p->j, "offset", &loc.function_offset);
			break;
		case F_MODULE_OFFSET:
			if (!json__null(&p->j))
				r = json__hex_u64(&p->j, "module_offset", &loc.module_offset);
			break;
		case F_BUILD_ID:
			if (!json__null(&p->j))
				r = read_hex_bytes(p, "build_id", &m.build_id);
			break;
		case F_FILE:
			r = read_bytes_or_null(p, "file", &fn.file, &has_file);
			break;
		case F_LINE:
			if (!json__null(&p->j))
				r = json__u32(&p->j, "line", &line);
			break;
		case F_INLINED:
			r = read_inlined(p, &n);
			break;
		case F_KIND:
			/* a kind this version does not know: native */
			r = json__string(&p->j);
			if (!r && frame_kind__by_json(p->j.str, p->j.str_len, &kind))
				loc.kind = kind;
			break;
		default:
			r = json__skip(&p->j);
		}
	}
	if (r)
		return r;
	if (!(seen & (1ull << F_ADDRESS)))
		return json__fail(&p->j, at, "frame without \"address\"");
	if (has_module || m.build_id) {
		m.kernel = loc.kernel;
		m.limit = loc.kernel ? SP_UNKNOWN : 0;
		loc.mapping = symprof__mapping(p->sp, &m);
	}
	if (has_function || has_symbol || has_file || line || n) {
		r = json__reserve(&p->j, &p->lines, &p->lines_cap, n + 1, sizeof(*p->lines));
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

	r = json__begin(&p->j, "frames", '[');
	while (!r && (r = json__next_element(&p->j, &first)) > 0) {
		r = json__reserve(&p->j, &p->frames, &p->frames_cap, n + 1, sizeof(*p->frames));
		if (!r)
			r = read_frame(p, &p->frames[n++]);
	}
	if (r)
		return r;
	*stack = symprof__stack(p->sp, p->frames, n);
	return 0;
}

/*
 * label_sources: {key: source}, in *n; a source this version does not name
 * reads as custom labels (docs/json-format.md).
 */
static int read_label_sources(struct jp *p, size_t *n)
{
	bool first = true;
	__u32 key;
	int r;

	*n = 0;
	r = json__begin(&p->j, "label_sources", '{');
	while (!r && (r = json__next_member(&p->j, &first)) > 0) {
		key = symprof__string(p->sp, p->j.str, p->j.str_len);
		if (json__peek(&p->j) != '"')
			return json__wrong_type(&p->j, "label source", "a string");
		r = json__string(&p->j);
		if (r)
			return r;
		r = json__reserve(&p->j, &p->sources, &p->sources_cap, *n + 1, sizeof(*p->sources));
		if (r)
			return r;
		p->sources[*n] = (struct sp_label){
			key, 0, fmt__label_source_by_name(p->j.str, p->j.str_len)};
		(*n)++;
	}
	return r;
}

/* The label set id with the sources of label_sources[0..n) applied. */
static __u32 apply_sources(struct jp *p, __u32 set, size_t n)
{
	const struct sp_range *r = &p->sp->label_sets[set];
	size_t i, j;

	if (!set || !n ||
	    json__reserve(&p->j, &p->labels, &p->labels_cap, r->count, sizeof(*p->labels)))
		return set;
	memcpy(p->labels, p->sp->labels + r->first, r->count * sizeof(*p->labels));
	for (i = 0; i < r->count; i++)
		for (j = 0; j < n; j++)
			if (p->labels[i].key == p->sources[j].key)
				p->labels[i].source = p->sources[j].source;
	return symprof__label_set(p->sp, p->labels, r->count);
}

enum sample_key {
	S_PID,
	S_TID,
	S_COMM,
	S_LABELS,
	S_FLAGS,
	S_COUNT,
	S_FRAMES,
	S_LABEL_SOURCES,
	S_UNWIND,
	S_KEYS,
};

static const char *const sample_keys[S_KEYS] = {
	[S_PID] = "pid",       [S_TID] = "tid",
	[S_COMM] = "comm",     [S_LABELS] = "labels",
	[S_FLAGS] = "flags",   [S_COUNT] = "count",
	[S_FRAMES] = "frames", [S_LABEL_SOURCES] = "label_sources",
	[S_UNWIND] = "unwind",
};

/* pid, tid and count make a sample; the rest may be missing (none, empty). */
#define SAMPLE_REQUIRED ((1ull << S_PID) | (1ull << S_TID) | (1ull << S_COUNT))

static int read_sample(struct jp *p)
{
	struct sp_sample s = {};
	bool first = true;
	__u64 seen = 0;
	size_t at, nsources = 0;
	int r, k;

	if (json__peek(&p->j) != '{')
		return json__wrong_type(&p->j, "samples", "an array of objects");
	at = p->j.pos;
	r = json__enter(&p->j, '{');
	while (!r && (r = json__next_member(&p->j, &first)) > 0) {
		r = json__match_key(&p->j, sample_keys, S_KEYS, &seen, &k);
		if (r)
			return r;
		switch (k) {
		case S_PID:
			r = json__u32(&p->j, "pid", &s.pid);
			break;
		case S_TID:
			r = json__u32(&p->j, "tid", &s.tid);
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
			r = json__u64(&p->j, "count", &s.count);
			break;
		case S_FRAMES:
			r = read_frames(p, &s.stack);
			break;
		case S_LABEL_SOURCES:
			r = read_label_sources(p, &nsources);
			break;
		case S_UNWIND:
			if (json__peek(&p->j) != '"')
				return json__wrong_type(&p->j, "unwind", "a string");
			r = json__string(&p->j);
			/* a name a later writer gives is left out, as flags are */
			if (!r)
				s.status |= fmt__unwind_bits((const char *)p->j.str, p->j.str_len);
			break;
		default:
			r = json__skip(&p->j);
		}
	}
	if (r)
		return r;
	if ((seen & SAMPLE_REQUIRED) != SAMPLE_REQUIRED)
		return json__fail(&p->j, at, "sample without \"%s\"",
				  sample_keys[!(seen & (1ull << S_PID))	  ? S_PID
					      : !(seen & (1ull << S_TID)) ? S_TID
									  : S_COUNT]);
	if (p->total + s.count < p->total)
		return json__fail(&p->j, at, "the sample counts add up past 2^64 - 1");
	p->total += s.count;
	s.label_set = apply_sources(p, s.label_set, nsources);
	if (symprof__error(p->sp) || symprof__add_sample(p->sp, &s))
		return json__oom(&p->j);
	return 0;
}

static int read_samples(struct jp *p)
{
	bool first = true;
	int r;

	r = json__begin(&p->j, "samples", '[');
	while (!r && (r = json__next_element(&p->j, &first)) > 0)
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

	if (json__peek(&p->j) < 0)
		return json__fail(&p->j, p->j.pos, "empty document");
	if (json__peek(&p->j) != '{')
		return json__unexpected(&p->j, "'{' (a labelprof JSON document is an object)");
	r = json__enter(&p->j, '{');
	while (!r && (r = json__next_member(&p->j, &first)) > 0) {
		/* only the first two keys: others may repeat until pass 2 says so */
		r = json__match_key(&p->j, doc_keys, D_VERSION + 1, &seen, &k);
		if (r)
			return r;
		if (k == D_FORMAT) {
			if (json__peek(&p->j) != '"')
				return json__wrong_type(&p->j, "format", "a string");
			r = json__string(&p->j);
			format_ok =
				!r && p->j.str_len == 14 && !memcmp(p->j.str, "labelprof-json", 14);
		} else if (k == D_VERSION) {
			version_at = p->j.pos;
			r = json__u64(&p->j, "version", &version);
		} else {
			r = json__skip(&p->j);
		}
	}
	if (r)
		return r;
	if (json__peek(&p->j) >= 0)
		return json__fail(&p->j, p->j.pos, "data after the end of the document");
	if (!(seen & (1ull << D_FORMAT)))
		return json__fail(&p->j, 0, "not a labelprof JSON document: no \"format\" key");
	if (!format_ok)
		return json__fail(
			&p->j, 0,
			"not a labelprof JSON document: \"format\" is not \"labelprof-json\"");
	if (!(seen & (1ull << D_VERSION)))
		return json__fail(&p->j, 0, "no \"version\" key");
	if (version != 1)
		return json__fail(&p->j, version_at,
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

	p->j.pos = 0;
	p->j.depth = 0;
	json__peek(&p->j);
	r = json__enter(&p->j, '{');
	while (!r && (r = json__next_member(&p->j, &first)) > 0) {
		r = json__match_key(&p->j, doc_keys, D_COUNT, &seen, &k);
		if (r)
			return r;
		switch (k) {
		case D_FREQUENCY_HZ:
			r = json__u64(&p->j, doc_keys[k], &m->frequency_hz);
			break;
		case D_START_TIME:
			r = json__u64(&p->j, doc_keys[k], &m->start_time_unix_ns);
			break;
		case D_DURATION:
			r = json__u64(&p->j, doc_keys[k], &m->duration_ns);
			break;
		case D_HOST_NAME:
			r = read_bytes_or_null(p, doc_keys[k], &m->host_name, &present);
			break;
		case D_PERIOD:
			r = json__u64(&p->j, doc_keys[k], &m->period_ns);
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
			r = json__skip(&p->j);
		}
	}
	if (r)
		return r;
	if (!(seen & (1ull << D_SAMPLES)))
		return json__fail(&p->j, 0, "no \"samples\" key");
	/* documents from before period_ns was written */
	if (!(seen & (1ull << D_PERIOD)) && m->frequency_hz)
		m->period_ns = 1000000000ull / m->frequency_hz;
	return symprof__error(p->sp) ? json__oom(&p->j) : 0;
}

int input__read_json(const void *buf, size_t len, struct symprof *sp, char *err, size_t errlen)
{
	struct jp p = {.j = {.buf = buf, .len = len, .err = err, .errlen = errlen}, .sp = sp};
	int r;

	if (errlen)
		err[0] = 0;
	r = check_header(&p);
	if (!r)
		r = read_document(&p);
	free(p.j.str);
	free(p.labels_in);
	free(p.labels);
	free(p.frames);
	free(p.lines);
	free(p.sources);
	return r;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * HTML writer: one self-contained page (user/format/html/: template, CSS and the
 * flame graph's JS, embedded at build time by user/build.mk) around the
 * profile as a JSON blob in <script type="application/json">:
 *
 *   {"v":1,"meta":{...},                meta.process_keys: the keys of the
 *                                        OpenTelemetry process context
 *                                        (resource attributes)
 *    "locs":[[module,kind,name...]...],  by location id; names root-most
 *                                        first (the function, then what is
 *                                        inlined into it); kind: the
 *                                        frame kind's (lib/frame_kind.h),
 *                                        which flamegraph.js knows too; with
 *                                        no function [module,kind,"0xOFF"]
 *    "srcs":[[file,line...]...],         by location id: the source file
 *                                        and line of each name of "locs",
 *                                        in its order (0: unknown)
 *    "stacks":[[loc...]...],             by stack id, root first
 *    "sets":[[key,value...]...],         by label set id, sorted by key;
 *                                        trace and span ids left out, the
 *                                        value of a folded key "*"
 *                                        (format/labelfold.h), meta.folded
 *                                        lists those keys
 *    "samples":[proc,set,stack,count,dropped,...],  flat, merged over pids
 *                                        and tids of the same process name
 *    "strings":[...]}                    every name above is an index here
 *
 * Strings are shown, not decoded: control bytes, "\", bytes that are not
 * UTF-8 and the code points that reorder or break text (bidi controls,
 * U+2028, U+2029) become the text \xHH, one per byte, so what a person sees
 * is lossless and equal bytes give equal text. Inside the JSON, < > & are
 * \u escapes so that no byte sequence can close the script element.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html_assets.h"
#include "format/labelfold.h"
#include "format/output.h"
#include "lib/frame_kind.h"
#include "profile/profile.h"
#include "profile/symprof.h"

struct html {
	FILE *f;
	const struct symprof *sp;
	__u32 *page_id; /* symprof string id -> index in "strings" (0: not written yet) */
	__u32 *order;	/* index in "strings" -> symprof string id */
	size_t nstrings;
	struct labelfold fold;
	__u32 folded_value; /* index in "strings" of LABELFOLD_VALUE; 0: not written yet */
};

/* An order[] entry that stands for LABELFOLD_VALUE, which the symprof may not hold. */
#define FOLDED_VALUE_ID UINT32_MAX

/* One line of "samples" before merging. */
struct html_sample {
	__u32 proc; /* symprof string id of the process name */
	__u32 set;
	__u32 stack;
	__u32 dropped;
	__u64 count;
};

static const char hex[] = "0123456789abcdef";

/* Code points that would reorder or break the text around them: shown as bytes. */
static bool is_format_char(const unsigned char *s, size_t len)
{
	__u32 cp;

	if (len != 3)
		return false;
	cp = (s[0] & 0x0f) << 12 | (s[1] & 0x3f) << 6 | (s[2] & 0x3f);
	return cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

static void put_shown(FILE *f, const unsigned char *s, size_t n)
{
	size_t i = 0, len, j;

	putc_unlocked('"', f);
	while (i < n) {
		unsigned char c = s[i];

		len = output__utf8_len(s + i, n - i);
		if (c == '<' || c == '>' || c == '&') {
			fprintf(f, "\\u%04x", c);
		} else if (c == '"') {
			fputs_unlocked("\\\"", f);
		} else if (c < 0x20 || c == 0x7f || c == '\\' || !len ||
			   is_format_char(s + i, len)) {
			/* The text \xHH per byte, its backslash escaped for JSON. */
			len = len ? len : 1;
			for (j = 0; j < len; j++) {
				fputs_unlocked("\\\\x", f);
				putc_unlocked(hex[s[i + j] >> 4], f);
				putc_unlocked(hex[s[i + j] & 15], f);
			}
		} else {
			fwrite_unlocked(s + i, 1, len, f);
		}
		i += len;
	}
	putc_unlocked('"', f);
}

/* The page's index of symprof string id; 0 stays 0 (""). */
static __u32 page_string(struct html *h, __u32 id)
{
	if (id && !h->page_id[id]) {
		h->page_id[id] = h->nstrings;
		h->order[h->nstrings++] = id;
	}
	return h->page_id[id];
}

static void put_locations(struct html *h)
{
	const struct symprof *sp = h->sp;
	size_t i;
	__u32 j;

	fputs_unlocked(",\n\"locs\":[", h->f);
	for (i = 0; i < sp->location_count; i++) {
		const struct sp_location *loc = &sp->locations[i];
		const struct sp_mapping *m = &sp->mappings[loc->mapping];

		fprintf(h->f, "%s[%" PRIu32 ",%u", i ? "," : "", page_string(h, m->file),
			frame_kinds[frame_kind__of(loc->kernel, loc->kind)].html_kind);
		/* lines[] is innermost first: the page wants the caller first. */
		for (j = loc->line_count; j-- > 0;) {
			const struct sp_line *l = &sp->lines[loc->first_line + j];

			fprintf(h->f, ",%" PRIu32, page_string(h, sp->functions[l->function].name));
		}
		if (!loc->line_count && loc->module_offset != SP_UNKNOWN)
			fprintf(h->f, ",\"0x%" PRIx64 "\"", (uint64_t)loc->module_offset);
		putc_unlocked(']', h->f);
	}
	putc_unlocked(']', h->f);
}

static void put_sources(struct html *h)
{
	const struct symprof *sp = h->sp;
	size_t i;
	__u32 j;

	fputs_unlocked(",\n\"srcs\":[", h->f);
	for (i = 0; i < sp->location_count; i++) {
		const struct sp_location *loc = &sp->locations[i];

		fputs_unlocked(i ? ",[" : "[", h->f);
		for (j = loc->line_count; j-- > 0;) {
			const struct sp_line *l = &sp->lines[loc->first_line + j];

			fprintf(h->f, "%s%" PRIu32 ",%" PRIu32, j + 1 < loc->line_count ? "," : "",
				page_string(h, sp->functions[l->function].file), l->line);
		}
		putc_unlocked(']', h->f);
	}
	putc_unlocked(']', h->f);
}

static void put_stacks(struct html *h)
{
	const struct symprof *sp = h->sp;
	size_t i;
	__u32 j;

	fputs_unlocked(",\n\"stacks\":[", h->f);
	for (i = 0; i < sp->stack_count; i++) {
		const struct sp_range *r = &sp->stacks[i];

		fputs_unlocked(i ? ",[" : "[", h->f);
		for (j = r->count; j-- > 0;)
			fprintf(h->f, "%" PRIu32 "%s", sp->stack_locations[r->first + j],
				j ? "," : "");
		putc_unlocked(']', h->f);
	}
	putc_unlocked(']', h->f);
}

static __u32 folded_value(struct html *h)
{
	if (!h->folded_value) {
		h->folded_value = h->nstrings;
		h->order[h->nstrings++] = FOLDED_VALUE_ID;
	}
	return h->folded_value;
}

static void put_label_sets(struct html *h)
{
	const struct symprof *sp = h->sp;
	size_t i, shown;
	__u32 j;

	fputs_unlocked(",\n\"sets\":[", h->f);
	for (i = 0; i < sp->label_set_count; i++) {
		const struct sp_range *r = &sp->label_sets[i];

		fputs_unlocked(i ? ",[" : "[", h->f);
		for (j = 0, shown = 0; j < r->count; j++) {
			const struct sp_label *l = &sp->labels[r->first + j];
			enum label_shown how = labelfold__shown(&h->fold, l->key);
			__u32 k, v;

			if (how == LABEL_HIDDEN)
				continue;
			k = page_string(h, l->key);
			v = how == LABEL_FOLDED ? folded_value(h) : page_string(h, l->value);
			fprintf(h->f, "%s%" PRIu32 ",%" PRIu32, shown++ ? "," : "", k, v);
		}
		putc_unlocked(']', h->f);
	}
	putc_unlocked(']', h->f);
}

static int cmp_sample(const void *a, const void *b)
{
	const struct html_sample *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->set != y->set)
		return x->set < y->set ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return (x->dropped > y->dropped) - (x->dropped < y->dropped);
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return (x > y) - (x < y);
}

/* Samples merged over the pids and tids of one process name. */
static int put_samples(struct html *h)
{
	const struct symprof *sp = h->sp;
	struct html_sample *v;
	size_t i, n = 0;

	v = calloc(sp->sample_count ? sp->sample_count : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < sp->sample_count; i++) {
		const struct sp_sample *s = &sp->samples[i];
		const struct sp_process *p = symprof__process(sp, s->pid);

		v[i] = (struct html_sample){
			.proc = p && p->name ? p->name : s->comm,
			.set = s->label_set,
			.stack = s->stack,
			.dropped = !!(s->status & PROFILE_ST_DROPPED),
			.count = s->count,
		};
	}
	qsort(v, sp->sample_count, sizeof(*v), cmp_sample);
	fputs_unlocked(",\n\"samples\":[", h->f);
	for (i = 0; i < sp->sample_count; i++) {
		struct html_sample *s = &v[i];

		if (i + 1 < sp->sample_count && !cmp_sample(s, s + 1)) {
			s[1].count += s->count;
			continue;
		}
		fprintf(h->f, "%s%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu32,
			n++ ? ",\n" : "", page_string(h, s->proc), s->set, s->stack,
			(uint64_t)s->count, s->dropped);
	}
	putc_unlocked(']', h->f);
	free(v);
	return 0;
}

/* Distinct pids among the samples. */
static int count_processes(const struct symprof *sp, size_t *out)
{
	__u32 *pids = calloc(sp->sample_count ? sp->sample_count : 1, sizeof(*pids));
	size_t i, n = 0;

	if (!pids)
		return -ENOMEM;
	for (i = 0; i < sp->sample_count; i++)
		pids[i] = sp->samples[i].pid;
	qsort(pids, sp->sample_count, sizeof(*pids), cmp_u32);
	for (i = 0; i < sp->sample_count; i++)
		n += !i || pids[i] != pids[i - 1];
	free(pids);
	*out = n;
	return 0;
}

/* seen: a byte per symprof string, zeroed */
static void put_meta(struct html *h, size_t processes, unsigned char *seen)
{
	const struct sp_meta *m = &h->sp->meta;
	size_t i, n;

	fprintf(h->f,
		"{\"v\":1,\"meta\":{\"samples\":%" PRIu64 ",\"frequency_hz\":%" PRIu64
		",\"period_ns\":%" PRIu64 ",\"start_ms\":%" PRIu64 ",\"duration_ns\":%" PRIu64
		",\"ringbuf_drops\":%" PRIu64 ",\"samples_dropped\":%" PRIu64
		",\"label_read_faults\":%" PRIu64 ",\"truncations\":%" PRIu64
		",\"processes\":%zu,\"host\":%" PRIu32,
		(uint64_t)symprof__total(h->sp), (uint64_t)m->frequency_hz, (uint64_t)m->period_ns,
		(uint64_t)(m->start_time_unix_ns / 1000000), (uint64_t)m->duration_ns,
		(uint64_t)m->counters.ringbuf_drops, (uint64_t)m->samples_dropped,
		(uint64_t)m->counters.label_read_faults, (uint64_t)m->counters.truncations,
		processes, page_string(h, m->host_name));
	/* the process context's keys: they describe a process, not its work */
	fputs_unlocked(",\"process_keys\":[", h->f);
	for (i = 0, n = 0; i < h->sp->label_count; i++) {
		const struct sp_label *l = &h->sp->labels[i];

		if (l->source != LP_SRC_OTEL_PROCESS || l->key >= h->sp->string_count ||
		    labelfold__shown(&h->fold, l->key) == LABEL_HIDDEN || seen[l->key])
			continue;
		seen[l->key] = 1;
		fprintf(h->f, "%s%" PRIu32, n++ ? "," : "", page_string(h, l->key));
	}
	putc_unlocked(']', h->f);
	/* keys shown as KEY=*: [key, distinct values, the limit] */
	fputs_unlocked(",\"folded\":[", h->f);
	for (i = 0; i < h->fold.nfolded; i++)
		fprintf(h->f, "%s[%" PRIu32 ",%" PRIu32 ",%u]", i ? "," : "",
			page_string(h, h->fold.folded[i].key), h->fold.folded[i].values,
			h->fold.max_values);
	fputs_unlocked("]}", h->f);
}

static int put_data(struct html *h)
{
	unsigned char *seen;
	size_t processes, i;
	int err;

	err = count_processes(h->sp, &processes);
	if (err)
		return err;
	seen = calloc(h->sp->string_count ? h->sp->string_count : 1, 1);
	if (!seen)
		return -ENOMEM;
	put_meta(h, processes, seen);
	free(seen);
	put_locations(h);
	put_sources(h);
	put_stacks(h);
	put_label_sets(h);
	err = put_samples(h);
	if (err)
		return err;
	/* Last: only now is every string the page uses known. */
	fputs_unlocked(",\n\"strings\":[", h->f);
	for (i = 0; i < h->nstrings; i++) {
		const struct sp_string *s = symprof__str(h->sp, h->order[i]);

		if (i)
			putc_unlocked(',', h->f);
		if (h->order[i] == FOLDED_VALUE_ID)
			put_shown(h->f, (const unsigned char *)LABELFOLD_VALUE,
				  strlen(LABELFOLD_VALUE));
		else
			put_shown(h->f, s->bytes, s->len);
	}
	fputs_unlocked("]}", h->f);
	return 0;
}

int output__write_html(FILE *f, const struct symprof *sp, const struct output_opts *opts)
{
	struct html h = {.f = f, .sp = sp, .nstrings = 1};
	size_t n = sp->string_count ? sp->string_count : 1;
	int err = -ENOMEM;

	h.page_id = calloc(n, sizeof(*h.page_id));
	/* one more: the folded value */
	h.order = calloc(n + 1, sizeof(*h.order));
	if (!h.page_id || !h.order ||
	    labelfold__init(&h.fold, sp, opts ? opts->max_label_values : 0))
		goto out_free;
	flockfile(f);
	fwrite_unlocked(html_head, 1, sizeof(html_head), f);
	err = put_data(&h);
	fwrite_unlocked(html_tail, 1, sizeof(html_tail), f);
	funlockfile(f);
	if (err)
		goto out_free;
	err = fflush(f) ? -errno : ferror(f) ? -EIO : 0;
out_free:
	labelfold__free(&h.fold);
	free(h.page_id);
	free(h.order);
	return err;
}

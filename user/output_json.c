// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * JSON writer: the format is specified in docs/json-format.md. Byte strings
 * are written as JSON strings: valid UTF-8 as is (with JSON escapes), every
 * other byte as the lone surrogate \udcXX, the convention of Python's
 * "surrogateescape", so decoders that know it recover the exact bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "output.h"
#include "profile.h"
#include "symbols.h"

struct json {
	FILE *f;
	struct symbolizer *sym;
	bool first;
};

static const char hex[] = "0123456789abcdef";

static void put_bytes(FILE *f, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i = 0;

	putc_unlocked('"', f);
	while (i < n) {
		unsigned char c = s[i];
		size_t len;

		if (c == '"' || c == '\\') {
			putc_unlocked('\\', f);
			putc_unlocked(c, f);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
		} else if ((len = output__utf8_len(s + i, n - i))) {
			fwrite_unlocked(s + i, 1, len, f);
			i += len;
		} else {
			fprintf(f, "\\udc%c%c", hex[c >> 4], hex[c & 15]);
			i++;
		}
	}
	putc_unlocked('"', f);
}

static void put_str_or_null(FILE *f, const char *s)
{
	if (s)
		put_bytes(f, s, strlen(s));
	else
		fputs_unlocked("null", f);
}

static const char *const flag_names[32] = {
	[0] = "no_recipe",  [1] = "labels_read",     [2] = "read_fault",   [3] = "truncated",
	[4] = "malformed",  [5] = "dtv_unallocated", [6] = "kstack_error", [7] = "ustack_error",
	[8] = "labels_off", [9] = "tls_pending",     [10] = "exiting",	   [31] = "dropped",
};

_Static_assert(LP_ST_NO_RECIPE == 1 << 0 && LP_ST_TRUNCATED == 1 << 3 &&
		       LP_ST_LABELS_OFF == 1 << 8 && LP_ST_TLS_PENDING == 1 << 9 &&
		       LP_ST_EXITING == 1 << 10 && PROFILE_ST_DROPPED == 1u << 31,
	       "flag_names follows the status bits");

static void put_flags(FILE *f, __u32 status)
{
	bool first = true;
	unsigned int bit;

	putc_unlocked('[', f);
	for (bit = 0; bit < 32; bit++) {
		if (!(status & (1u << bit)))
			continue;
		if (!first)
			putc_unlocked(',', f);
		first = false;
		if (flag_names[bit])
			fprintf(f, "\"%s\"", flag_names[bit]);
		else
			fprintf(f, "\"bit_%u\"", bit);
	}
	putc_unlocked(']', f);
}

static void put_frame(FILE *f, const struct sym_frame *fr, bool first)
{
	size_t i;

	fprintf(f, "%s{\"address\":\"0x%" PRIx64 "\",\"kernel\":%s,\"module\":", first ? "" : ",",
		(uint64_t)fr->address, fr->kernel ? "true" : "false");
	put_str_or_null(f, fr->module);
	fputs_unlocked(",\"function\":", f);
	put_str_or_null(f, fr->function);
	if (fr->function)
		fprintf(f, ",\"offset\":%" PRIu64, (uint64_t)fr->offset);
	else
		fputs_unlocked(",\"offset\":null", f);
	if (fr->module)
		fprintf(f, ",\"module_offset\":\"0x%" PRIx64 "\"", (uint64_t)fr->module_offset);
	else
		fputs_unlocked(",\"module_offset\":null", f);
	fputs_unlocked(",\"build_id\":", f);
	if (fr->build_id_len) {
		putc_unlocked('"', f);
		for (i = 0; i < fr->build_id_len; i++) {
			putc_unlocked(hex[fr->build_id[i] >> 4], f);
			putc_unlocked(hex[fr->build_id[i] & 15], f);
		}
		putc_unlocked('"', f);
	} else {
		fputs_unlocked("null", f);
	}
	putc_unlocked('}', f);
}

static int put_sample(const struct profile_sample *s, void *ctx)
{
	struct json *j = ctx;
	FILE *f = j->f;
	struct sym_frame fr;
	size_t i;

	fprintf(f, "%s\n{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"comm\":", j->first ? "" : ",",
		s->pid, s->tid);
	j->first = false;
	put_bytes(f, s->comm, s->comm_len);
	fputs_unlocked(",\"labels\":{", f);
	for (i = 0; i < s->label_count; i++) {
		if (i)
			putc_unlocked(',', f);
		put_bytes(f, s->labels[i].key, s->labels[i].key_len);
		putc_unlocked(':', f);
		put_bytes(f, s->labels[i].value, s->labels[i].value_len);
	}
	fputs_unlocked("},\"flags\":", f);
	put_flags(f, s->status);
	fprintf(f, ",\"count\":%" PRIu64 ",\"frames\":[", (uint64_t)s->count);
	/* Leaf first: kernel frames, then user frames; only a leaf IP is exact. */
	for (i = 0; i < s->kstack_len; i++) {
		if (j->sym)
			symbolizer__resolve_kernel(j->sym, s->kstack[i], i ? SYM_RETURN_ADDRESS : 0,
						   &fr);
		else
			fr = (struct sym_frame){.address = s->kstack[i], .kernel = true};
		put_frame(f, &fr, i == 0);
	}
	for (i = 0; i < s->ustack_len; i++) {
		unsigned int flags = i || s->kstack_len ? SYM_RETURN_ADDRESS : 0;

		if (j->sym)
			symbolizer__resolve_user(j->sym, s->snapshot, s->ustack[i], flags, &fr);
		else
			fr = (struct sym_frame){.address = s->ustack[i]};
		put_frame(f, &fr, i == 0 && !s->kstack_len);
	}
	fputs_unlocked("]}", f);
	return ferror(f) ? -EIO : 0;
}

int output__write_json(FILE *f, const struct profile *p, struct symbolizer *sym,
		       const struct output_meta *meta)
{
	static const struct output_meta zero;
	const struct lp_counters *c;
	struct json j = {f, sym, true};
	struct profile_stats st;
	int err;

	if (!meta)
		meta = &zero;
	c = &meta->counters;
	profile__stats(p, &st);
	flockfile(f);
	fprintf(f,
		"{\"format\":\"labelprof-json\",\"version\":1,\"frequency_hz\":%" PRIu64
		",\"start_time_unix_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",\n\"counters\":{",
		(uint64_t)meta->frequency_hz, (uint64_t)meta->start_time_unix_ns,
		(uint64_t)meta->duration_ns);
	fprintf(f,
		"\"samples\":%" PRIu64 ",\"samples_with_labels\":%" PRIu64
		",\"label_read_faults\":%" PRIu64 ",\"truncations\":%" PRIu64
		",\"malformed_labels\":%" PRIu64 ",\"ringbuf_drops\":%" PRIu64
		",\"event_drops\":%" PRIu64 ",\"unknown_pids\":%" PRIu64 ",\"filtered\":%" PRIu64
		",\"kernel_threads\":%" PRIu64,
		(uint64_t)c->samples, (uint64_t)c->samples_with_labels,
		(uint64_t)c->label_read_faults, (uint64_t)c->truncations,
		(uint64_t)c->malformed_labels, (uint64_t)c->ringbuf_drops, (uint64_t)c->event_drops,
		(uint64_t)c->unknown_pids, (uint64_t)c->filtered, (uint64_t)c->kernel_threads);
	fprintf(f,
		",\"samples_received\":%" PRIu64 ",\"records_rejected\":%" PRIu64
		",\"samples_dropped\":%" PRIu64 "},\n\"samples\":[",
		(uint64_t)st.samples, (uint64_t)st.rejected, (uint64_t)st.dropped);
	err = profile__for_each(p, put_sample, &j);
	fputs_unlocked("\n]}\n", f);
	funlockfile(f);
	if (err)
		return err;
	if (fflush(f))
		return -errno;
	return ferror(f) ? -EIO : 0;
}

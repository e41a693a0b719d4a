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

#include "format/fmt.h"
#include "format/output.h"
#include "lib/frame_kind.h"
#include "profile/profile.h"
#include "profile/symprof.h"

static const char hex[] = "0123456789abcdef";

static void put_string(FILE *f, const struct symprof *sp, __u32 id)
{
	const struct sp_string *str = symprof__str(sp, id);

	if (id)
		fmt__json_bytes(f, str->bytes, str->len);
	else
		fputs_unlocked("null", f);
}

static void put_hex(FILE *f, const unsigned char *p, size_t n)
{
	size_t i;

	putc_unlocked('"', f);
	for (i = 0; i < n; i++) {
		putc_unlocked(hex[p[i] >> 4], f);
		putc_unlocked(hex[p[i] & 15], f);
	}
	putc_unlocked('"', f);
}

/* "function", "symbol" (when it has one), "file" and "line" of one line of a location. */
static void put_position(FILE *f, const struct symprof *sp, const struct sp_line *l)
{
	const struct sp_function *fn = &sp->functions[l ? l->function : 0];

	fputs_unlocked("\"function\":", f);
	put_string(f, sp, fn->name);
	if (fn->system_name) {
		fputs_unlocked(",\"symbol\":", f);
		put_string(f, sp, fn->system_name);
	}
	fputs_unlocked(",\"file\":", f);
	put_string(f, sp, fn->file);
	if (l && l->line)
		fprintf(f, ",\"line\":%" PRIu32, l->line);
	else
		fputs_unlocked(",\"line\":null", f);
}

static void put_frame(FILE *f, const struct symprof *sp, __u32 location, bool first)
{
	const struct sp_location *loc = &sp->locations[location];
	const struct sp_mapping *m = &sp->mappings[loc->mapping];
	const struct sp_line *lines = sp->lines + loc->first_line;
	const struct sp_string *build_id = symprof__str(sp, m->build_id);
	const char *kind = frame_kinds[frame_kind__known(loc->kind)].json;
	__u32 i;

	fprintf(f, "%s{\"address\":\"0x%" PRIx64 "\",\"kernel\":%s,\"module\":", first ? "" : ",",
		(uint64_t)loc->address, loc->kernel ? "true" : "false");
	put_string(f, sp, m->file);
	/* native frames say nothing: only a runtime's are told apart */
	if (kind) {
		fputs_unlocked(",\"kind\":\"", f);
		fputs_unlocked(kind, f);
		putc_unlocked('"', f);
	}
	putc_unlocked(',', f);
	put_position(f, sp, loc->line_count ? &lines[loc->line_count - 1] : NULL);
	if (loc->function_offset != SP_UNKNOWN)
		fprintf(f, ",\"offset\":%" PRIu64, (uint64_t)loc->function_offset);
	else
		fputs_unlocked(",\"offset\":null", f);
	if (loc->module_offset != SP_UNKNOWN)
		fprintf(f, ",\"module_offset\":\"0x%" PRIx64 "\"", (uint64_t)loc->module_offset);
	else
		fputs_unlocked(",\"module_offset\":null", f);
	fputs_unlocked(",\"build_id\":", f);
	if (build_id->len)
		put_hex(f, build_id->bytes, build_id->len);
	else
		fputs_unlocked("null", f);
	if (loc->line_count > 1) {
		fputs_unlocked(",\"inlined\":[", f);
		for (i = 0; i + 1 < loc->line_count; i++) {
			fputs_unlocked(i ? ",{" : "{", f);
			put_position(f, sp, &lines[i]);
			putc_unlocked('}', f);
		}
		putc_unlocked(']', f);
	}
	putc_unlocked('}', f);
}

static void put_sample(FILE *f, const struct symprof *sp, const struct sp_sample *s, bool first)
{
	const struct sp_range *set = &sp->label_sets[s->label_set];
	const struct sp_range *stack = &sp->stacks[s->stack];
	__u32 i;

	fprintf(f, "%s\n{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"comm\":", first ? "" : ",",
		s->pid, s->tid);
	fmt__json_bytes(f, symprof__str(sp, s->comm)->bytes, symprof__str(sp, s->comm)->len);
	fputs_unlocked(",\"labels\":{", f);
	for (i = 0; i < set->count; i++) {
		const struct sp_label *l = &sp->labels[set->first + i];

		if (i)
			putc_unlocked(',', f);
		fmt__json_bytes(f, symprof__str(sp, l->key)->bytes, symprof__str(sp, l->key)->len);
		putc_unlocked(':', f);
		fmt__json_bytes(f, symprof__str(sp, l->value)->bytes, symprof__str(sp, l->value)->len);
	}
	putc_unlocked('}', f);
	/* which writer each label came from, custom labels left out (docs/json-format.md) */
	for (i = 0; i < set->count && sp->labels[set->first + i].source == LP_SRC_CUSTOM_LABELS;
	     i++)
		;
	if (i < set->count) {
		bool first_source = true;

		fputs_unlocked(",\"label_sources\":{", f);
		for (i = 0; i < set->count; i++) {
			const struct sp_label *l = &sp->labels[set->first + i];

			if (l->source == LP_SRC_CUSTOM_LABELS)
				continue;
			if (!first_source)
				putc_unlocked(',', f);
			first_source = false;
			fmt__json_bytes(f, symprof__str(sp, l->key)->bytes,
					symprof__str(sp, l->key)->len);
			fprintf(f, ":\"%s\"", fmt__label_source_name(l->source));
		}
		putc_unlocked('}', f);
	}
	fputs_unlocked(",\"flags\":", f);
	fmt__json_status(f, s->status & ~FMT_UNWIND_BITS);
	if (fmt__unwind_name(s->status))
		fprintf(f, ",\"unwind\":\"%s\"", fmt__unwind_name(s->status));
	fprintf(f, ",\"count\":%" PRIu64 ",\"frames\":[", (uint64_t)s->count);
	for (i = 0; i < stack->count; i++)
		put_frame(f, sp, sp->stack_locations[stack->first + i], i == 0);
	fputs_unlocked("]}", f);
}

int output__write_json(FILE *f, const struct symprof *sp, const struct output_opts *opts)
{
	const struct sp_meta *m = &sp->meta;
	const struct lp_counters *c = &m->counters;
	size_t i;

	flockfile(f);
	fprintf(f,
		"{\"format\":\"labelprof-json\",\"version\":1,\"frequency_hz\":%" PRIu64
		",\"start_time_unix_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",",
		(uint64_t)m->frequency_hz, (uint64_t)m->start_time_unix_ns,
		(uint64_t)m->duration_ns);
	fputs_unlocked("\"host_name\":", f);
	put_string(f, sp, m->host_name);
	fputs_unlocked(",\"period_ns\":", f);
	fprintf(f, "%" PRIu64 ",\n\"counters\":{", (uint64_t)m->period_ns);
	fprintf(f,
		"\"samples\":%" PRIu64 ",\"samples_with_labels\":%" PRIu64
		",\"label_read_faults\":%" PRIu64 ",\"truncations\":%" PRIu64
		",\"malformed_labels\":%" PRIu64 ",\"ringbuf_drops\":%" PRIu64
		",\"event_drops\":%" PRIu64 ",\"unknown_pids\":%" PRIu64 ",\"filtered\":%" PRIu64
		",\"kernel_threads\":%" PRIu64 ",\"null_values\":%" PRIu64,
		(uint64_t)c->samples, (uint64_t)c->samples_with_labels,
		(uint64_t)c->label_read_faults, (uint64_t)c->truncations,
		(uint64_t)c->malformed_labels, (uint64_t)c->ringbuf_drops, (uint64_t)c->event_drops,
		(uint64_t)c->unknown_pids, (uint64_t)c->filtered, (uint64_t)c->kernel_threads,
		(uint64_t)c->null_values);
	fprintf(f,
		",\"samples_received\":%" PRIu64 ",\"records_rejected\":%" PRIu64
		",\"samples_dropped\":%" PRIu64 ",\"unwind_misses\":%" PRIu64 "},\n\"processes\":[",
		(uint64_t)m->samples_received, (uint64_t)m->records_rejected,
		(uint64_t)m->samples_dropped, (uint64_t)m->unwind_misses);
	for (i = 0; i < sp->process_count; i++) {
		const struct sp_process *p = &sp->processes[i];

		fprintf(f, "%s\n{\"pid\":%" PRIu32 ",\"name\":", i ? "," : "", p->pid);
		put_string(f, sp, p->name);
		fputs_unlocked(",\"executable\":", f);
		put_string(f, sp, p->executable);
		putc_unlocked('}', f);
	}
	fputs_unlocked("],\n\"samples\":[", f);
	for (i = 0; i < sp->sample_count; i++)
		put_sample(f, sp, &sp->samples[i], i == 0);
	fputs_unlocked("\n]}\n", f);
	funlockfile(f);
	if (fflush(f))
		return -errno;
	return ferror(f) ? -EIO : 0;
}

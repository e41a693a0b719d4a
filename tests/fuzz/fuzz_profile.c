// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fuzzes sample aggregation and the writers: the input is a sequence of
 * ring-buffer records, each added to a profile, which every writer then
 * renders. Checks that no label or comm byte escapes a writer's quoting.
 *
 * Input: one options byte (bits 0-1: the memory limit), then records, each
 *   u8 mode; u16 len (little endian); len bytes (fewer at the end of input)
 * mode bit 0 sets the record's type and size to match len, bit 1 also makes
 * the stack and label lengths fit it, so that most inputs get past the record
 * checks; bit 2 adds the record twice.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/output.h"
#include "profile/profile.h"
#include "profile/symprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
	MODE_FIX_HDR = 1 << 0,
	MODE_FIX_LENGTHS = 1 << 1,
	MODE_TWICE = 1 << 2,
};

/*
 * An empty profile holds about 96 KiB (an arena chunk and the first tables):
 * 100 and 110 KiB are reached within a few samples; 1 byte drops every new label
 * set, stack and entry at once.
 */
static const size_t max_bytes[] = {0, 100u << 10, 1, 110u << 10};

static void fix_record(unsigned char *rec, size_t len, unsigned int mode)
{
	struct lp_sample h;
	size_t stack_bytes;

	if (len < sizeof(h))
		return;
	memcpy(&h, rec, sizeof(h));
	h.hdr.type = LP_EVENT_SAMPLE;
	h.hdr.size = len;
	if (mode & MODE_FIX_LENGTHS) {
		h.kstack_len %= 8;
		h.ustack_len %= 8;
		stack_bytes = ((size_t)h.kstack_len + h.ustack_len) * sizeof(__u64);
		if (stack_bytes > len - sizeof(h))
			h.kstack_len = h.ustack_len = stack_bytes = 0;
		if (len - sizeof(h) - stack_bytes <= UINT16_MAX)
			h.label_bytes = len - sizeof(h) - stack_bytes;
	}
	memcpy(rec, &h, sizeof(h));
}

static void add_records(struct profile *p, const uint8_t *data, size_t size)
{
	while (size >= 3) {
		unsigned int mode = data[0];
		size_t len = data[1] | (size_t)data[2] << 8;
		unsigned char *rec;

		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		/* An exact-size heap copy, so that ASan sees any read past the record. */
		rec = malloc(len ? len : 1);
		if (!rec)
			abort();
		memcpy(rec, data, len);
		if (mode & MODE_FIX_HDR && len >= sizeof(struct lp_event_hdr)) {
			struct lp_event_hdr hdr = {LP_EVENT_SAMPLE, len};

			memcpy(rec, &hdr, sizeof(hdr));
			fix_record(rec, len, mode);
		}
		profile__add_sample(p, rec, len);
		if (mode & MODE_TWICE)
			profile__add_sample(p, rec, len);
		free(rec);
		data += len;
		size -= len;
	}
}

/* Every byte is part of valid UTF-8, and no control byte but '\n' appears. */
static void check_text(const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;
	size_t i = 0, n;

	while (i < len) {
		if ((s[i] < 0x20 && s[i] != '\n') || s[i] == 0x7f)
			abort();
		n = output__utf8_len(s + i, len - i);
		if (!n)
			abort();
		i += n;
	}
}

/*
 * Folded lines: newline-terminated, "STACK COUNT" with a decimal count after
 * the last space (names keep theirs), no byte that needs escaping left raw.
 * Returns the sum of the counts.
 */
static __u64 check_folded(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	__u64 total = 0;

	check_text(buf, len);
	if (len && buf[len - 1] != '\n')
		abort();
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *sp = nl;
		char *cend;
		unsigned long long count;

		while (sp > p && sp[-1] != ' ')
			sp--;
		if (sp <= p + 1 || sp[0] < '1' || sp[0] > '9')
			abort();
		count = strtoull(sp, &cend, 10);
		if (cend != nl || !count)
			abort();
		/* A line names comm, the label set and at least one frame. */
		if (!memchr(p, ';', sp - p))
			abort();
		total += count;
		p = nl + 1;
	}
	return total;
}

/*
 * Enough JSON syntax to catch broken escaping: strings hold no raw control
 * byte and only JSON escapes, and brackets balance outside strings.
 */
static void check_json(const char *buf, size_t len)
{
	static const char escapes[] = "\"\\/bfnrtu";
	char stack[64];
	size_t depth = 0, i;
	bool in_str = false;

	check_text(buf, len);
	for (i = 0; i < len; i++) {
		char c = buf[i];

		if (in_str) {
			if (c == '"') {
				in_str = false;
			} else if (c == '\\') {
				if (++i >= len || !strchr(escapes, buf[i]))
					abort();
			} else if ((unsigned char)c < 0x20) {
				abort();
			}
			continue;
		}
		if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			if (depth == sizeof(stack))
				abort();
			stack[depth++] = c == '{' ? '}' : ']';
		} else if (c == '}' || c == ']') {
			if (!depth || stack[--depth] != c)
				abort();
		}
	}
	if (in_str || depth)
		abort();
}

/* Runs a writer into memory; returns its text (caller frees) and length. */
static char *render(enum output_format format, const struct symprof *sp, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	if (output__write(f, format, sp, NULL))
		abort();
	if (fclose(f))
		abort();
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct symprof_build_opts build = {.frequency_hz = 99,
							.duration_ns = 1000000000};
	struct profile_opts opts = {0};
	struct profile_stats st;
	struct symprof *sp;
	struct profile *p;
	size_t len;
	char *out;

	if (!size)
		return 0;
	opts.max_bytes = max_bytes[data[0] & 3];
	p = profile__new(NULL, &opts);
	if (!p)
		abort();
	add_records(p, data + 1, size - 1);
	profile__stats(p, &st);
	sp = symprof__from_profile(p, NULL, &build);
	if (!sp)
		abort();

	out = render(OUTPUT_FOLDED, sp, &len);
	if (check_folded(out, len) != st.samples - st.dropped)
		abort();
	free(out);
	out = render(OUTPUT_JSON, sp, &len);
	check_json(out, len);
	free(out);
	out = render(OUTPUT_REPORT, sp, &len);
	check_text(out, len);
	free(out);

	symprof__free(sp);
	profile__free(p);
	return 0;
}

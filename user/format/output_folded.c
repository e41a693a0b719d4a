// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Folded-stack writer (format and escaping: output.h). Lines are built for
 * every aggregated sample, then sorted so that samples of different pids and
 * tids with the same text merge into one line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/output.h"
#include "lib/array.h"
#include "lib/frame_kind.h"
#include "profile/profile.h"
#include "format/labelfold.h"
#include "profile/symprof.h"

struct line {
	size_t off, len;
	__u64 count;
};

struct folded {
	const struct symprof *sp;
	struct labelfold fold;
	char *buf;
	size_t len, cap;
	struct line *lines;
	size_t nr, cap_lines;
};

static int reserve(struct folded *w, size_t n)
{
	return ARRAY_RESERVE_MIN(w->buf, w->cap, w->len + n, 1 << 16) ? -ENOMEM : 0;
}

static int put(struct folded *w, const char *s, size_t n)
{
	if (reserve(w, n))
		return -ENOMEM;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	return 0;
}

static int put_str(struct folded *w, const char *s)
{
	return put(w, s, strlen(s));
}

/*
 * Only what breaks a line or a frame: flamegraph.pl and speedscope split a
 * line at its last space and frames at ';', so spaces stay as they are
 * ("double Burn.beta(int)", C++ templates). Labels also escape what
 * delimits them in their frame.
 */
static bool needs_escape(unsigned char c, bool label)
{
	return c < 0x20 || c == 0x7f || c == ';' || c == '\\' ||
	       (label && (c == ',' || c == '=' || c == '[' || c == ']'));
}

static int put_escaped(struct folded *w, const void *p, size_t n, bool label)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = p;
	size_t i = 0;

	/* Worst case: four output bytes per input byte. */
	if (reserve(w, 4 * n))
		return -ENOMEM;
	while (i < n) {
		size_t len = needs_escape(s[i], label) ? 0 : output__utf8_len(s + i, n - i);
		char *o = w->buf + w->len;

		if (len) {
			memcpy(o, s + i, len);
			w->len += len;
			i += len;
			continue;
		}
		o[0] = '\\';
		o[1] = 'x';
		o[2] = hex[s[i] >> 4];
		o[3] = hex[s[i] & 15];
		w->len += 4;
		i++;
	}
	return 0;
}

/* The name of a location without a known function: "[module+0xOFF]" or "[unknown]". */
static int put_unknown(struct folded *w, const struct sp_location *loc)
{
	const struct sp_string *module = symprof__str(w->sp, w->sp->mappings[loc->mapping].file);
	const char *base;
	char num[32];
	size_t len;
	int err;

	if (!module->len)
		return put_str(w, "[unknown]");
	base = memrchr(module->bytes, '/', module->len);
	base = base ? base + 1 : (const char *)module->bytes;
	len = module->len - (base - (const char *)module->bytes);
	/* "[vdso]" becomes "[vdso+0x...]". */
	if (len >= 2 && base[0] == '[' && base[len - 1] == ']') {
		base++;
		len -= 2;
	}
	snprintf(num, sizeof(num), "+0x%" PRIx64 "]", (uint64_t)loc->module_offset);
	err = put_str(w, "[");
	if (!err)
		err = put_escaped(w, base, len, false);
	return err ?: put_str(w, num);
}

/* A location root first: the function that holds the address, then what is inlined in it. */
static int put_location(struct folded *w, __u32 id)
{
	const struct sp_location *loc = &w->sp->locations[id];
	const char *mark = frame_kinds[frame_kind__of(loc->kernel, loc->kind)].folded;
	__u32 i;
	int err = 0;

	if (!loc->line_count) {
		err = put_str(w, ";");
		err = err ?: put_unknown(w, loc);
		return err ?: put_str(w, mark);
	}
	for (i = loc->line_count; i-- > 0 && !err;) {
		const struct sp_line *l = &w->sp->lines[loc->first_line + i];
		const struct sp_string *name =
			symprof__str(w->sp, w->sp->functions[l->function].name);

		err = put_str(w, ";");
		if (!err && name->len)
			err = put_escaped(w, name->bytes, name->len, false);
		else if (!err)
			err = put_unknown(w, loc);
		if (!err)
			err = put_str(w, mark);
	}
	return err;
}

static int add_line(struct folded *w, const struct sp_sample *s)
{
	const struct sp_range *set = &w->sp->label_sets[s->label_set];
	const struct sp_range *stack = &w->sp->stacks[s->stack];
	const struct sp_string *comm = symprof__str(w->sp, s->comm);
	size_t start = w->len, shown = 0;
	__u32 i;
	int err;

	/* from pprof or OTLP: the process is known, not the thread's name */
	if (!s->comm && symprof__process(w->sp, s->pid))
		comm = symprof__str(w->sp, symprof__process(w->sp, s->pid)->name);
	err = put_escaped(w, comm->bytes, comm->len, false);
	if (!err)
		err = put_str(w, ";[");
	for (i = 0; i < set->count && !err; i++) {
		const struct sp_label *l = &w->sp->labels[set->first + i];
		const struct sp_string *k = symprof__str(w->sp, l->key);
		const struct sp_string *v = symprof__str(w->sp, l->value);
		enum label_shown how = labelfold__shown(&w->fold, l->key);

		if (how == LABEL_HIDDEN)
			continue;
		if (shown++)
			err = put_str(w, ",");
		if (!err)
			err = put_escaped(w, k->bytes, k->len, true);
		if (!err)
			err = put_str(w, "=");
		if (!err && how == LABEL_FOLDED)
			err = put_str(w, LABELFOLD_VALUE);
		else if (!err)
			err = put_escaped(w, v->bytes, v->len, true);
	}
	if (!err)
		err = put_str(w, "]");
	/* root first: the stack is stored leaf first */
	for (i = stack->count; i-- > 0 && !err;)
		err = put_location(w, w->sp->stack_locations[stack->first + i]);
	if (!err && (s->status & PROFILE_ST_DROPPED) && !stack->count)
		err = put_str(w, ";[dropped]");
	if (err)
		return err;
	if (ARRAY_RESERVE_MIN(w->lines, w->cap_lines, w->nr + 1, 1024))
		return -ENOMEM;
	w->lines[w->nr++] = (struct line){start, w->len - start, s->count};
	return 0;
}

static int cmp_line(const void *a, const void *b, void *ctx)
{
	const struct line *x = a, *y = b;
	const char *buf = ctx;

	return symprof__bytes_cmp(buf + x->off, x->len, buf + y->off, y->len);
}

int output__write_folded(FILE *f, const struct symprof *sp, const struct output_opts *opts)
{
	struct folded w = {.sp = sp};
	size_t i, j;
	int err;

	err = labelfold__init(&w.fold, sp, opts ? opts->max_label_values : 0);
	/* the lines are for people: what they no longer see, they are told */
	if (!err)
		labelfold__describe(&w.fold, sp, stderr, "labelprof: folded: ");
	for (i = 0; i < sp->sample_count && !err; i++)
		err = add_line(&w, &sp->samples[i]);
	if (err)
		goto out_free;
	if (w.nr)
		qsort_r(w.lines, w.nr, sizeof(*w.lines), cmp_line, w.buf);
	for (i = 0; i < w.nr; i = j) {
		__u64 count = 0;

		for (j = i; j < w.nr && !cmp_line(&w.lines[i], &w.lines[j], w.buf); j++)
			count += w.lines[j].count;
		fwrite(w.buf + w.lines[i].off, 1, w.lines[i].len, f);
		fprintf(f, " %" PRIu64 "\n", (uint64_t)count);
	}
	if (fflush(f))
		err = -errno;
	else if (ferror(f))
		err = -EIO;
out_free:
	labelfold__free(&w.fold);
	free(w.buf);
	free(w.lines);
	return err;
}

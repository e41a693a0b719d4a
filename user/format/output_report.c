// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The human-readable report: for every label key, the CPU share of each of
 * its values and the hottest functions (self time) under each.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "format/fmt.h"
#include "lib/array.h"
#include "format/labelfold.h"
#include "format/output.h"
#include "profile/symprof.h"

#define TOP_VALUES    10
#define TOP_FUNCTIONS 4
#define VALUE_COLUMN  28
#define UNSET_VALUE   "(not set)"
#define TOP_STACKS    10
#define STACK_FRAMES  8 /* a stack's frames shown, from the leaf */

/* One (key, value, function) with its samples; value NULL: key not set. */
struct report_row {
	const unsigned char *key;
	const unsigned char *value;
	const char *function;
	size_t key_len;
	size_t value_len;
	__u64 count;
};

struct report {
	const struct symprof *sp;
	struct labelfold fold;
	struct report_row *rows;
	size_t len, cap;
	/* distinct label keys seen (string ids), to report samples that do not set one */
	__u32 *keys;
	size_t nkeys, keys_cap;
	char **names; /* function names owned by the report */
	size_t nnames, names_cap;
	__u64 total;
	__u64 labelled;
	int err;
};

static const struct sp_function *leaf_line_function(const struct symprof *sp,
						    const struct sp_location *loc)
{
	return &sp->functions[sp->lines[loc->first_line + loc->line_count - 1].function];
}

/* The sample's own code: the function at the leaf, kernel or user. */
static const char *leaf_function(struct report *r, const struct sp_sample *s)
{
	const struct sp_range *stack = &r->sp->stacks[s->stack];
	const struct sp_location *loc;
	const struct sp_string *name;
	char *kname;

	if (!stack->count)
		return "[no stack]";
	loc = &r->sp->locations[r->sp->stack_locations[stack->first]];
	/* the function holding the address: what is inlined into it counts as its own */
	name = symprof__str(r->sp, loc->line_count ? leaf_line_function(r->sp, loc)->name : 0);
	if (!loc->kernel)
		return name->len ? (const char *)name->bytes : "[unknown]";
	if (!name->len)
		return "[unknown] [k]";
	if (asprintf(&kname, "%s [k]", name->bytes) < 0 ||
	    ARRAY_RESERVE_MIN(r->names, r->names_cap, r->nnames + 1, 64)) {
		r->err = -ENOMEM;
		return "[unknown] [k]";
	}
	r->names[r->nnames++] = kname;
	return kname;
}

static int add_row(struct report *r, __u32 key, const __u32 *value, const char *function,
		   __u64 count)
{
	const struct sp_string *k = symprof__str(r->sp, key);
	const struct sp_string *v = value ? symprof__str(r->sp, *value) : NULL;

	if (ARRAY_RESERVE_MIN(r->rows, r->cap, r->len + 1, 64))
		return -ENOMEM;
	r->rows[r->len++] = (struct report_row){
		.key = k->bytes,
		.key_len = k->len,
		.value = v ? v->bytes : NULL,
		.value_len = v ? v->len : 0,
		.function = function,
		.count = count,
	};
	return 0;
}

static int note_key(struct report *r, __u32 key)
{
	size_t i;

	for (i = 0; i < r->nkeys; i++)
		if (r->keys[i] == key)
			return 0;
	if (ARRAY_RESERVE_MIN(r->keys, r->keys_cap, r->nkeys + 1, 64))
		return -ENOMEM;
	r->keys[r->nkeys++] = key;
	return 0;
}

static int collect(struct report *r, const struct sp_sample *s)
{
	const struct sp_range *set = &r->sp->label_sets[s->label_set];
	const char *fn = leaf_function(r, s);
	size_t i;

	r->total += s->count;
	if (set->count)
		r->labelled += s->count;
	for (i = 0; i < set->count; i++) {
		const struct sp_label *l = &r->sp->labels[set->first + i];
		enum label_shown how = labelfold__shown(&r->fold, l->key);

		if (how == LABEL_HIDDEN)
			continue;
		if (note_key(r, l->key) || add_row(r, l->key, &l->value, fn, s->count))
			return -ENOMEM;
		if (how == LABEL_FOLDED) {
			r->rows[r->len - 1].value = (const unsigned char *)LABELFOLD_VALUE;
			r->rows[r->len - 1].value_len = strlen(LABELFOLD_VALUE);
		}
	}
	return r->err;
}

/* Samples that do not set a key count under "(not set)" for that key. */
static int collect_unset(struct report *r, const struct sp_sample *s)
{
	const struct sp_range *set = &r->sp->label_sets[s->label_set];
	size_t k, i;

	for (k = 0; k < r->nkeys; k++) {
		for (i = 0; i < set->count; i++)
			if (r->sp->labels[set->first + i].key == r->keys[k])
				break;
		if (i == set->count && add_row(r, r->keys[k], NULL, leaf_function(r, s), s->count))
			return -ENOMEM;
	}
	return r->err;
}

static int row_cmp(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
	int c = symprof__bytes_cmp(x->key, x->key_len, y->key, y->key_len);

	if (c)
		return c;
	if (!x->value != !y->value)
		return x->value ? -1 : 1;
	if (x->value && (c = symprof__bytes_cmp(x->value, x->value_len, y->value, y->value_len)))
		return c;
	return strcmp(x->function, y->function);
}

struct value_total {
	size_t first, end; /* its rows, sorted by function */
	__u64 count;
};

static int value_total_cmp(const void *a, const void *b)
{
	const struct value_total *x = a, *y = b;

	return (x->count < y->count) - (x->count > y->count);
}

static int fn_total_cmp(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;

	return (x->count < y->count) - (x->count > y->count);
}

static void print_value(FILE *f, const struct report *r, const struct value_total *v,
			struct report_row *fns)
{
	const struct report_row *row = &r->rows[v->first];
	size_t i, n = 0, cols;

	for (i = v->first; i < v->end; i++) {
		if (n && !strcmp(fns[n - 1].function, r->rows[i].function))
			fns[n - 1].count += r->rows[i].count;
		else
			fns[n++] = r->rows[i];
	}
	qsort(fns, n, sizeof(*fns), fn_total_cmp);

	fputs("  ", f);
	if (row->value)
		cols = fmt__text_bytes(f, row->value, row->value_len, NULL, VALUE_COLUMN);
	else
		cols = fprintf(f, UNSET_VALUE);
	fprintf(f, "%*s %6.1f%% %8llu  ", (int)(cols < VALUE_COLUMN ? VALUE_COLUMN - cols : 0), "",
		100.0 * v->count / r->total, (unsigned long long)v->count);
	for (i = 0; i < n && i < TOP_FUNCTIONS; i++) {
		/* names come from other processes' files: escaped like labels */
		fputs(i ? ", " : "", f);
		fmt__text_bytes(f, fns[i].function, strlen(fns[i].function), NULL, SIZE_MAX);
		fprintf(f, " %.0f%%", 100.0 * fns[i].count / v->count);
	}
	fputc('\n', f);
}

static int print_key(FILE *f, const struct report *r, size_t first, size_t end)
{
	struct value_total *values = NULL;
	struct report_row *fns = NULL;
	size_t i, nvalues = 0, cap = 0, shown, cols;

	for (i = first; i < end; i++) {
		const struct report_row *row = &r->rows[i], *prev = i > first ? row - 1 : NULL;

		if (!prev || !prev->value != !row->value ||
		    (row->value && symprof__bytes_cmp(prev->value, prev->value_len, row->value,
						      row->value_len))) {
			if (ARRAY_RESERVE_MIN(values, cap, nvalues + 1, 64)) {
				free(values);
				return -ENOMEM;
			}
			values[nvalues++] = (struct value_total){.first = i};
		}
		values[nvalues - 1].end = i + 1;
		values[nvalues - 1].count += row->count;
	}
	fns = calloc(end - first, sizeof(*fns));
	if (!fns) {
		free(values);
		return -ENOMEM;
	}
	qsort(values, nvalues, sizeof(*values), value_total_cmp);

	cols = fmt__text_bytes(f, r->rows[first].key, r->rows[first].key_len, NULL, VALUE_COLUMN);
	fprintf(f, "%*s    share  samples  hottest functions\n",
		(int)(cols < VALUE_COLUMN + 2 ? VALUE_COLUMN + 2 - cols : 0), "");
	shown = nvalues < TOP_VALUES ? nvalues : TOP_VALUES;
	for (i = 0; i < shown; i++)
		print_value(f, r, &values[i], fns);
	if (nvalues > shown)
		fprintf(f, "  (%zu more values)\n", nvalues - shown);
	fputc('\n', f);
	free(fns);
	free(values);
	return 0;
}

/* A stack as shown, with its samples: stacks that differ in addresses only are one. */
struct stack_total {
	char *text;
	__u64 count;
};

static int stack_text_cmp(const void *a, const void *b)
{
	const struct stack_total *x = a, *y = b;

	return strcmp(x->text, y->text);
}

static int stack_count_cmp(const void *a, const void *b)
{
	const struct stack_total *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return stack_text_cmp(a, b);
}

/* A stack on one line, leaf first, each frame the function holding the address. */
static char *stack_text(const struct symprof *sp, const struct sp_range *stack)
{
	const struct sp_location *loc;
	const struct sp_string *name;
	char *text = NULL;
	size_t i, len;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (!stack->count)
		fputs("[no stack]", f);
	for (i = 0; i < stack->count && i < STACK_FRAMES; i++) {
		loc = &sp->locations[sp->stack_locations[stack->first + i]];
		name = symprof__str(sp, loc->line_count ? leaf_line_function(sp, loc)->name : 0);
		fputs(i ? " < " : "", f);
		if (name->len)
			fmt__text_bytes(f, name->bytes, name->len, NULL, SIZE_MAX);
		else
			fputs("[unknown]", f);
		fputs(loc->kernel ? " [k]" : loc->kind == SP_FRAME_PYTHON ? " [py]" : "", f);
	}
	if (stack->count > STACK_FRAMES)
		fputs(" < ...", f);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/*
 * Without labels there is no value to break the CPU down by: the hottest
 * stacks say where it went, and inspect why a process publishes no labels.
 */
static int print_unlabelled(FILE *f, const struct report *r)
{
	const struct symprof *sp = r->sp;
	struct stack_total *st;
	size_t i, n = 0;
	int err = 0;

	fputs("No sample carried labels (labelprof inspect PID says why a process publishes "
	      "none).\n",
	      f);
	if (!sp->sample_count)
		return 0;
	st = calloc(sp->sample_count, sizeof(*st));
	if (!st)
		return -ENOMEM;
	for (i = 0; i < sp->sample_count; i++) {
		st[i].text = stack_text(sp, &sp->stacks[sp->samples[i].stack]);
		st[i].count = sp->samples[i].count;
		if (!st[i].text) {
			err = -ENOMEM;
			goto out;
		}
	}
	qsort(st, sp->sample_count, sizeof(*st), stack_text_cmp);
	for (i = 0; i < sp->sample_count; i++) {
		char *text = st[i].text;

		/* each text ends up owned by one slot, the first n */
		st[i].text = NULL;
		if (n && !strcmp(st[n - 1].text, text)) {
			st[n - 1].count += st[i].count;
			free(text);
		} else {
			st[n].count = st[i].count;
			st[n++].text = text;
		}
	}
	qsort(st, n, sizeof(*st), stack_count_cmp);
	fputs("The hottest stacks, leaf first:\n\n   share  samples  stack\n", f);
	for (i = 0; i < n && i < TOP_STACKS; i++)
		fprintf(f, "  %5.1f%% %8llu  %s\n", 100.0 * st[i].count / r->total,
			(unsigned long long)st[i].count, st[i].text);
	if (n > TOP_STACKS)
		fprintf(f, "  (%zu more stacks)\n", n - TOP_STACKS);
out:
	for (i = 0; i < sp->sample_count; i++)
		free(st[i].text);
	free(st);
	return err;
}

int output__write_report(FILE *f, const struct symprof *sp, const struct output_opts *opts)
{
	const struct sp_meta *meta = &sp->meta;
	struct report r = {.sp = sp};
	size_t i, first;
	int err;

	err = labelfold__init(&r.fold, sp, opts ? opts->max_label_values : 0);
	for (i = 0; i < sp->sample_count && !err; i++)
		err = collect(&r, &sp->samples[i]);
	for (i = 0; i < sp->sample_count && r.nkeys && !err; i++)
		err = collect_unset(&r, &sp->samples[i]);
	if (err)
		goto out;

	fprintf(f,
		"%llu samples in %.1f s at %llu Hz per CPU, %llu with labels (%.1f%%), "
		"%llu dropped\n\n",
		(unsigned long long)r.total, meta->duration_ns / 1e9,
		(unsigned long long)meta->frequency_hz, (unsigned long long)r.labelled,
		r.total ? 100.0 * r.labelled / r.total : 0.0,
		(unsigned long long)meta->counters.ringbuf_drops);
	if (!r.nkeys)
		err = print_unlabelled(f, &r);
	labelfold__describe(&r.fold, sp, f, "");
	if (r.fold.nfolded)
		fputc('\n', f);

	/* rows is NULL when no sample has labels, and qsort's base must not be. */
	if (r.len)
		qsort(r.rows, r.len, sizeof(*r.rows), row_cmp);
	for (first = 0; first < r.len && !err; first = i) {
		for (i = first + 1;
		     i < r.len && !symprof__bytes_cmp(r.rows[i].key, r.rows[i].key_len,
						      r.rows[first].key, r.rows[first].key_len);
		     i++)
			;
		err = print_key(f, &r, first, i);
		if (err)
			break;
	}
	if (!err && fflush(f))
		err = -errno;
	if (!err && ferror(f))
		err = -EIO;
out:
	labelfold__free(&r.fold);
	for (i = 0; i < r.nnames; i++)
		free(r.names[i]);
	free(r.names);
	free(r.rows);
	free(r.keys);
	return err;
}

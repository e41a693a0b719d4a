// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The human-readable report: the CPU share of every process with what
 * describes it (OpenTelemetry resource attributes, container), then for
 * every label key the CPU share of each of its values, with the hottest
 * functions (self time) under each process and value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "format/fmt.h"
#include "lib/array.h"
#include "lib/frame_kind.h"
#include "format/labelfold.h"
#include "format/output.h"
#include "profile/symprof.h"
#include "labelprof.h"

#define TOP_VALUES    10
#define TOP_FUNCTIONS 4
#define VALUE_COLUMN  28
#define UNSET_VALUE   "(not set)"
#define TOP_STACKS    10
#define STACK_FRAMES  8 /* a stack's frames shown, from the leaf */

/*
 * One (key, value, function) with its samples; value NULL: key not set. In
 * the processes' rows, key is NULL and pid stands for the value.
 */
struct report_row {
	const unsigned char *key;
	const unsigned char *value;
	const char *function;
	size_t key_len;
	size_t value_len;
	__u32 key_id; /* string id of key */
	__u32 pid;
	__u64 count;
};

/* A label the process context gives every sample of pid: a resource attribute. */
struct proc_attr {
	__u32 pid;
	__u32 key, value; /* string ids */
};

struct report {
	const struct symprof *sp;
	struct labelfold fold;
	struct report_row *rows;
	size_t len, cap;
	struct report_row *procs; /* a row per (pid, function) */
	size_t nprocs, procs_cap;
	struct proc_attr *attrs;
	size_t nattrs, attrs_cap;
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
		.key_id = key,
		.function = function,
		.count = count,
	};
	return 0;
}

static int add_process(struct report *r, const struct sp_sample *s, const char *function)
{
	if (ARRAY_RESERVE_MIN(r->procs, r->procs_cap, r->nprocs + 1, 64))
		return -ENOMEM;
	r->procs[r->nprocs++] = (struct report_row){
		.pid = s->pid,
		.function = function,
		.count = s->count,
	};
	return 0;
}

static int add_attr(struct report *r, __u32 pid, const struct sp_label *l)
{
	if (ARRAY_RESERVE_MIN(r->attrs, r->attrs_cap, r->nattrs + 1, 64))
		return -ENOMEM;
	r->attrs[r->nattrs++] = (struct proc_attr){pid, l->key, l->value};
	return 0;
}

/*
 * The process context's labels are the same on every sample of a process:
 * they describe the process, shown with it, not a way its CPU divides.
 */
static bool process_wide(const struct sp_label *l)
{
	return l->source == LP_SRC_OTEL_PROCESS;
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
	bool labelled = false;
	size_t i;

	r->total += s->count;
	if (add_process(r, s, fn))
		return -ENOMEM;
	for (i = 0; i < set->count; i++) {
		const struct sp_label *l = &r->sp->labels[set->first + i];
		enum label_shown how = labelfold__shown(&r->fold, l->key);

		if (process_wide(l)) {
			if (add_attr(r, s->pid, l))
				return -ENOMEM;
			continue;
		}
		labelled = true;
		if (how == LABEL_HIDDEN)
			continue;
		if (note_key(r, l->key) || add_row(r, l->key, &l->value, fn, s->count))
			return -ENOMEM;
		if (how == LABEL_FOLDED) {
			r->rows[r->len - 1].value = (const unsigned char *)LABELFOLD_VALUE;
			r->rows[r->len - 1].value_len = strlen(LABELFOLD_VALUE);
		}
	}
	if (labelled)
		r->labelled += s->count;
	return r->err;
}

/* Samples that do not set a key count under "(not set)" for that key. */
static int collect_unset(struct report *r, const struct sp_sample *s)
{
	const struct sp_range *set = &r->sp->label_sets[s->label_set];
	size_t k, i;

	for (k = 0; k < r->nkeys; k++) {
		for (i = 0; i < set->count; i++)
			if (r->sp->labels[set->first + i].key == r->keys[k] &&
			    !process_wide(&r->sp->labels[set->first + i]))
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
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (!x->value != !y->value)
		return x->value ? -1 : 1;
	if (x->value && (c = symprof__bytes_cmp(x->value, x->value_len, y->value, y->value_len)))
		return c;
	return strcmp(x->function, y->function);
}

/* Whether two rows of one section count for the same value (or process). */
static bool same_value(const struct report_row *x, const struct report_row *y)
{
	if (x->pid != y->pid || !x->value != !y->value)
		return false;
	return !x->value || !symprof__bytes_cmp(x->value, x->value_len, y->value, y->value_len);
}

/* By pid, then by key and value bytes: strings are interned, equal bytes are equal ids. */
static int attr_cmp(const void *a, const void *b, void *ctx)
{
	const struct proc_attr *x = a, *y = b;
	const struct sp_string *xs, *ys;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	xs = symprof__str(ctx, x->key);
	ys = symprof__str(ctx, y->key);
	c = symprof__bytes_cmp(xs->bytes, xs->len, ys->bytes, ys->len);
	if (c)
		return c;
	xs = symprof__str(ctx, x->value);
	ys = symprof__str(ctx, y->value);
	return symprof__bytes_cmp(xs->bytes, xs->len, ys->bytes, ys->len);
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

/* A process's column: "PID NAME", its name cut to fit. */
static size_t print_process(FILE *f, const struct report *r, __u32 pid)
{
	const struct sp_process *p = symprof__process(r->sp, pid);
	const struct sp_string *name = symprof__str(r->sp, p ? p->name : 0);
	size_t cols = fprintf(f, "%u ", pid);
	size_t i;

	if (!name->len) {
		/* a profile read back may know no process: its samples' comm names it */
		for (i = 0; i < r->sp->sample_count && !name->len; i++)
			if (r->sp->samples[i].pid == pid)
				name = symprof__str(r->sp, r->sp->samples[i].comm);
	}
	return cols + fmt__text_bytes(f, name->bytes, name->len, NULL,
				      cols < VALUE_COLUMN ? VALUE_COLUMN - cols : 0);
}

/* What describes process pid, on one line: its resource attributes and container. */
static void print_attrs(FILE *f, const struct report *r, __u32 pid)
{
	const struct sp_process *p = symprof__process(r->sp, pid);
	const struct sp_string *s;
	const char *sep = "    ";
	size_t i;

	for (i = 0; i < r->nattrs; i++) {
		if (r->attrs[i].pid != pid)
			continue;
		s = symprof__str(r->sp, r->attrs[i].key);
		fputs(sep, f);
		/* a key's '=' is escaped: the first '=' ends the key */
		fmt__text_bytes(f, s->bytes, s->len, "=", SIZE_MAX);
		fputc('=', f);
		s = symprof__str(r->sp, r->attrs[i].value);
		fmt__text_bytes(f, s->bytes, s->len, ",", SIZE_MAX);
		sep = ", ";
	}
	if (p && p->container_id) {
		s = symprof__str(r->sp, p->container_id);
		fprintf(f, "%scontainer.id=", sep);
		fmt__text_bytes(f, s->bytes, s->len, ",", SIZE_MAX);
		sep = ", ";
	}
	if (strcmp(sep, "    "))
		fputc('\n', f);
}

static void print_value(FILE *f, const struct report *r, const struct report_row *rows,
			const struct value_total *v, struct report_row *fns)
{
	const struct report_row *row = &rows[v->first];
	size_t i, n = 0, cols;

	for (i = v->first; i < v->end; i++) {
		if (n && !strcmp(fns[n - 1].function, rows[i].function))
			fns[n - 1].count += rows[i].count;
		else
			fns[n++] = rows[i];
	}
	qsort(fns, n, sizeof(*fns), fn_total_cmp);

	fputs("  ", f);
	if (!row->key)
		cols = print_process(f, r, row->pid);
	else if (row->value)
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
	if (!row->key)
		print_attrs(f, r, row->pid);
}

/* A section: a key's values (or the processes, key NULL) from rows sorted by row_cmp. */
static int print_section(FILE *f, const struct report *r, const struct report_row *rows,
			 size_t first, size_t end)
{
	struct value_total *values = NULL;
	struct report_row *fns = NULL;
	size_t i, nvalues = 0, cap = 0, shown, cols;

	for (i = first; i < end; i++) {
		if (i == first || !same_value(&rows[i - 1], &rows[i])) {
			if (ARRAY_RESERVE_MIN(values, cap, nvalues + 1, 64)) {
				free(values);
				return -ENOMEM;
			}
			values[nvalues++] = (struct value_total){.first = i};
		}
		values[nvalues - 1].end = i + 1;
		values[nvalues - 1].count += rows[i].count;
	}
	fns = calloc(end - first, sizeof(*fns));
	if (!fns) {
		free(values);
		return -ENOMEM;
	}
	qsort(values, nvalues, sizeof(*values), value_total_cmp);

	if (rows[first].key)
		cols = fmt__text_bytes(f, rows[first].key, rows[first].key_len, NULL, VALUE_COLUMN);
	else
		cols = fprintf(f, "Processes");
	fprintf(f, "%*s    share  samples  hottest functions\n",
		(int)(cols < VALUE_COLUMN + 2 ? VALUE_COLUMN + 2 - cols : 0), "");
	shown = nvalues < TOP_VALUES ? nvalues : TOP_VALUES;
	for (i = 0; i < shown; i++)
		print_value(f, r, rows, &values[i], fns);
	if (nvalues > shown)
		fprintf(f, "  (%zu more %s)\n", nvalues - shown,
			rows[first].key ? "values" : "processes");
	fputc('\n', f);
	free(fns);
	free(values);
	return 0;
}

/* A key's section: its rows, and how much of the CPU it explains. */
struct key_section {
	size_t first, end;
	__u64 carried; /* samples that set the key */
	bool folded;
};

/*
 * The keys that explain the most CPU first: set on the most samples; a
 * folded key (a request id) splits the CPU into slivers, so it comes last.
 */
static int key_section_cmp(const void *a, const void *b, void *ctx)
{
	const struct key_section *x = a, *y = b;
	const struct report_row *rows = ctx;

	if (x->folded != y->folded)
		return x->folded ? 1 : -1;
	if (x->carried != y->carried)
		return x->carried < y->carried ? 1 : -1;
	return symprof__bytes_cmp(rows[x->first].key, rows[x->first].key_len, rows[y->first].key,
				  rows[y->first].key_len);
}

static int print_keys(FILE *f, struct report *r)
{
	struct key_section *keys = calloc(r->nkeys ? r->nkeys : 1, sizeof(*keys));
	size_t i, n = 0, first;
	int err = 0;

	if (!keys)
		return -ENOMEM;
	/* rows is NULL when no sample has labels, and qsort's base must not be. */
	if (r->len)
		qsort(r->rows, r->len, sizeof(*r->rows), row_cmp);
	for (first = 0; first < r->len && n < r->nkeys; first = i) {
		keys[n] = (struct key_section){
			.first = first,
			.folded = labelfold__shown(&r->fold, r->rows[first].key_id) == LABEL_FOLDED,
		};
		for (i = first; i < r->len && r->rows[i].key_id == r->rows[first].key_id; i++)
			keys[n].carried += r->rows[i].value ? r->rows[i].count : 0;
		keys[n++].end = i;
	}
	qsort_r(keys, n, sizeof(*keys), key_section_cmp, r->rows);
	for (i = 0; i < n && !err; i++)
		err = print_section(f, r, r->rows, keys[i].first, keys[i].end);
	free(keys);
	return err;
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
		fputs(frame_kinds[frame_kind__of(loc->kernel, loc->kind)].report, f);
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
	size_t i, n;
	int err;

	err = labelfold__init(&r.fold, sp, opts ? opts->max_label_values : 0);
	for (i = 0; i < sp->sample_count && !err; i++)
		err = collect(&r, &sp->samples[i]);
	for (i = 0; i < sp->sample_count && r.nkeys && !err; i++)
		err = collect_unset(&r, &sp->samples[i]);
	if (err)
		goto out;
	if (r.nattrs)
		qsort_r(r.attrs, r.nattrs, sizeof(*r.attrs), attr_cmp, (void *)sp);
	for (i = 0, n = 0; i < r.nattrs; i++)
		if (!n || attr_cmp(&r.attrs[n - 1], &r.attrs[i], (void *)sp))
			r.attrs[n++] = r.attrs[i];
	r.nattrs = n;

	fprintf(f,
		"%llu samples in %.1f s at %llu Hz per CPU, %llu with labels (%.1f%%), "
		"%llu dropped\n\n",
		(unsigned long long)r.total, meta->duration_ns / 1e9,
		(unsigned long long)meta->frequency_hz, (unsigned long long)r.labelled,
		r.total ? 100.0 * r.labelled / r.total : 0.0,
		(unsigned long long)meta->counters.ringbuf_drops);
	if (r.nprocs) {
		qsort(r.procs, r.nprocs, sizeof(*r.procs), row_cmp);
		err = print_section(f, &r, r.procs, 0, r.nprocs);
	}
	if (!r.nkeys && !err)
		err = print_unlabelled(f, &r);
	labelfold__describe(&r.fold, sp, f, "");
	if (r.fold.nfolded)
		fputc('\n', f);
	if (!err)
		err = print_keys(f, &r);
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
	free(r.procs);
	free(r.attrs);
	free(r.keys);
	return err;
}

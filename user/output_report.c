// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The human-readable report: for every label key, the CPU share of each of
 * its values and the hottest functions (self time) under each.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "output.h"
#include "profile.h"
#include "symbols.h"

#define TOP_VALUES    10
#define TOP_FUNCTIONS 4
#define VALUE_COLUMN  28
#define UNSET_VALUE   "(not set)"

/* One (key, value, function) with its samples; value NULL: key not set. */
struct report_row {
	const unsigned char *key;
	const unsigned char *value;
	const char *function;
	__u32 key_len;
	__u32 value_len;
	__u64 count;
};

struct report {
	struct symbolizer *sym;
	struct report_row *rows;
	size_t len, cap;
	/* distinct label keys seen, to report samples that do not set one */
	struct profile_label *keys;
	size_t nkeys, keys_cap;
	char **names; /* function names owned by the report */
	size_t nnames, names_cap;
	__u64 total;
	__u64 labelled;
	int err;
};

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

static int bytes_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c)
		return c;
	return (alen > blen) - (alen < blen);
}

/* The sample's own code: the user leaf if there is one, else the kernel leaf. */
static const char *leaf_function(struct report *r, const struct profile_sample *s)
{
	struct sym_frame fr = {};
	char *name;
	int found;

	/* Without a symbolizer (allowed, as for the other writers) no frame is known. */
	if (!r->sym)
		return s->ustack_len ? "[unknown]" : s->kstack_len ? "[unknown] [k]" : "[no stack]";
	if (s->ustack_len) {
		found = !symbolizer__resolve_user(r->sym, s->snapshot, s->ustack[0],
						  s->kstack_len ? SYM_RETURN_ADDRESS : 0, &fr);
		if (found && fr.function)
			return fr.function;
		return "[unknown]";
	}
	if (s->kstack_len) {
		found = !symbolizer__resolve_kernel(r->sym, s->kstack[0], 0, &fr);
		if (!found || !fr.function)
			return "[unknown] [k]";
		if (asprintf(&name, "%s [k]", fr.function) < 0 ||
		    grow((void **)&r->names, &r->names_cap, r->nnames + 1, sizeof(char *))) {
			r->err = -ENOMEM;
			return "[unknown] [k]";
		}
		r->names[r->nnames++] = name;
		return name;
	}
	return "[no stack]";
}

static int add_row(struct report *r, const struct profile_label *key,
		   const struct profile_label *value, const char *function, __u64 count)
{
	if (grow((void **)&r->rows, &r->cap, r->len + 1, sizeof(*r->rows)))
		return -ENOMEM;
	r->rows[r->len++] = (struct report_row){
		.key = key->key,
		.key_len = key->key_len,
		.value = value ? value->value : NULL,
		.value_len = value ? value->value_len : 0,
		.function = function,
		.count = count,
	};
	return 0;
}

static int note_key(struct report *r, const struct profile_label *l)
{
	size_t i;

	for (i = 0; i < r->nkeys; i++)
		if (!bytes_cmp(r->keys[i].key, r->keys[i].key_len, l->key, l->key_len))
			return 0;
	if (grow((void **)&r->keys, &r->keys_cap, r->nkeys + 1, sizeof(*r->keys)))
		return -ENOMEM;
	r->keys[r->nkeys++] = *l;
	return 0;
}

static int collect(const struct profile_sample *s, void *ctx)
{
	struct report *r = ctx;
	const char *fn = leaf_function(r, s);
	size_t i;

	r->total += s->count;
	if (s->label_count)
		r->labelled += s->count;
	for (i = 0; i < s->label_count; i++) {
		if (note_key(r, &s->labels[i]) ||
		    add_row(r, &s->labels[i], &s->labels[i], fn, s->count))
			return -ENOMEM;
	}
	return r->err;
}

/* Samples that do not set a key count under "(not set)" for that key. */
static int collect_unset(const struct profile_sample *s, void *ctx)
{
	struct report *r = ctx;
	size_t k, i;

	for (k = 0; k < r->nkeys; k++) {
		for (i = 0; i < s->label_count; i++)
			if (!bytes_cmp(s->labels[i].key, s->labels[i].key_len, r->keys[k].key,
				       r->keys[k].key_len))
				break;
		if (i == s->label_count &&
		    add_row(r, &r->keys[k], NULL, leaf_function(r, s), s->count))
			return -ENOMEM;
	}
	return r->err;
}

static int row_cmp(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
	int c = bytes_cmp(x->key, x->key_len, y->key, y->key_len);

	if (c)
		return c;
	if (!x->value != !y->value)
		return x->value ? -1 : 1;
	if (x->value && (c = bytes_cmp(x->value, x->value_len, y->value, y->value_len)))
		return c;
	return strcmp(x->function, y->function);
}

/* Bytes a terminal shows as they are; the rest as \xHH. */
static size_t put_text(FILE *f, const unsigned char *s, size_t n, size_t max_cols)
{
	size_t i = 0, cols = 0, u;

	while (i < n && cols < max_cols) {
		u = output__utf8_len(s + i, n - i);
		if (u == 1 && (s[i] < 0x20 || s[i] == 0x7f || s[i] == '\\'))
			u = 0;
		if (u) {
			fwrite(s + i, 1, u, f);
			i += u;
			cols++;
		} else {
			fprintf(f, "\\x%02x", s[i++]);
			cols += 4;
		}
	}
	if (i < n) {
		fputs("...", f);
		cols += 3;
	}
	return cols;
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
		cols = put_text(f, row->value, row->value_len, VALUE_COLUMN);
	else
		cols = fprintf(f, UNSET_VALUE);
	fprintf(f, "%*s %6.1f%% %8llu  ", (int)(cols < VALUE_COLUMN ? VALUE_COLUMN - cols : 0), "",
		100.0 * v->count / r->total, (unsigned long long)v->count);
	for (i = 0; i < n && i < TOP_FUNCTIONS; i++)
		fprintf(f, "%s%s %.0f%%", i ? ", " : "", fns[i].function,
			100.0 * fns[i].count / v->count);
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
		    (row->value &&
		     bytes_cmp(prev->value, prev->value_len, row->value, row->value_len))) {
			if (grow((void **)&values, &cap, nvalues + 1, sizeof(*values))) {
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

	cols = put_text(f, r->rows[first].key, r->rows[first].key_len, VALUE_COLUMN);
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

int output__write_report(FILE *f, const struct profile *p, struct symbolizer *sym,
			 const struct output_meta *meta)
{
	struct report r = {.sym = sym};
	size_t i, first;
	int err;

	err = profile__for_each(p, collect, &r);
	if (!err && r.nkeys)
		err = profile__for_each(p, collect_unset, &r);
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
		fputs("No sample carried labels.\n", f);

	/* rows is NULL when no sample has labels, and qsort's base must not be. */
	if (r.len)
		qsort(r.rows, r.len, sizeof(*r.rows), row_cmp);
	for (first = 0; first < r.len; first = i) {
		for (i = first + 1;
		     i < r.len && !bytes_cmp(r.rows[i].key, r.rows[i].key_len, r.rows[first].key,
					     r.rows[first].key_len);
		     i++)
			;
		err = print_key(f, &r, first, i);
		if (err)
			break;
	}
	if (!err && ferror(f))
		err = -EIO;
out:
	for (i = 0; i < r.nnames; i++)
		free(r.names[i]);
	free(r.names);
	free(r.rows);
	free(r.keys);
	return err;
}

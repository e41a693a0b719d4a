// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The table labelprof top shows (top_view.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt.h"
#include "format/labelfold.h"
#include "profile/labelsel.h"
#include "profile/symprof.h"
#include "cmd/top_view.h"

#define UNSET_TEXT "(not set)"
#define FOLDED_TEXT LABELFOLD_VALUE
#define EMPTY_TEXT "\"\""
/* Columns the function list keeps when key values are long. */
#define MIN_FUNCTION_COLS 24
/* A function name shorter than this is not worth starting. */
#define MIN_NAME_COLS 4
/* Label keys listed when --by names one no sample sets. */
#define TOP_SEEN_KEYS 16

#define SGR_BOLD    "\033[1m"
#define SGR_DIM	    "\033[2m"
#define SGR_REVERSE "\033[7m"
#define SGR_RESET   "\033[0m"

/* ---- grouping -------------------------------------------------------------- */

/* The string id of the key's bytes in sp, or TOP_UNSET when no string has them. */
static __u32 find_string(const struct symprof *sp, const struct top_key *key)
{
	size_t i;

	for (i = 1; i < sp->string_count; i++)
		if (!symprof__bytes_cmp(sp->strings[i].bytes, sp->strings[i].len, key->bytes,
					key->len))
			return i;
	return TOP_UNSET;
}

static __u32 value_of(const struct symprof *sp, const struct sp_sample *s, __u32 key)
{
	const struct sp_range *set = &sp->label_sets[s->label_set];
	size_t i;

	for (i = 0; i < set->count; i++)
		if (sp->labels[set->first + i].key == key)
			return sp->labels[set->first + i].value;
	return TOP_UNSET;
}

/*
 * The function the sample's own code runs in: the one holding the leaf
 * address, what is inlined into it counting as its own (as in perf report and
 * labelprof's report).
 */
static struct top_fn self_function(const struct symprof *sp, const struct sp_sample *s)
{
	const struct sp_range *stack = &sp->stacks[s->stack];
	const struct sp_location *loc;
	struct top_fn fn = {.count = s->count};

	if (!stack->count) {
		fn.flags = TOP_FN_NO_STACK;
		return fn;
	}
	loc = &sp->locations[sp->stack_locations[stack->first]];
	if (loc->line_count)
		fn.name = sp->functions[sp->lines[loc->first_line + loc->line_count - 1].function]
				  .name;
	if (loc->kernel)
		fn.flags = TOP_FN_KERNEL;
	return fn;
}

/* A sample's group (values[] of key_count) and self function. */
struct entry {
	const __u32 *values;
	struct top_fn fn;
};

static int fn_cmp(const struct top_fn *a, const struct top_fn *b)
{
	if (a->flags != b->flags)
		return a->flags < b->flags ? -1 : 1;
	return (a->name > b->name) - (a->name < b->name);
}

static int entry_cmp(const void *a, const void *b, void *arg)
{
	const struct entry *x = a, *y = b;
	size_t n = *(const size_t *)arg;
	int c = memcmp(x->values, y->values, n * sizeof(*x->values));

	return c ? c : fn_cmp(&x->fn, &y->fn);
}

/* Keeps the TOP_FUNCTIONS hottest functions of a row, most samples first. */
static void row_add_fn(struct top_row *r, const struct top_fn *fn)
{
	size_t i = TOP_FUNCTIONS;

	if (fn->count <= r->fns[TOP_FUNCTIONS - 1].count)
		return;
	while (i > 0 && fn->count > r->fns[i - 1].count) {
		if (i < TOP_FUNCTIONS)
			r->fns[i] = r->fns[i - 1];
		i--;
	}
	r->fns[i] = *fn;
}

static int value_cmp(const struct symprof *sp, __u32 a, __u32 b)
{
	const struct sp_string *x, *y;

	if (a == b)
		return 0;
	/* "(not set)" after every value; a folded key has no other value than "*" */
	if (a == TOP_UNSET || b == TOP_UNSET)
		return a == TOP_UNSET ? 1 : -1;
	if (a == TOP_FOLDED || b == TOP_FOLDED)
		return a == TOP_FOLDED ? -1 : 1;
	x = symprof__str(sp, a);
	y = symprof__str(sp, b);
	return symprof__bytes_cmp(x->bytes, x->len, y->bytes, y->len);
}

static int row_cmp(const void *a, const void *b, void *arg)
{
	const struct top_row *x = a, *y = b;
	const struct top_view *v = arg;
	size_t k;
	int c;

	if (v->sort == TOP_SORT_SAMPLES && x->count != y->count)
		return x->count < y->count ? 1 : -1;
	for (k = 0; k < v->key_count; k++) {
		c = value_cmp(v->sp, x->values[k], y->values[k]);
		if (c)
			return c;
	}
	return (x->count < y->count) - (x->count > y->count);
}

void top_view__sort(struct top_view *v, enum top_sort sort)
{
	v->sort = sort;
	if (v->row_count)
		qsort_r(v->rows, v->row_count, sizeof(*v->rows), row_cmp, v);
}

/* The distinct values of key when fold folds it, else 0. */
static __u32 folded_values(const struct labelfold *fold, __u32 key)
{
	size_t i;

	if (!fold || key == TOP_UNSET || labelfold__shown(fold, key) != LABEL_FOLDED)
		return 0;
	for (i = 0; i < fold->nfolded; i++)
		if (fold->folded[i].key == key)
			return fold->folded[i].values;
	return 0;
}

int top_view__build(struct top_view *v, const struct symprof *sp, const struct top_key *keys,
		    size_t n, const struct labelfold *fold, __u32 pid)
{
	size_t i, k, m, count = sp->sample_count;
	__u32 key_ids[TOP_MAX_KEYS], *values = NULL;
	struct entry *entries = NULL;
	struct top_row *row = NULL;
	struct top_fn fn = {};

	*v = (struct top_view){
		.sp = sp,
		.pid = pid,
		.key_count = n,
		.max_values = fold ? fold->max_values : 0,
	};
	if (n > TOP_MAX_KEYS)
		return -EINVAL;
	for (k = 0; k < n; k++) {
		v->keys[k] = keys[k];
		key_ids[k] = find_string(sp, &keys[k]);
		v->folded_values[k] = folded_values(fold, key_ids[k]);
	}
	if (!count)
		return 0;
	entries = calloc(count, sizeof(*entries));
	values = calloc(count * (n ? n : 1), sizeof(*values));
	v->rows = calloc(count, sizeof(*v->rows));
	if (!entries || !values || !v->rows)
		goto out_nomem;

	for (i = 0, m = 0; i < count; i++) {
		const struct sp_sample *s = &sp->samples[i];

		if (pid && s->pid != pid)
			continue;
		entries[m].values = &values[m * n];
		for (k = 0; k < n; k++) {
			values[m * n + k] = value_of(sp, s, key_ids[k]);
			if (v->folded_values[k] && values[m * n + k] != TOP_UNSET)
				values[m * n + k] = TOP_FOLDED;
		}
		entries[m++].fn = self_function(sp, s);
		v->total += s->count;
		if (s->label_set)
			v->labelled += s->count;
	}
	count = m;
	if (count)
		qsort_r(entries, count, sizeof(*entries), entry_cmp, &n);

	for (i = 0; i < count; i++) {
		const struct entry *e = &entries[i];

		if (!row || memcmp(e->values, row->values, n * sizeof(*e->values))) {
			row = &v->rows[v->row_count++];
			memcpy(row->values, e->values, n * sizeof(*e->values));
		}
		row->count += e->fn.count;
		fn.count += e->fn.count;
		/* the entries of one function of a row are adjacent: rank their sum */
		if (i + 1 < count && !entry_cmp(e, e + 1, &n))
			continue;
		fn.name = e->fn.name;
		fn.flags = e->fn.flags;
		row_add_fn(row, &fn);
		fn.count = 0;
	}
	top_view__sort(v, TOP_SORT_SAMPLES);
	free(entries);
	free(values);
	return 0;

out_nomem:
	free(entries);
	free(values);
	top_view__free(v);
	return -ENOMEM;
}

void top_view__free(struct top_view *v)
{
	free(v->rows);
	v->rows = NULL;
	v->row_count = 0;
}

struct key_value {
	__u32 key, value;
	__u64 count;
};

static int key_value_cmp(const void *a, const void *b)
{
	const struct key_value *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->value > y->value) - (x->value < y->value);
}

/* Whether key a (its cover and values) makes better rows than the best so far. */
static bool better_key(const struct sp_string *a, bool a_fits, __u64 a_cover, size_t a_values,
		       const struct sp_string *best, bool best_fits, __u64 best_cover,
		       size_t best_values)
{
	if (!best || a_fits != best_fits)
		return !best || a_fits;
	if (a_cover != best_cover)
		return a_cover > best_cover;
	if (a_values != best_values)
		return a_values < best_values;
	return symprof__bytes_cmp(a->bytes, a->len, best->bytes, best->len) < 0;
}

long top_view__common_key(const struct symprof *sp, const struct labelfold *fold,
			  unsigned char *buf, size_t size)
{
	const struct sp_string *best = NULL, *key;
	size_t i, j, n = 0, first, values, best_values = 0;
	__u64 cover, best_cover = 0;
	bool fits, best_fits = false;
	struct key_value *kv;

	for (i = 0; i < sp->sample_count; i++)
		n += sp->label_sets[sp->samples[i].label_set].count;
	if (!n)
		return -ENOENT;
	kv = calloc(n, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	for (i = 0, n = 0; i < sp->sample_count; i++) {
		const struct sp_range *set = &sp->label_sets[sp->samples[i].label_set];

		for (j = 0; j < set->count; j++)
			kv[n++] = (struct key_value){sp->labels[set->first + j].key,
						     sp->labels[set->first + j].value,
						     sp->samples[i].count};
	}
	qsort(kv, n, sizeof(*kv), key_value_cmp);
	for (first = 0; first < n; first = i) {
		cover = 0;
		values = 0;
		for (i = first; i < n && kv[i].key == kv[first].key; i++) {
			cover += kv[i].count;
			values += i == first || kv[i].value != kv[i - 1].value;
		}
		key = symprof__str(sp, kv[first].key);
		/* one row per request: what the text views never show (labelfold.h) */
		if (labelsel__is_trace_key(key->bytes, key->len))
			continue;
		fits = !fold || labelfold__shown(fold, kv[first].key) != LABEL_FOLDED;
		if (better_key(key, fits, cover, values, best, best_fits, best_cover,
			       best_values)) {
			best = key;
			best_fits = fits;
			best_cover = cover;
			best_values = values;
		}
	}
	free(kv);
	if (!best)
		return -ENOENT;
	n = best->len < size ? best->len : size;
	memcpy(buf, best->bytes, n);
	return n;
}

/* ---- rendering ------------------------------------------------------------- */

/* One output line: what is written is clipped to the columns left. */
struct line {
	FILE *f;
	const struct top_layout *l;
	size_t left;
};

static void line_start(struct line *ln, FILE *f, const struct top_layout *l)
{
	*ln = (struct line){.f = f, .l = l, .left = l->width};
}

static void line_end(struct line *ln)
{
	if (ln->l->color)
		fputs(SGR_RESET, ln->f);
	if (ln->l->erase)
		fputs("\033[K", ln->f);
	fputc('\n', ln->f);
}

static void line_sgr(struct line *ln, const char *sgr)
{
	if (ln->l->color)
		fputs(sgr, ln->f);
}

/* ASCII text, printf style. */
__attribute__((format(printf, 2, 3))) static void line_printf(struct line *ln, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n = (size_t)n < sizeof(buf) ? n : (int)sizeof(buf) - 1;
	n = (size_t)n < ln->left ? n : (int)ln->left;
	fwrite(buf, 1, n, ln->f);
	ln->left -= n;
}

static void line_pad(struct line *ln, size_t cols)
{
	for (; cols && ln->left; cols--, ln->left--)
		fputc(' ', ln->f);
}

static void line_text(struct line *ln, const unsigned char *s, size_t n, size_t max_cols)
{
	ln->left -= fmt__text_bytes(ln->f, s, n, NULL, max_cols < ln->left ? max_cols : ln->left);
}

static size_t cell_width(const struct top_view *v, __u32 value)
{
	const struct sp_string *s;

	if (value == TOP_UNSET)
		return strlen(UNSET_TEXT);
	if (value == TOP_FOLDED)
		return strlen(FOLDED_TEXT);
	s = symprof__str(v->sp, value);
	return s->len ? fmt__text_width(s->bytes, s->len, NULL) : strlen(EMPTY_TEXT);
}

static void put_cell(struct line *ln, const struct top_view *v, __u32 value, size_t width)
{
	const struct sp_string *s =
		value == TOP_UNSET || value == TOP_FOLDED ? NULL : symprof__str(v->sp, value);
	size_t before = ln->left;

	if (value == TOP_FOLDED) {
		line_printf(ln, "%.*s", (int)width, FOLDED_TEXT);
	} else if (!s) {
		line_sgr(ln, SGR_DIM);
		line_printf(ln, "%.*s", (int)width, UNSET_TEXT);
		line_sgr(ln, SGR_RESET);
	} else if (!s->len) {
		line_printf(ln, "%.*s", (int)width, EMPTY_TEXT);
	} else {
		line_text(ln, s->bytes, s->len, width);
	}
	line_pad(ln, width + 2 - (before - ln->left));
}

static void put_functions(struct line *ln, const struct top_view *v, const struct top_row *r)
{
	static const char kernel_mark[] = " [k]";
	char pct[16];
	size_t i, suffix;

	for (i = 0; i < TOP_FUNCTIONS && r->fns[i].count; i++) {
		const struct top_fn *fn = &r->fns[i];
		const struct sp_string *name = symprof__str(v->sp, fn->name);
		const char *unnamed = fn->flags & TOP_FN_NO_STACK ? "[no stack]" : "[unknown]";
		bool kernel = fn->flags & TOP_FN_KERNEL;

		if (200 * fn->count < r->count)
			snprintf(pct, sizeof(pct), " <1%%");
		else
			snprintf(pct, sizeof(pct), " %.0f%%", 100.0 * fn->count / r->count);
		suffix = strlen(pct) + (kernel ? strlen(kernel_mark) : 0) + (i ? 2 : 0);
		if (ln->left < suffix + MIN_NAME_COLS)
			break;
		if (i)
			line_printf(ln, ", ");
		if (name->len)
			line_text(ln, name->bytes, name->len, ln->left - suffix + (i ? 2 : 0));
		else
			line_printf(ln, "%s", unnamed);
		if (kernel)
			line_printf(ln, "%s", kernel_mark);
		line_printf(ln, "%s", pct);
	}
}

/* The first key no row has a value for (no sample sets it), or -1. */
static long missing_key(const struct top_view *v)
{
	size_t k, i;

	for (k = 0; k < v->key_count; k++) {
		for (i = 0; i < v->row_count && v->rows[i].values[k] == TOP_UNSET; i++)
			;
		if (i == v->row_count)
			return k;
	}
	return -1;
}

static int key_bytes_cmp(const void *a, const void *b, void *arg)
{
	const struct sp_string *x = symprof__str(arg, *(const __u32 *)a);
	const struct sp_string *y = symprof__str(arg, *(const __u32 *)b);

	return symprof__bytes_cmp(x->bytes, x->len, y->bytes, y->len);
}

/* "no sample sets KEY; keys seen: a, b": what --by could have named instead. */
static void put_missing_key(struct line *ln, const struct top_view *v, size_t k)
{
	const struct symprof *sp = v->sp;
	__u32 seen[TOP_SEEN_KEYS];
	size_t n = 0, i, j, m;

	line_printf(ln, "no sample sets ");
	line_text(ln, v->keys[k].bytes, v->keys[k].len, ln->left);
	for (i = 0; i < sp->sample_count; i++) {
		const struct sp_range *set = &sp->label_sets[sp->samples[i].label_set];

		for (j = 0; j < set->count && n < TOP_SEEN_KEYS; j++) {
			__u32 key = sp->labels[set->first + j].key;
			const struct sp_string *bytes = symprof__str(sp, key);

			/* --by does not take them (labelprof top) */
			if (labelsel__is_trace_key(bytes->bytes, bytes->len))
				continue;
			for (m = 0; m < n && seen[m] != key; m++)
				;
			if (m == n)
				seen[n++] = key;
		}
	}
	qsort_r(seen, n, sizeof(*seen), key_bytes_cmp, (void *)sp);
	line_printf(ln, n ? "; keys seen: " : "; no sample carries labels");
	for (i = 0; i < n; i++) {
		const struct sp_string *key = symprof__str(sp, seen[i]);

		line_printf(ln, i ? ", " : "");
		line_text(ln, key->bytes, key->len, ln->left);
	}
}

/* The first key whose values are folded into one row, or -1. */
static long folded_key(const struct top_view *v)
{
	size_t k;

	for (k = 0; k < v->key_count; k++)
		if (v->folded_values[k])
			return k;
	return -1;
}

/* As the other text views say it (labelfold__describe), with the other folded keys counted. */
static void put_folded_key(struct line *ln, const struct top_view *v, size_t k)
{
	size_t others = 0, i;

	for (i = k + 1; i < v->key_count; i++)
		others += !!v->folded_values[i];
	line_text(ln, v->keys[k].bytes, v->keys[k].len, ln->left);
	line_printf(ln, " has %u values, shown as ", v->folded_values[k]);
	line_text(ln, v->keys[k].bytes, v->keys[k].len, ln->left);
	line_printf(ln, "=" FOLDED_TEXT " (--max-label-values %u)", v->max_values);
	if (others)
		line_printf(ln, "; %zu more key%s folded", others, others > 1 ? "s" : "");
}

static void print_header(FILE *f, const struct top_view *v, const struct top_status *st,
			 const struct top_layout *l)
{
	unsigned long long secs = st->elapsed_s;
	struct line ln;
	long missing, folded;
	size_t k;

	/* three lines, each within 80 columns: what a default terminal shows whole */
	line_start(&ln, f, l);
	line_sgr(&ln, SGR_BOLD);
	line_printf(&ln, "labelprof top");
	line_sgr(&ln, SGR_RESET);
	line_printf(&ln, "  by ");
	for (k = 0; k < v->key_count; k++) {
		if (k)
			line_printf(&ln, ",");
		line_text(&ln, v->keys[k].bytes, v->keys[k].len, ln.left);
	}
	if (!v->key_count)
		line_printf(&ln, "(no labels seen yet)");
	else if (st->auto_key)
		line_printf(&ln, " (most common key; --by chooses)");
	if (v->pid)
		line_printf(&ln, "  pid %u", v->pid);
	if (v->sort == TOP_SORT_NAME)
		line_printf(&ln, "  sorted by value");
	line_end(&ln);

	line_start(&ln, f, l);
	line_printf(&ln, "%llu:%02llu:%02llu elapsed  %s %.1f s  %u Hz  refresh %.1f ms%s",
		    secs / 3600, secs / 60 % 60, secs % 60,
		    st->cumulative ? "cumulative" : "interval", st->interval_s, st->freq_hz,
		    st->refresh_ms, st->paused ? "  PAUSED" : "");
	line_end(&ln);

	line_start(&ln, f, l);
	line_printf(&ln, "samples %llu (%.0f/s)  labelled %.1f%%  drops %llu  read faults %llu",
		    (unsigned long long)v->total,
		    st->interval_s > 0 ? v->total / st->interval_s : 0,
		    v->total ? 100.0 * v->labelled / v->total : 0.0,
		    (unsigned long long)st->ringbuf_drops, (unsigned long long)st->read_faults);
	line_end(&ln);
	/* one line, on a screen the blank one: what the user can act on first */
	missing = missing_key(v);
	folded = folded_key(v);
	if (missing >= 0) {
		line_start(&ln, f, l);
		put_missing_key(&ln, v, missing);
		line_end(&ln);
	} else if (folded >= 0) {
		line_start(&ln, f, l);
		put_folded_key(&ln, v, folded);
		line_end(&ln);
	} else if (l->erase) {
		/* on a screen only: piped snapshots are told apart by blank lines */
		line_start(&ln, f, l);
		line_end(&ln);
	}
}

int top_view__print(FILE *f, const struct top_view *v, const struct top_status *st,
		    const struct top_layout *l)
{
	size_t widths[TOP_MAX_KEYS], shown, i, k, avail, fair, need = 0, count_cols;
	__u64 rest = 0, most = 0;
	struct line ln;
	char digits[24];

	print_header(f, v, st, l);
	/* past max_rows, the last line sums up the rows not shown */
	shown = v->row_count;
	if (shown > l->max_rows)
		shown = l->max_rows ? l->max_rows - 1 : 0;
	for (i = shown; i < v->row_count; i++)
		rest += v->rows[i].count;

	for (i = 0; i < v->row_count; i++)
		most = v->rows[i].count > most ? v->rows[i].count : most;
	count_cols = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)most);
	if (count_cols < strlen("SAMPLES"))
		count_cols = strlen("SAMPLES");
	/* value columns as wide as their widest cell, unless the functions would not fit */
	for (k = 0; k < v->key_count; k++) {
		widths[k] = fmt__text_width(v->keys[k].bytes, v->keys[k].len, NULL);
		for (i = 0; i < shown; i++)
			if (cell_width(v, v->rows[i].values[k]) > widths[k])
				widths[k] = cell_width(v, v->rows[i].values[k]);
		need += widths[k] + 2;
	}
	avail = l->width > 8 + count_cols + 2 + MIN_FUNCTION_COLS
			? l->width - (8 + count_cols + 2 + MIN_FUNCTION_COLS)
			: 0;
	if (need > avail) {
		fair = v->key_count ? avail / v->key_count : 0;
		fair = fair > 8 ? fair - 2 : 6;
		for (k = 0; k < v->key_count; k++)
			if (widths[k] > fair)
				widths[k] = fair;
	}

	line_start(&ln, f, l);
	line_sgr(&ln, SGR_REVERSE);
	line_printf(&ln, " SHARE  %*s  ", (int)count_cols, "SAMPLES");
	for (k = 0; k < v->key_count; k++) {
		size_t before = ln.left;

		line_text(&ln, v->keys[k].bytes, v->keys[k].len, widths[k]);
		line_pad(&ln, widths[k] + 2 - (before - ln.left));
	}
	line_printf(&ln, "HOTTEST FUNCTIONS (SELF)");
	/* the reverse-video bar spans the screen */
	if (l->color)
		line_pad(&ln, ln.left);
	line_end(&ln);

	for (i = 0; i < shown; i++) {
		const struct top_row *r = &v->rows[i];

		line_start(&ln, f, l);
		line_printf(&ln, "%5.1f%%  %*llu  ", 100.0 * r->count / v->total, (int)count_cols,
			    (unsigned long long)r->count);
		for (k = 0; k < v->key_count; k++)
			put_cell(&ln, v, r->values[k], widths[k]);
		put_functions(&ln, v, r);
		line_end(&ln);
	}
	if (shown < v->row_count && l->max_rows) {
		line_start(&ln, f, l);
		line_printf(&ln, "%5.1f%%  %*llu  (%zu more rows)", 100.0 * rest / v->total,
			    (int)count_cols, (unsigned long long)rest, v->row_count - shown);
		line_end(&ln);
	}
	return ferror(f) ? -EIO : 0;
}

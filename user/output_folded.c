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

#include "output.h"
#include "profile.h"
#include "symbols.h"

struct line {
	size_t off, len;
	__u64 count;
};

struct folded {
	struct symbolizer *sym;
	char *buf;
	size_t len, cap;
	struct line *lines;
	size_t nr, cap_lines;
};

static int reserve(struct folded *w, size_t n)
{
	size_t ncap;
	char *nb;

	if (w->cap - w->len >= n)
		return 0;
	ncap = w->cap ? w->cap : 1 << 16;
	while (ncap - w->len < n)
		ncap *= 2;
	nb = realloc(w->buf, ncap);
	if (!nb)
		return -ENOMEM;
	w->buf = nb;
	w->cap = ncap;
	return 0;
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

static bool needs_escape(unsigned char c)
{
	return c < 0x20 || c == 0x7f || c == ';' || c == ',' || c == '=' || c == '[' || c == ']' ||
	       c == '\\' || c == ' ';
}

static int put_escaped(struct folded *w, const void *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = p;
	size_t i = 0;

	/* Worst case: four output bytes per input byte. */
	if (reserve(w, 4 * n))
		return -ENOMEM;
	while (i < n) {
		size_t len = needs_escape(s[i]) ? 0 : output__utf8_len(s + i, n - i);
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

static int put_frame(struct folded *w, const struct sym_frame *fr)
{
	char num[32];
	int err;

	if (fr->function) {
		err = put_escaped(w, fr->function, strlen(fr->function));
	} else if (fr->module) {
		const char *base = strrchr(fr->module, '/');
		size_t len;

		base = base ? base + 1 : fr->module;
		len = strlen(base);
		/* "[vdso]" becomes "[vdso+0x...]". */
		if (len >= 2 && base[0] == '[' && base[len - 1] == ']') {
			base++;
			len -= 2;
		}
		snprintf(num, sizeof(num), "+0x%" PRIx64 "]", (uint64_t)fr->module_offset);
		err = put_str(w, "[");
		if (!err)
			err = put_escaped(w, base, len);
		if (!err)
			err = put_str(w, num);
	} else {
		err = put_str(w, "[unknown]");
	}
	if (!err && fr->kernel)
		err = put_str(w, "_[k]");
	return err;
}

static int add_line(const struct profile_sample *s, void *ctx)
{
	struct folded *w = ctx;
	size_t start = w->len, i;
	struct sym_frame fr;
	int err;

	err = put_escaped(w, s->comm, s->comm_len);
	if (!err)
		err = put_str(w, ";[");
	for (i = 0; i < s->label_count && !err; i++) {
		const struct profile_label *l = &s->labels[i];

		if (i)
			err = put_str(w, ",");
		if (!err)
			err = put_escaped(w, l->key, l->key_len);
		if (!err)
			err = put_str(w, "=");
		if (!err)
			err = put_escaped(w, l->value, l->value_len);
	}
	if (!err)
		err = put_str(w, "]");
	/* Root first. Only a leaf IP is exact; with kernel frames, so is none of the user ones. */
	for (i = s->ustack_len; i-- > 0 && !err;) {
		unsigned int flags = i || s->kstack_len ? SYM_RETURN_ADDRESS : 0;

		if (w->sym)
			symbolizer__resolve_user(w->sym, s->snapshot, s->ustack[i], flags, &fr);
		else
			fr = (struct sym_frame){.address = s->ustack[i]};
		err = put_str(w, ";");
		if (!err)
			err = put_frame(w, &fr);
	}
	for (i = s->kstack_len; i-- > 0 && !err;) {
		if (w->sym)
			symbolizer__resolve_kernel(w->sym, s->kstack[i], i ? SYM_RETURN_ADDRESS : 0,
						   &fr);
		else
			fr = (struct sym_frame){.address = s->kstack[i], .kernel = true};
		err = put_str(w, ";");
		if (!err)
			err = put_frame(w, &fr);
	}
	if (!err && (s->status & PROFILE_ST_DROPPED) && !s->ustack_len && !s->kstack_len)
		err = put_str(w, ";[dropped]");
	if (err)
		return err;
	if (w->nr == w->cap_lines) {
		size_t ncap = w->cap_lines ? w->cap_lines * 2 : 1024;
		struct line *nl = realloc(w->lines, ncap * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		w->lines = nl;
		w->cap_lines = ncap;
	}
	w->lines[w->nr++] = (struct line){start, w->len - start, s->count};
	return 0;
}

static int cmp_line(const void *a, const void *b, void *ctx)
{
	const struct line *x = a, *y = b;
	const char *buf = ctx;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(buf + x->off, buf + y->off, n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

int output__write_folded(FILE *f, const struct profile *p, struct symbolizer *sym)
{
	struct folded w = {.sym = sym};
	size_t i, j;
	int err;

	err = profile__for_each(p, add_line, &w);
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
	free(w.buf);
	free(w.lines);
	return err;
}

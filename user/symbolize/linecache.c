// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The lines DWARF gave, cached per file so that closing its DWARF loses nothing. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/hash.h"
#include "symbolize/symbols_int.h"

/* Every address DWARF has no lines for shares this entry. */
static struct cached_lines no_lines;

/* Counts f's cache in symbol_bytes again after it changed. */
static void lines_recount(struct symbolizer *sym, struct sym_file *f)
{
	size_t bytes = pairmap__bytes(&f->lines) + pairmap__bytes(&f->str_index) + f->strs_cap +
		       f->lines_entry_bytes;

	sym->st.symbol_bytes += bytes - f->lines_bytes;
	f->lines_bytes = bytes;
}

void sym_lines__clear(struct symbolizer *sym, struct sym_file *f)
{
	size_t i;

	for (i = 0; i < f->lines.count; i++)
		if (f->lines.entries[i].val != &no_lines)
			free(f->lines.entries[i].val);
	pairmap__free(&f->lines);
	pairmap__free(&f->str_index);
	free(f->strs);
	f->strs = NULL;
	f->strs_len = f->strs_cap = 0;
	f->lines_entry_bytes = 0;
	lines_recount(sym, f);
}

/* The offset of a copy of s in f->strs, made if there is none (0 for NULL). */
static int str_intern(struct sym_file *f, const char *s, __u32 *off)
{
	size_t len, need;
	__u64 h;
	void *v;

	*off = 0;
	if (!s)
		return 0;
	len = strlen(s);
	h = hash_fnv1a(HASH_FNV1A_SEED, s, len);
	v = pairmap__get(&f->str_index, h, len);
	/* the same hash and length for another string: a copy of its own */
	if (v && !memcmp(f->strs + (uintptr_t)v, s, len + 1)) {
		*off = (uintptr_t)v;
		return 0;
	}
	need = (f->strs_len ? f->strs_len : 1) + len + 1;
	if (need > UINT32_MAX)
		return -E2BIG;
	if (ARRAY_RESERVE_MIN(f->strs, f->strs_cap, need, 4096))
		return -ENOMEM;
	if (!f->strs_len)
		f->strs[f->strs_len++] = '\0';
	*off = f->strs_len;
	memcpy(f->strs + f->strs_len, s, len + 1);
	f->strs_len += len + 1;
	if (!v && pairmap__put(&f->str_index, h, len, (void *)(uintptr_t)*off))
		return -ENOMEM;
	return 0;
}

/*
 * Keeps the n lines DWARF gave for vaddr; false if they could not be. A
 * file's cache that outgrows an eighth of the budget starts over, so one
 * file cannot take it all.
 */
bool sym_lines__put(struct symbolizer *sym, struct sym_file *f, __u64 vaddr,
		    const struct sym_line *lines, size_t n)
{
	size_t size = sizeof(struct cached_lines) + n * sizeof(struct cached_line), i;
	struct cached_lines *c = &no_lines;

	if (f->lines_bytes > sym->opts.max_symbol_bytes / 8)
		sym_lines__clear(sym, f);
	if (n) {
		c = malloc(size);
		if (!c)
			return false;
		c->n = n;
		for (i = 0; i < n; i++) {
			c->v[i] = (struct cached_line){0, 0, lines[i].line, lines[i].column,
						       lines[i].start_line};
			if (str_intern(f, lines[i].function, &c->v[i].function) ||
			    str_intern(f, lines[i].file, &c->v[i].file))
				goto out_free;
		}
	}
	if (pairmap__put(&f->lines, vaddr, 0, c))
		goto out_free;
	if (n)
		f->lines_entry_bytes += size;
	lines_recount(sym, f);
	return true;

out_free:
	if (c != &no_lines)
		free(c);
	lines_recount(sym, f);
	return false;
}

/* The cached lines of vaddr into sym->lines; false if vaddr was never looked up. */
bool sym_lines__get(struct symbolizer *sym, const struct sym_file *f, __u64 vaddr, size_t *n)
{
	const struct cached_lines *c = pairmap__get(&f->lines, vaddr, 0);
	size_t i;

	if (!c)
		return false;
	for (i = 0; i < c->n; i++) {
		const struct cached_line *l = &c->v[i];

		sym->lines[i] = (struct sym_line){
			.function = l->function ? f->strs + l->function : NULL,
			.file = l->file ? f->strs + l->file : NULL,
			.line = l->line,
			.column = l->column,
			.start_line = l->start_line,
		};
	}
	*n = c->n;
	return true;
}

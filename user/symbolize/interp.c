// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Frames of interpreted code, named by their runtime's module while the
 * process lives (its code objects may be gone by the time a profile is
 * written): each distinct (kind, function, file, line) once, for good.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/hash.h"
#include "symbols_int.h"

struct interp_key {
	__u32 kind, line, start_line;
	const char *function, *file;
};

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool interp_eq(const void *ctx, __u32 id, const void *key)
{
	const struct interp_frame *f = &((const struct symbolizer *)ctx)->interp[id];
	const struct interp_key *k = key;

	return f->kind == k->kind && f->line.line == k->line &&
	       f->line.start_line == k->start_line && same_str(f->line.function, k->function) &&
	       same_str(f->line.file, k->file);
}

static __u64 interp_hash(const struct interp_key *k)
{
	__u64 h = hash_fnv1a(HASH_FNV1A_SEED, &k->kind, sizeof(k->kind));

	h = hash_fnv1a(h, &k->line, sizeof(k->line));
	h = hash_fnv1a(h, &k->start_line, sizeof(k->start_line));
	if (k->function)
		h = hash_fnv1a(h, k->function, strlen(k->function));
	h = hash_fnv1a(h, "", 1);
	if (k->file)
		h = hash_fnv1a(h, k->file, strlen(k->file));
	return h;
}

__u64 symbolizer__interp_frame(struct symbolizer *sym, __u32 kind, const char *function,
			       const char *file, __u32 line, __u32 start_line)
{
	struct interp_key k = {kind, line, start_line, function, file};
	__u64 hash = interp_hash(&k);
	struct hashmap_slot *s;
	struct interp_frame *f;
	__u32 id;

	s = hashmap__find(&sym->interp_index, hash, interp_eq, sym, &k);
	if (hashmap_slot__id(s, &id))
		return SYM_INTERP_TAG << 60 | id;
	if (sym->interp_count >= SYM_INTERP_MAX ||
	    ARRAY_RESERVE(sym->interp, sym->interp_cap, sym->interp_count + 1) ||
	    hashmap__reserve(&sym->interp_index, 0))
		return 0;
	f = &sym->interp[sym->interp_count];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->line.function = function ? strdup(function) : NULL;
	f->line.file = file ? strdup(file) : NULL;
	f->line.line = line;
	f->line.start_line = start_line;
	if ((function && !f->line.function) || (file && !f->line.file)) {
		free((char *)f->line.function);
		free((char *)f->line.file);
		return 0;
	}
	id = sym->interp_count++;
	/* the slot may have moved when the index grew */
	s = hashmap__find(&sym->interp_index, hash, interp_eq, sym, &k);
	hashmap__set(&sym->interp_index, s, hash, id);
	return SYM_INTERP_TAG << 60 | id;
}

bool interp__resolve(struct symbolizer *sym, __u64 token, struct sym_frame *f)
{
	__u64 id = token & ((1ull << 60) - 1);
	const struct interp_frame *in;

	if (token >> 60 != SYM_INTERP_TAG || id >= sym->interp_count)
		return false;
	in = &sym->interp[id];
	f->kind = in->kind;
	f->function = in->line.function;
	f->lines = &in->line;
	f->line_count = 1;
	return true;
}

void interp__free(struct symbolizer *sym)
{
	size_t i;

	for (i = 0; i < sym->interp_count; i++) {
		free((char *)sym->interp[i].line.function);
		free((char *)sym->interp[i].line.file);
	}
	free(sym->interp);
	hashmap__free(&sym->interp_index);
}

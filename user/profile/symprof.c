// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolized profile tables. Each interned table has an open-addressing
 * index of ids (0: empty slot) hashed on the entry's contents, so adding an
 * entry that exists costs one lookup and stores nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "profile/symprof.h"

struct id_index {
	__u32 *slots;
	size_t cap; /* a power of two, or 0 */
	size_t used;
};

enum table {
	T_STRING,
	T_MAPPING,
	T_FUNCTION,
	T_LOCATION,
	T_STACK,
	T_LABEL_SET,
	T_SAMPLE,
	T_PROCESS,
	T_COUNT,
};

struct symprof_index {
	struct id_index idx[T_COUNT];
	/* capacities of the public arrays */
	size_t cap_strings, cap_mappings, cap_functions, cap_lines, cap_locations;
	size_t cap_stack_locations, cap_stacks, cap_labels, cap_label_sets, cap_samples;
	size_t cap_processes;
};

/* FNV-1a, then mixed: entries are small and the tables modest */
static __u64 hash_finish(__u64 h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

/* Grows *arr (element size sz) to hold at least n elements. */
static int grow(struct symprof *sp, void **arr, size_t *cap, size_t n, size_t sz)
{
	size_t ncap;
	void *na;

	if (n <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < n)
		ncap *= 2;
	na = realloc(*arr, ncap * sz);
	if (!na) {
		sp->error = -ENOMEM;
		return -ENOMEM;
	}
	*arr = na;
	*cap = ncap;
	return 0;
}

#define GROW(sp, field, capfield, n)                                                               \
	grow(sp, (void **)&(sp)->field, &(sp)->index->capfield, n, sizeof(*(sp)->field))

/* Hash and equality of an entry already in a table, or of a candidate. */
static __u64 hash_string(const void *bytes, size_t len)
{
	return hash_finish(hash_fnv1a(HASH_FNV1A_SEED, bytes, len));
}

static __u64 hash_ids(const __u32 *ids, size_t n)
{
	return hash_finish(hash_fnv1a(HASH_FNV1A_SEED ^ n, ids, n * sizeof(*ids)));
}

static __u64 hash_labels(const struct sp_label *l, size_t n)
{
	return hash_finish(hash_fnv1a(HASH_FNV1A_SEED ^ n, l, n * sizeof(*l)));
}

static __u64 hash_location(const struct sp_location *loc, const struct sp_line *lines, size_t n)
{
	__u64 h = HASH_FNV1A_SEED;

	h = hash_fnv1a(h, &loc->mapping, sizeof(loc->mapping));
	h = hash_fnv1a(h, &loc->kernel, sizeof(loc->kernel));
	h = hash_fnv1a(h, &loc->address, sizeof(loc->address));
	h = hash_fnv1a(h, &loc->module_offset, sizeof(loc->module_offset));
	h = hash_fnv1a(h, &loc->function_offset, sizeof(loc->function_offset));
	return hash_finish(hash_fnv1a(h, lines, n * sizeof(*lines)));
}

static __u64 hash_mapping(const struct sp_mapping *m)
{
	__u64 h = HASH_FNV1A_SEED;

	h = hash_fnv1a(h, &m->start, sizeof(m->start));
	h = hash_fnv1a(h, &m->limit, sizeof(m->limit));
	h = hash_fnv1a(h, &m->file_offset, sizeof(m->file_offset));
	h = hash_fnv1a(h, &m->file, sizeof(m->file));
	h = hash_fnv1a(h, &m->build_id, sizeof(m->build_id));
	return hash_finish(hash_fnv1a(h, &m->kernel, sizeof(m->kernel)));
}

static bool mapping_eq(const struct sp_mapping *a, const struct sp_mapping *b)
{
	return a->start == b->start && a->limit == b->limit && a->file_offset == b->file_offset &&
	       a->file == b->file && a->build_id == b->build_id && a->kernel == b->kernel;
}

static __u64 hash_function(const struct sp_function *f)
{
	__u32 k[4] = {f->name, f->system_name, f->file, f->start_line};

	return hash_ids(k, 4);
}

static bool function_eq(const struct sp_function *a, const struct sp_function *b)
{
	return a->name == b->name && a->system_name == b->system_name && a->file == b->file &&
	       a->start_line == b->start_line;
}

static __u64 hash_sample(const struct sp_sample *s)
{
	__u32 k[5] = {s->pid, s->tid, s->comm, s->label_set, s->stack};

	return hash_ids(k, 5);
}

static bool sample_eq(const struct sp_sample *a, const struct sp_sample *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->comm == b->comm &&
	       a->label_set == b->label_set && a->stack == b->stack;
}

/* The id stored in the slot for hash h that satisfies eq, or the empty slot to use. */
#define INDEX_FIND(ix, h, id_var, eq_expr)                                                         \
	({                                                                                         \
		size_t _mask = (ix)->cap - 1, _i = (h)&_mask;                                      \
		__u32 *_slot;                                                                      \
		for (;;) {                                                                         \
			_slot = &(ix)->slots[_i];                                                  \
			id_var = *_slot;                                                           \
			if (!id_var || (eq_expr))                                                  \
				break;                                                             \
			_i = (_i + 1) & _mask;                                                     \
		}                                                                                  \
		_slot;                                                                             \
	})

/*
 * Makes room for one more id. Rehashing needs each entry's hash: hash_of(sp,
 * id) recomputes it from the table.
 */
static int index_reserve(struct symprof *sp, struct id_index *ix,
			 __u64 (*hash_of)(const struct symprof *, __u32))
{
	size_t ncap, i, j;
	__u32 *ns;

	if ((ix->used + 1) * 4 < ix->cap * 3)
		return 0;
	ncap = ix->cap ? ix->cap * 2 : 64;
	ns = calloc(ncap, sizeof(*ns));
	if (!ns) {
		sp->error = -ENOMEM;
		return -ENOMEM;
	}
	for (i = 0; i < ix->cap; i++) {
		__u32 id = ix->slots[i];

		if (!id)
			continue;
		for (j = hash_of(sp, id) & (ncap - 1); ns[j]; j = (j + 1) & (ncap - 1))
			;
		ns[j] = id;
	}
	free(ix->slots);
	ix->slots = ns;
	ix->cap = ncap;
	return 0;
}

static __u64 string_hash_of(const struct symprof *sp, __u32 id)
{
	return hash_string(sp->strings[id].bytes, sp->strings[id].len);
}

static __u64 mapping_hash_of(const struct symprof *sp, __u32 id)
{
	return hash_mapping(&sp->mappings[id]);
}

static __u64 function_hash_of(const struct symprof *sp, __u32 id)
{
	return hash_function(&sp->functions[id]);
}

static __u64 location_hash_of(const struct symprof *sp, __u32 id)
{
	const struct sp_location *l = &sp->locations[id];

	return hash_location(l, sp->lines + l->first_line, l->line_count);
}

static __u64 stack_hash_of(const struct symprof *sp, __u32 id)
{
	return hash_ids(sp->stack_locations + sp->stacks[id].first, sp->stacks[id].count);
}

static __u64 label_set_hash_of(const struct symprof *sp, __u32 id)
{
	return hash_labels(sp->labels + sp->label_sets[id].first, sp->label_sets[id].count);
}

/* Samples have no zero entry: ids in the index are index + 1. */
static __u64 sample_hash_of(const struct symprof *sp, __u32 id)
{
	return hash_sample(&sp->samples[id - 1]);
}

static __u64 process_hash_of(const struct symprof *sp, __u32 id)
{
	return hash_ids(&sp->processes[id - 1].pid, 1);
}

struct symprof *symprof__new(void)
{
	struct symprof *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return NULL;
	sp->index = calloc(1, sizeof(*sp->index));
	if (!sp->index) {
		free(sp);
		return NULL;
	}
	/*
	 * The zero entries; and never-NULL referenced arrays, so that "lines +
	 * first_line" of an entry with no lines is valid C (UBSan checks it).
	 */
	if (GROW(sp, strings, cap_strings, 1) || GROW(sp, mappings, cap_mappings, 1) ||
	    GROW(sp, functions, cap_functions, 1) || GROW(sp, locations, cap_locations, 1) ||
	    GROW(sp, stacks, cap_stacks, 1) || GROW(sp, label_sets, cap_label_sets, 1) ||
	    GROW(sp, lines, cap_lines, 1) || GROW(sp, stack_locations, cap_stack_locations, 1) ||
	    GROW(sp, labels, cap_labels, 1)) {
		symprof__free(sp);
		return NULL;
	}
	sp->strings[0] = (struct sp_string){(const unsigned char *)"", 0};
	sp->mappings[0] = (struct sp_mapping){};
	sp->functions[0] = (struct sp_function){};
	sp->locations[0] =
		(struct sp_location){.module_offset = SP_UNKNOWN, .function_offset = SP_UNKNOWN};
	sp->stacks[0] = (struct sp_range){};
	sp->label_sets[0] = (struct sp_range){};
	sp->string_count = sp->mapping_count = sp->function_count = sp->location_count = 1;
	sp->stack_count = sp->label_set_count = 1;
	return sp;
}

void symprof__free(struct symprof *sp)
{
	size_t i;

	if (!sp)
		return;
	for (i = 1; i < sp->string_count; i++)
		free((void *)sp->strings[i].bytes);
	if (sp->index)
		for (i = 0; i < T_COUNT; i++)
			free(sp->index->idx[i].slots);
	free(sp->index);
	free(sp->strings);
	free(sp->mappings);
	free(sp->functions);
	free(sp->lines);
	free(sp->locations);
	free(sp->stack_locations);
	free(sp->stacks);
	free(sp->labels);
	free(sp->label_sets);
	free(sp->samples);
	free(sp->processes);
	free(sp);
}

int symprof__error(const struct symprof *sp)
{
	return sp->error;
}

__u32 symprof__string(struct symprof *sp, const void *bytes, size_t len)
{
	struct id_index *ix = &sp->index->idx[T_STRING];
	__u64 h = hash_string(bytes, len);
	unsigned char *copy;
	__u32 id, *slot;

	if (!len || sp->error)
		return 0;
	if (index_reserve(sp, ix, string_hash_of))
		return 0;
	slot = INDEX_FIND(ix, h, id,
			  sp->strings[id].len == len && !memcmp(sp->strings[id].bytes, bytes, len));
	if (id)
		return id;
	if (GROW(sp, strings, cap_strings, sp->string_count + 1))
		return 0;
	copy = malloc(len + 1);
	if (!copy) {
		sp->error = -ENOMEM;
		return 0;
	}
	memcpy(copy, bytes, len);
	copy[len] = 0;
	id = sp->string_count++;
	sp->strings[id] = (struct sp_string){copy, len};
	*slot = id;
	ix->used++;
	return id;
}

__u32 symprof__cstring(struct symprof *sp, const char *s)
{
	return s ? symprof__string(sp, s, strlen(s)) : 0;
}

__u32 symprof__mapping(struct symprof *sp, const struct sp_mapping *m)
{
	struct id_index *ix = &sp->index->idx[T_MAPPING];
	__u64 h = hash_mapping(m);
	__u32 id, *slot;

	if (sp->error || index_reserve(sp, ix, mapping_hash_of))
		return 0;
	slot = INDEX_FIND(ix, h, id, mapping_eq(&sp->mappings[id], m));
	if (id)
		return id;
	if (GROW(sp, mappings, cap_mappings, sp->mapping_count + 1))
		return 0;
	id = sp->mapping_count++;
	sp->mappings[id] = *m;
	*slot = id;
	ix->used++;
	return id;
}

__u32 symprof__function(struct symprof *sp, const struct sp_function *f)
{
	struct id_index *ix = &sp->index->idx[T_FUNCTION];
	__u64 h = hash_function(f);
	__u32 id, *slot;

	if (sp->error || index_reserve(sp, ix, function_hash_of))
		return 0;
	slot = INDEX_FIND(ix, h, id, function_eq(&sp->functions[id], f));
	if (id)
		return id;
	if (GROW(sp, functions, cap_functions, sp->function_count + 1))
		return 0;
	id = sp->function_count++;
	sp->functions[id] = *f;
	*slot = id;
	ix->used++;
	return id;
}

static bool location_eq(const struct symprof *sp, __u32 id, const struct sp_location *loc,
			const struct sp_line *lines, size_t n)
{
	const struct sp_location *l = &sp->locations[id];

	return l->mapping == loc->mapping && l->kernel == loc->kernel &&
	       l->address == loc->address && l->module_offset == loc->module_offset &&
	       l->function_offset == loc->function_offset && l->line_count == n &&
	       (!n || !memcmp(sp->lines + l->first_line, lines, n * sizeof(*lines)));
}

__u32 symprof__location(struct symprof *sp, const struct sp_location *loc,
			const struct sp_line *lines, size_t line_count)
{
	struct id_index *ix = &sp->index->idx[T_LOCATION];
	__u64 h = hash_location(loc, lines, line_count);
	__u32 id, *slot;

	if (sp->error || index_reserve(sp, ix, location_hash_of))
		return 0;
	slot = INDEX_FIND(ix, h, id, location_eq(sp, id, loc, lines, line_count));
	if (id)
		return id;
	if (GROW(sp, locations, cap_locations, sp->location_count + 1) ||
	    GROW(sp, lines, cap_lines, sp->line_count + line_count))
		return 0;
	id = sp->location_count++;
	sp->locations[id] = *loc;
	sp->locations[id].first_line = sp->line_count;
	sp->locations[id].line_count = line_count;
	if (line_count)
		memcpy(sp->lines + sp->line_count, lines, line_count * sizeof(*lines));
	sp->line_count += line_count;
	*slot = id;
	ix->used++;
	return id;
}

__u32 symprof__stack(struct symprof *sp, const __u32 *locations, size_t n)
{
	struct id_index *ix = &sp->index->idx[T_STACK];
	__u64 h = hash_ids(locations, n);
	__u32 id, *slot;

	if (!n || sp->error || index_reserve(sp, ix, stack_hash_of))
		return 0;
	slot = INDEX_FIND(ix, h, id,
			  sp->stacks[id].count == n &&
				  !memcmp(sp->stack_locations + sp->stacks[id].first, locations,
					  n * sizeof(*locations)));
	if (id)
		return id;
	if (GROW(sp, stacks, cap_stacks, sp->stack_count + 1) ||
	    GROW(sp, stack_locations, cap_stack_locations, sp->stack_location_count + n))
		return 0;
	id = sp->stack_count++;
	sp->stacks[id] = (struct sp_range){sp->stack_location_count, n};
	memcpy(sp->stack_locations + sp->stack_location_count, locations, n * sizeof(*locations));
	sp->stack_location_count += n;
	*slot = id;
	ix->used++;
	return id;
}

int symprof__bytes_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	int c = n ? memcmp(a, b, n) : 0;

	if (c)
		return c;
	return (alen > blen) - (alen < blen);
}

static int key_cmp(const struct symprof *sp, __u32 a, __u32 b)
{
	const struct sp_string *x = symprof__str(sp, a), *y = symprof__str(sp, b);

	return symprof__bytes_cmp(x->bytes, x->len, y->bytes, y->len);
}

__u32 symprof__label_set(struct symprof *sp, const struct sp_label *labels, size_t n)
{
	struct id_index *ix = &sp->index->idx[T_LABEL_SET];
	struct sp_label *sorted;
	size_t i, j, kept = 0;
	__u32 id = 0, *slot;
	__u64 h;

	if (!n || sp->error)
		return 0;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted) {
		sp->error = -ENOMEM;
		return 0;
	}
	/* insertion sort keeps the first of equal keys first: sets are small */
	for (i = 0; i < n; i++) {
		for (j = kept; j > 0 && key_cmp(sp, sorted[j - 1].key, labels[i].key) > 0; j--)
			;
		if (j > 0 && sorted[j - 1].key == labels[i].key)
			continue;
		memmove(sorted + j + 1, sorted + j, (kept - j) * sizeof(*sorted));
		sorted[j] = labels[i];
		kept++;
	}
	h = hash_labels(sorted, kept);
	if (index_reserve(sp, ix, label_set_hash_of))
		goto out;
	slot = INDEX_FIND(ix, h, id,
			  sp->label_sets[id].count == kept &&
				  !memcmp(sp->labels + sp->label_sets[id].first, sorted,
					  kept * sizeof(*sorted)));
	if (id)
		goto out;
	if (GROW(sp, label_sets, cap_label_sets, sp->label_set_count + 1) ||
	    GROW(sp, labels, cap_labels, sp->label_count + kept))
		goto out;
	id = sp->label_set_count++;
	sp->label_sets[id] = (struct sp_range){sp->label_count, kept};
	memcpy(sp->labels + sp->label_count, sorted, kept * sizeof(*sorted));
	sp->label_count += kept;
	*slot = id;
	ix->used++;
out:
	free(sorted);
	return id;
}

int symprof__add_sample(struct symprof *sp, const struct sp_sample *s)
{
	struct id_index *ix = &sp->index->idx[T_SAMPLE];
	__u64 h = hash_sample(s);
	__u32 id, *slot;

	if (sp->error || index_reserve(sp, ix, sample_hash_of))
		return -ENOMEM;
	slot = INDEX_FIND(ix, h, id, sample_eq(&sp->samples[id - 1], s));
	if (id) {
		sp->samples[id - 1].count += s->count;
		sp->samples[id - 1].status |= s->status;
		return 0;
	}
	if (GROW(sp, samples, cap_samples, sp->sample_count + 1))
		return -ENOMEM;
	sp->samples[sp->sample_count++] = *s;
	*slot = sp->sample_count;
	ix->used++;
	return 0;
}

int symprof__filter_labels(struct symprof *sp, symprof_key_fn keep, void *ctx)
{
	struct id_index *sets_ix = &sp->index->idx[T_LABEL_SET];
	struct id_index *samples_ix = &sp->index->idx[T_SAMPLE];
	size_t id, j, kept, n;
	__u32 *map, other, *slot;

	if (sp->error)
		return sp->error;
	map = calloc(sp->label_set_count, sizeof(*map));
	if (!map)
		return sp->error = -ENOMEM;
	/* each set loses the labels in place; sets left equal become one */
	if (sets_ix->cap)
		memset(sets_ix->slots, 0, sets_ix->cap * sizeof(*sets_ix->slots));
	sets_ix->used = 0;
	for (id = 1; id < sp->label_set_count; id++) {
		struct sp_range *r = &sp->label_sets[id];
		struct sp_label *l = sp->labels + r->first;

		for (j = kept = 0; j < r->count; j++)
			if (keep(symprof__str(sp, l[j].key), ctx))
				l[kept++] = l[j];
		r->count = kept;
		if (!kept)
			continue;
		slot = INDEX_FIND(sets_ix, label_set_hash_of(sp, id), other,
				  sp->label_sets[other].count == kept &&
					  !memcmp(sp->labels + sp->label_sets[other].first, l,
						  kept * sizeof(*l)));
		if (!other) {
			*slot = other = id;
			sets_ix->used++;
		}
		map[id] = other;
	}
	/* samples that now differ in nothing merge, in place: a sample only moves down */
	if (samples_ix->cap)
		memset(samples_ix->slots, 0, samples_ix->cap * sizeof(*samples_ix->slots));
	samples_ix->used = 0;
	n = sp->sample_count;
	sp->sample_count = 0;
	for (j = 0; j < n; j++) {
		struct sp_sample s = sp->samples[j];

		s.label_set = s.label_set < sp->label_set_count ? map[s.label_set] : 0;
		symprof__add_sample(sp, &s);
	}
	free(map);
	return sp->error;
}

static struct sp_process *process_find(const struct symprof *sp, __u32 pid, __u32 **slot)
{
	const struct id_index *ix = &sp->index->idx[T_PROCESS];
	__u32 id;

	if (!ix->cap)
		return NULL;
	*slot = INDEX_FIND(ix, hash_ids(&pid, 1), id, sp->processes[id - 1].pid == pid);
	return id ? &sp->processes[id - 1] : NULL;
}

int symprof__set_process(struct symprof *sp, const struct sp_process *proc)
{
	struct id_index *ix = &sp->index->idx[T_PROCESS];
	struct sp_process *p;
	__u32 *slot;

	if (sp->error || index_reserve(sp, ix, process_hash_of))
		return -ENOMEM;
	p = process_find(sp, proc->pid, &slot);
	if (p) {
		if (!p->name)
			p->name = proc->name;
		if (!p->executable)
			p->executable = proc->executable;
		if (!p->container_id)
			p->container_id = proc->container_id;
		if (!p->pod_uid)
			p->pod_uid = proc->pod_uid;
		return 0;
	}
	if (GROW(sp, processes, cap_processes, sp->process_count + 1))
		return -ENOMEM;
	sp->processes[sp->process_count++] = *proc;
	*slot = sp->process_count;
	ix->used++;
	return 0;
}

const struct sp_process *symprof__process(const struct symprof *sp, __u32 pid)
{
	__u32 *slot;

	return process_find(sp, pid, &slot);
}

__u64 symprof__total(const struct symprof *sp)
{
	__u64 total = 0;
	size_t i;

	for (i = 0; i < sp->sample_count; i++)
		total += sp->samples[i].count;
	return total;
}

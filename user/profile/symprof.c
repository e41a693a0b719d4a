// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolized profile tables. Each interned table has an index of ids
 * (lib/hashmap.h) hashed on the entry's contents, so adding an entry that
 * exists costs one lookup and stores nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "profile/symprof.h"

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
	struct hashmap idx[T_COUNT];
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

/* err from lib/array.h, kept as the profile's error. */
static int grown(struct symprof *sp, int err)
{
	if (err)
		sp->error = -ENOMEM;
	return err;
}

#define GROW(sp, field, capfield, n) grown(sp, ARRAY_RESERVE((sp)->field, (sp)->index->capfield, n))

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
	h = hash_fnv1a(h, &loc->kind, sizeof(loc->kind));
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

static bool mapping_eq(const void *ctx, __u32 id, const void *key)
{
	const struct sp_mapping *a = &((const struct symprof *)ctx)->mappings[id], *b = key;

	return a->start == b->start && a->limit == b->limit && a->file_offset == b->file_offset &&
	       a->file == b->file && a->build_id == b->build_id && a->kernel == b->kernel;
}

static __u64 hash_function(const struct sp_function *f)
{
	__u32 k[4] = {f->name, f->system_name, f->file, f->start_line};

	return hash_ids(k, 4);
}

static bool function_eq(const void *ctx, __u32 id, const void *key)
{
	const struct sp_function *a = &((const struct symprof *)ctx)->functions[id], *b = key;

	return a->name == b->name && a->system_name == b->system_name && a->file == b->file &&
	       a->start_line == b->start_line;
}

static __u64 hash_sample(const struct sp_sample *s)
{
	__u32 k[5] = {s->pid, s->tid, s->comm, s->label_set, s->stack};

	return hash_ids(k, 5);
}

static bool sample_eq(const void *ctx, __u32 id, const void *key)
{
	const struct sp_sample *a = &((const struct symprof *)ctx)->samples[id], *b = key;

	return a->pid == b->pid && a->tid == b->tid && a->comm == b->comm &&
	       a->label_set == b->label_set && a->stack == b->stack;
}

/*
 * Looks key up in table t: 1 with its *id, or 0 with the *slot to fill
 * (index_add) once the entry is stored; -ENOMEM.
 */
static int index_find(struct symprof *sp, enum table t, __u64 h, hashmap_eq_fn eq, const void *key,
		      struct hashmap_slot **slot, __u32 *id)
{
	struct hashmap *m = &sp->index->idx[t];

	if (hashmap__reserve(m, 0))
		return sp->error = -ENOMEM;
	*slot = hashmap__find(m, h, eq, sp, key);
	return hashmap_slot__id(*slot, id);
}

static void index_add(struct symprof *sp, enum table t, struct hashmap_slot *slot, __u64 h,
		      __u32 id)
{
	hashmap__set(&sp->index->idx[t], slot, h, id);
}

struct bytes_key {
	const void *p;
	size_t n;
};

static bool string_eq(const void *ctx, __u32 id, const void *key)
{
	const struct sp_string *a = &((const struct symprof *)ctx)->strings[id];
	const struct bytes_key *k = key;

	return a->len == k->n && !memcmp(a->bytes, k->p, k->n);
}

/* A stack's locations or a label set's labels: a range of an array. */
static bool range_eq(const struct sp_range *r, const void *arr, size_t elem,
		     const struct bytes_key *k)
{
	return r->count == k->n && !memcmp((const char *)arr + r->first * elem, k->p, k->n * elem);
}

static bool stack_eq(const void *ctx, __u32 id, const void *key)
{
	const struct symprof *sp = ctx;

	return range_eq(&sp->stacks[id], sp->stack_locations, sizeof(*sp->stack_locations), key);
}

static bool label_set_eq(const void *ctx, __u32 id, const void *key)
{
	const struct symprof *sp = ctx;

	return range_eq(&sp->label_sets[id], sp->labels, sizeof(*sp->labels), key);
}

static bool process_eq(const void *ctx, __u32 id, const void *key)
{
	return ((const struct symprof *)ctx)->processes[id].pid == *(const __u32 *)key;
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
			hashmap__free(&sp->index->idx[i]);
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
	__u64 h = hash_string(bytes, len);
	struct bytes_key k = {bytes, len};
	struct hashmap_slot *slot;
	unsigned char *copy;
	__u32 id;
	int found;

	if (!len || sp->error)
		return 0;
	found = index_find(sp, T_STRING, h, string_eq, &k, &slot, &id);
	if (found)
		return found > 0 ? id : 0;
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
	index_add(sp, T_STRING, slot, h, id);
	return id;
}

__u32 symprof__cstring(struct symprof *sp, const char *s)
{
	return s ? symprof__string(sp, s, strlen(s)) : 0;
}

__u32 symprof__mapping(struct symprof *sp, const struct sp_mapping *m)
{
	__u64 h = hash_mapping(m);
	struct hashmap_slot *slot;
	__u32 id;
	int found;

	if (sp->error)
		return 0;
	found = index_find(sp, T_MAPPING, h, mapping_eq, m, &slot, &id);
	if (found)
		return found > 0 ? id : 0;
	if (GROW(sp, mappings, cap_mappings, sp->mapping_count + 1))
		return 0;
	id = sp->mapping_count++;
	sp->mappings[id] = *m;
	index_add(sp, T_MAPPING, slot, h, id);
	return id;
}

__u32 symprof__function(struct symprof *sp, const struct sp_function *f)
{
	__u64 h = hash_function(f);
	struct hashmap_slot *slot;
	__u32 id;
	int found;

	if (sp->error)
		return 0;
	found = index_find(sp, T_FUNCTION, h, function_eq, f, &slot, &id);
	if (found)
		return found > 0 ? id : 0;
	if (GROW(sp, functions, cap_functions, sp->function_count + 1))
		return 0;
	id = sp->function_count++;
	sp->functions[id] = *f;
	index_add(sp, T_FUNCTION, slot, h, id);
	return id;
}

struct location_key {
	const struct sp_location *loc;
	const struct sp_line *lines;
	size_t n;
};

static bool location_eq(const void *ctx, __u32 id, const void *key)
{
	const struct symprof *sp = ctx;
	const struct location_key *k = key;
	const struct sp_location *l = &sp->locations[id], *loc = k->loc;
	const struct sp_line *lines = k->lines;
	size_t n = k->n;

	return l->mapping == loc->mapping && l->kernel == loc->kernel && l->kind == loc->kind &&
	       l->address == loc->address && l->module_offset == loc->module_offset &&
	       l->function_offset == loc->function_offset && l->line_count == n &&
	       (!n || !memcmp(sp->lines + l->first_line, lines, n * sizeof(*lines)));
}

__u32 symprof__location(struct symprof *sp, const struct sp_location *loc,
			const struct sp_line *lines, size_t line_count)
{
	__u64 h = hash_location(loc, lines, line_count);
	struct location_key k = {loc, lines, line_count};
	struct hashmap_slot *slot;
	__u32 id;
	int found;

	if (sp->error)
		return 0;
	found = index_find(sp, T_LOCATION, h, location_eq, &k, &slot, &id);
	if (found)
		return found > 0 ? id : 0;
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
	index_add(sp, T_LOCATION, slot, h, id);
	return id;
}

__u32 symprof__stack(struct symprof *sp, const __u32 *locations, size_t n)
{
	__u64 h = hash_ids(locations, n);
	struct bytes_key k = {locations, n};
	struct hashmap_slot *slot;
	__u32 id;
	int found;

	if (!n || sp->error)
		return 0;
	found = index_find(sp, T_STACK, h, stack_eq, &k, &slot, &id);
	if (found)
		return found > 0 ? id : 0;
	if (GROW(sp, stacks, cap_stacks, sp->stack_count + 1) ||
	    GROW(sp, stack_locations, cap_stack_locations, sp->stack_location_count + n))
		return 0;
	id = sp->stack_count++;
	sp->stacks[id] = (struct sp_range){sp->stack_location_count, n};
	memcpy(sp->stack_locations + sp->stack_location_count, locations, n * sizeof(*locations));
	sp->stack_location_count += n;
	index_add(sp, T_STACK, slot, h, id);
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
	struct hashmap_slot *slot;
	struct sp_label *sorted;
	struct bytes_key k;
	size_t i, j, kept = 0;
	__u32 id = 0;
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
	k = (struct bytes_key){sorted, kept};
	if (index_find(sp, T_LABEL_SET, h, label_set_eq, &k, &slot, &id))
		goto out;
	if (GROW(sp, label_sets, cap_label_sets, sp->label_set_count + 1) ||
	    GROW(sp, labels, cap_labels, sp->label_count + kept))
		goto out;
	id = sp->label_set_count++;
	sp->label_sets[id] = (struct sp_range){sp->label_count, kept};
	memcpy(sp->labels + sp->label_count, sorted, kept * sizeof(*sorted));
	sp->label_count += kept;
	index_add(sp, T_LABEL_SET, slot, h, id);
out:
	free(sorted);
	return id;
}

int symprof__add_sample(struct symprof *sp, const struct sp_sample *s)
{
	__u64 h = hash_sample(s);
	struct hashmap_slot *slot;
	__u32 id;
	int found;

	if (sp->error)
		return -ENOMEM;
	found = index_find(sp, T_SAMPLE, h, sample_eq, s, &slot, &id);
	if (found < 0)
		return found;
	if (found) {
		sp->samples[id].count += s->count;
		sp->samples[id].status |= s->status;
		return 0;
	}
	if (GROW(sp, samples, cap_samples, sp->sample_count + 1))
		return -ENOMEM;
	id = sp->sample_count++;
	sp->samples[id] = *s;
	index_add(sp, T_SAMPLE, slot, h, id);
	return 0;
}

int symprof__filter_labels(struct symprof *sp, symprof_key_fn keep, void *ctx)
{
	struct hashmap_slot *slot;
	size_t id, j, kept, n;
	struct bytes_key k;
	__u32 *map, other;
	int found;
	__u64 h;

	if (sp->error)
		return sp->error;
	map = calloc(sp->label_set_count, sizeof(*map));
	if (!map)
		return sp->error = -ENOMEM;
	/* each set loses the labels in place; sets left equal become one */
	hashmap__clear(&sp->index->idx[T_LABEL_SET]);
	for (id = 1; id < sp->label_set_count; id++) {
		struct sp_range *r = &sp->label_sets[id];
		struct sp_label *l = sp->labels + r->first;

		for (j = kept = 0; j < r->count; j++)
			if (keep(symprof__str(sp, l[j].key), ctx))
				l[kept++] = l[j];
		r->count = kept;
		if (!kept)
			continue;
		h = hash_labels(l, kept);
		k = (struct bytes_key){l, kept};
		found = index_find(sp, T_LABEL_SET, h, label_set_eq, &k, &slot, &other);
		if (found < 0)
			break;
		if (!found) {
			index_add(sp, T_LABEL_SET, slot, h, id);
			other = id;
		}
		map[id] = other;
	}
	/* samples that now differ in nothing merge, in place: a sample only moves down */
	hashmap__clear(&sp->index->idx[T_SAMPLE]);
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

int symprof__set_process(struct symprof *sp, const struct sp_process *proc)
{
	__u64 h = hash_ids(&proc->pid, 1);
	struct hashmap_slot *slot;
	struct sp_process *p;
	__u32 id;
	int found;

	if (sp->error)
		return -ENOMEM;
	found = index_find(sp, T_PROCESS, h, process_eq, &proc->pid, &slot, &id);
	if (found < 0)
		return found;
	if (found) {
		p = &sp->processes[id];
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
	id = sp->process_count++;
	sp->processes[id] = *proc;
	index_add(sp, T_PROCESS, slot, h, id);
	return 0;
}

const struct sp_process *symprof__process(const struct symprof *sp, __u32 pid)
{
	__u32 id;

	if (!hashmap_slot__id(hashmap__find(&sp->index->idx[T_PROCESS], hash_ids(&pid, 1),
					    process_eq, sp, &pid),
			      &id))
		return NULL;
	return &sp->processes[id];
}

__u64 symprof__total(const struct symprof *sp)
{
	__u64 total = 0;
	size_t i;

	for (i = 0; i < sp->sample_count; i++)
		total += sp->samples[i].count;
	return total;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * OTLP profiles writer: one ExportProfilesServiceRequest (docs/design.md section 5)
 * built as a protobuf-c message tree, then packed (otlp) or printed in
 * OTLP's JSON mapping (otlp-json, output_otlp_json.c).
 *
 * One ResourceProfiles per process, each with one ScopeProfiles and one
 * Profile. Values are CPU nanoseconds (count x period, sample type
 * cpu/nanoseconds, as pprof's cpu profiles do) so that sums across
 * profiles of different frequencies stay meaningful; with no known period
 * they are counts (samples/count).
 *
 * Every dictionary table interns its entries on their protobuf encoding
 * (in a scratch symprof's string table), so equal entries share one index
 * and the zero entry, whose encoding is empty, is index 0. Samples of a
 * profile are interned the same way on {stack, sorted attributes, link},
 * which merges equal identities.
 *
 * The whole tree is allocated with malloc, one owner per node, so that
 * protobuf_c_message_free_unpacked() frees it, whatever point building
 * reached. The string table is the exception: it points into its interner.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "format/fmt.h"
#include "format/otlp.h"
#include "format/output.h"
#include "format/pb.h"
#include "profile/symprof.h"
#include "version.h"


#define PROF(name)   opentelemetry__proto__profiles__v1development__##name##__descriptor
#define COMMON(name) opentelemetry__proto__common__v1__##name##__descriptor
#define MSG(p)	     ((ProtobufCMessage *)(p))

enum table_kind {
	TAB_MAPPING,
	TAB_LOCATION,
	TAB_FUNCTION,
	TAB_LINK,
	TAB_ATTRIBUTE,
	TAB_STACK,
	TAB_COUNT,
};

static const ProtobufCMessageDescriptor *const table_descriptors[TAB_COUNT] = {
	[TAB_MAPPING] = &PROF(mapping),
	[TAB_LOCATION] = &PROF(location),
	[TAB_FUNCTION] = &PROF(function),
	[TAB_LINK] = &PROF(link),
	[TAB_ATTRIBUTE] = &PROF(key_value_and_unit),
	[TAB_STACK] = &PROF(stack),
};

/* A table of messages interned on their encoding: keys' string i encodes entries[i]. */
struct table {
	struct symprof *keys;
	void **entries;
	size_t cap;
};

/* What a label set gives every sample that carries it. */
struct set_info {
	bool done;
	bool has_thread_id, has_thread_name; /* labels with those keys: they win */
	__u32 link;
	__u32 first, count; /* attribute indexes in writer.set_attrs */
};

struct writer {
	const struct symprof *sp;
	unsigned int extra_labels;
	otlp_request *req;
	otlp_dictionary *dict;
	struct symprof *strings; /* the string table, on escaped bytes */
	struct table tab[TAB_COUNT];
	/* symprof id -> dictionary index; 0: not computed yet */
	__u32 *string_idx, *mapping_idx, *function_idx, *location_idx, *stack_idx;
	struct set_info *sets;
	__u32 *set_attrs;
	size_t set_attrs_len, set_attrs_cap;
	__u32 kernel_mapping; /* for kernel frames in no mapping; 0: not made yet */
	__u32 frame_type[2];  /* profile.frame.type "native", "kernel" */
	unsigned char *buf;   /* scratch: escaped strings and encodings */
	size_t buf_cap;
	int err; /* sticky: every step returns 0 once it is set */
};

static void *xcalloc(struct writer *w, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		w->err = -ENOMEM;
	return p;
}

static void *msg_new(struct writer *w, const ProtobufCMessageDescriptor *d)
{
	void *m = malloc(d->sizeof_message);

	if (!m) {
		w->err = -ENOMEM;
		return NULL;
	}
	protobuf_c_message_init(d, m);
	return m;
}

static unsigned char *reserve(struct writer *w, size_t n)
{
	if (pb__grow((void **)&w->buf, &w->buf_cap, n, 1)) {
		w->err = -ENOMEM;
		return NULL;
	}
	return w->buf;
}

/* The bytes as a protobuf string (UTF-8, pb.h's escapes) in w->buf; returns its length. */
static size_t escape(struct writer *w, const void *p, size_t n)
{
	if (n > (SIZE_MAX - 1) / 4) {
		w->err = -ENOMEM;
		return 0;
	}
	if (!reserve(w, 4 * n + 1))
		return 0;
	return pb__escape(p, n, w->buf);
}

/* A malloc'ed copy of the escaped bytes, for a string field of the tree. */
static char *escaped_copy(struct writer *w, const void *p, size_t n)
{
	size_t len = escape(w, p, n);
	char *s;

	if (w->err)
		return NULL;
	s = malloc(len + 1);
	if (!s) {
		w->err = -ENOMEM;
		return NULL;
	}
	return memcpy(s, w->buf, len + 1);
}

static __u32 check_index(struct writer *w, __u32 id)
{
	if (id > INT32_MAX) {
		w->err = -EOVERFLOW;
		return 0;
	}
	return id;
}

static __u32 string_index(struct writer *w, const void *bytes, size_t n)
{
	size_t len = escape(w, bytes, n);
	__u32 id;

	if (w->err)
		return 0;
	id = symprof__string(w->strings, w->buf, len);
	if (symprof__error(w->strings))
		w->err = -ENOMEM;
	return check_index(w, id);
}

static __u32 cstring_index(struct writer *w, const char *s)
{
	return string_index(w, s, strlen(s));
}

static __u32 sp_string_index(struct writer *w, __u32 id)
{
	const struct sp_string *s;

	if (!id || w->string_idx[id])
		return w->string_idx[id];
	s = symprof__str(w->sp, id);
	return w->string_idx[id] = string_index(w, s->bytes, s->len);
}

/* Interns m (taking it) into t; returns its index, 0 for the zero entry or on error. */
static __u32 table_add(struct writer *w, struct table *t, ProtobufCMessage *m)
{
	size_t len, count = t->keys->string_count;
	void **ne;
	__u32 id = 0;

	if (!m || w->err)
		goto out_free;
	/* room first: entries[0..string_count) are always set, whatever fails */
	if (count == t->cap) {
		ne = realloc(t->entries, 2 * t->cap * sizeof(*ne));
		if (!ne) {
			w->err = -ENOMEM;
			goto out_free;
		}
		t->entries = ne;
		t->cap *= 2;
	}
	len = protobuf_c_message_get_packed_size(m);
	if (!reserve(w, len))
		goto out_free;
	protobuf_c_message_pack(m, w->buf);
	id = symprof__string(t->keys, w->buf, len);
	if (symprof__error(t->keys)) {
		w->err = -ENOMEM;
		goto out_free;
	}
	if (id < count)
		goto out_free;
	t->entries[id] = m;
	return check_index(w, id);
out_free:
	protobuf_c_message_free_unpacked(m, NULL);
	return w->err ? 0 : id;
}

/*
 * A new attribute key = value (taking value) with a unit (string index; 0:
 * none) in the attribute table.
 */
static __u32 attribute_add_unit(struct writer *w, __u32 key, otlp_any_value *value, __u32 unit)
{
	otlp_attribute *a = msg_new(w, &PROF(key_value_and_unit));

	if (!a) {
		protobuf_c_message_free_unpacked(MSG(value), NULL);
		return 0;
	}
	a->key_strindex = key;
	a->value = value;
	a->unit_strindex = unit;
	return table_add(w, &w->tab[TAB_ATTRIBUTE], MSG(a));
}

/* A new attribute key = value (taking value) in the attribute table. */
static __u32 attribute_add(struct writer *w, __u32 key, otlp_any_value *value)
{
	return attribute_add_unit(w, key, value, 0);
}

static otlp_any_value *string_value(struct writer *w, const void *bytes, size_t n)
{
	otlp_any_value *v = msg_new(w, &COMMON(any_value));

	if (v) {
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		v->string_value = escaped_copy(w, bytes, n);
	}
	return v;
}

static otlp_any_value *int_value(struct writer *w, __s64 i)
{
	otlp_any_value *v = msg_new(w, &COMMON(any_value));

	if (v) {
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
		v->int_value = i;
	}
	return v;
}

static int32_t *one_index(struct writer *w, __u32 index, size_t *n)
{
	int32_t *a = index ? xcalloc(w, 1, sizeof(*a)) : NULL;

	*n = !!a;
	if (a)
		*a = index;
	return a;
}

static __u32 build_id_attribute(struct writer *w, __u32 build_id)
{
	const struct sp_string *b = symprof__str(w->sp, build_id);
	char *text = xcalloc(w, 2, b->len);
	otlp_any_value *v;

	if (!text)
		return 0;
	pb__hex(b->bytes, b->len, text);
	v = string_value(w, text, 2 * b->len);
	free(text);
	return attribute_add(w, cstring_index(w, OTLP_BUILD_ID), v);
}

/*
 * The message of a new entry of a dictionary table for the profile's item id;
 * NULL when id is 0, its index (in idx) is known already, or on error: the
 * caller then returns idx[id], 0 unless known.
 */
static void *entry_new(struct writer *w, const __u32 *idx, __u32 id,
		       const ProtobufCMessageDescriptor *d)
{
	return id && !idx[id] ? msg_new(w, d) : NULL;
}

static __u32 mapping_index(struct writer *w, __u32 id)
{
	const struct sp_mapping *m = &w->sp->mappings[id];
	otlp_mapping *pm;

	pm = entry_new(w, w->mapping_idx, id, &PROF(mapping));
	if (!pm)
		return w->mapping_idx[id];
	pm->memory_start = m->start;
	pm->memory_limit = m->limit;
	pm->file_offset = m->file_offset;
	pm->filename_strindex = sp_string_index(w, m->file);
	if (m->build_id)
		pm->attribute_indices =
			one_index(w, build_id_attribute(w, m->build_id), &pm->n_attribute_indices);
	return w->mapping_idx[id] = table_add(w, &w->tab[TAB_MAPPING], MSG(pm));
}

/* The mapping of kernel frames the symbolizer put in none: all of the kernel. */
static __u32 kernel_mapping_index(struct writer *w)
{
	otlp_mapping *pm;

	if (w->kernel_mapping)
		return w->kernel_mapping;
	pm = msg_new(w, &PROF(mapping));
	if (pm) {
		pm->memory_limit = SP_UNKNOWN;
		pm->filename_strindex = cstring_index(w, "[kernel.kallsyms]");
	}
	return w->kernel_mapping = table_add(w, &w->tab[TAB_MAPPING], MSG(pm));
}

static __u32 function_index(struct writer *w, __u32 id)
{
	const struct sp_function *f = &w->sp->functions[id];
	otlp_function *pf;

	pf = entry_new(w, w->function_idx, id, &PROF(function));
	if (!pf)
		return w->function_idx[id];
	pf->name_strindex = sp_string_index(w, f->name);
	pf->system_name_strindex = sp_string_index(w, f->system_name);
	pf->filename_strindex = sp_string_index(w, f->file);
	pf->start_line = f->start_line;
	return w->function_idx[id] = table_add(w, &w->tab[TAB_FUNCTION], MSG(pf));
}

static __u32 frame_type_attribute(struct writer *w, bool kernel)
{
	const char *type = kernel ? "kernel" : "native";

	if (!w->frame_type[kernel])
		w->frame_type[kernel] = attribute_add(w, cstring_index(w, OTLP_FRAME_TYPE),
						      string_value(w, type, strlen(type)));
	return w->frame_type[kernel];
}

static __u32 location_index(struct writer *w, __u32 id)
{
	const struct sp_location *l = &w->sp->locations[id];
	otlp_location *pl;
	size_t i;

	pl = entry_new(w, w->location_idx, id, &PROF(location));
	if (!pl)
		return w->location_idx[id];
	pl->mapping_index =
		l->mapping || !l->kernel ? mapping_index(w, l->mapping) : kernel_mapping_index(w);
	pl->address = l->address;
	pl->attribute_indices =
		one_index(w, frame_type_attribute(w, l->kernel), &pl->n_attribute_indices);
	pl->lines = xcalloc(w, l->line_count, sizeof(*pl->lines));
	for (i = 0; pl->lines && i < l->line_count; i++) {
		const struct sp_line *sl = &w->sp->lines[l->first_line + i];
		otlp_line *line = msg_new(w, &PROF(line));

		if (!line)
			break;
		pl->lines[pl->n_lines++] = line;
		line->function_index = function_index(w, sl->function);
		line->line = sl->line;
		line->column = sl->column;
	}
	return w->location_idx[id] = table_add(w, &w->tab[TAB_LOCATION], MSG(pl));
}

static __u32 stack_index(struct writer *w, __u32 id)
{
	const struct sp_range *r = &w->sp->stacks[id];
	otlp_stack *ps;
	size_t i;

	ps = entry_new(w, w->stack_idx, id, &PROF(stack));
	if (!ps)
		return w->stack_idx[id];
	ps->location_indices = xcalloc(w, r->count, sizeof(*ps->location_indices));
	if (ps->location_indices) {
		ps->n_location_indices = r->count;
		for (i = 0; i < r->count; i++)
			ps->location_indices[i] =
				location_index(w, w->sp->stack_locations[r->first + i]);
	}
	return w->stack_idx[id] = table_add(w, &w->tab[TAB_STACK], MSG(ps));
}

static __u32 link_index(struct writer *w, const struct otlp_trace_link *tl)
{
	otlp_link *pl = msg_new(w, &PROF(link));

	if (pl) {
		pl->trace_id.data = xcalloc(w, 1, sizeof(tl->trace_id));
		pl->span_id.data = xcalloc(w, 1, sizeof(tl->span_id));
	}
	if (pl && pl->trace_id.data && pl->span_id.data) {
		pl->trace_id.len = sizeof(tl->trace_id);
		memcpy(pl->trace_id.data, tl->trace_id, sizeof(tl->trace_id));
		pl->span_id.len = sizeof(tl->span_id);
		memcpy(pl->span_id.data, tl->span_id, sizeof(tl->span_id));
	}
	return table_add(w, &w->tab[TAB_LINK], MSG(pl));
}

/*
 * The unit saying an attribute comes from source (docs/design.md section 1),
 * as in pprof (output.h): invisible to what reads string attributes, and
 * per label rather than one more attribute per sample; 0 for custom labels.
 */
static __u32 source_unit(struct writer *w, __u32 source)
{
	char unit[64];

	if (source == LP_SRC_CUSTOM_LABELS)
		return 0;
	snprintf(unit, sizeof(unit), FMT_LABEL_SOURCE_UNIT "%s", fmt__label_source_name(source));
	return cstring_index(w, unit);
}

/* The attributes and link of label set id, computed once. */
static const struct set_info *set_info(struct writer *w, __u32 id)
{
	const struct sp_range *r = &w->sp->label_sets[id];
	const struct sp_label *labels = w->sp->labels + r->first;
	struct set_info *si = &w->sets[id];
	struct otlp_trace_link tl;
	size_t i, w3c[2] = {r->count, r->count};
	__u32 *na;

	if (si->done || w->err)
		return si;
	if (otlp__link_from_labels(w->sp, labels, r->count, &tl, w3c) != OTLP_LINK_NONE)
		si->link = link_index(w, &tl);
	if (w->set_attrs_cap - w->set_attrs_len < r->count) {
		size_t ncap = 2 * (w->set_attrs_cap + r->count);

		na = realloc(w->set_attrs, ncap * sizeof(*na));
		if (!na) {
			w->err = -ENOMEM;
			return si;
		}
		w->set_attrs = na;
		w->set_attrs_cap = ncap;
	}
	si->first = w->set_attrs_len;
	for (i = 0; i < r->count; i++) {
		const struct sp_string *k = symprof__str(w->sp, labels[i].key);
		const struct sp_string *v = symprof__str(w->sp, labels[i].value);

		/* the process context's attributes describe the resource (resource_fill) */
		if (i == w3c[0] || i == w3c[1] || labels[i].source == LP_SRC_OTEL_PROCESS)
			continue;
		si->has_thread_id |= sp_string__is(k, OTLP_THREAD_ID);
		si->has_thread_name |= sp_string__is(k, OTLP_THREAD_NAME);
		w->set_attrs[w->set_attrs_len++] = attribute_add_unit(
			w, sp_string_index(w, labels[i].key), string_value(w, v->bytes, v->len),
			source_unit(w, labels[i].source));
	}
	si->count = w->set_attrs_len - si->first;
	si->done = true;
	return si;
}

static int index_cmp(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* The profile's samples being merged: keys' string i + 1 encodes samples[i]'s identity. */
struct merge {
	struct symprof *keys;
	int32_t *attrs;
	size_t attrs_cap;
};

static void sample_add(struct writer *w, otlp_profile *p, struct merge *mg,
		       const struct sp_sample *s, __s64 value)
{
	const struct set_info *si = set_info(w, s->label_set);
	otlp_sample key, *ps;
	size_t n = 0, len, before;
	__u32 id;

	if (w->err)
		return;
	if (mg->attrs_cap < si->count + 2) {
		int32_t *na = realloc(mg->attrs, (si->count + 2) * sizeof(*na));

		if (!na) {
			w->err = -ENOMEM;
			return;
		}
		mg->attrs = na;
		mg->attrs_cap = si->count + 2;
	}
	for (n = 0; n < si->count; n++)
		mg->attrs[n] = w->set_attrs[si->first + n];
	if (w->extra_labels & OUTPUT_LABEL_TID && !si->has_thread_id)
		mg->attrs[n++] =
			attribute_add(w, cstring_index(w, OTLP_THREAD_ID), int_value(w, s->tid));
	if (w->extra_labels & OUTPUT_LABEL_THREAD_NAME && !si->has_thread_name && s->comm) {
		const struct sp_string *c = symprof__str(w->sp, s->comm);

		mg->attrs[n++] = attribute_add(w, cstring_index(w, OTLP_THREAD_NAME),
					       string_value(w, c->bytes, c->len));
	}
	/* a set of attributes: one order, so that equal sets encode equally */
	qsort(mg->attrs, n, sizeof(*mg->attrs), index_cmp);

	protobuf_c_message_init(&PROF(sample), &key);
	key.stack_index = stack_index(w, s->stack);
	key.link_index = si->link;
	key.attribute_indices = mg->attrs;
	key.n_attribute_indices = n;
	len = protobuf_c_message_get_packed_size(&key.base);
	if (w->err || !reserve(w, len + 1))
		return;
	/* a leading byte keeps the empty identity from being the interner's id 0 */
	w->buf[0] = 1;
	protobuf_c_message_pack(&key.base, w->buf + 1);
	before = mg->keys->string_count;
	id = symprof__string(mg->keys, w->buf, len + 1);
	if (symprof__error(mg->keys)) {
		w->err = -ENOMEM;
		return;
	}
	if (id < before) {
		ps = p->samples[id - 1];
		if (__builtin_add_overflow(ps->values[0], value, &ps->values[0]))
			w->err = -EOVERFLOW;
		return;
	}
	ps = msg_new(w, &PROF(sample));
	if (!ps)
		return;
	p->samples[p->n_samples++] = ps;
	ps->stack_index = key.stack_index;
	ps->link_index = key.link_index;
	ps->attribute_indices = xcalloc(w, n, sizeof(*ps->attribute_indices));
	if (ps->attribute_indices) {
		memcpy(ps->attribute_indices, mg->attrs, n * sizeof(*mg->attrs));
		ps->n_attribute_indices = n;
	}
	ps->values = xcalloc(w, 1, sizeof(*ps->values));
	if (ps->values) {
		ps->values[0] = value;
		ps->n_values = 1;
	}
}

static otlp_value_type *value_type(struct writer *w, const char *type, const char *unit)
{
	otlp_value_type *v = msg_new(w, &PROF(value_type));

	if (v) {
		v->type_strindex = cstring_index(w, type);
		v->unit_strindex = cstring_index(w, unit);
	}
	return v;
}

/* 16 bytes that identify the profile: the same profile rewritten keeps its id. */
static void profile_id(const struct symprof *sp, __u32 pid, __u64 total, unsigned char id[16])
{
	const struct sp_string *host = symprof__str(sp, sp->meta.host_name);
	__u64 in[4] = {sp->meta.start_time_unix_ns, sp->meta.duration_ns, pid, total};
	__u64 h[2] = {HASH_FNV1A_SEED, 0x84222325cbf29ce4ull};
	size_t k;

	for (k = 0; k < 2; k++) {
		h[k] = hash_fnv1a(h[k], in, sizeof(in));
		h[k] = hash_fnv1a(h[k], host->bytes, host->len);
		h[k] ^= h[k] >> 33;
		h[k] *= 0xff51afd7ed558ccdull + 2 * k;
		h[k] ^= h[k] >> 33;
	}
	memcpy(id, h, 16);
	/* all zeroes is an invalid id */
	id[0] |= !(h[0] | h[1]);
}

static void resource_attribute(struct writer *w, otlp_resource *r, const char *key,
			       otlp_any_value *value)
{
	otlp_key_value *kv = msg_new(w, &COMMON(key_value));

	if (!kv) {
		protobuf_c_message_free_unpacked(MSG(value), NULL);
		return;
	}
	r->attributes[r->n_attributes++] = kv;
	kv->key = escaped_copy(w, key, strlen(key));
	kv->value = value;
}

/*
 * The resource of pid: what is known of the process, and the attributes its
 * OpenTelemetry process context publishes (labels of source
 * LP_SRC_OTEL_PROCESS of its first sample, label set set).
 */
static void resource_fill(struct writer *w, otlp_resource *r, __u32 pid, __u32 set)
{
	const struct sp_range *ls = &w->sp->label_sets[set];
	const struct sp_label *labels = w->sp->labels + ls->first;
	size_t i, nproc = 0;
	const struct sp_process *proc = symprof__process(w->sp, pid);
	const struct sp_string *exe = symprof__str(w->sp, proc ? proc->executable : 0);
	const struct sp_string *name = symprof__str(w->sp, proc ? proc->name : 0);
	const struct sp_string *host = symprof__str(w->sp, w->sp->meta.host_name);
	const struct sp_string *container = symprof__str(w->sp, proc ? proc->container_id : 0);
	const struct sp_string *pod = symprof__str(w->sp, proc ? proc->pod_uid : 0);
	struct sp_string base_name;

	for (i = 0; i < ls->count; i++)
		nproc += labels[i].source == LP_SRC_OTEL_PROCESS;
	r->attributes = xcalloc(w, 6 + nproc, sizeof(*r->attributes));
	if (!r->attributes)
		return;
	if (host->len)
		resource_attribute(w, r, OTLP_HOST_NAME, string_value(w, host->bytes, host->len));
	resource_attribute(w, r, OTLP_PROCESS_PID, int_value(w, pid));
	if (exe->len) {
		const unsigned char *base = memrchr(exe->bytes, '/', exe->len);

		base = base ? base + 1 : exe->bytes;
		base_name = (struct sp_string){base, exe->len - (base - exe->bytes)};
		name = &base_name;
	}
	if (name->len)
		resource_attribute(w, r, OTLP_EXECUTABLE_NAME,
				   string_value(w, name->bytes, name->len));
	if (exe->len)
		resource_attribute(w, r, OTLP_EXECUTABLE_PATH,
				   string_value(w, exe->bytes, exe->len));
	if (container->len)
		resource_attribute(w, r, OTLP_CONTAINER_ID,
				   string_value(w, container->bytes, container->len));
	if (pod->len)
		resource_attribute(w, r, OTLP_K8S_POD_UID, string_value(w, pod->bytes, pod->len));
	for (i = 0; i < ls->count; i++) {
		const struct sp_string *k = symprof__str(w->sp, labels[i].key);
		const struct sp_string *v = symprof__str(w->sp, labels[i].value);
		otlp_key_value *kv;

		if (labels[i].source != LP_SRC_OTEL_PROCESS ||
		    !(kv = msg_new(w, &COMMON(key_value))))
			continue;
		r->attributes[r->n_attributes++] = kv;
		kv->key = escaped_copy(w, (const char *)k->bytes, k->len);
		kv->value = string_value(w, v->bytes, v->len);
	}
}

/* One ResourceProfiles for the samples of pid: samples[order[0..n)]. */
static void resource_add(struct writer *w, __u32 pid, const __u32 *order, size_t n,
			 struct merge *mg)
{
	otlp_resource_profiles *rp = msg_new(w, &PROF(resource_profiles));
	__u64 period = w->sp->meta.period_ns, total = 0;
	otlp_scope_profiles *sc;
	otlp_profile *p;
	size_t i;

	if (!rp)
		return;
	w->req->resource_profiles[w->req->n_resource_profiles++] = rp;
	rp->resource = msg_new(w, &opentelemetry__proto__resource__v1__resource__descriptor);
	if (rp->resource)
		resource_fill(w, rp->resource, pid, w->sp->samples[order[0]].label_set);
	rp->scope_profiles = xcalloc(w, 1, sizeof(*rp->scope_profiles));
	sc = rp->scope_profiles ? msg_new(w, &PROF(scope_profiles)) : NULL;
	if (!sc)
		return;
	rp->scope_profiles[rp->n_scope_profiles++] = sc;
	sc->scope = msg_new(w, &COMMON(instrumentation_scope));
	if (sc->scope) {
		sc->scope->name = escaped_copy(w, OTLP_SCOPE_NAME, strlen(OTLP_SCOPE_NAME));
		sc->scope->version = escaped_copy(w, LABELPROF_VERSION, strlen(LABELPROF_VERSION));
	}
	sc->profiles = xcalloc(w, 1, sizeof(*sc->profiles));
	p = sc->profiles ? msg_new(w, &PROF(profile)) : NULL;
	if (!p)
		return;
	sc->profiles[sc->n_profiles++] = p;
	p->sample_type =
		period ? value_type(w, "cpu", "nanoseconds") : value_type(w, "samples", "count");
	p->period_type = value_type(w, "cpu", "nanoseconds");
	p->period = period;
	p->time_unix_nano = w->sp->meta.start_time_unix_ns;
	p->duration_nano = w->sp->meta.duration_ns;
	p->samples = xcalloc(w, n, sizeof(*p->samples));
	mg->keys = symprof__new();
	if (!mg->keys)
		w->err = -ENOMEM;
	for (i = 0; i < n && p->samples && !w->err; i++) {
		const struct sp_sample *s = &w->sp->samples[order[i]];
		__s64 value;

		if (__builtin_mul_overflow(s->count, period ? period : 1, &value))
			w->err = -EOVERFLOW;
		total += s->count;
		sample_add(w, p, mg, s, value);
	}
	symprof__free(mg->keys);
	mg->keys = NULL;
	p->profile_id.data = xcalloc(w, 1, 16);
	if (p->profile_id.data) {
		p->profile_id.len = 16;
		profile_id(w->sp, pid, total, p->profile_id.data);
	}
}

static int order_cmp(const void *a, const void *b, void *arg)
{
	const struct symprof *sp = arg;
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;
	__u32 px = sp->samples[x].pid, py = sp->samples[y].pid;

	if (px != py)
		return px < py ? -1 : 1;
	return (x > y) - (x < y);
}

/* Points the dictionary at the tables as they are now. */
static void dictionary_attach(struct writer *w)
{
	otlp_dictionary *d = w->dict;
	size_t n[TAB_COUNT], i;

	for (i = 0; i < TAB_COUNT; i++)
		n[i] = w->tab[i].keys ? w->tab[i].keys->string_count : 0;
	d->mapping_table = (otlp_mapping **)w->tab[TAB_MAPPING].entries;
	d->n_mapping_table = n[TAB_MAPPING];
	d->location_table = (otlp_location **)w->tab[TAB_LOCATION].entries;
	d->n_location_table = n[TAB_LOCATION];
	d->function_table = (otlp_function **)w->tab[TAB_FUNCTION].entries;
	d->n_function_table = n[TAB_FUNCTION];
	d->link_table = (otlp_link **)w->tab[TAB_LINK].entries;
	d->n_link_table = n[TAB_LINK];
	d->attribute_table = (otlp_attribute **)w->tab[TAB_ATTRIBUTE].entries;
	d->n_attribute_table = n[TAB_ATTRIBUTE];
	d->stack_table = (otlp_stack **)w->tab[TAB_STACK].entries;
	d->n_stack_table = n[TAB_STACK];
}

static void writer_free(struct writer *w)
{
	size_t i;

	if (w->req) {
		/* the tables belong to the dictionary, the strings to w->strings */
		dictionary_attach(w);
		free(w->dict->string_table);
		w->dict->string_table = NULL;
		w->dict->n_string_table = 0;
		protobuf_c_message_free_unpacked(MSG(w->req), NULL);
	}
	for (i = 0; i < TAB_COUNT; i++)
		symprof__free(w->tab[i].keys);
	symprof__free(w->strings);
	free(w->string_idx);
	free(w->mapping_idx);
	free(w->function_idx);
	free(w->location_idx);
	free(w->stack_idx);
	free(w->sets);
	free(w->set_attrs);
	free(w->buf);
}

static int writer_build(struct writer *w, const struct symprof *sp, const struct output_opts *opts)
{
	struct merge mg = {};
	size_t i, j, groups = 0;
	__u32 *order;

	w->sp = sp;
	w->extra_labels = opts ? opts->extra_labels : 0;
	w->req = msg_new(w, &OTLP_REQUEST_DESCRIPTOR);
	if (!w->req)
		return w->err;
	w->dict = w->req->dictionary = msg_new(w, &PROF(profiles_dictionary));
	w->strings = symprof__new();
	if (!w->dict || !w->strings)
		return -ENOMEM;
	for (i = 0; i < TAB_COUNT; i++) {
		struct table *t = &w->tab[i];

		t->keys = symprof__new();
		if (!t->keys)
			return -ENOMEM;
		t->entries = xcalloc(w, 16, sizeof(*t->entries));
		if (!t->entries)
			return w->err;
		t->cap = 16;
		t->entries[0] = msg_new(w, table_descriptors[i]);
	}
	w->string_idx = xcalloc(w, sp->string_count, sizeof(*w->string_idx));
	w->mapping_idx = xcalloc(w, sp->mapping_count, sizeof(*w->mapping_idx));
	w->function_idx = xcalloc(w, sp->function_count, sizeof(*w->function_idx));
	w->location_idx = xcalloc(w, sp->location_count, sizeof(*w->location_idx));
	w->stack_idx = xcalloc(w, sp->stack_count, sizeof(*w->stack_idx));
	w->sets = xcalloc(w, sp->label_set_count, sizeof(*w->sets));
	order = xcalloc(w, sp->sample_count, sizeof(*order));
	if (w->err)
		goto out;
	/* resources by pid, samples in their order within one */
	for (i = 0; i < sp->sample_count; i++)
		order[i] = i;
	qsort_r(order, sp->sample_count, sizeof(*order), order_cmp, (void *)sp);
	for (i = 0; i < sp->sample_count; i++)
		groups += !i || sp->samples[order[i]].pid != sp->samples[order[i - 1]].pid;
	w->req->resource_profiles = xcalloc(w, groups, sizeof(*w->req->resource_profiles));
	for (i = 0; i < sp->sample_count && !w->err; i = j) {
		__u32 pid = sp->samples[order[i]].pid;

		for (j = i; j < sp->sample_count && sp->samples[order[j]].pid == pid; j++)
			;
		resource_add(w, pid, order + i, j - i, &mg);
	}
out:
	free(order);
	free(mg.attrs);
	return w->err;
}

/* The string table, pointing into w->strings until writer_free. */
static int dictionary_strings(struct writer *w)
{
	size_t i, n = w->strings->string_count;

	w->dict->string_table = xcalloc(w, n, sizeof(*w->dict->string_table));
	if (!w->dict->string_table)
		return w->err;
	for (i = 0; i < n; i++)
		w->dict->string_table[i] = (char *)w->strings->strings[i].bytes;
	w->dict->n_string_table = n;
	dictionary_attach(w);
	return 0;
}

struct file_buffer {
	ProtobufCBuffer base;
	FILE *f;
};

static void file_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct file_buffer *fb = (struct file_buffer *)b;

	fwrite_unlocked(data, 1, len, fb->f);
}

static int file_finish(FILE *f)
{
	if (fflush(f))
		return -errno;
	return ferror(f) ? -EIO : 0;
}

int output__write_otlp(FILE *f, const struct symprof *sp, const struct output_opts *opts)
{
	struct file_buffer fb = {{file_append}, f};
	struct writer w = {};
	int err;

	err = writer_build(&w, sp, opts);
	if (!err)
		err = dictionary_strings(&w);
	if (!err) {
		flockfile(f);
		protobuf_c_message_pack_to_buffer(MSG(w.req), &fb.base);
		funlockfile(f);
		err = file_finish(f);
	}
	writer_free(&w);
	return err;
}

int output__write_otlp_json(FILE *f, const struct symprof *sp, const struct output_opts *opts)
{
	struct writer w = {};
	int err;

	err = writer_build(&w, sp, opts);
	if (!err)
		err = dictionary_strings(&w);
	if (!err) {
		flockfile(f);
		err = otlp_json__print(f, MSG(w.req));
		putc_unlocked('\n', f);
		funlockfile(f);
		if (!err)
			err = file_finish(f);
	}
	writer_free(&w);
	return err;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The OTLP writer's dictionary (output_otlp.c): the string, mapping,
 * location, function, link, attribute and stack tables of the request.
 *
 * Every table interns its entries on their protobuf encoding (in a scratch
 * symprof's string table), so equal entries share one index and the zero
 * entry, whose encoding is empty, is index 0.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt.h"
#include "format/otlp_writer.h"
#include "format/output.h"
#include "format/pb.h"
#include "lib/frame_kind.h"
#include "profile/symprof.h"

static const ProtobufCMessageDescriptor *const table_descriptors[TAB_COUNT] = {
	[TAB_MAPPING] = &PROF(mapping),
	[TAB_LOCATION] = &PROF(location),
	[TAB_FUNCTION] = &PROF(function),
	[TAB_LINK] = &PROF(link),
	[TAB_ATTRIBUTE] = &PROF(key_value_and_unit),
	[TAB_STACK] = &PROF(stack),
};

void *otlp_writer__calloc(struct writer *w, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		w->err = -ENOMEM;
	return p;
}

void *otlp_writer__msg_new(struct writer *w, const ProtobufCMessageDescriptor *d)
{
	void *m = malloc(d->sizeof_message);

	if (!m) {
		w->err = -ENOMEM;
		return NULL;
	}
	protobuf_c_message_init(d, m);
	return m;
}

unsigned char *otlp_writer__reserve(struct writer *w, size_t n)
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
	if (!otlp_writer__reserve(w, 4 * n + 1))
		return 0;
	return pb__escape(p, n, w->buf);
}

char *otlp_writer__escaped_copy(struct writer *w, const void *p, size_t n)
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

__u32 otlp_writer__cstring(struct writer *w, const char *s)
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
	if (!otlp_writer__reserve(w, len))
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
	otlp_attribute *a = otlp_writer__msg_new(w, &PROF(key_value_and_unit));

	if (!a) {
		protobuf_c_message_free_unpacked(MSG(value), NULL);
		return 0;
	}
	a->key_strindex = key;
	a->value = value;
	a->unit_strindex = unit;
	return table_add(w, &w->tab[TAB_ATTRIBUTE], MSG(a));
}

__u32 otlp_writer__attribute(struct writer *w, __u32 key, otlp_any_value *value)
{
	return attribute_add_unit(w, key, value, 0);
}

otlp_any_value *otlp_writer__string_value(struct writer *w, const void *bytes, size_t n)
{
	otlp_any_value *v = otlp_writer__msg_new(w, &COMMON(any_value));

	if (v) {
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		v->string_value = otlp_writer__escaped_copy(w, bytes, n);
	}
	return v;
}

otlp_any_value *otlp_writer__int_value(struct writer *w, __s64 i)
{
	otlp_any_value *v = otlp_writer__msg_new(w, &COMMON(any_value));

	if (v) {
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
		v->int_value = i;
	}
	return v;
}

static int32_t *one_index(struct writer *w, __u32 index, size_t *n)
{
	int32_t *a = index ? otlp_writer__calloc(w, 1, sizeof(*a)) : NULL;

	*n = !!a;
	if (a)
		*a = index;
	return a;
}

static __u32 build_id_attribute(struct writer *w, __u32 build_id)
{
	const struct sp_string *b = symprof__str(w->sp, build_id);
	char *text = otlp_writer__calloc(w, 2, b->len);
	otlp_any_value *v;

	if (!text)
		return 0;
	pb__hex(b->bytes, b->len, text);
	v = otlp_writer__string_value(w, text, 2 * b->len);
	free(text);
	return otlp_writer__attribute(w, otlp_writer__cstring(w, OTLP_BUILD_ID), v);
}

/*
 * The message of a new entry of a dictionary table for the profile's item id;
 * NULL when id is 0, its index (in idx) is known already, or on error: the
 * caller then returns idx[id], 0 unless known.
 */
static void *entry_new(struct writer *w, const __u32 *idx, __u32 id,
		       const ProtobufCMessageDescriptor *d)
{
	return id && !idx[id] ? otlp_writer__msg_new(w, d) : NULL;
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
	pm = otlp_writer__msg_new(w, &PROF(mapping));
	if (pm) {
		pm->memory_limit = SP_UNKNOWN;
		pm->filename_strindex = otlp_writer__cstring(w, "[kernel.kallsyms]");
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

/* OpenTelemetry's profile.frame.type: the frame kind's */
static __u32 frame_type_attribute(struct writer *w, const struct sp_location *l)
{
	enum frame_kind k = frame_kind__of(l->kernel, l->kind);
	const char *type = frame_kinds[k].otlp_frame_type;

	if (!w->frame_type[k])
		w->frame_type[k] =
			otlp_writer__attribute(w, otlp_writer__cstring(w, OTLP_FRAME_TYPE),
					       otlp_writer__string_value(w, type, strlen(type)));
	return w->frame_type[k];
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
		one_index(w, frame_type_attribute(w, l), &pl->n_attribute_indices);
	pl->lines = otlp_writer__calloc(w, l->line_count, sizeof(*pl->lines));
	for (i = 0; pl->lines && i < l->line_count; i++) {
		const struct sp_line *sl = &w->sp->lines[l->first_line + i];
		otlp_line *line = otlp_writer__msg_new(w, &PROF(line));

		if (!line)
			break;
		pl->lines[pl->n_lines++] = line;
		line->function_index = function_index(w, sl->function);
		line->line = sl->line;
		line->column = sl->column;
	}
	return w->location_idx[id] = table_add(w, &w->tab[TAB_LOCATION], MSG(pl));
}

__u32 otlp_writer__stack(struct writer *w, __u32 id)
{
	const struct sp_range *r = &w->sp->stacks[id];
	otlp_stack *ps;
	size_t i;

	ps = entry_new(w, w->stack_idx, id, &PROF(stack));
	if (!ps)
		return w->stack_idx[id];
	ps->location_indices = otlp_writer__calloc(w, r->count, sizeof(*ps->location_indices));
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
	otlp_link *pl = otlp_writer__msg_new(w, &PROF(link));

	if (pl) {
		pl->trace_id.data = otlp_writer__calloc(w, 1, sizeof(tl->trace_id));
		pl->span_id.data = otlp_writer__calloc(w, 1, sizeof(tl->span_id));
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
	return otlp_writer__cstring(w, unit);
}

const struct set_info *otlp_writer__set_info(struct writer *w, __u32 id)
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
		w->set_attrs[w->set_attrs_len++] =
			attribute_add_unit(w, sp_string_index(w, labels[i].key),
					   otlp_writer__string_value(w, v->bytes, v->len),
					   source_unit(w, labels[i].source));
	}
	si->count = w->set_attrs_len - si->first;
	si->done = true;
	return si;
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

int otlp_writer__dict_new(struct writer *w)
{
	const struct symprof *sp = w->sp;
	size_t i;

	w->dict = w->req->dictionary = otlp_writer__msg_new(w, &PROF(profiles_dictionary));
	w->strings = symprof__new();
	if (!w->dict || !w->strings)
		return w->err = -ENOMEM;
	for (i = 0; i < TAB_COUNT; i++) {
		struct table *t = &w->tab[i];

		t->keys = symprof__new();
		if (!t->keys)
			return w->err = -ENOMEM;
		t->entries = otlp_writer__calloc(w, 16, sizeof(*t->entries));
		if (!t->entries)
			return w->err;
		t->cap = 16;
		t->entries[0] = otlp_writer__msg_new(w, table_descriptors[i]);
	}
	w->string_idx = otlp_writer__calloc(w, sp->string_count, sizeof(*w->string_idx));
	w->mapping_idx = otlp_writer__calloc(w, sp->mapping_count, sizeof(*w->mapping_idx));
	w->function_idx = otlp_writer__calloc(w, sp->function_count, sizeof(*w->function_idx));
	w->location_idx = otlp_writer__calloc(w, sp->location_count, sizeof(*w->location_idx));
	w->stack_idx = otlp_writer__calloc(w, sp->stack_count, sizeof(*w->stack_idx));
	w->sets = otlp_writer__calloc(w, sp->label_set_count, sizeof(*w->sets));
	return w->err;
}

void otlp_writer__dict_free(struct writer *w)
{
	size_t i;

	if (w->dict) {
		/* the tables belong to the dictionary, the strings to w->strings */
		dictionary_attach(w);
		free(w->dict->string_table);
		w->dict->string_table = NULL;
		w->dict->n_string_table = 0;
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
}

int otlp_writer__dict_strings(struct writer *w)
{
	size_t i, n = w->strings->string_count;

	w->dict->string_table = otlp_writer__calloc(w, n, sizeof(*w->dict->string_table));
	if (!w->dict->string_table)
		return w->err;
	for (i = 0; i < n; i++)
		w->dict->string_table[i] = (char *)w->strings->strings[i].bytes;
	w->dict->n_string_table = n;
	dictionary_attach(w);
	return 0;
}

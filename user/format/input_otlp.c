// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * OTLP profiles reader: an ExportProfilesServiceRequest (or ProfilesData,
 * the same fields), binary protobuf, gzipped or not, into a symprof. It
 * undoes what output_otlp.c does: resources give processes and pids,
 * attributes give labels (thread.id and thread.name give the sample's tid
 * and comm), Links give trace_id/span_id labels, values in nanoseconds are
 * divided by the period to give counts. Strings are unescaped (\xHH).
 *
 * The input is untrusted: decompression and decoding are capped, every
 * index is checked against its table before any is used, and recursion in
 * the schema is cut off at the .proto (see common.proto).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt.h"
#include "format/input.h"
#include "format/otlp.h"
#include "format/pb.h"
#include "lib/frame_kind.h"
#include "profile/symprof.h"

enum attr_kind {
	ATTR_LABEL,
	ATTR_THREAD_ID,	  /* value: the tid */
	ATTR_THREAD_NAME, /* value: a string id */
	ATTR_PID,	  /* value: the pid */
	ATTR_NONE,	  /* the zero entry */
};

struct attr {
	bool done;
	enum attr_kind kind;
	__u32 key, value;
	__u32 source; /* of a label: its unit (output_otlp.c's source_unit) */
};

struct reader {
	struct symprof *sp;
	const otlp_dictionary *d;
	struct pb_err e;
	/* dictionary index -> symprof id; 0: not converted yet */
	__u32 *strings, *mappings, *functions, *locations, *stacks;
	struct attr *attrs;
	bool *loc_kernel, *mapping_kernel;
	__u32 *loc_kind; /* enum frame_kind, by profile.frame.type */
	/* scratch */
	unsigned char *buf;
	size_t buf_cap;
	__u32 *ids;
	size_t ids_cap;
	struct sp_label *labels;
	size_t labels_cap;
	struct sp_line *lines;
	size_t lines_cap;
	/* the resource's other attributes: the process context's labels */
	struct sp_label *res_labels;
	size_t res_labels_cap, n_res_labels;
	__u64 end; /* of the latest profile */
};

#define fail(r, ...) pb__fail(&(r)->e, __VA_ARGS__)

#define GROW(r, field, n) pb__grow((void **)&(r)->field, &(r)->field##_cap, n, sizeof(*(r)->field))

static bool index_ok(int32_t i, size_t n)
{
	/* index 0 means "none", even in a table without its zero entry */
	return i >= 0 && ((size_t)i < n || !i);
}

#define CHECK(r, i, table, what, ...)                                                              \
	do {                                                                                       \
		if (!index_ok(i, (r)->d->n_##table))                                               \
			return fail(                                                               \
				r, what ": index %" PRId32 " is outside " #table " (%zu entries)", \
				__VA_ARGS__, i, (r)->d->n_##table);                                \
	} while (0)

static int check_indices(struct reader *r, const int32_t *idx, size_t n, const char *what,
			 size_t at)
{
	size_t i;

	for (i = 0; i < n; i++)
		CHECK(r, idx[i], attribute_table, "%s %zu attribute", what, at);
	return 0;
}

static int check_value_type(struct reader *r, const otlp_value_type *v, size_t p)
{
	if (!v)
		return 0;
	CHECK(r, v->type_strindex, string_table, "profile %zu value type", p);
	CHECK(r, v->unit_strindex, string_table, "profile %zu value type", p);
	return 0;
}

static int check_dictionary(struct reader *r)
{
	const otlp_dictionary *d = r->d;
	size_t i, j;
	int err;

	/* the rule that makes index 0 "none" */
	if (d->n_string_table && *d->string_table[0])
		return fail(r, "string_table[0] is not the empty string");
	for (i = 0; i < d->n_mapping_table; i++) {
		CHECK(r, d->mapping_table[i]->filename_strindex, string_table, "mapping %zu", i);
		err = check_indices(r, d->mapping_table[i]->attribute_indices,
				    d->mapping_table[i]->n_attribute_indices, "mapping", i);
		if (err)
			return err;
	}
	for (i = 0; i < d->n_location_table; i++) {
		const otlp_location *l = d->location_table[i];

		CHECK(r, l->mapping_index, mapping_table, "location %zu", i);
		for (j = 0; j < l->n_lines; j++)
			CHECK(r, l->lines[j]->function_index, function_table, "location %zu line",
			      i);
		err = check_indices(r, l->attribute_indices, l->n_attribute_indices, "location", i);
		if (err)
			return err;
	}
	for (i = 0; i < d->n_function_table; i++) {
		CHECK(r, d->function_table[i]->name_strindex, string_table, "function %zu", i);
		CHECK(r, d->function_table[i]->system_name_strindex, string_table, "function %zu",
		      i);
		CHECK(r, d->function_table[i]->filename_strindex, string_table, "function %zu", i);
	}
	for (i = 0; i < d->n_link_table; i++) {
		const otlp_link *l = d->link_table[i];

		if ((l->trace_id.len && l->trace_id.len != OTLP_TRACE_ID_BYTES) ||
		    (l->span_id.len && l->span_id.len != OTLP_SPAN_ID_BYTES))
			return fail(r, "link_table %zu: trace_id of %zu bytes, span_id of %zu", i,
				    l->trace_id.len, l->span_id.len);
	}
	for (i = 0; i < d->n_attribute_table; i++) {
		CHECK(r, d->attribute_table[i]->key_strindex, string_table, "attribute %zu", i);
		CHECK(r, d->attribute_table[i]->unit_strindex, string_table, "attribute %zu", i);
	}
	for (i = 0; i < d->n_stack_table; i++)
		for (j = 0; j < d->stack_table[i]->n_location_indices; j++)
			CHECK(r, d->stack_table[i]->location_indices[j], location_table,
			      "stack %zu", i);
	return 0;
}

typedef int (*profile_fn)(struct reader *r, const otlp_resource_profiles *rp, const otlp_profile *p,
			  size_t np);

/* Calls fn on every profile of req, with its resource and its number, until one fails. */
static int for_each_profile(struct reader *r, const otlp_request *req, profile_fn fn)
{
	size_t i, j, k, np = 0;
	int err;

	for (i = 0; i < req->n_resource_profiles; i++) {
		const otlp_resource_profiles *rp = req->resource_profiles[i];

		for (j = 0; j < rp->n_scope_profiles; j++)
			for (k = 0; k < rp->scope_profiles[j]->n_profiles; k++) {
				err = fn(r, rp, rp->scope_profiles[j]->profiles[k], np++);
				if (err)
					return err;
			}
	}
	return 0;
}

static int check_profile(struct reader *r, const otlp_resource_profiles *rp, const otlp_profile *p,
			 size_t np)
{
	size_t i;
	int err;

	err = check_value_type(r, p->sample_type, np) ?: check_value_type(r, p->period_type, np)
		?: check_indices(r, p->attribute_indices, p->n_attribute_indices, "profile", np);
	if (err)
		return err;
	for (i = 0; i < p->n_samples; i++) {
		const otlp_sample *s = p->samples[i];

		CHECK(r, s->stack_index, stack_table, "profile %zu sample %zu", np, i);
		CHECK(r, s->link_index, link_table, "profile %zu sample %zu", np, i);
		err = check_indices(r, s->attribute_indices, s->n_attribute_indices, "sample", i);
		if (err)
			return err;
	}
	return 0;
}

/* The bytes a string of the tree stands for (pb.h's escapes undone). */
static __u32 unescaped_id(struct reader *r, const char *s)
{
	size_t n = strlen(s);

	if (GROW(r, buf, n + 1)) {
		r->sp->error = -ENOMEM;
		return 0;
	}
	return symprof__string(r->sp, r->buf, pb__unescape(s, n, r->buf));
}

static __u32 string_id(struct reader *r, int32_t i)
{
	if (!i || r->strings[i])
		return r->strings[i];
	return r->strings[i] = unescaped_id(r, r->d->string_table[i]);
}

static const char *any_string(const otlp_any_value *v)
{
	return v && v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE
		       ? v->string_value
		       : NULL;
}

static bool any_u32(const otlp_any_value *v, __u32 *out)
{
	if (!v || v->value_case != OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE ||
	    v->int_value < 0 || v->int_value > UINT32_MAX)
		return false;
	*out = v->int_value;
	return true;
}

/* Index i of the string table; i was checked, and 0 is "" even without a table. */
static const char *str(const struct reader *r, int32_t i)
{
	return i ? r->d->string_table[i] : "";
}

/* A label value from a value of any type (other producers' attributes). */
static __u32 any_text_id(struct reader *r, const otlp_any_value *v)
{
	char num[32];

	switch (v ? v->value_case : 0) {
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE:
		return unescaped_id(r, v->string_value);
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE:
		return symprof__cstring(r->sp, v->bool_value ? "true" : "false");
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE:
		snprintf(num, sizeof(num), "%" PRId64, v->int_value);
		return symprof__cstring(r->sp, num);
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_DOUBLE_VALUE:
		snprintf(num, sizeof(num), "%.17g", v->double_value);
		return symprof__cstring(r->sp, num);
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BYTES_VALUE:
		if (GROW(r, buf, 2 * v->bytes_value.len)) {
			r->sp->error = -ENOMEM;
			return 0;
		}
		pb__hex(v->bytes_value.data, v->bytes_value.len, (char *)r->buf);
		return symprof__string(r->sp, r->buf, 2 * v->bytes_value.len);
	default:
		return 0;
	}
}

static const struct attr *attr_get(struct reader *r, int32_t i)
{
	const otlp_attribute *a = i ? r->d->attribute_table[i] : NULL;
	struct attr *at = &r->attrs[i];
	const char *key, *s;

	if (at->done)
		return at;
	at->done = true;
	if (!a) {
		at->kind = ATTR_NONE;
		return at;
	}
	key = str(r, a->key_strindex);
	s = any_string(a->value);
	if (!strcmp(key, OTLP_THREAD_ID) && any_u32(a->value, &at->value)) {
		at->kind = ATTR_THREAD_ID;
	} else if (!strcmp(key, OTLP_PROCESS_PID) && any_u32(a->value, &at->value)) {
		at->kind = ATTR_PID;
	} else if (!strcmp(key, OTLP_THREAD_NAME) && s) {
		at->kind = ATTR_THREAD_NAME;
		at->value = unescaped_id(r, s);
	} else {
		at->kind = ATTR_LABEL;
		at->key = string_id(r, a->key_strindex);
		at->value = any_text_id(r, a->value);
		at->source = fmt__label_source_of_unit(str(r, a->unit_strindex));
	}
	return at;
}

/* The string value of the attribute named key among idx[0..n), or NULL. */
static const char *attr_string(const struct reader *r, const int32_t *idx, size_t n,
			       const char *key)
{
	const otlp_attribute *a;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!idx[i])
			continue;
		a = r->d->attribute_table[idx[i]];
		if (!strcmp(str(r, a->key_strindex), key) && any_string(a->value))
			return any_string(a->value);
	}
	return NULL;
}

/* The raw build id from its hex attribute; 0 when absent or not hex. */
static __u32 build_id(struct reader *r, const otlp_mapping *m)
{
	const char *s = attr_string(r, m->attribute_indices, m->n_attribute_indices, OTLP_BUILD_ID);
	size_t n = s ? strlen(s) : 0;

	if (!n)
		return 0;
	if (GROW(r, buf, n / 2)) {
		r->sp->error = -ENOMEM;
		return 0;
	}
	return pb__unhex(s, n, r->buf) ? symprof__string(r->sp, r->buf, n / 2) : 0;
}

/*
 * Which locations are kernel frames (or a runtime's): profile.frame.type says so (a type
 * this version does not know: native), or without it the mapping is the kernel's. A
 * mapping is the kernel's if a kernel frame is in it.
 */
static void kernel_flags(struct reader *r)
{
	enum frame_kind kind;
	const char *type;
	size_t i;

	for (i = 1; i < r->d->n_location_table; i++) {
		const otlp_location *l = r->d->location_table[i];
		const otlp_mapping *m =
			l->mapping_index ? r->d->mapping_table[l->mapping_index] : NULL;

		type = attr_string(r, l->attribute_indices, l->n_attribute_indices,
				   OTLP_FRAME_TYPE);
		if (type) {
			if (!frame_kind__by_otlp_frame_type(type, strlen(type), &kind))
				kind = FRAME_NATIVE;
			r->loc_kernel[i] = kind == FRAME_KERNEL;
			r->loc_kind[i] = frame_kind__known(kind);
		} else {
			r->loc_kernel[i] =
				m && !strcmp(str(r, m->filename_strindex), "[kernel.kallsyms]");
		}
		r->mapping_kernel[l->mapping_index] |= r->loc_kernel[i] && m;
	}
}

static __u32 mapping_id(struct reader *r, int32_t i)
{
	const otlp_mapping *m;
	struct sp_mapping sm;

	if (!i || r->mappings[i])
		return r->mappings[i];
	m = r->d->mapping_table[i];
	sm = (struct sp_mapping){
		.start = m->memory_start,
		.limit = m->memory_limit,
		.file_offset = m->file_offset,
		.file = string_id(r, m->filename_strindex),
		.build_id = build_id(r, m),
		.kernel = r->mapping_kernel[i],
	};
	return r->mappings[i] = symprof__mapping(r->sp, &sm);
}

static __u32 u32_or_0(__s64 v)
{
	return v >= 0 && v <= UINT32_MAX ? v : 0;
}

static __u32 function_id(struct reader *r, int32_t i)
{
	const otlp_function *f;
	struct sp_function sf;

	if (!i || r->functions[i])
		return r->functions[i];
	f = r->d->function_table[i];
	sf = (struct sp_function){
		.name = string_id(r, f->name_strindex),
		.system_name = string_id(r, f->system_name_strindex),
		.file = string_id(r, f->filename_strindex),
		.start_line = u32_or_0(f->start_line),
	};
	return r->functions[i] = symprof__function(r->sp, &sf);
}

static __u32 location_id(struct reader *r, int32_t i)
{
	const otlp_location *l;
	const otlp_mapping *m;
	struct sp_location loc;
	size_t j;

	if (!i || r->locations[i])
		return r->locations[i];
	l = r->d->location_table[i];
	m = l->mapping_index ? r->d->mapping_table[l->mapping_index] : NULL;
	if (GROW(r, lines, l->n_lines)) {
		r->sp->error = -ENOMEM;
		return 0;
	}
	for (j = 0; j < l->n_lines; j++)
		r->lines[j] = (struct sp_line){function_id(r, l->lines[j]->function_index),
					       u32_or_0(l->lines[j]->line),
					       u32_or_0(l->lines[j]->column)};
	loc = (struct sp_location){
		.mapping = mapping_id(r, l->mapping_index),
		.kernel = r->loc_kernel[i],
		.kind = r->loc_kind[i],
		.address = l->address,
		.module_offset = SP_UNKNOWN,
		.function_offset = SP_UNKNOWN,
	};
	/* the file offset: what the writer's address, the mapping and its offset give back */
	if (loc.kernel)
		loc.module_offset = l->address;
	else if (m && m->memory_start <= l->address && l->address < m->memory_limit)
		loc.module_offset = l->address - m->memory_start + m->file_offset;
	return r->locations[i] = symprof__location(r->sp, &loc, r->lines, l->n_lines);
}

static __u32 stack_id(struct reader *r, int32_t i)
{
	const otlp_stack *st;
	size_t j;

	if (!i || r->stacks[i])
		return r->stacks[i];
	st = r->d->stack_table[i];
	if (GROW(r, ids, st->n_location_indices)) {
		r->sp->error = -ENOMEM;
		return 0;
	}
	for (j = 0; j < st->n_location_indices; j++)
		r->ids[j] = location_id(r, st->location_indices[j]);
	return r->stacks[i] = symprof__stack(r->sp, r->ids, st->n_location_indices);
}

static __u32 hex_id(struct reader *r, const ProtobufCBinaryData *b)
{
	char text[2 * OTLP_TRACE_ID_BYTES];

	pb__hex(b->data, b->len, text);
	return symprof__string(r->sp, text, 2 * b->len);
}

/*
 * The labels a Link stands for, after the n labels of the sample: none if
 * those labels derive this very Link (the writer kept them), else trace_id
 * and span_id in hex. Labels already there win (first key wins in a set).
 * Their source is the OpenTelemetry thread context: a Link has no unit to
 * carry another, and a Link is that context's trace and span by definition.
 */
static void link_labels(struct reader *r, int32_t li, size_t *n)
{
	const otlp_link *l = li ? r->d->link_table[li] : NULL;
	struct otlp_trace_link got = {}, derived;
	size_t w3c[2];

	if (!l || (!l->trace_id.len && !l->span_id.len))
		return;
	if (l->trace_id.len)
		memcpy(got.trace_id, l->trace_id.data, sizeof(got.trace_id));
	if (l->span_id.len)
		memcpy(got.span_id, l->span_id.data, sizeof(got.span_id));
	if (otlp__link_from_labels(r->sp, r->labels, *n, &derived, w3c) != OTLP_LINK_NONE &&
	    !memcmp(&derived, &got, sizeof(got)))
		return;
	if (l->trace_id.len)
		r->labels[(*n)++] = (struct sp_label){symprof__cstring(r->sp, OTLP_LABEL_TRACE_ID),
						      hex_id(r, &l->trace_id), LP_SRC_OTEL_THREAD};
	if (l->span_id.len)
		r->labels[(*n)++] = (struct sp_label){symprof__cstring(r->sp, OTLP_LABEL_SPAN_ID),
						      hex_id(r, &l->span_id), LP_SRC_OTEL_THREAD};
}

/* The process a resource describes; returns whether it names a pid. */
static bool resource_process(struct reader *r, const otlp_resource_profiles *rp,
			     struct sp_process *proc)
{
	const otlp_resource *res = rp->resource;
	bool has_pid = false;
	size_t i;

	memset(proc, 0, sizeof(*proc));
	r->n_res_labels = 0;
	for (i = 0; res && i < res->n_attributes; i++) {
		const otlp_key_value *kv = res->attributes[i];
		const char *s = any_string(kv->value);

		if (!strcmp(kv->key, OTLP_PROCESS_PID))
			has_pid = any_u32(kv->value, &proc->pid);
		else if (!s)
			continue;
		else if (!strcmp(kv->key, OTLP_HOST_NAME)) {
			if (!r->sp->meta.host_name)
				r->sp->meta.host_name = unescaped_id(r, s);
		}
		else if (!strcmp(kv->key, OTLP_EXECUTABLE_NAME))
			proc->name = unescaped_id(r, s);
		else if (!strcmp(kv->key, OTLP_EXECUTABLE_PATH))
			proc->executable = unescaped_id(r, s);
		else if (!strcmp(kv->key, OTLP_CONTAINER_ID))
			proc->container_id = unescaped_id(r, s);
		else if (!strcmp(kv->key, OTLP_K8S_POD_UID))
			proc->pod_uid = unescaped_id(r, s);
		else if (GROW(r, res_labels, r->n_res_labels + 1))
			r->sp->error = -ENOMEM;
		else /* what output_otlp.c's resource_fill makes of them */
			r->res_labels[r->n_res_labels++] = (struct sp_label){
				unescaped_id(r, kv->key), unescaped_id(r, s), LP_SRC_OTEL_PROCESS};
	}
	return has_pid;
}

static bool is_nanoseconds(const struct reader *r, const otlp_value_type *v)
{
	return v && !strcmp(str(r, v->unit_strindex), "nanoseconds");
}

static void profile_meta(struct reader *r, const otlp_profile *p)
{
	struct sp_meta *m = &r->sp->meta;
	__u64 end;

	if (p->time_unix_nano &&
	    (!m->start_time_unix_ns || p->time_unix_nano < m->start_time_unix_ns))
		m->start_time_unix_ns = p->time_unix_nano;
	if (__builtin_add_overflow(p->time_unix_nano, p->duration_nano, &end))
		end = UINT64_MAX;
	if (end > r->end)
		r->end = end;
	if (!m->period_ns && p->period > 0 && is_nanoseconds(r, p->period_type)) {
		m->period_ns = p->period;
		m->frequency_hz = (1000000000ull + p->period / 2) / p->period;
	}
}

static int convert_profile(struct reader *r, const otlp_resource_profiles *rp,
			   const otlp_profile *p, size_t np)
{
	bool ns = is_nanoseconds(r, p->sample_type);
	struct sp_process proc;
	size_t i, j, n;
	int err;

	/* a process entry says more than the pid, or there is none */
	if (resource_process(r, rp, &proc) && (proc.name || proc.executable) &&
	    symprof__set_process(r->sp, &proc))
		return -ENOMEM;
	if (ns && p->period <= 0)
		return fail(r, "profile %zu: values in nanoseconds but no period to divide them by",
			    np);
	profile_meta(r, p);
	for (i = 0; i < p->n_samples; i++) {
		const otlp_sample *s = p->samples[i];
		struct sp_sample out = {.pid = proc.pid};
		__u64 sum = 0;

		for (j = 0; j < s->n_values; j++)
			if (s->values[j] < 0 || __builtin_add_overflow(sum, s->values[j], &sum) ||
			    sum > INT64_MAX)
				return fail(r,
					    "profile %zu sample %zu: value %" PRId64
					    " is negative or overflows the sum",
					    np, i, s->values[j]);
		/* round to the nearest count, and keep a sample that took any time */
		out.count = ns ? (sum + p->period / 2) / p->period : sum;
		if (!out.count && sum)
			out.count = 1;
		if (!out.count)
			continue;
		if (GROW(r, labels, s->n_attribute_indices + 2 + r->n_res_labels))
			return -ENOMEM;
		for (j = n = 0; j < s->n_attribute_indices; j++) {
			const struct attr *a = attr_get(r, s->attribute_indices[j]);

			switch (a->kind) {
			case ATTR_LABEL:
				r->labels[n++] = (struct sp_label){a->key, a->value, a->source};
				break;
			case ATTR_THREAD_ID:
				out.tid = a->value;
				break;
			case ATTR_THREAD_NAME:
				out.comm = a->value;
				break;
			case ATTR_PID:
				out.pid = a->value;
				break;
			case ATTR_NONE:
				break;
			}
		}
		link_labels(r, s->link_index, &n);
		if (r->n_res_labels)
			memcpy(r->labels + n, r->res_labels, r->n_res_labels * sizeof(*r->labels));
		n += r->n_res_labels;
		out.label_set = symprof__label_set(r->sp, r->labels, n);
		out.stack = stack_id(r, s->stack_index);
		err = symprof__add_sample(r->sp, &out);
		if (err)
			return err;
	}
	return symprof__error(r->sp);
}

static int reader_tables(struct reader *r)
{
	const otlp_dictionary *d = r->d;

	/* one more than each table: index 0 exists even when a table is empty */
	r->strings = calloc(d->n_string_table + 1, sizeof(*r->strings));
	r->mappings = calloc(d->n_mapping_table + 1, sizeof(*r->mappings));
	r->mapping_kernel = calloc(d->n_mapping_table + 1, sizeof(*r->mapping_kernel));
	r->functions = calloc(d->n_function_table + 1, sizeof(*r->functions));
	r->locations = calloc(d->n_location_table + 1, sizeof(*r->locations));
	r->loc_kernel = calloc(d->n_location_table + 1, sizeof(*r->loc_kernel));
	r->loc_kind = calloc(d->n_location_table + 1, sizeof(*r->loc_kind));
	r->stacks = calloc(d->n_stack_table + 1, sizeof(*r->stacks));
	r->attrs = calloc(d->n_attribute_table + 1, sizeof(*r->attrs));
	if (!r->strings || !r->mappings || !r->mapping_kernel || !r->functions || !r->locations ||
	    !r->loc_kernel || !r->loc_kind || !r->stacks || !r->attrs)
		return -ENOMEM;
	return 0;
}

static void reader_free(struct reader *r)
{
	free(r->strings);
	free(r->mappings);
	free(r->mapping_kernel);
	free(r->functions);
	free(r->locations);
	free(r->loc_kernel);
	free(r->loc_kind);
	free(r->stacks);
	free(r->attrs);
	free(r->buf);
	free(r->ids);
	free(r->labels);
	free(r->lines);
	free(r->res_labels);
}

int input__read_otlp(const void *buf, size_t len, struct symprof *sp, char *err, size_t errlen)
{
	return input__read_otlp_as(buf, len, "otlp", sp, err, errlen);
}

int input__read_otlp_as(const void *buf, size_t len, const char *name, struct symprof *sp,
			char *err, size_t errlen)
{
	static const otlp_dictionary empty =
		OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	struct reader r = {.sp = sp, .e = {name, err, errlen}};
	struct pb_budget b;
	ProtobufCMessage *m;
	otlp_request *req;
	int ret;

	ret = pb__unpack(&OTLP_REQUEST_DESCRIPTOR, buf, len, &b, &r.e, &m);
	if (ret)
		return ret;
	req = (otlp_request *)m;
	r.d = req->dictionary ? req->dictionary : &empty;
	/* every writer sends one of the two: without either, the bytes only parsed by chance */
	if (!req->n_resource_profiles && !req->dictionary)
		ret = fail(&r, "no resource profiles and no dictionary: not a profiles request");
	ret = ret ?: check_dictionary(&r) ?: for_each_profile(&r, req, check_profile) ?: reader_tables(&r);
	if (!ret) {
		kernel_flags(&r);
		ret = for_each_profile(&r, req, convert_profile);
	}
	if (!ret && r.end > sp->meta.start_time_unix_ns)
		sp->meta.duration_ns = r.end - sp->meta.start_time_unix_ns;
	reader_free(&r);
	protobuf_c_message_free_unpacked(m, &b.allocator);
	return ret ?: symprof__error(sp);
}

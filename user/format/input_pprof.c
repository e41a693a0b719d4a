// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pprof reader: a perftools.profiles.Profile, gzipped or not, into a
 * symprof. pb.h inflates and decodes it within its caps; this file checks
 * every reference (string indices, ids) and maps the profile back: string
 * escapes undone (pb.h), the numeric pid/tid labels and the comm/thread_name
 * labels a labelprof profile declares back into sample fields, the frames on
 * a runtime's mapping into that runtime's frames, the sample count from
 * samples/count (or the CPU time over the period).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt.h"
#include "format/input.h"
#include "format/output.h"
#include "format/pb.h"
#include "lib/frame_kind.h"
#include "profile/symprof.h"
#include "pprof/profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Location pb_location;

/* Labels per sample: labelprof's maximum plus its four extra labels. */
#define MAX_SAMPLE_LABELS (LP_MAX_LABELS + 4)
/* User addresses never reach the upper half; the kernel lives there. */
#define KERNEL_HALF (1ull << 63)

struct id_entry {
	__u64 id;
	__u32 sp_id;
};

/* pprof ids -> symprof ids, sorted by pprof id. */
struct id_map {
	struct id_entry *e;
	size_t n;
};

struct reader {
	const pb_profile *p;
	struct symprof *sp;
	struct pb_err e;
	__u32 *strings; /* string_table index -> symprof string id */
	struct id_map mappings, functions, locations;
	bool comm_label, thread_name_label; /* declared by the extra-labels comment */
	__u64 no_stack_fn;		    /* id of the OUTPUT_PPROF_NO_STACK function; 0: none */
	__u64 runtime_mapping[FRAME_KINDS]; /* by kind, id of its pprof_mapping; 0: none */
	unsigned char *buf;		    /* scratch: unescaped bytes */
	size_t buf_cap;
	__u32 *frames;
	size_t frames_cap;
	struct sp_line *lines;
	size_t lines_cap;
};

#define fail(r, ...) pb__fail(&(r)->e, __VA_ARGS__)

/* The symprof string of a string_table entry: pb.h's escapes undone. */
static __u32 unescape(struct reader *r, const unsigned char *s, size_t len)
{
	if (pb__grow((void **)&r->buf, &r->buf_cap, len, 1)) {
		r->sp->error = -ENOMEM;
		return 0;
	}
	return symprof__string(r->sp, r->buf, pb__unescape(s, len, r->buf));
}

/* pprof's build ids are strings, labelprof writes hex: hex goes back to bytes, others stay. */
static __u32 build_id(struct reader *r, __u32 id)
{
	const struct sp_string *s = symprof__str(r->sp, id);

	if (!s->len)
		return id;
	if (pb__grow((void **)&r->buf, &r->buf_cap, s->len / 2, 1)) {
		r->sp->error = -ENOMEM;
		return 0;
	}
	if (!pb__unhex((const char *)s->bytes, s->len, r->buf))
		return id;
	return symprof__string(r->sp, r->buf, s->len / 2);
}

static int read_strings(struct reader *r)
{
	const pb_profile *p = r->p;
	size_t i;

	if (!p->n_string_table)
		return fail(r, "string_table is empty: entry 0 must be \"\"");
	if (p->string_table[0].len)
		return fail(r, "string_table[0] is not \"\"");
	r->strings = calloc(p->n_string_table, sizeof(*r->strings));
	if (!r->strings)
		return -ENOMEM;
	for (i = 1; i < p->n_string_table; i++)
		r->strings[i] = unescape(r, p->string_table[i].data, p->string_table[i].len);
	return symprof__error(r->sp);
}

/* The symprof string of string index idx, which the field what holds. */
static int str(struct reader *r, int64_t idx, const char *what, __u32 *out)
{
	*out = 0;
	if (idx < 0 || (uint64_t)idx >= r->p->n_string_table)
		return fail(r, "%s: string index %" PRId64 " out of range (string_table has %zu)",
			    what, idx, r->p->n_string_table);
	*out = r->strings[idx];
	return 0;
}

static bool str_is(struct reader *r, __u32 id, const char *s)
{
	const struct sp_string *x = symprof__str(r->sp, id);

	return sp_string__is(x, s);
}

/* A value that must fit a __u32 (line numbers). */
static int u32_field(struct reader *r, int64_t v, const char *what, __u64 id, __u32 *out)
{
	if (v < 0 || v > UINT32_MAX)
		return fail(r, "%s %" PRIu64 ": value %" PRId64 " out of range", what, (uint64_t)id,
			    v);
	*out = v;
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	const struct id_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Sorts m and rejects zero and duplicate ids. */
static int id_map__finish(struct reader *r, struct id_map *m, const char *what)
{
	size_t i;

	qsort(m->e, m->n, sizeof(*m->e), id_cmp);
	for (i = 0; i < m->n; i++) {
		if (!m->e[i].id)
			return fail(r, "%s with id 0", what);
		if (i && m->e[i].id == m->e[i - 1].id)
			return fail(r, "two %ss with id %" PRIu64, what, (uint64_t)m->e[i].id);
	}
	return 0;
}

static bool id_map__find(const struct id_map *m, __u64 id, __u32 *sp_id)
{
	struct id_entry key = {.id = id}, *e;

	e = m->n ? bsearch(&key, m->e, m->n, sizeof(*m->e), id_cmp) : NULL;
	if (!e)
		return false;
	*sp_id = e->sp_id;
	return true;
}

static int id_map__alloc(struct id_map *m, size_t n)
{
	m->e = calloc(n + 1, sizeof(*m->e));
	return m->e ? 0 : -ENOMEM;
}

static int read_mappings(struct reader *r)
{
	const pb_profile *p = r->p;
	size_t i;
	int err;

	if (id_map__alloc(&r->mappings, p->n_mapping))
		return -ENOMEM;
	for (i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *pm = p->mapping[i];
		struct sp_mapping m = {
			.start = pm->memory_start,
			.limit = pm->memory_limit,
			.file_offset = pm->file_offset,
			.kernel = pm->memory_start >= KERNEL_HALF || pm->memory_limit > KERNEL_HALF,
		};
		const struct sp_string *file;
		enum frame_kind kind;
		__u32 bid;

		err = str(r, pm->filename, "mapping filename", &m.file)
			      ?: str(r, pm->build_id, "mapping build_id", &bid);
		if (err)
			return err;
		m.build_id = build_id(r, bid);
		/* the writer's mapping of a runtime's frames: kept out of the tables */
		file = symprof__str(r->sp, m.file);
		if (pm->id && frame_kind__by_pprof_mapping(file->bytes, file->len, &kind) &&
		    !r->runtime_mapping[kind]) {
			r->runtime_mapping[kind] = pm->id;
			r->mappings.e[r->mappings.n++] = (struct id_entry){pm->id, 0};
			continue;
		}
		r->mappings.e[r->mappings.n++] =
			(struct id_entry){pm->id, symprof__mapping(r->sp, &m)};
	}
	return id_map__finish(r, &r->mappings, "mapping");
}

static int read_functions(struct reader *r)
{
	const pb_profile *p = r->p;
	size_t i;
	int err;

	if (id_map__alloc(&r->functions, p->n_function))
		return -ENOMEM;
	for (i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *pf = p->function[i];
		struct sp_function f = {};

		err = str(r, pf->name, "function name", &f.name) ?:
		      str(r, pf->system_name, "function system_name", &f.system_name) ?:
		      str(r, pf->filename, "function filename", &f.file) ?:
		      u32_field(r, pf->start_line, "start_line of function", pf->id,
				&f.start_line);
		if (err)
			return err;
		/* the writer's stand-in for "no frames": kept out of the tables */
		if (!r->no_stack_fn && str_is(r, f.name, OUTPUT_PPROF_NO_STACK) && !f.system_name &&
		    !f.file && !f.start_line) {
			r->no_stack_fn = pf->id;
			r->functions.e[r->functions.n++] = (struct id_entry){pf->id, 0};
			continue;
		}
		r->functions.e[r->functions.n++] =
			(struct id_entry){pf->id, symprof__function(r->sp, &f)};
	}
	return id_map__finish(r, &r->functions, "function");
}

/* Where address lies in the mapping's file, as the builder says (symprof.h). */
static __u64 module_offset(const struct sp_mapping *m, __u64 address)
{
	if (m->kernel)
		return address;
	if (address < m->start || address >= m->limit)
		return SP_UNKNOWN;
	return address - m->start + m->file_offset;
}

/* The kind whose runtime mapping id is: true and *kind, else false. */
static bool runtime_of_mapping(const struct reader *r, __u64 id, enum frame_kind *kind)
{
	int k;

	for (k = 0; id && k < FRAME_KINDS; k++) {
		if (r->runtime_mapping[k] == id) {
			*kind = k;
			return true;
		}
	}
	return false;
}

static int read_location(struct reader *r, const pb_location *pl, __u32 *id)
{
	struct sp_location loc = {
		.kernel = pl->address >= KERNEL_HALF,
		.address = pl->address,
		.module_offset = SP_UNKNOWN,
		.function_offset = SP_UNKNOWN,
	};
	enum frame_kind kind;
	size_t i;
	int err;

	if (!pl->mapping_id && !pl->address && pl->n_line == 1 && r->no_stack_fn &&
	    pl->line[0]->function_id == r->no_stack_fn) {
		*id = 0; /* the frame of a frameless sample */
		return 0;
	}
	if (runtime_of_mapping(r, pl->mapping_id, &kind)) {
		loc.kernel = false;
		loc.kind = kind;
	} else if (pl->mapping_id) {
		if (!id_map__find(&r->mappings, pl->mapping_id, &loc.mapping))
			return fail(r,
				    "location %" PRIu64 ": mapping_id %" PRIu64 " does not exist",
				    (uint64_t)pl->id, (uint64_t)pl->mapping_id);
		loc.module_offset = module_offset(&r->sp->mappings[loc.mapping], pl->address);
	}
	if (pb__grow((void **)&r->lines, &r->lines_cap, pl->n_line, sizeof(*r->lines)))
		return -ENOMEM;
	for (i = 0; i < pl->n_line; i++) {
		const Perftools__Profiles__Line *pl_line = pl->line[i];
		struct sp_line *l = &r->lines[i];

		if (!id_map__find(&r->functions, pl_line->function_id, &l->function))
			return fail(r,
				    "location %" PRIu64 ": line %zu: function_id %" PRIu64
				    " does not exist",
				    (uint64_t)pl->id, i, (uint64_t)pl_line->function_id);
		if (!l->function)
			return fail(r,
				    "location %" PRIu64 ": line %zu: the " OUTPUT_PPROF_NO_STACK
				    " stand-in function in a real frame",
				    (uint64_t)pl->id, i);
		err = u32_field(r, pl_line->line, "line of location", pl->id, &l->line)
			      ?: u32_field(r, pl_line->column, "column of location", pl->id,
					   &l->column);
		if (err)
			return err;
	}
	*id = symprof__location(r->sp, &loc, r->lines, pl->n_line);
	return 0;
}

static int read_locations(struct reader *r)
{
	const pb_profile *p = r->p;
	size_t i;
	int err;

	if (id_map__alloc(&r->locations, p->n_location))
		return -ENOMEM;
	for (i = 0; i < p->n_location; i++) {
		struct id_entry *e = &r->locations.e[r->locations.n++];

		e->id = p->location[i]->id;
		err = read_location(r, p->location[i], &e->sp_id);
		if (err)
			return err;
	}
	return id_map__finish(r, &r->locations, "location");
}

/* Whether the comma-separated list names holds name. */
static bool has_name(const char *names, const char *name)
{
	size_t len = strlen(name), n;

	while (*names) {
		n = strcspn(names, ",");
		if (n == len && !memcmp(names, name, n))
			return true;
		names += n;
		if (*names)
			names++;
	}
	return false;
}

/* What the profile's values mean and the sampling period. */
struct sample_kind {
	size_t count_idx, cpu_idx; /* SIZE_MAX: absent */
	__u64 period_ns;
};

static int read_meta(struct reader *r, struct sample_kind *k)
{
	const pb_profile *p = r->p;
	__u32 type, unit, c;
	size_t i;
	int err;

	k->count_idx = k->cpu_idx = SIZE_MAX;
	for (i = 0; i < p->n_sample_type; i++) {
		err = str(r, p->sample_type[i]->type, "sample_type type", &type)
			      ?: str(r, p->sample_type[i]->unit, "sample_type unit", &unit);
		if (err)
			return err;
		if (str_is(r, type, "samples") && str_is(r, unit, "count") &&
		    k->count_idx == SIZE_MAX)
			k->count_idx = i;
		if (str_is(r, type, "cpu") && str_is(r, unit, "nanoseconds") &&
		    k->cpu_idx == SIZE_MAX)
			k->cpu_idx = i;
	}
	if (p->period < 0 || p->time_nanos < 0 || p->duration_nanos < 0)
		return fail(r, "negative period, time_nanos or duration_nanos");
	k->period_ns = 0;
	if (p->period_type) {
		err = str(r, p->period_type->type, "period_type type", &type)
			      ?: str(r, p->period_type->unit, "period_type unit", &unit);
		if (err)
			return err;
		if (str_is(r, unit, "nanoseconds"))
			k->period_ns = p->period;
	}
	if (k->count_idx == SIZE_MAX && (k->cpu_idx == SIZE_MAX || !k->period_ns))
		return fail(r, "no samples/count value, nor cpu/nanoseconds with a period in "
			       "nanoseconds: not a CPU profile");
	for (i = 0; i < p->n_comment; i++) {
		const struct sp_string *s;
		const char *names;

		err = str(r, p->comment[i], "comment", &c);
		if (err)
			return err;
		s = symprof__str(r->sp, c);
		if (s->len < strlen(OUTPUT_PPROF_EXTRA_LABELS) ||
		    memcmp(s->bytes, OUTPUT_PPROF_EXTRA_LABELS, strlen(OUTPUT_PPROF_EXTRA_LABELS)))
			continue;
		/* strings are NUL-terminated; the names never hold a NUL */
		names = (const char *)s->bytes + strlen(OUTPUT_PPROF_EXTRA_LABELS);
		r->comm_label = has_name(names, "comm");
		r->thread_name_label = has_name(names, "thread_name");
	}
	err = str(r, p->drop_frames, "drop_frames", &c) ?: str(r, p->keep_frames, "keep_frames", &c) ?:
	      str(r, p->default_sample_type, "default_sample_type", &c);
	if (err)
		return err;
	r->sp->meta.period_ns = k->period_ns;
	r->sp->meta.frequency_hz =
		k->period_ns ? (1000000000ull + k->period_ns / 2) / k->period_ns : 0;
	r->sp->meta.start_time_unix_ns = p->time_nanos;
	r->sp->meta.duration_ns = p->duration_nanos;
	return 0;
}

static int sample_count(struct reader *r, const struct sample_kind *k, size_t i, const pb_sample *s,
			__u64 *count)
{
	int64_t v;

	if (s->n_value != r->p->n_sample_type)
		return fail(r, "sample %zu has %zu values for %zu sample types", i, s->n_value,
			    r->p->n_sample_type);
	v = s->value[k->count_idx != SIZE_MAX ? k->count_idx : k->cpu_idx];
	if (v < 0)
		return fail(r, "sample %zu: negative value %" PRId64, i, v);
	if (k->count_idx != SIZE_MAX)
		*count = v;
	else
		*count = ((__u64)v + k->period_ns / 2) / k->period_ns;
	return 0;
}

/*
 * The sample's labels into out: numeric pid/tid into its fields, the first
 * declared comm (*proc_name) and thread_name (out->comm) too, the rest into
 * its label set. A numeric label becomes its decimal value.
 */
static int read_labels(struct reader *r, size_t i, const pb_sample *s, struct sp_sample *out,
		       __u32 *proc_name)
{
	struct sp_label labels[MAX_SAMPLE_LABELS];
	bool comm_seen = false, thread_name_seen = false;
	size_t j, n = 0;
	char num[24];
	int err;

	if (s->n_label > MAX_SAMPLE_LABELS)
		return fail(r, "sample %zu has %zu labels, more than %d", i, s->n_label,
			    MAX_SAMPLE_LABELS);
	for (j = 0; j < s->n_label; j++) {
		const pb_label *l = s->label[j];
		__u32 key, value, unit, source;

		err = str(r, l->key, "label key", &key) ?:
		      str(r, l->num_unit, "label num_unit", &unit) ?:
		      str(r, l->str, "label str", &value);
		if (err)
			return err;
		if (symprof__str(r->sp, key)->len > LP_MAX_KEY_LEN)
			return fail(r, "sample %zu: label key longer than %d bytes", i,
				    LP_MAX_KEY_LEN);
		/* the source a labelprof profile gives in num_unit (output.h) */
		source = fmt__label_source_of_unit((const char *)symprof__str(r->sp, unit)->bytes);
		if (!l->str && (l->num || (l->num_unit && source == LP_SRC_CUSTOM_LABELS))) {
			bool pid = str_is(r, key, "pid"), tid = !pid && str_is(r, key, "tid");

			if ((pid || tid) && (l->num < 0 || l->num > UINT32_MAX))
				return fail(r, "sample %zu: %s %" PRId64 " out of range", i,
					    pid ? "pid" : "tid", l->num);
			if (pid && !out->pid) {
				out->pid = l->num;
				continue;
			}
			if (tid && !out->tid) {
				out->tid = l->num;
				continue;
			}
			snprintf(num, sizeof(num), "%" PRId64, l->num);
			value = symprof__cstring(r->sp, num);
			source = LP_SRC_CUSTOM_LABELS;
		} else if (r->comm_label && !comm_seen && str_is(r, key, "comm")) {
			*proc_name = value;
			comm_seen = true;
			continue;
		} else if (r->thread_name_label && !thread_name_seen &&
			   str_is(r, key, "thread_name")) {
			out->comm = value;
			thread_name_seen = true;
			continue;
		}
		labels[n++] = (struct sp_label){key, value, source};
	}
	out->label_set = symprof__label_set(r->sp, labels, n);
	return 0;
}

static int read_samples(struct reader *r, const struct sample_kind *k)
{
	const pb_profile *p = r->p;
	size_t i, j, n;
	int err;

	for (i = 0; i < p->n_sample; i++) {
		const pb_sample *s = p->sample[i];
		struct sp_sample out = {};
		__u32 proc_name = 0;

		err = sample_count(r, k, i, s, &out.count)
			      ?: read_labels(r, i, s, &out, &proc_name);
		if (err)
			return err;
		if (pb__grow((void **)&r->frames, &r->frames_cap, s->n_location_id,
			     sizeof(*r->frames)))
			return -ENOMEM;
		for (j = 0, n = 0; j < s->n_location_id; j++) {
			if (!id_map__find(&r->locations, s->location_id[j], &r->frames[n]))
				return fail(r, "sample %zu: location_id %" PRIu64 " does not exist",
					    i, (uint64_t)s->location_id[j]);
			n += r->frames[n] != 0;
		}
		out.stack = symprof__stack(r->sp, r->frames, n);
		if (proc_name && out.pid &&
		    symprof__set_process(r->sp,
					 &(struct sp_process){.pid = out.pid, .name = proc_name}))
			return -ENOMEM;
		err = symprof__add_sample(r->sp, &out);
		if (err)
			return err;
	}
	return 0;
}

int input__read_pprof(const void *buf, size_t len, struct symprof *sp, char *err, size_t errlen)
{
	struct reader r = {.sp = sp, .e = {"pprof", err, errlen}};
	struct sample_kind k = {};
	struct pb_budget b;
	ProtobufCMessage *m;
	int ret;

	ret = pb__unpack(&perftools__profiles__profile__descriptor, buf, len, &b, &r.e, &m);
	if (ret)
		return ret;
	r.p = (pb_profile *)m;
	ret = read_strings(&r) ?: read_meta(&r, &k) ?: read_mappings(&r) ?: read_functions(&r) ?:
	      read_locations(&r) ?: read_samples(&r, &k);
	if (!ret)
		ret = symprof__error(sp);
	protobuf_c_message_free_unpacked(m, &b.allocator);
	free(r.strings);
	free(r.mappings.e);
	free(r.functions.e);
	free(r.locations.e);
	free(r.buf);
	free(r.frames);
	free(r.lines);
	return ret;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pprof writer: a symprof as a gzipped perftools.profiles.Profile (docs/design.md
 * section 5, rules in output.h). Mapping, function and location ids carry
 * over from the symprof (its ids are dense and non-zero); every string is
 * escaped into valid UTF-8 and interned, and samples that differ only in
 * what the chosen labels do not show (pid, tid, thread name) are merged.
 * The message is packed straight into the gzip stream.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/compiler.h"
#include "format/fmt.h"
#include "format/output.h"
#include "format/pb.h"
#include "lib/frame_kind.h"
#include "profile/symprof.h"
#include "pprof/profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* What each extra label is called; output__extra_labels_by_names takes the same names. */
#define LABEL_PID	  "pid"
#define LABEL_TID	  "tid"
#define LABEL_COMM	  "comm"
#define LABEL_THREAD_NAME "thread_name"

#define MAX_COMMENTS 3

struct writer {
	const struct symprof *sp;
	unsigned int extra; /* enum output_extra_labels */
	/*
	 * Scratch symprof: its string table is the profile's (escaped strings,
	 * interned), and its samples are sp's samples merged on what the
	 * profile shows. Those samples keep sp's stack, label set and comm ids.
	 */
	struct symprof *out;
	__u32 *str_ids;	    /* sp string id -> string_table index; 0: not mapped yet */
	__u32 source_units[LP_SRC_OTEL_PROCESS + 1]; /* string_table index; 0: not yet */
	unsigned char *esc; /* scratch: escaped strings, hex build ids */
	size_t esc_cap;
};

/* Room for n bytes in w->esc; NULL on error (sticky in w->out). */
static unsigned char *scratch(struct writer *w, size_t n)
{
	if (pb__grow((void **)&w->esc, &w->esc_cap, n, 1)) {
		w->out->error = -ENOMEM;
		return NULL;
	}
	return w->esc;
}

/* Interns bytes escaped as pb.h says; 0 for "" (or on error: sticky in w->out). */
static __u32 put_bytes(struct writer *w, const unsigned char *s, size_t len)
{
	if (len > (SIZE_MAX - 1) / 4) {
		w->out->error = -ENOMEM;
		return 0;
	}
	if (!scratch(w, 4 * len + 1))
		return 0;
	return symprof__string(w->out, w->esc, pb__escape(s, len, w->esc));
}

/* The string_table index of sp's string id. */
static __u32 put_string(struct writer *w, __u32 id)
{
	const struct sp_string *s;

	if (!id || id >= w->sp->string_count)
		return 0;
	if (!w->str_ids[id]) {
		s = &w->sp->strings[id];
		w->str_ids[id] = put_bytes(w, s->bytes, s->len);
	}
	return w->str_ids[id];
}

static __u32 put_cstring(struct writer *w, const char *s)
{
	return symprof__cstring(w->out, s);
}

/* A build id (raw bytes) as the lowercase hex string pprof tools compare. */
static __u32 put_build_id(struct writer *w, __u32 id)
{
	const struct sp_string *b = symprof__str(w->sp, id);

	if (!b->len || !scratch(w, 2 * b->len))
		return 0;
	pb__hex(b->bytes, b->len, (char *)w->esc);
	return symprof__string(w->out, w->esc, 2 * b->len);
}

static int64_t clamp_s64(__u64 v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/*
 * The profile's mapping id of a location: a runtime's frames are on a
 * mapping of their own (runtime, by kind; 0: none).
 */
static __u32 location_mapping(const struct symprof *sp, const __u32 *runtime,
			      const struct sp_location *loc)
{
	enum frame_kind kind = frame_kind__known(loc->kind);

	if (frame_kinds[kind].pprof_mapping)
		return runtime[kind];
	return loc->mapping < sp->mapping_count ? loc->mapping : 0;
}

/* The has_* flags of each mapping, from what its locations resolved to. */
static void mapping_flags(const struct symprof *sp, const __u32 *runtime, pb_mapping *mappings)
{
	size_t i, j;

	for (i = 1; i < sp->location_count; i++) {
		const struct sp_location *loc = &sp->locations[i];
		__u32 id = location_mapping(sp, runtime, loc);
		pb_mapping *m;

		if (!id)
			continue;
		m = &mappings[id - 1];
		if (loc->line_count > 1)
			m->has_inline_frames = true;
		for (j = 0; j < loc->line_count; j++) {
			const struct sp_line *l = &sp->lines[loc->first_line + j];
			const struct sp_function *f = &sp->functions[l->function];

			m->has_functions |= f->name != 0;
			m->has_filenames |= f->file != 0;
			m->has_line_numbers |= l->line != 0;
		}
	}
}

/*
 * Names for the comm label of processes the symprof has no name for: the
 * name of the main thread's samples, else of the first sample's thread. One
 * name per pid, so that a reader, which keeps one name per process, gets the
 * same labels back. Held in w->out's process table (as sp string ids).
 */
static int fallback_names(struct writer *w)
{
	const struct symprof *sp = w->sp;
	const struct sp_process *p;
	int pass, err;
	size_t i;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < sp->sample_count; i++) {
			const struct sp_sample *s = &sp->samples[i];

			p = symprof__process(sp, s->pid);
			if ((p && p->name) || !s->comm || (!pass && s->tid != s->pid))
				continue;
			err = symprof__set_process(
				w->out, &(struct sp_process){.pid = s->pid, .name = s->comm});
			if (err)
				return err;
		}
	}
	return 0;
}

static __u32 process_name(struct writer *w, __u32 pid)
{
	const struct sp_process *p = symprof__process(w->sp, pid);

	if (p && p->name)
		return p->name;
	p = symprof__process(w->out, pid);
	return p ? p->name : 0;
}

/* Merges sp's samples on what the profile shows into w->out's samples. */
static int merge_samples(struct writer *w)
{
	const struct symprof *sp = w->sp;
	size_t i;
	int err;

	for (i = 0; i < sp->sample_count; i++) {
		const struct sp_sample *s = &sp->samples[i];
		struct sp_sample m = {
			.label_set = s->label_set < sp->label_set_count ? s->label_set : 0,
			.stack = s->stack < sp->stack_count ? s->stack : 0,
			.count = s->count,
		};

		if (w->extra & (OUTPUT_LABEL_PID | OUTPUT_LABEL_COMM))
			m.pid = s->pid;
		if (w->extra & OUTPUT_LABEL_TID)
			m.tid = s->tid;
		if (w->extra & OUTPUT_LABEL_THREAD_NAME)
			m.comm = s->comm;
		err = symprof__add_sample(w->out, &m);
		if (err)
			return err;
	}
	return 0;
}

/* The num_unit saying a label comes from source (output.h); 0 for custom labels. */
static __u32 source_unit(struct writer *w, __u32 source)
{
	char unit[64];

	if (source == LP_SRC_CUSTOM_LABELS || source >= ARRAY_SIZE(w->source_units))
		return 0;
	if (!w->source_units[source]) {
		snprintf(unit, sizeof(unit), FMT_LABEL_SOURCE_UNIT "%s",
			 fmt__label_source_name(source));
		w->source_units[source] = put_cstring(w, unit);
	}
	return w->source_units[source];
}

/*
 * Extra labels first, comm and thread_name even when empty: a reader takes the
 * first of each as the field, and a custom label of the same name follows.
 * pid and tid 0 (unknown) are left out: a numeric label 0 reads as an empty
 * string label.
 */
static size_t sample_labels(struct writer *w, const struct sp_sample *s, pb_label *l)
{
	const struct symprof *sp = w->sp;
	const struct sp_range *r = &sp->label_sets[s->label_set];
	size_t n = 0, i;

	if ((w->extra & OUTPUT_LABEL_PID) && s->pid) {
		l[n].key = put_cstring(w, LABEL_PID);
		l[n++].num = s->pid;
	}
	if ((w->extra & OUTPUT_LABEL_TID) && s->tid) {
		l[n].key = put_cstring(w, LABEL_TID);
		l[n++].num = s->tid;
	}
	if (w->extra & OUTPUT_LABEL_COMM) {
		l[n].key = put_cstring(w, LABEL_COMM);
		l[n++].str = put_string(w, process_name(w, s->pid));
	}
	if (w->extra & OUTPUT_LABEL_THREAD_NAME) {
		l[n].key = put_cstring(w, LABEL_THREAD_NAME);
		l[n++].str = put_string(w, s->comm);
	}
	for (i = 0; i < r->count; i++) {
		const struct sp_label *label = &sp->labels[r->first + i];

		l[n].key = put_string(w, label->key);
		l[n].str = put_string(w, label->value);
		/* an empty value (str 0) too: the reader tells it from a number by the unit */
		l[n].num_unit = source_unit(w, label->source);
		n++;
	}
	return n;
}

/* The comment naming the extra labels: the reader maps them back to sample fields. */
static void extra_labels_comment(struct writer *w, char *buf, size_t size)
{
	static const char *const names[] = {LABEL_PID, LABEL_TID, LABEL_COMM, LABEL_THREAD_NAME};
	size_t i, len = snprintf(buf, size, "%s", OUTPUT_PPROF_EXTRA_LABELS);
	const char *sep = "";

	_Static_assert(OUTPUT_LABEL_THREAD_NAME == 1 << 3, "names follows the bits");
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (!(w->extra & (1u << i)))
			continue;
		len += snprintf(buf + len, size - len, "%s%s", sep, names[i]);
		sep = ",";
	}
}

/* gzip stream a ProtobufCBuffer writes into. */
struct gz_buffer {
	ProtobufCBuffer base;
	z_stream z;
	FILE *f;
	int err;
	unsigned char out[1 << 16];
};

static int gz_deflate(struct gz_buffer *g, int flush)
{
	int ret;

	do {
		size_t n;

		g->z.next_out = g->out;
		g->z.avail_out = sizeof(g->out);
		ret = deflate(&g->z, flush);
		if (ret == Z_STREAM_ERROR)
			return -EINVAL;
		n = sizeof(g->out) - g->z.avail_out;
		if (n && fwrite(g->out, 1, n, g->f) != n)
			return -EIO;
	} while (g->z.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
	return 0;
}

static void gz_append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data)
{
	struct gz_buffer *g = (struct gz_buffer *)buffer;

	while (len && !g->err) {
		uInt n = len > UINT_MAX ? UINT_MAX : len;

		g->z.next_in = (Bytef *)data;
		g->z.avail_in = n;
		g->err = gz_deflate(g, Z_NO_FLUSH);
		data += n;
		len -= n;
	}
}

static int write_gzipped(FILE *f, const pb_profile *p)
{
	struct gz_buffer *g = calloc(1, sizeof(*g));
	int err;

	if (!g)
		return -ENOMEM;
	g->base.append = gz_append;
	g->f = f;
	/* 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return -ENOMEM;
	}
	perftools__profiles__profile__pack_to_buffer(p, &g->base);
	err = g->err;
	if (!err) {
		g->z.avail_in = 0;
		err = gz_deflate(g, Z_FINISH);
	}
	deflateEnd(&g->z);
	free(g);
	if (!err && fflush(f))
		err = -errno;
	return err ? err : (ferror(f) ? -EIO : 0);
}

struct tables {
	pb_mapping *mappings, **mapping_ptrs;
	__u32 runtime_mapping[FRAME_KINDS]; /* the mapping id of a runtime's frames, by kind */
	pb_function *functions, **function_ptrs;
	pb_line *lines, **line_ptrs;
	pb_location *locations, **location_ptrs;
	uint64_t *stack_ids;
	pb_sample *samples, **sample_ptrs;
	int64_t *values;
	pb_label *labels, **label_ptrs;
	ProtobufCBinaryData *strings;
	uint64_t no_stack; /* location id of the frame of frameless samples; 0: none */
};

static void tables__free(struct tables *t)
{
	free(t->mappings);
	free(t->mapping_ptrs);
	free(t->functions);
	free(t->function_ptrs);
	free(t->lines);
	free(t->line_ptrs);
	free(t->locations);
	free(t->location_ptrs);
	free(t->stack_ids);
	free(t->samples);
	free(t->sample_ptrs);
	free(t->values);
	free(t->labels);
	free(t->label_ptrs);
	free(t->strings);
}

static int tables__alloc_sp(struct tables *t, const struct symprof *sp)
{
	/*
	 * Tables with a zero entry have room for their n - 1 entries and one
	 * more: add_no_stack's function and location; mappings for one more
	 * per frame kind at most, its runtime's
	 */
	t->mappings = calloc(sp->mapping_count - 1 + FRAME_KINDS, sizeof(*t->mappings));
	t->mapping_ptrs = calloc(sp->mapping_count - 1 + FRAME_KINDS, sizeof(*t->mapping_ptrs));
	t->functions = calloc(sp->function_count, sizeof(*t->functions));
	t->function_ptrs = calloc(sp->function_count, sizeof(*t->function_ptrs));
	t->lines = calloc(sp->line_count + 1, sizeof(*t->lines));
	t->line_ptrs = calloc(sp->line_count + 1, sizeof(*t->line_ptrs));
	t->locations = calloc(sp->location_count, sizeof(*t->locations));
	t->location_ptrs = calloc(sp->location_count, sizeof(*t->location_ptrs));
	t->stack_ids = calloc(sp->stack_location_count + 1, sizeof(*t->stack_ids));
	if (!t->mappings || !t->mapping_ptrs || !t->functions || !t->function_ptrs || !t->lines ||
	    !t->line_ptrs || !t->locations || !t->location_ptrs || !t->stack_ids)
		return -ENOMEM;
	return 0;
}

/*
 * The mapping of a runtime's frames (kind), the next id, when there are
 * any: the kind's pprof_mapping over the range of their addresses (tokens).
 */
static void add_runtime_mapping(struct writer *w, struct tables *t, pb_profile *p,
				enum frame_kind kind)
{
	const struct symprof *sp = w->sp;
	pb_mapping *pm = &t->mappings[p->n_mapping];
	__u64 start = UINT64_MAX, last = 0;
	size_t i;

	for (i = 1; i < sp->location_count; i++) {
		const struct sp_location *loc = &sp->locations[i];

		if (loc->kind != kind)
			continue;
		start = loc->address < start ? loc->address : start;
		last = loc->address > last ? loc->address : last;
	}
	if (start > last)
		return;
	perftools__profiles__mapping__init(pm);
	pm->id = p->n_mapping + 1;
	pm->memory_start = start;
	pm->memory_limit = last == UINT64_MAX ? last : last + 1;
	pm->filename = put_cstring(w, frame_kinds[kind].pprof_mapping);
	t->runtime_mapping[kind] = pm->id;
	t->mapping_ptrs[p->n_mapping++] = pm;
}

/* Mappings, functions and locations with sp's ids. */
static void fill_tables(struct writer *w, struct tables *t, pb_profile *p)
{
	const struct symprof *sp = w->sp;
	enum frame_kind kind;
	size_t i;

	for (i = 1; i < sp->mapping_count; i++) {
		const struct sp_mapping *m = &sp->mappings[i];
		pb_mapping *pm = &t->mappings[i - 1];

		perftools__profiles__mapping__init(pm);
		pm->id = i;
		pm->memory_start = m->start;
		pm->memory_limit = m->limit;
		pm->file_offset = m->file_offset;
		pm->filename = put_string(w, m->file);
		pm->build_id = put_build_id(w, m->build_id);
		t->mapping_ptrs[i - 1] = pm;
	}
	p->n_mapping = sp->mapping_count - 1;
	for (kind = 0; kind < FRAME_KINDS; kind++)
		if (frame_kinds[kind].pprof_mapping)
			add_runtime_mapping(w, t, p, kind);
	mapping_flags(sp, t->runtime_mapping, t->mappings);
	p->mapping = t->mapping_ptrs;
	for (i = 1; i < sp->function_count; i++) {
		const struct sp_function *f = &sp->functions[i];
		pb_function *pf = &t->functions[i - 1];

		perftools__profiles__function__init(pf);
		pf->id = i;
		pf->name = put_string(w, f->name);
		pf->system_name = put_string(w, f->system_name);
		pf->filename = put_string(w, f->file);
		pf->start_line = f->start_line;
		t->function_ptrs[i - 1] = pf;
	}
	for (i = 0; i < sp->line_count; i++) {
		perftools__profiles__line__init(&t->lines[i]);
		t->lines[i].function_id = sp->lines[i].function;
		t->lines[i].line = sp->lines[i].line;
		t->lines[i].column = sp->lines[i].column;
		t->line_ptrs[i] = &t->lines[i];
	}
	for (i = 1; i < sp->location_count; i++) {
		const struct sp_location *loc = &sp->locations[i];
		pb_location *pl = &t->locations[i - 1];

		perftools__profiles__location__init(pl);
		pl->id = i;
		pl->mapping_id = location_mapping(sp, t->runtime_mapping, loc);
		pl->address = loc->address;
		pl->n_line = loc->line_count;
		pl->line = t->line_ptrs + loc->first_line;
		t->location_ptrs[i - 1] = pl;
	}
	for (i = 0; i < sp->stack_location_count; i++)
		t->stack_ids[i] = sp->stack_locations[i];
	p->n_function = sp->function_count - 1;
	p->function = t->function_ptrs;
	p->n_location = sp->location_count - 1;
	p->location = t->location_ptrs;
}

/*
 * Go tools drop samples without locations: frameless samples get one, at
 * address 0 in no mapping, in the function OUTPUT_PPROF_NO_STACK. The
 * tables have room for one more function, line and location.
 */
static void add_no_stack(struct writer *w, struct tables *t, pb_profile *p)
{
	pb_function *f = &t->functions[p->n_function];
	pb_line *line = &t->lines[w->sp->line_count];
	pb_location *l = &t->locations[p->n_location];
	size_t i;

	for (i = 0; i < w->out->sample_count && w->out->samples[i].stack; i++)
		;
	if (i == w->out->sample_count)
		return;
	perftools__profiles__function__init(f);
	f->id = p->n_function + 1;
	f->name = put_cstring(w, OUTPUT_PPROF_NO_STACK);
	t->function_ptrs[p->n_function++] = f;
	perftools__profiles__line__init(line);
	line->function_id = f->id;
	t->line_ptrs[w->sp->line_count] = line;
	perftools__profiles__location__init(l);
	l->id = p->n_location + 1;
	l->n_line = 1;
	l->line = &t->line_ptrs[w->sp->line_count];
	t->location_ptrs[p->n_location++] = l;
	t->no_stack = l->id;
}

static unsigned int extra_count(unsigned int extra)
{
	return __builtin_popcount(extra & (OUTPUT_LABEL_PID | OUTPUT_LABEL_TID | OUTPUT_LABEL_COMM |
					   OUTPUT_LABEL_THREAD_NAME));
}

/* One pprof sample per merged sample: values (count, CPU ns), stack, labels. */
static int fill_samples(struct writer *w, struct tables *t, pb_profile *p)
{
	const struct symprof *sp = w->sp, *out = w->out;
	size_t i, nlabels = 0, l = 0;

	for (i = 0; i < out->sample_count; i++)
		nlabels += extra_count(w->extra) + sp->label_sets[out->samples[i].label_set].count;
	t->samples = calloc(out->sample_count + 1, sizeof(*t->samples));
	t->sample_ptrs = calloc(out->sample_count + 1, sizeof(*t->sample_ptrs));
	t->values = calloc(2 * out->sample_count + 1, sizeof(*t->values));
	t->labels = calloc(nlabels + 1, sizeof(*t->labels));
	t->label_ptrs = calloc(nlabels + 1, sizeof(*t->label_ptrs));
	if (!t->samples || !t->sample_ptrs || !t->values || !t->labels || !t->label_ptrs)
		return -ENOMEM;
	for (i = 0; i < nlabels; i++) {
		perftools__profiles__label__init(&t->labels[i]);
		t->label_ptrs[i] = &t->labels[i];
	}
	for (i = 0; i < out->sample_count; i++) {
		const struct sp_sample *s = &out->samples[i];
		const struct sp_range *st = &sp->stacks[s->stack];
		pb_sample *ps = &t->samples[i];
		__u64 cpu;

		perftools__profiles__sample__init(ps);
		ps->n_location_id = st->count;
		ps->location_id = t->stack_ids + st->first;
		if (!st->count) {
			ps->n_location_id = 1;
			ps->location_id = &t->no_stack;
		}
		ps->n_value = 2;
		ps->value = t->values + 2 * i;
		ps->value[0] = clamp_s64(s->count);
		if (__builtin_mul_overflow(s->count, sp->meta.period_ns, &cpu))
			cpu = UINT64_MAX;
		ps->value[1] = clamp_s64(cpu);
		ps->n_label = sample_labels(w, s, t->labels + l);
		ps->label = t->label_ptrs + l;
		l += ps->n_label;
		t->sample_ptrs[i] = ps;
	}
	p->n_sample = out->sample_count;
	p->sample = t->sample_ptrs;
	return 0;
}

static void fill_comments(struct writer *w, int64_t *comments, pb_profile *p)
{
	const struct sp_meta *m = &w->sp->meta;
	char buf[256];

	p->comment = comments;
	if (m->frequency_hz) {
		snprintf(buf, sizeof(buf), "labelprof: sampled at %" PRIu64 " Hz per CPU",
			 (uint64_t)m->frequency_hz);
		comments[p->n_comment++] = put_cstring(w, buf);
	}
	if (m->samples_received) {
		snprintf(buf, sizeof(buf),
			 "labelprof: %" PRIu64 " samples received, %" PRIu64
			 " lost in the ring buffer, %" PRIu64
			 " only counted at the memory limit, %" PRIu64 " records rejected",
			 (uint64_t)m->samples_received, (uint64_t)m->counters.ringbuf_drops,
			 (uint64_t)m->samples_dropped, (uint64_t)m->records_rejected);
		comments[p->n_comment++] = put_cstring(w, buf);
	}
	if (extra_count(w->extra)) {
		extra_labels_comment(w, buf, sizeof(buf));
		comments[p->n_comment++] = put_cstring(w, buf);
	}
}

int output__write_pprof(FILE *f, const struct symprof *sp, const struct output_opts *opts)
{
	struct writer w = {.sp = sp, .extra = opts ? opts->extra_labels : 0};
	pb_profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_value_type types[2], period_type;
	pb_value_type *type_ptrs[2] = {&types[0], &types[1]};
	int64_t comments[MAX_COMMENTS];
	struct tables t = {};
	__u32 cpu, ns;
	size_t i;
	int err;

	w.out = symprof__new();
	w.str_ids = calloc(sp->string_count, sizeof(*w.str_ids));
	if (!w.out || !w.str_ids || tables__alloc_sp(&t, sp)) {
		err = -ENOMEM;
		goto out;
	}
	err = (w.extra & OUTPUT_LABEL_COMM ? fallback_names(&w) : 0) ?: merge_samples(&w);
	if (err)
		goto out;
	fill_tables(&w, &t, &p);
	add_no_stack(&w, &t, &p);
	err = fill_samples(&w, &t, &p);
	if (err)
		goto out;

	cpu = put_cstring(&w, "cpu");
	ns = put_cstring(&w, "nanoseconds");
	perftools__profiles__value_type__init(&types[0]);
	types[0].type = put_cstring(&w, "samples");
	types[0].unit = put_cstring(&w, "count");
	perftools__profiles__value_type__init(&types[1]);
	types[1].type = cpu;
	types[1].unit = ns;
	p.n_sample_type = 2;
	p.sample_type = type_ptrs;
	perftools__profiles__value_type__init(&period_type);
	period_type.type = cpu;
	period_type.unit = ns;
	p.period_type = &period_type;
	p.period = clamp_s64(sp->meta.period_ns);
	p.time_nanos = clamp_s64(sp->meta.start_time_unix_ns);
	p.duration_nanos = clamp_s64(sp->meta.duration_ns);
	fill_comments(&w, comments, &p);

	/* last: every string is interned by now */
	err = symprof__error(w.out);
	if (err)
		goto out;
	t.strings = calloc(w.out->string_count, sizeof(*t.strings));
	if (!t.strings) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < w.out->string_count; i++)
		t.strings[i] = (ProtobufCBinaryData){w.out->strings[i].len,
						     (uint8_t *)w.out->strings[i].bytes};
	p.n_string_table = w.out->string_count;
	p.string_table = t.strings;
	err = write_gzipped(f, &p);
out:
	tables__free(&t);
	free(w.str_ids);
	free(w.esc);
	symprof__free(w.out);
	return err;
}

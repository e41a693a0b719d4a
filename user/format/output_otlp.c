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
 * The dictionary's tables are built in output_otlp_dict.c. Samples of a
 * profile are interned as its entries are, on {stack, sorted attributes,
 * link}, which merges equal identities.
 *
 * The whole tree is allocated with malloc, one owner per node, so that
 * protobuf_c_message_free_unpacked() frees it, whatever point building
 * reached. The string table is the exception: it points into its interner.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "format/otlp_writer.h"
#include "format/output.h"
#include "profile/symprof.h"
#include "version.h"

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
	const struct set_info *si = otlp_writer__set_info(w, s->label_set);
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
		mg->attrs[n++] = otlp_writer__attribute(w, otlp_writer__cstring(w, OTLP_THREAD_ID),
							otlp_writer__int_value(w, s->tid));
	if (w->extra_labels & OUTPUT_LABEL_THREAD_NAME && !si->has_thread_name && s->comm) {
		const struct sp_string *c = symprof__str(w->sp, s->comm);

		mg->attrs[n++] =
			otlp_writer__attribute(w, otlp_writer__cstring(w, OTLP_THREAD_NAME),
					       otlp_writer__string_value(w, c->bytes, c->len));
	}
	/* a set of attributes: one order, so that equal sets encode equally */
	qsort(mg->attrs, n, sizeof(*mg->attrs), index_cmp);

	protobuf_c_message_init(&PROF(sample), &key);
	key.stack_index = otlp_writer__stack(w, s->stack);
	key.link_index = si->link;
	key.attribute_indices = mg->attrs;
	key.n_attribute_indices = n;
	len = protobuf_c_message_get_packed_size(&key.base);
	if (w->err || !otlp_writer__reserve(w, len + 1))
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
	ps = otlp_writer__msg_new(w, &PROF(sample));
	if (!ps)
		return;
	p->samples[p->n_samples++] = ps;
	ps->stack_index = key.stack_index;
	ps->link_index = key.link_index;
	ps->attribute_indices = otlp_writer__calloc(w, n, sizeof(*ps->attribute_indices));
	if (ps->attribute_indices) {
		memcpy(ps->attribute_indices, mg->attrs, n * sizeof(*mg->attrs));
		ps->n_attribute_indices = n;
	}
	ps->values = otlp_writer__calloc(w, 1, sizeof(*ps->values));
	if (ps->values) {
		ps->values[0] = value;
		ps->n_values = 1;
	}
}

static otlp_value_type *value_type(struct writer *w, const char *type, const char *unit)
{
	otlp_value_type *v = otlp_writer__msg_new(w, &PROF(value_type));

	if (v) {
		v->type_strindex = otlp_writer__cstring(w, type);
		v->unit_strindex = otlp_writer__cstring(w, unit);
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
	otlp_key_value *kv = otlp_writer__msg_new(w, &COMMON(key_value));

	if (!kv) {
		protobuf_c_message_free_unpacked(MSG(value), NULL);
		return;
	}
	r->attributes[r->n_attributes++] = kv;
	kv->key = otlp_writer__escaped_copy(w, key, strlen(key));
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
	r->attributes = otlp_writer__calloc(w, 6 + nproc, sizeof(*r->attributes));
	if (!r->attributes)
		return;
	if (host->len)
		resource_attribute(w, r, OTLP_HOST_NAME,
				   otlp_writer__string_value(w, host->bytes, host->len));
	resource_attribute(w, r, OTLP_PROCESS_PID, otlp_writer__int_value(w, pid));
	if (exe->len) {
		const unsigned char *base = memrchr(exe->bytes, '/', exe->len);

		base = base ? base + 1 : exe->bytes;
		base_name = (struct sp_string){base, exe->len - (base - exe->bytes)};
		name = &base_name;
	}
	if (name->len)
		resource_attribute(w, r, OTLP_EXECUTABLE_NAME,
				   otlp_writer__string_value(w, name->bytes, name->len));
	if (exe->len)
		resource_attribute(w, r, OTLP_EXECUTABLE_PATH,
				   otlp_writer__string_value(w, exe->bytes, exe->len));
	if (container->len)
		resource_attribute(w, r, OTLP_CONTAINER_ID,
				   otlp_writer__string_value(w, container->bytes, container->len));
	if (pod->len)
		resource_attribute(w, r, OTLP_K8S_POD_UID,
				   otlp_writer__string_value(w, pod->bytes, pod->len));
	for (i = 0; i < ls->count; i++) {
		const struct sp_string *k = symprof__str(w->sp, labels[i].key);
		const struct sp_string *v = symprof__str(w->sp, labels[i].value);
		otlp_key_value *kv;

		if (labels[i].source != LP_SRC_OTEL_PROCESS ||
		    !(kv = otlp_writer__msg_new(w, &COMMON(key_value))))
			continue;
		r->attributes[r->n_attributes++] = kv;
		kv->key = otlp_writer__escaped_copy(w, (const char *)k->bytes, k->len);
		kv->value = otlp_writer__string_value(w, v->bytes, v->len);
	}
}

/* One ResourceProfiles for the samples of pid: samples[order[0..n)]. */
static void resource_add(struct writer *w, __u32 pid, const __u32 *order, size_t n,
			 struct merge *mg)
{
	otlp_resource_profiles *rp = otlp_writer__msg_new(w, &PROF(resource_profiles));
	__u64 period = w->sp->meta.period_ns, total = 0;
	otlp_scope_profiles *sc;
	otlp_profile *p;
	size_t i;

	if (!rp)
		return;
	w->req->resource_profiles[w->req->n_resource_profiles++] = rp;
	rp->resource =
		otlp_writer__msg_new(w, &opentelemetry__proto__resource__v1__resource__descriptor);
	if (rp->resource)
		resource_fill(w, rp->resource, pid, w->sp->samples[order[0]].label_set);
	rp->scope_profiles = otlp_writer__calloc(w, 1, sizeof(*rp->scope_profiles));
	sc = rp->scope_profiles ? otlp_writer__msg_new(w, &PROF(scope_profiles)) : NULL;
	if (!sc)
		return;
	rp->scope_profiles[rp->n_scope_profiles++] = sc;
	sc->scope = otlp_writer__msg_new(w, &COMMON(instrumentation_scope));
	if (sc->scope) {
		sc->scope->name =
			otlp_writer__escaped_copy(w, OTLP_SCOPE_NAME, strlen(OTLP_SCOPE_NAME));
		sc->scope->version =
			otlp_writer__escaped_copy(w, LABELPROF_VERSION, strlen(LABELPROF_VERSION));
	}
	sc->profiles = otlp_writer__calloc(w, 1, sizeof(*sc->profiles));
	p = sc->profiles ? otlp_writer__msg_new(w, &PROF(profile)) : NULL;
	if (!p)
		return;
	sc->profiles[sc->n_profiles++] = p;
	p->sample_type =
		period ? value_type(w, "cpu", "nanoseconds") : value_type(w, "samples", "count");
	p->period_type = value_type(w, "cpu", "nanoseconds");
	p->period = period;
	p->time_unix_nano = w->sp->meta.start_time_unix_ns;
	p->duration_nano = w->sp->meta.duration_ns;
	p->samples = otlp_writer__calloc(w, n, sizeof(*p->samples));
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
	p->profile_id.data = otlp_writer__calloc(w, 1, 16);
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

static void writer_free(struct writer *w)
{
	otlp_writer__dict_free(w);
	if (w->req)
		protobuf_c_message_free_unpacked(MSG(w->req), NULL);
	free(w->buf);
}

static int writer_build(struct writer *w, const struct symprof *sp, const struct output_opts *opts)
{
	struct merge mg = {};
	size_t i, j, groups = 0;
	__u32 *order;

	w->sp = sp;
	w->extra_labels = opts ? opts->extra_labels : 0;
	w->req = otlp_writer__msg_new(w, &OTLP_REQUEST_DESCRIPTOR);
	if (!w->req)
		return w->err;
	if (otlp_writer__dict_new(w))
		return w->err;
	order = otlp_writer__calloc(w, sp->sample_count, sizeof(*order));
	if (w->err)
		goto out;
	/* resources by pid, samples in their order within one */
	for (i = 0; i < sp->sample_count; i++)
		order[i] = i;
	qsort_r(order, sp->sample_count, sizeof(*order), order_cmp, (void *)sp);
	for (i = 0; i < sp->sample_count; i++)
		groups += !i || sp->samples[order[i]].pid != sp->samples[order[i - 1]].pid;
	w->req->resource_profiles =
		otlp_writer__calloc(w, groups, sizeof(*w->req->resource_profiles));
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
		err = otlp_writer__dict_strings(&w);
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
		err = otlp_writer__dict_strings(&w);
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

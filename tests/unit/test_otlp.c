// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * OTLP profiles writer and reader: the encoded request follows the
 * dictionary rules (zero entries at index 0, no duplicates, merged samples,
 * unique attribute keys, every index in range), trace labels become Links,
 * a symprof with hostile label bytes survives write + read exactly (as far
 * as OTLP carries it), the JSON mapping has OTLP's names and encodings, and
 * malformed requests are refused with -EINVAL and a message naming the
 * problem.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <cmocka.h>

#include "format/input.h"
#include "format/otlp.h"
#include "format/fmt.h"
#include "format/output.h"
#include "profile/symprof.h"
#include "profile_fixture.h"

#define MSG(p)	   ((ProtobufCMessage *)(p))

#define TRACE_HEX "4bf92f3577b34da6a3ce929d0e0e4736"
#define SPAN_HEX  "00f067aa0ba902b7"

/* Label sets of the test profile, by what they test. */
enum {
	SET_PLAIN,
	SET_HOSTILE,
	SET_W3C,
	SET_DATADOG,
	SET_BAD_TRACE,
	SET_COUNT,
};

static struct symprof *build(__u32 sets[SET_COUNT])
{
	struct symprof *sp = symprof__new();
	struct fixture_ids ids;
	__u32 server;

	fixture_tables(sp, S(sp, "/lib/libc\xff\\.so"), &ids);
	sets[SET_PLAIN] = ids.set_plain;
	sets[SET_HOSTILE] = ids.set_hostile;
	/* a Link's ids read back as the OpenTelemetry thread context's (input_otlp.c) */
	sets[SET_W3C] = symprof__label_set(
		sp,
		(struct sp_label[]){{S(sp, "trace_id"), S(sp, TRACE_HEX), LP_SRC_OTEL_THREAD},
				    {S(sp, "span_id"), S(sp, SPAN_HEX), LP_SRC_OTEL_THREAD},
				    {S(sp, "tenant"), S(sp, "acme"), LP_SRC_CUSTOM_LABELS}},
		3);
	sets[SET_DATADOG] = symprof__label_set(
		sp,
		(struct sp_label[]){
			{S(sp, "span-id"), S(sp, "1234567890123456789"), LP_SRC_CUSTOM_LABELS},
			{S(sp, "root-span-id"), S(sp, "18446744073709551615"),
			 LP_SRC_CUSTOM_LABELS}},
		2);
	/* not canonical: uppercase hex, so the labels stay labels */
	sets[SET_BAD_TRACE] = symprof__label_set(
		sp,
		(struct sp_label[]){{S(sp, "trace_id"), S(sp, "4BF92F3577B34DA6A3CE929D0E0E4736"),
				     LP_SRC_CUSTOM_LABELS},
				    {S(sp, "span_id"), S(sp, SPAN_HEX), LP_SRC_CUSTOM_LABELS}},
		2);

	server = S(sp, "server");
	fixture_sample(sp, 100, 100, server, sets[SET_PLAIN], ids.st_full, 7);
	fixture_sample(sp, 100, 101, server, sets[SET_PLAIN], ids.st_full, 5); /* other tid */
	fixture_sample(sp, 100, 102, S(sp, "srv\xffworker"), sets[SET_HOSTILE], ids.st_short, 3);
	fixture_sample(sp, 100, 101, server, sets[SET_W3C], ids.st_short, 4);
	fixture_sample(sp, 100, 101, server, sets[SET_DATADOG], ids.st_short, 6);
	fixture_sample(sp, 100, 101, server, sets[SET_BAD_TRACE], ids.st_short, 8);
	fixture_sample(sp, 200, 200, S(sp, "batch"), 0, ids.st_nomap, 11);
	fixture_sample(sp, 200, 200, S(sp, "batch"), sets[SET_PLAIN], ids.st_short, 2);
	fixture_sample(sp, 300, 301, 0, 0, 0, 1); /* no process entry, no labels, no stack */
	assert_int_equal(
		symprof__set_process(sp, &(struct sp_process){.pid = 100,
							      .name = S(sp, "app"),
							      .executable = S(sp, "/srv/app")}),
		0);
	assert_int_equal(symprof__set_process(
				 sp, &(struct sp_process){.pid = 200, .name = S(sp, "batch\x80")}),
			 0);
	sp->meta.host_name = S(sp, "host-1");
	assert_int_equal(symprof__error(sp), 0);
	return sp;
}

static otlp_request *decode(const unsigned char *buf, size_t len)
{
	otlp_request *req =
		(otlp_request *)protobuf_c_message_unpack(&OTLP_REQUEST_DESCRIPTOR, NULL, len, buf);

	assert_non_null(req);
	assert_non_null(req->dictionary);
	return req;
}

static int read_otlp(const void *buf, size_t len, struct symprof **out, char *err, size_t errlen)
{
	struct symprof *sp = symprof__new();
	int ret;

	assert_non_null(sp);
	ret = input__read_otlp(buf, len, sp, err, errlen);
	if (ret)
		symprof__free(sp);
	else
		*out = sp;
	return ret;
}

static struct symprof *read_ok(const void *buf, size_t len)
{
	struct symprof *sp = NULL;
	char err[256];
	int ret = read_otlp(buf, len, &sp, err, sizeof(err));

	if (ret)
		fail_msg("input__read_otlp: %d: %s", ret, err);
	return sp;
}

/* ---- the dictionary rules, on the decoded bytes -------------------------- */

/* Every entry of a table packs to distinct bytes, and entry 0 to none at all. */
static void check_table(ProtobufCMessage **entries, size_t n, const char *name)
{
	unsigned char **enc = calloc(n + 1, sizeof(*enc));
	size_t *len = calloc(n + 1, sizeof(*len)), i, j;

	assert_non_null(enc);
	assert_non_null(len);
	if (!n)
		fail_msg("%s is empty: it needs its zero entry", name);
	for (i = 0; i < n; i++) {
		len[i] = protobuf_c_message_get_packed_size(entries[i]);
		enc[i] = malloc(len[i] + 1);
		assert_non_null(enc[i]);
		protobuf_c_message_pack(entries[i], enc[i]);
	}
	if (len[0])
		fail_msg("%s[0] is not the zero value", name);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (len[i] == len[j] && !memcmp(enc[i], enc[j], len[i]))
				fail_msg("%s[%zu] and [%zu] are equal", name, i, j);
	for (i = 0; i < n; i++)
		free(enc[i]);
	free(enc);
	free(len);
}

static bool valid_utf8(const char *s)
{
	size_t n = strlen(s), i = 0, k;

	while (i < n) {
		k = output__utf8_len((const unsigned char *)s + i, n - i);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

static void check_index(int32_t i, size_t n, const char *table)
{
	if (i < 0 || (size_t)i >= n)
		fail_msg("index %d outside %s (%zu)", i, table, n);
}

static int int_cmp(const void *a, const void *b)
{
	return *(const int32_t *)a - *(const int32_t *)b;
}

/* A sample's identity: stack, sorted attribute indexes, link. */
static char *identity(const otlp_sample *s)
{
	int32_t attrs[s->n_attribute_indices + 1];
	char *out = NULL;
	size_t len, i;
	FILE *f = open_memstream(&out, &len);

	if (s->n_attribute_indices)
		memcpy(attrs, s->attribute_indices, s->n_attribute_indices * sizeof(*attrs));
	qsort(attrs, s->n_attribute_indices, sizeof(*attrs), int_cmp);
	fprintf(f, "%d|%d|", s->stack_index, s->link_index);
	for (i = 0; i < s->n_attribute_indices; i++)
		fprintf(f, "%d,", attrs[i]);
	fclose(f);
	return out;
}

static void check_rules(const otlp_request *req)
{
	const otlp_dictionary *d = req->dictionary;
	size_t i, j, k, l, m;

	check_table((ProtobufCMessage **)d->mapping_table, d->n_mapping_table, "mapping_table");
	check_table((ProtobufCMessage **)d->location_table, d->n_location_table, "location_table");
	check_table((ProtobufCMessage **)d->function_table, d->n_function_table, "function_table");
	check_table((ProtobufCMessage **)d->link_table, d->n_link_table, "link_table");
	check_table((ProtobufCMessage **)d->attribute_table, d->n_attribute_table,
		    "attribute_table");
	check_table((ProtobufCMessage **)d->stack_table, d->n_stack_table, "stack_table");
	assert_true(d->n_string_table > 0);
	assert_string_equal(d->string_table[0], "");
	for (i = 0; i < d->n_string_table; i++) {
		assert_true(valid_utf8(d->string_table[i]));
		for (j = i + 1; j < d->n_string_table; j++)
			if (!strcmp(d->string_table[i], d->string_table[j]))
				fail_msg("string_table[%zu] and [%zu] are equal", i, j);
	}
	for (i = 0; i < d->n_mapping_table; i++) {
		check_index(d->mapping_table[i]->filename_strindex, d->n_string_table, "strings");
		for (j = 0; j < d->mapping_table[i]->n_attribute_indices; j++)
			check_index(d->mapping_table[i]->attribute_indices[j], d->n_attribute_table,
				    "attributes");
	}
	for (i = 0; i < d->n_location_table; i++) {
		const otlp_location *loc = d->location_table[i];

		check_index(loc->mapping_index, d->n_mapping_table, "mappings");
		for (j = 0; j < loc->n_lines; j++)
			check_index(loc->lines[j]->function_index, d->n_function_table,
				    "functions");
		for (j = 0; j < loc->n_attribute_indices; j++)
			check_index(loc->attribute_indices[j], d->n_attribute_table, "attributes");
	}
	for (i = 0; i < d->n_function_table; i++) {
		check_index(d->function_table[i]->name_strindex, d->n_string_table, "strings");
		check_index(d->function_table[i]->system_name_strindex, d->n_string_table,
			    "strings");
		check_index(d->function_table[i]->filename_strindex, d->n_string_table, "strings");
	}
	for (i = 0; i < d->n_attribute_table; i++)
		check_index(d->attribute_table[i]->key_strindex, d->n_string_table, "strings");
	for (i = 0; i < d->n_stack_table; i++)
		for (j = 0; j < d->stack_table[i]->n_location_indices; j++)
			check_index(d->stack_table[i]->location_indices[j], d->n_location_table,
				    "locations");
	for (i = 1; i < d->n_link_table; i++) {
		assert_int_equal(d->link_table[i]->trace_id.len, 16);
		assert_int_equal(d->link_table[i]->span_id.len, 8);
	}

	for (i = 0; i < req->n_resource_profiles; i++) {
		const otlp_resource_profiles *rp = req->resource_profiles[i];

		assert_int_equal(rp->n_scope_profiles, 1);
		for (j = 0; j < rp->scope_profiles[0]->n_profiles; j++) {
			const otlp_profile *p = rp->scope_profiles[0]->profiles[j];
			char *ids[p->n_samples + 1];
			unsigned char any = 0;

			assert_int_equal(p->profile_id.len, 16);
			for (k = 0; k < 16; k++)
				any |= p->profile_id.data[k];
			assert_true(any);
			for (k = 0; k < p->n_samples; k++) {
				const otlp_sample *s = p->samples[k];

				check_index(s->stack_index, d->n_stack_table, "stacks");
				check_index(s->link_index, d->n_link_table, "links");
				assert_int_equal(s->n_values, 1);
				for (l = 0; l < s->n_attribute_indices; l++) {
					check_index(s->attribute_indices[l], d->n_attribute_table,
						    "attributes");
					for (m = 0; m < l; m++)
						assert_int_not_equal(
							d->attribute_table[s->attribute_indices[l]]
								->key_strindex,
							d->attribute_table[s->attribute_indices[m]]
								->key_strindex);
				}
				ids[k] = identity(s);
				for (l = 0; l < k; l++)
					if (!strcmp(ids[k], ids[l]))
						fail_msg(
							"samples %zu and %zu are the same identity",
							l, k);
			}
			for (k = 0; k < p->n_samples; k++)
				free(ids[k]);
		}
	}
}

static const char *str(const otlp_request *req, int32_t i)
{
	return req->dictionary->string_table[i];
}

static otlp_profile *profile_of(const otlp_request *req, size_t i)
{
	return req->resource_profiles[i]->scope_profiles[0]->profiles[0];
}

/* The attribute of key among idx as "key=value" text (ints in decimal), or NULL. */
static char *attr_text(const otlp_request *req, const int32_t *idx, size_t n, const char *key)
{
	static char text[256];
	size_t i;

	for (i = 0; i < n; i++) {
		const otlp_attribute *a = req->dictionary->attribute_table[idx[i]];

		if (strcmp(str(req, a->key_strindex), key))
			continue;
		if (a->value->value_case ==
		    OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE)
			snprintf(text, sizeof(text), "%lld", (long long)a->value->int_value);
		else
			snprintf(text, sizeof(text), "%s", a->value->string_value);
		return text;
	}
	return NULL;
}

static const char *resource_attr(const otlp_resource_profiles *rp, const char *key)
{
	static char text[256];
	size_t i;

	for (i = 0; i < rp->resource->n_attributes; i++) {
		const otlp_key_value *kv = rp->resource->attributes[i];

		if (strcmp(kv->key, key))
			continue;
		if (kv->value->value_case ==
		    OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE)
			snprintf(text, sizeof(text), "%lld", (long long)kv->value->int_value);
		else
			snprintf(text, sizeof(text), "%s", kv->value->string_value);
		return text;
	}
	return NULL;
}

static void test_dictionary_rules(void **state)
{
	static const unsigned int extras[] = {0, OUTPUT_LABEL_TID | OUTPUT_LABEL_THREAD_NAME,
					      OUTPUT_LABEL_PID | OUTPUT_LABEL_COMM};
	__u32 sets[SET_COUNT];
	struct symprof *sp = build(sets);
	size_t i, len;

	for (i = 0; i < sizeof(extras) / sizeof(extras[0]); i++) {
		unsigned char *buf = fixture_write(output__write_otlp, sp, extras[i], &len);
		otlp_request *req = decode(buf, len);

		check_rules(req);
		protobuf_c_message_free_unpacked(MSG(req), NULL);
		free(buf);
	}
	symprof__free(sp);
}

/* Resources, scope, profile fields and merged values, as docs/design.md section 5 says. */
static void test_contents(void **state)
{
	__u32 sets[SET_COUNT];
	struct symprof *sp = build(sets);
	const otlp_resource_profiles *rp;
	const otlp_profile *p;
	otlp_request *req;
	unsigned char *buf;
	size_t len, i;
	__s64 sum = 0;

	buf = fixture_write(output__write_otlp, sp, 0, &len);
	req = decode(buf, len);
	assert_int_equal(req->n_resource_profiles, 3);
	rp = req->resource_profiles[0];
	assert_string_equal(resource_attr(rp, "process.pid"), "100");
	assert_string_equal(resource_attr(rp, "host.name"), "host-1");
	assert_string_equal(resource_attr(rp, "process.executable.name"), "app");
	assert_string_equal(resource_attr(rp, "process.executable.path"), "/srv/app");
	assert_string_equal(rp->scope_profiles[0]->scope->name, "labelprof");
	assert_string_equal(resource_attr(req->resource_profiles[1], "process.executable.name"),
			    "batch\\x80");
	assert_null(resource_attr(req->resource_profiles[1], "process.executable.path"));
	assert_string_equal(resource_attr(req->resource_profiles[2], "process.pid"), "300");
	assert_null(resource_attr(req->resource_profiles[2], "process.executable.name"));

	p = profile_of(req, 0);
	assert_string_equal(str(req, p->sample_type->type_strindex), "cpu");
	assert_string_equal(str(req, p->sample_type->unit_strindex), "nanoseconds");
	assert_string_equal(str(req, p->period_type->type_strindex), "cpu");
	assert_string_equal(str(req, p->period_type->unit_strindex), "nanoseconds");
	assert_int_equal(p->period, PERIOD);
	assert_int_equal(p->time_unix_nano, 1700000000123456789ull);
	assert_int_equal(p->duration_nano, 5000000000ull);
	/* the two tids of SET_PLAIN on st1 merge without the thread.id attribute */
	assert_int_equal(p->n_samples, 5);
	for (i = 0; i < req->n_resource_profiles; i++) {
		size_t k;

		p = profile_of(req, i);
		for (k = 0; k < p->n_samples; k++) {
			assert_int_equal(p->samples[k]->values[0] % PERIOD, 0);
			sum += p->samples[k]->values[0];
		}
	}
	assert_int_equal(sum, (__s64)(symprof__total(sp) * PERIOD));
	assert_int_equal(profile_of(req, 0)->samples[0]->values[0], 12 * PERIOD);

	/* kernel frames: profile.frame.type, the [kernel.kallsyms] mapping, build ids in hex */
	for (i = 1; i < req->dictionary->n_location_table; i++) {
		const otlp_location *l = req->dictionary->location_table[i];
		const char *type = attr_text(req, l->attribute_indices, l->n_attribute_indices,
					     "profile.frame.type");
		const otlp_mapping *m = req->dictionary->mapping_table[l->mapping_index];

		assert_non_null(type);
		if (!strcmp(type, "kernel")) {
			assert_string_equal(str(req, m->filename_strindex), "[kernel.kallsyms]");
			assert_string_equal(attr_text(req, m->attribute_indices,
						      m->n_attribute_indices,
						      "process.executable.build_id.gnu"),
					    "1234");
		} else if (l->address == 0x400123) {
			assert_string_equal(attr_text(req, m->attribute_indices,
						      m->n_attribute_indices,
						      "process.executable.build_id.gnu"),
					    "deadbeef0001");
			/* inlined: innermost first */
			assert_int_equal(l->n_lines, 2);
			assert_string_equal(
				str(req,
				    req->dictionary->function_table[l->lines[0]->function_index]
					    ->name_strindex),
				"helper\\x5cx41<é\\xff>");
			assert_int_equal(l->lines[0]->line, 5);
			assert_int_equal(l->lines[0]->column, 7);
		}
	}
	protobuf_c_message_free_unpacked(MSG(req), NULL);
	free(buf);
	symprof__free(sp);
}

/* The sample of profile 0 whose value is count periods. */
static const otlp_sample *sample_of(const otlp_request *req, __u64 count)
{
	const otlp_profile *p = profile_of(req, 0);
	size_t i;

	for (i = 0; i < p->n_samples; i++)
		if (p->samples[i]->values[0] == (__s64)(count * PERIOD))
			return p->samples[i];
	fail_msg("no sample of count %llu", (unsigned long long)count);
	return NULL;
}

static void test_links(void **state)
{
	static const unsigned char trace[16] = {0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
						0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36};
	static const unsigned char span[8] = {0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7};
	/* 18446744073709551615 and 1234567890123456789 */
	static const unsigned char dd_trace[16] = {0,	 0,    0,    0,	   0,	 0,    0,    0,
						   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const unsigned char dd_span[8] = {0x11, 0x22, 0x10, 0xf4, 0x7d, 0xe9, 0x81, 0x15};
	__u32 sets[SET_COUNT];
	struct symprof *sp = build(sets);
	const otlp_sample *s;
	const otlp_link *l;
	otlp_request *req;
	unsigned char *buf;
	size_t len;

	buf = fixture_write(output__write_otlp, sp, 0, &len);
	req = decode(buf, len);
	/* W3C: the Link replaces the two labels */
	s = sample_of(req, 4);
	assert_int_not_equal(s->link_index, 0);
	l = req->dictionary->link_table[s->link_index];
	assert_memory_equal(l->trace_id.data, trace, 16);
	assert_memory_equal(l->span_id.data, span, 8);
	assert_int_equal(s->n_attribute_indices, 1);
	assert_null(attr_text(req, s->attribute_indices, 1, "trace_id"));
	assert_string_equal(attr_text(req, s->attribute_indices, 1, "tenant"), "acme");
	/* Datadog: root-span-id in the low half of trace_id, and the labels stay */
	s = sample_of(req, 6);
	l = req->dictionary->link_table[s->link_index];
	assert_memory_equal(l->trace_id.data, dd_trace, 16);
	assert_memory_equal(l->span_id.data, dd_span, 8);
	assert_int_equal(s->n_attribute_indices, 2);
	assert_string_equal(attr_text(req, s->attribute_indices, 2, "span-id"),
			    "1234567890123456789");
	/* not canonical hex: no Link */
	s = sample_of(req, 8);
	assert_int_equal(s->link_index, 0);
	assert_int_equal(s->n_attribute_indices, 2);
	/* without trace labels, none */
	assert_int_equal(sample_of(req, 12)->link_index, 0);
	protobuf_c_message_free_unpacked(MSG(req), NULL);
	free(buf);
	symprof__free(sp);
}

/* ---- round trip ----------------------------------------------------------- */

static void put_location(FILE *f, const struct symprof *sp, __u32 id)
{
	const struct sp_location *l = &sp->locations[id];
	const struct sp_mapping *m = &sp->mappings[l->mapping];
	size_t j;

	fprintf(f, "(%llx %d %u %llx ", (unsigned long long)l->address, l->kernel, l->kind,
		(unsigned long long)l->module_offset);
	fixture_put_str(f, sp, m->file);
	fixture_put_str(f, sp, m->build_id);
	fprintf(f, " %llx-%llx@%llx %d", (unsigned long long)m->start, (unsigned long long)m->limit,
		(unsigned long long)m->file_offset, m->kernel);
	for (j = 0; j < l->line_count; j++) {
		const struct sp_line *ln = &sp->lines[l->first_line + j];
		const struct sp_function *fn = &sp->functions[ln->function];

		fprintf(f, " ");
		fixture_put_str(f, sp, fn->name);
		fixture_put_str(f, sp, fn->system_name);
		fixture_put_str(f, sp, fn->file);
		fprintf(f, ":%u:%u:%u", fn->start_line, ln->line, ln->column);
	}
	fprintf(f, ")");
}

/* Samples as sorted text lines that do not depend on ids; tid and comm if asked. */
static char *describe(const struct symprof *sp, bool threads)
{
	char *out = NULL, **lines = calloc(sp->sample_count + 1, sizeof(char *));
	size_t len, i, j;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(lines);
	fprintf(f, "meta %llu %llu %llu %llu ", (unsigned long long)sp->meta.frequency_hz,
		(unsigned long long)sp->meta.period_ns,
		(unsigned long long)sp->meta.start_time_unix_ns,
		(unsigned long long)sp->meta.duration_ns);
	fixture_put_str(f, sp, sp->meta.host_name);
	fprintf(f, "\n");
	for (i = 0; i < sp->process_count; i++) {
		fprintf(f, "process %u ", sp->processes[i].pid);
		fixture_put_str(f, sp, sp->processes[i].name);
		fixture_put_str(f, sp, sp->processes[i].executable);
		fprintf(f, "\n");
	}
	for (i = 0; i < sp->sample_count; i++) {
		const struct sp_sample *s = &sp->samples[i];
		const struct sp_range *ls = &sp->label_sets[s->label_set];
		const struct sp_range *st = &sp->stacks[s->stack];
		FILE *g = open_memstream(&lines[i], &len);

		fprintf(g, "sample %u %u ", s->pid, threads ? s->tid : 0);
		fixture_put_str(g, sp, threads ? s->comm : 0);
		fprintf(g, " {");
		for (j = 0; j < ls->count; j++) {
			fixture_put_str(g, sp, sp->labels[ls->first + j].key);
			fprintf(g, "=");
			fixture_put_str(g, sp, sp->labels[ls->first + j].value);
			fprintf(g, "/%s", fmt__label_source_name(sp->labels[ls->first + j].source));
			fprintf(g, ",");
		}
		fprintf(g, "} [");
		for (j = 0; j < st->count; j++)
			put_location(g, sp, sp->stack_locations[st->first + j]);
		fprintf(g, "] %llu\n", (unsigned long long)s->count);
		fclose(g);
	}
	qsort(lines, sp->sample_count, sizeof(*lines), fixture_str_cmp);
	/* equal lines (samples that differ only in what is not shown) add up */
	for (i = 0; i < sp->sample_count; i = j) {
		unsigned long long count = 0;
		char *c;

		for (j = i; j < sp->sample_count; j++) {
			c = strrchr(lines[j], ' ');
			if (j > i && (c - lines[j] != strrchr(lines[i], ' ') - lines[i] ||
				      strncmp(lines[i], lines[j], c - lines[j])))
				break;
			count += strtoull(c + 1, NULL, 10);
		}
		c = strrchr(lines[i], ' ');
		fprintf(f, "%.*s %llu\n", (int)(c - lines[i]), lines[i], count);
	}
	for (i = 0; i < sp->sample_count; i++)
		free(lines[i]);
	free(lines);
	fclose(f);
	return out;
}

/* Fails at the first line where got and want differ. */
static void same_text(const char *got, const char *want)
{
	const char *g = got, *w = want;
	size_t line = 1;

	for (; *g && *g == *w; g++, w++)
		if (*g == '\n') {
			line++;
			got = g + 1;
			want = w + 1;
		}
	if (*g || *w)
		fail_msg("line %zu differs:\n got: %.*s\nwant: %.*s", line, (int)strcspn(got, "\n"),
			 got, (int)strcspn(want, "\n"), want);
}

/* Everything OTLP carries comes back exactly, twice over. */
static void test_round_trip(void **state)
{
	static const unsigned int extras[] = {0, OUTPUT_LABEL_TID | OUTPUT_LABEL_THREAD_NAME};
	__u32 sets[SET_COUNT];
	struct symprof *sp = build(sets), *back, *again;
	size_t i, len;

	for (i = 0; i < 2; i++) {
		bool threads = extras[i];
		unsigned char *buf = fixture_write(output__write_otlp, sp, extras[i], &len);
		char *want = describe(sp, threads), *got;

		back = read_ok(buf, len);
		got = describe(back, threads);
		same_text(got, want);
		assert_int_equal(symprof__total(back), symprof__total(sp));
		free(buf);
		free(got);
		buf = fixture_write(output__write_otlp, back, extras[i], &len);
		again = read_ok(buf, len);
		got = describe(again, threads);
		same_text(got, want);
		free(got);
		free(want);
		free(buf);
		symprof__free(again);
		symprof__free(back);
	}
	symprof__free(sp);
}

/* Writes, gzips, reads: the reader takes gzip too. */
static void test_gzip(void **state)
{
	__u32 sets[SET_COUNT];
	struct symprof *sp = build(sets), *back;
	unsigned char *buf, *gz;
	size_t len, gz_len;
	char *want, *got;

	buf = fixture_write(output__write_otlp, sp, 0, &len);
	gz = fixture_gzip(buf, len, &gz_len);
	back = read_ok(gz, gz_len);
	want = describe(sp, false);
	got = describe(back, false);
	same_text(got, want);
	free(want);
	free(got);
	symprof__free(back);
	/* cut short */
	{
		struct symprof *none = NULL;
		char err[256];

		assert_int_equal(read_otlp(gz, gz_len / 2, &none, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "gzip"));
	}
	free(gz);
	free(buf);
	symprof__free(sp);
}

/* Kernel frames in no mapping get the kernel's; samples without a period count. */
static void test_kernel_and_counts(void **state)
{
	struct symprof *sp = symprof__new(), *back;
	struct sp_location loc = {.kernel = true,
				  .address = 0xffffffff81000000ull,
				  .module_offset = SP_UNKNOWN,
				  .function_offset = SP_UNKNOWN};
	__u32 id = symprof__location(sp, &loc, NULL, 0), st = symprof__stack(sp, &id, 1);
	otlp_request *req;
	unsigned char *buf;
	size_t len;

	fixture_sample(sp, 1, 1, 0, 0, st, 3);
	buf = fixture_write(output__write_otlp, sp, 0, &len);
	req = decode(buf, len);
	check_rules(req);
	assert_int_equal(req->dictionary->n_mapping_table, 2);
	assert_string_equal(str(req, req->dictionary->mapping_table[1]->filename_strindex),
			    "[kernel.kallsyms]");
	assert_string_equal(str(req, profile_of(req, 0)->sample_type->type_strindex), "samples");
	assert_string_equal(str(req, profile_of(req, 0)->sample_type->unit_strindex), "count");
	assert_int_equal(profile_of(req, 0)->samples[0]->values[0], 3);
	back = read_ok(buf, len);
	assert_int_equal(back->sample_count, 1);
	assert_int_equal(back->samples[0].count, 3);
	id = back->stack_locations[back->stacks[back->samples[0].stack].first];
	assert_true(back->locations[id].kernel);
	assert_true(back->mappings[back->locations[id].mapping].kernel);
	protobuf_c_message_free_unpacked(MSG(req), NULL);
	free(buf);
	symprof__free(back);
	symprof__free(sp);
}

/* Custom labels named like the thread attributes win; typed values keep them apart. */
static void test_label_named_thread_id(void **state)
{
	struct symprof *sp = symprof__new(), *back;
	struct sp_label l = {S(sp, "thread.id"), S(sp, "custom"), LP_SRC_CUSTOM_LABELS};
	__u32 set = symprof__label_set(sp, &l, 1);
	unsigned char *buf;
	size_t len;
	otlp_request *req;

	fixture_sample(sp, 1, 42, S(sp, "t"), set, 0, 1);
	buf = fixture_write(output__write_otlp, sp, OUTPUT_LABEL_TID | OUTPUT_LABEL_THREAD_NAME,
			    &len);
	req = decode(buf, len);
	check_rules(req);
	protobuf_c_message_free_unpacked(MSG(req), NULL);
	back = read_ok(buf, len);
	assert_int_equal(back->sample_count, 1);
	assert_int_equal(back->samples[0].tid, 0);
	assert_int_equal(back->label_sets[back->samples[0].label_set].count, 1);
	assert_memory_equal(symprof__str(back, back->labels[0].value)->bytes, "custom", 6);
	assert_memory_equal(symprof__str(back, back->samples[0].comm)->bytes, "t", 1);
	free(buf);
	symprof__free(back);
	symprof__free(sp);
}

static void test_empty(void **state)
{
	struct symprof *sp = symprof__new(), *back;
	otlp_request *req;
	unsigned char *buf;
	size_t len;

	buf = fixture_write(output__write_otlp, sp, 0, &len);
	req = decode(buf, len);
	check_rules(req);
	assert_int_equal(req->n_resource_profiles, 0);
	protobuf_c_message_free_unpacked(MSG(req), NULL);
	back = read_ok(buf, len);
	assert_int_equal(back->sample_count, 0);
	free(buf);
	symprof__free(back);
	symprof__free(sp);
}

/* ---- JSON ----------------------------------------------------------------- */

static void test_json(void **state)
{
	static const char *const want[] = {
		"{\"resourceProfiles\":[{\"resource\":{\"attributes\":[",
		"{\"key\":\"process.pid\",\"value\":{\"intValue\":\"100\"}}",
		"\"scopeProfiles\":[{\"scope\":{\"name\":\"labelprof\"",
		"\"timeUnixNano\":\"1700000000123456789\"",
		"\"durationNano\":\"5000000000\"",
		"\"period\":\"10101010\"",
		"\"traceId\":\"" TRACE_HEX "\",\"spanId\":\"" SPAN_HEX "\"",
		"\"stringTable\":[\"\",",
		"\"mappingTable\":[{},",
		"\"linkTable\":[{},",
		"\"attributeTable\":[{},",
		"\"stackTable\":[{},",
		"\"locationIndices\":[",
		"\"attributeIndices\":[",
		"\"values\":[\"",
		"\"keyStrindex\":",
		"\"stringValue\":\"line\\\\x0anext\\\\x09\\\\x7f\"",
		"\"memoryLimit\":\"18446744073709551615\"",
	};
	__u32 sets[SET_COUNT];
	struct symprof *sp = build(sets);
	char *out = NULL, *p;
	size_t len, i;
	FILE *f = open_memstream(&out, &len);

	assert_int_equal(output__write_otlp_json(f, sp, NULL), 0);
	assert_int_equal(fclose(f), 0);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(out, want[i]))
			fail_msg("no %s in %s", want[i], out);
	/* no snake_case names, one line, a profile id in hex */
	assert_null(strstr(out, "_table"));
	assert_null(strstr(out, "_index"));
	assert_true(strchr(out, '\n') == out + len - 1);
	p = strstr(out, "\"profileId\":\"");
	assert_non_null(p);
	p += strlen("\"profileId\":\"");
	assert_int_equal(strspn(p, "0123456789abcdef"), 32);
	assert_int_equal(p[32], '"');
	free(out);
	symprof__free(sp);
}

static int read_json(const char *text, struct symprof **out, char *err, size_t errlen)
{
	*out = NULL;
	return input__read(text, strlen(text), INPUT_AUTO, out, err, errlen);
}

/* OTLP JSON reads back into what the binary encoding gives, and rewrites the same. */
static void test_json_round_trip(void **state)
{
	__u32 sets[SET_COUNT];
	struct symprof *sp = build(sets), *back = NULL;
	size_t len, len2;
	char err[256] = "",
	     *text = (char *)fixture_write(output__write_otlp_json, sp,
					   OUTPUT_LABEL_TID | OUTPUT_LABEL_THREAD_NAME, &len),
	     *want = describe(sp, true), *got, *again;

	if (read_json(text, &back, err, sizeof(err)))
		fail_msg("reading OTLP JSON: %s", err);
	got = describe(back, true);
	same_text(got, want);
	assert_int_equal(symprof__total(back), symprof__total(sp));
	assert_int_equal(back->meta.period_ns, sp->meta.period_ns);
	assert_int_equal(back->meta.start_time_unix_ns, sp->meta.start_time_unix_ns);
	again = (char *)fixture_write(output__write_otlp_json, back,
				      OUTPUT_LABEL_TID | OUTPUT_LABEL_THREAD_NAME, &len2);
	same_text(again, text);
	free(again);
	free(got);
	free(want);
	free(text);
	symprof__free(back);
	symprof__free(sp);
}

/*
 * A runtime's frames carry its profile.frame.type, native ones "native", and
 * come back of their kind from both encodings.
 */
static void test_runtime_frames(void **state)
{
	static const struct {
		const char *function, *type;
	} want[] = {[FRAME_NATIVE] = {"main", "native"},
		    [FRAME_PYTHON] = {"burn", "cpython"},
		    [FRAME_JAVA] = {"Burn.spin", "jvm"},
		    [FRAME_JS] = {"spin", "v8js"}};
	struct symprof *sp = symprof__new(), *back;
	struct fixture_ids ids;
	__u32 locs[FRAME_JS + 1], kind;
	const otlp_dictionary *d;
	otlp_request *req;
	unsigned char *buf;
	char err[256] = "", *text, *describe_want, *got;
	size_t len, i, found = 0;

	fixture_tables(sp, S(sp, "/lib/libc.so"), &ids);
	fixture_sample(sp, 300, 300, S(sp, "node"), 0, fixture_runtime_stack(sp, &ids, locs), 6);
	buf = fixture_write(output__write_otlp, sp, 0, &len);
	req = decode(buf, len);
	check_rules(req);
	d = req->dictionary;
	for (i = 1; i < d->n_location_table; i++) {
		const otlp_location *l = d->location_table[i];
		const char *name =
			str(req, d->function_table[l->lines[0]->function_index]->name_strindex);

		for (kind = 0; kind < ARRAY_SIZE(want) && strcmp(name, want[kind].function); kind++)
			;
		if (kind == ARRAY_SIZE(want))
			continue;
		assert_string_equal(attr_text(req, l->attribute_indices, l->n_attribute_indices,
					      OTLP_FRAME_TYPE),
				    want[kind].type);
		found++;
	}
	assert_int_equal(found, ARRAY_SIZE(want));

	describe_want = describe(sp, false);
	back = read_ok(buf, len);
	got = describe(back, false);
	same_text(got, describe_want);
	free(got);
	symprof__free(back);

	text = (char *)fixture_write(output__write_otlp_json, sp, 0, &len);
	if (read_json(text, &back, err, sizeof(err)))
		fail_msg("reading OTLP JSON: %s", err);
	got = describe(back, false);
	same_text(got, describe_want);
	free(got);
	free(text);
	free(describe_want);
	symprof__free(back);
	protobuf_c_message_free_unpacked(MSG(req), NULL);
	free(buf);
	symprof__free(sp);
}

/* The mapping's other spellings: .proto names, numbers for int64, strings for int32, nulls. */
static void test_json_spellings(void **state)
{
	static const char doc[] =
		"{\"resource_profiles\":[{\"resource\":{\"attributes\":["
		"{\"key\":\"process.pid\",\"value\":{\"intValue\":42}},"
		"{\"key\":\"process.executable.name\",\"value\":{\"stringValue\":\"app\"}}]},"
		"\"scope_profiles\":[{\"profiles\":[{\"sampleType\":{\"typeStrindex\":\"1\","
		"\"unitStrindex\":2},\"samples\":[{\"stackIndex\":1,\"values\":[\"7\"],"
		"\"attributeIndices\":[1],\"linkIndex\":null}]}]}]}],"
		"\"dictionary\":{\"string_table\":[\"\",\"samples\",\"count\",\"main\",\"tenant\"],"
		"\"functionTable\":[{},{\"nameStrindex\":3}],"
		"\"locationTable\":[{},{\"address\":4096,\"lines\":[{\"functionIndex\":1}]}],"
		"\"stackTable\":[{},{\"locationIndices\":[1]}],"
		"\"attributeTable\":[{},{\"keyStrindex\":4,\"value\":{\"bytesValue\":\"YWNtZQ\"}}],"
		"\"linkTable\":[{},{\"traceId\":\"" TRACE_HEX "\",\"spanId\":\"" SPAN_HEX "\"}],"
		"\"unknownTable\":[1,{\"x\":[]}]}}";
	struct symprof *sp;
	char err[256] = "";
	const struct sp_range *set;

	if (read_json(doc, &sp, err, sizeof(err)))
		fail_msg("reading OTLP JSON: %s", err);
	assert_int_equal(sp->sample_count, 1);
	assert_int_equal(sp->samples[0].count, 7);
	assert_int_equal(sp->samples[0].pid, 42);
	assert_non_null(symprof__process(sp, 42));
	assert_true(sp_string__is(symprof__str(sp, symprof__process(sp, 42)->name), "app"));
	set = &sp->label_sets[sp->samples[0].label_set];
	assert_int_equal(set->count, 1);
	/* bytes are base64 without padding: the attribute's value in hex */
	assert_true(sp_string__is(symprof__str(sp, sp->labels[set->first].value), "61636d65"));
	assert_int_equal(sp->locations[sp->stack_locations[sp->stacks[1].first]].address, 4096);
	symprof__free(sp);
}

static void test_json_refused(void **state)
{
	static const struct {
		const char *doc, *what;
	} cases[] = {
		{"{\"dictionary\":{\"functionTable\":[{},{\"startLine\":\"x\"}]}}",
		 "otlp-json: line 1 column 49: \"start_line\" must be an integer"},
		{"{\"dictionary\":{\"functionTable\":[{},{\"nameStrindex\":2147483648}]}}",
		 "\"name_strindex\" is out of range"},
		{"{\"dictionary\":{\"mappingTable\":[{\"memoryStart\":-1}]}}",
		 "\"memory_start\" is out of range"},
		{"{\"dictionary\":{\"linkTable\":[{\"traceId\":\"xyz\"}]}}",
		 "\"trace_id\" must be hex digits"},
		{"{\"dictionary\":{\"attributeTable\":[{\"value\":{\"bytesValue\":\"a\"}}]}}",
		 "\"bytes_value\" must be base64"},
		{"{\"dictionary\":{\"stackTable\":[{\"locationIndices\":[1,null]}]}}",
		 "null in the array \"location_indices\""},
		{"{\"dictionary\":{\"stringTable\":\"x\"}}",
		 "\"string_table\" must be an array, not a string"},
		{"{\"resourceProfiles\":[]} {}", "data after the end of the document"},
		{"{\"dictionary\":{\"stringTable\":[\"a\"]}}",
		 "otlp-json: string_table[0] is not the empty string"},
		{"{\"dictionary\":{\"linkTable\":[{},{\"traceId\":\"00\"}]}}",
		 "otlp-json: link_table 1: trace_id of 1 bytes"},
	};
	struct symprof *sp;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = 0;
		if (read_json(cases[i].doc, &sp, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, cases[i].what))
			fail_msg("%s: want an error with %s, got: %s", cases[i].doc, cases[i].what,
				 err);
	}
}

/* ---- malformed input ------------------------------------------------------ */

/* A valid request to break: the test profile's, decoded. */
static otlp_request *base_request(unsigned char **buf, size_t *len)
{
	__u32 sets[SET_COUNT];
	struct symprof *sp = build(sets);
	otlp_request *req;

	*buf = fixture_write(output__write_otlp, sp, OUTPUT_LABEL_TID, len);
	req = decode(*buf, *len);
	symprof__free(sp);
	return req;
}

/* Packs req and reads it: the return, with the message in err. */
static int read_request(const otlp_request *req, char *err, size_t errlen)
{
	size_t len = protobuf_c_message_get_packed_size(MSG(req));
	unsigned char *buf = malloc(len + 1);
	struct symprof *sp = NULL;
	int ret;

	assert_non_null(buf);
	protobuf_c_message_pack(MSG(req), buf);
	ret = read_otlp(buf, len, &sp, err, errlen);
	symprof__free(sp);
	free(buf);
	return ret;
}

static void expect_einval(const otlp_request *req, const char *what)
{
	char err[256] = "";
	int ret = read_request(req, err, sizeof(err));

	if (ret != -EINVAL || !strstr(err, what))
		fail_msg("want -EINVAL naming %s, got %d: %s", what, ret, err);
}

static void test_bad_indices(void **state)
{
	unsigned char *buf;
	size_t len;
	otlp_request *req = base_request(&buf, &len);
	otlp_dictionary *d = req->dictionary;
	otlp_sample *s = profile_of(req, 0)->samples[0];
	otlp_location *loc = d->location_table[1];
	char *first;
	int32_t saved;
	char err[256];

	assert_int_equal(read_request(req, err, sizeof(err)), 0);

#define BREAK(field, value, what)                                                                  \
	do {                                                                                       \
		saved = (field);                                                                   \
		(field) = (value);                                                                 \
		expect_einval(req, what);                                                          \
		(field) = saved;                                                                   \
	} while (0)

	BREAK(s->stack_index, d->n_stack_table, "stack_table");
	BREAK(s->stack_index, -1, "stack_table");
	BREAK(s->link_index, d->n_link_table, "link_table");
	BREAK(s->attribute_indices[0], d->n_attribute_table, "attribute_table");
	BREAK(d->stack_table[1]->location_indices[0], d->n_location_table, "location_table");
	BREAK(loc->mapping_index, d->n_mapping_table, "mapping_table");
	BREAK(loc->lines[0]->function_index, d->n_function_table, "function_table");
	BREAK(loc->attribute_indices[0], 1000, "attribute_table");
	BREAK(d->function_table[1]->name_strindex, d->n_string_table, "string_table");
	BREAK(d->mapping_table[1]->filename_strindex, -5, "string_table");
	BREAK(d->attribute_table[1]->key_strindex, d->n_string_table + 7, "string_table");
	BREAK(profile_of(req, 0)->sample_type->unit_strindex, d->n_string_table, "string_table");
#undef BREAK

	/* string_table[0] must be "" */
	first = d->string_table[0];
	d->string_table[0] = "x";
	expect_einval(req, "string_table[0]");
	d->string_table[0] = first;

	/* a 3-byte trace id */
	d->link_table[1]->trace_id.len = 3;
	expect_einval(req, "link_table");
	d->link_table[1]->trace_id.len = 16;

	/* values in nanoseconds without a period */
	profile_of(req, 0)->period = 0;
	expect_einval(req, "period");
	profile_of(req, 0)->period = PERIOD;
	s->values[0] = -1;
	expect_einval(req, "negative");
	s->values[0] = PERIOD;

	assert_int_equal(read_request(req, err, sizeof(err)), 0);
	protobuf_c_message_free_unpacked(MSG(req), NULL);
	free(buf);
}

static void test_bad_encoding(void **state)
{
	static const unsigned char garbage[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01};
	static const unsigned char not_gzip[] = {0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02, 0x03};
	unsigned char *buf;
	size_t len, cut;
	struct symprof *sp = NULL;
	char err[256];
	otlp_request *req = base_request(&buf, &len);

	assert_int_equal(read_otlp(garbage, sizeof(garbage), &sp, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "malformed protobuf"));
	assert_int_equal(read_otlp(not_gzip, sizeof(not_gzip), &sp, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "otlp:"));
	/* every cut of a valid request is refused cleanly, or reads as a valid prefix */
	for (cut = 0; cut < len; cut++) {
		int ret = read_otlp(buf, cut, &sp, err, sizeof(err));

		assert_true(ret == 0 || ret == -EINVAL);
		if (!ret)
			symprof__free(sp);
	}
	/* a tiny error buffer is never overrun */
	assert_int_equal(read_otlp(garbage, sizeof(garbage), &sp, err, 4), -EINVAL);
	assert_int_equal(strlen(err), 3);
	assert_int_equal(read_otlp(garbage, sizeof(garbage), &sp, NULL, 0), -EINVAL);
	protobuf_c_message_free_unpacked(MSG(req), NULL);
	free(buf);
}

/* Another producer's request: counts, string thread.name, typed attributes, no frame types. */
static void test_foreign(void **state)
{
	static char *strings[] = {"",
				  "samples",
				  "count",
				  "cpu",
				  "nanoseconds",
				  "thread.name",
				  "worker",
				  "retries",
				  "flag",
				  "[kernel.kallsyms]",
				  "schedule"};
	otlp_request req =
		OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	otlp_dictionary d =
		OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	otlp_resource_profiles rp =
		OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__RESOURCE_PROFILES__INIT;
	otlp_scope_profiles sc =
		OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SCOPE_PROFILES__INIT;
	otlp_profile p = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILE__INIT;
	otlp_value_type vt = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__VALUE_TYPE__INIT;
	otlp_sample s = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SAMPLE__INIT;
	otlp_attribute a[4] = {
		OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__KEY_VALUE_AND_UNIT__INIT,
		OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__KEY_VALUE_AND_UNIT__INIT,
		OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__KEY_VALUE_AND_UNIT__INIT,
		OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__KEY_VALUE_AND_UNIT__INIT};
	otlp_any_value v[3] = {OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT,
			       OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT,
			       OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT};
	otlp_mapping m[2] = {OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__MAPPING__INIT,
			     OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__MAPPING__INIT};
	otlp_location l[2] = {OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LOCATION__INIT,
			      OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LOCATION__INIT};
	otlp_line line = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINE__INIT;
	otlp_function fn[2] = {OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__FUNCTION__INIT,
			       OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__FUNCTION__INIT};
	otlp_stack st[2] = {OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__STACK__INIT,
			    OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__STACK__INIT};
	otlp_attribute *ap[] = {&a[0], &a[1], &a[2], &a[3]};
	otlp_mapping *mp[] = {&m[0], &m[1]};
	otlp_location *lp[] = {&l[0], &l[1]};
	otlp_line *linep = &line;
	otlp_function *fp[] = {&fn[0], &fn[1]};
	otlp_stack *stp[] = {&st[0], &st[1]};
	int32_t attrs[] = {1, 2, 3}, locs[] = {1};
	int64_t values[] = {5, 2};
	otlp_sample *sp_[] = {&s};
	otlp_profile *pp[] = {&p};
	otlp_scope_profiles *scp[] = {&sc};
	otlp_resource_profiles *rpp[] = {&rp};
	struct symprof *back;
	const struct sp_range *ls;
	unsigned char *buf;
	size_t len;
	__u32 loc;

	d.string_table = strings;
	d.n_string_table = sizeof(strings) / sizeof(strings[0]);
	v[0].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
	v[0].string_value = "worker";
	v[1].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
	v[1].int_value = -3;
	v[2].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE;
	v[2].bool_value = 1;
	a[1].key_strindex = 5;
	a[1].value = &v[0];
	a[2].key_strindex = 7;
	a[2].value = &v[1];
	a[3].key_strindex = 8;
	a[3].value = &v[2];
	d.attribute_table = ap;
	d.n_attribute_table = 4;
	m[1].filename_strindex = 9;
	m[1].memory_limit = UINT64_MAX;
	d.mapping_table = mp;
	d.n_mapping_table = 2;
	fn[1].name_strindex = 10;
	d.function_table = fp;
	d.n_function_table = 2;
	line.function_index = 1;
	l[1].mapping_index = 1;
	l[1].address = 0xffffffff81001000ull;
	l[1].lines = &linep;
	l[1].n_lines = 1;
	d.location_table = lp;
	d.n_location_table = 2;
	st[1].location_indices = locs;
	st[1].n_location_indices = 1;
	d.stack_table = stp;
	d.n_stack_table = 2;
	vt.type_strindex = 1;
	vt.unit_strindex = 2;
	s.stack_index = 1;
	s.attribute_indices = attrs;
	s.n_attribute_indices = 3;
	s.values = values;
	s.n_values = 2;
	p.sample_type = &vt;
	p.samples = sp_;
	p.n_samples = 1;
	sc.profiles = pp;
	sc.n_profiles = 1;
	rp.scope_profiles = scp;
	rp.n_scope_profiles = 1;
	req.resource_profiles = rpp;
	req.n_resource_profiles = 1;
	req.dictionary = &d;

	len = protobuf_c_message_get_packed_size(MSG(&req));
	buf = malloc(len);
	assert_non_null(buf);
	protobuf_c_message_pack(MSG(&req), buf);
	back = read_ok(buf, len);
	assert_int_equal(back->sample_count, 1);
	assert_int_equal(back->samples[0].count, 7);
	assert_int_equal(back->samples[0].pid, 0);
	assert_memory_equal(symprof__str(back, back->samples[0].comm)->bytes, "worker", 6);
	ls = &back->label_sets[back->samples[0].label_set];
	assert_int_equal(ls->count, 2);
	/* sorted by key: flag, retries */
	assert_string_equal((const char *)symprof__str(back, back->labels[ls->first].value)->bytes,
			    "true");
	assert_string_equal(
		(const char *)symprof__str(back, back->labels[ls->first + 1].value)->bytes, "-3");
	loc = back->stack_locations[back->stacks[back->samples[0].stack].first];
	assert_true(back->locations[loc].kernel);
	assert_int_equal(back->locations[loc].module_offset, 0xffffffff81001000ull);
	assert_int_equal(back->meta.period_ns, 0);
	free(buf);
	symprof__free(back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dictionary_rules),
		cmocka_unit_test(test_contents),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_runtime_frames),
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_kernel_and_counts),
		cmocka_unit_test(test_label_named_thread_id),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_json_spellings),
		cmocka_unit_test(test_json_refused),
		cmocka_unit_test(test_bad_indices),
		cmocka_unit_test(test_bad_encoding),
		cmocka_unit_test(test_foreign),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pprof writer and reader: a symprof with hostile label bytes, inlined
 * lines, kernel frames and several processes survives write + read exactly
 * (as far as pprof carries it, see output.h); the file follows pprof's rules
 * (string_table[0] "", unique non-zero ids, valid UTF-8, one value per type);
 * malformed files are refused with -EINVAL and a message naming the problem.
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
#include "format/fmt.h"
#include "format/output.h"
#include "profile/symprof.h"
#include "pprof/profile.pb-c.h"
#include "profile_fixture.h"

typedef Perftools__Profiles__Profile pb_profile;

static struct symprof *build(struct fixture_ids *ids)
{
	struct symprof *sp = symprof__new();
	__u32 set_c;

	fixture_tables(sp, S(sp, "/lib/libc\xff.so"), ids);
	/* custom labels named like the extra labels */
	set_c = symprof__label_set(
		sp,
		(struct sp_label[]){{S(sp, "comm"), S(sp, "custom-comm"), LP_SRC_CUSTOM_LABELS},
				    {S(sp, "pid"), S(sp, "custom-pid"), LP_SRC_CUSTOM_LABELS}},
		2);
	fixture_sample(sp, 100, 100, S(sp, "server"), ids->set_plain, ids->st_full, 7);
	fixture_sample(sp, 100, 101, S(sp, "server"), ids->set_plain, ids->st_full,
		       5); /* other tid */
	fixture_sample(sp, 100, 102, S(sp, "srv\xffworker"), ids->set_hostile, ids->st_short, 3);
	fixture_sample(sp, 200, 200, S(sp, "batch"), 0, ids->st_nomap, 11);
	fixture_sample(sp, 200, 200, S(sp, "batch"), set_c, ids->st_short, 2);
	fixture_sample(sp, 300, 301, 0, 0, 0, 1); /* no name, no labels, no stack */
	assert_int_equal(
		symprof__set_process(sp, &(struct sp_process){.pid = 100, .name = S(sp, "server")}),
		0);
	assert_int_equal(symprof__set_process(
				 sp, &(struct sp_process){.pid = 200, .name = S(sp, "batch\x80")}),
			 0);
	sp->meta.samples_received = 29;
	assert_int_equal(symprof__error(sp), 0);
	return sp;
}

static struct symprof *read_pprof(const void *buf, size_t len)
{
	struct symprof *sp = symprof__new();
	char err[256];
	int ret;

	assert_non_null(sp);
	ret = input__read_pprof(buf, len, sp, err, sizeof(err));
	if (ret)
		fail_msg("input__read_pprof: %d: %s", ret, err);
	return sp;
}

static char *describe_sample(const struct symprof *sp, const struct sp_sample *s)
{
	const struct sp_range *ls = &sp->label_sets[s->label_set];
	const struct sp_range *st = &sp->stacks[s->stack];
	char *out = NULL;
	size_t len, j;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	fprintf(f, "sample %u %u ", s->pid, s->tid);
	fixture_put_str(f, sp, s->comm);
	fprintf(f, " {");
	for (j = 0; j < ls->count; j++) {
		fixture_put_str(f, sp, sp->labels[ls->first + j].key);
		fprintf(f, "=");
		fixture_put_str(f, sp, sp->labels[ls->first + j].value);
		fprintf(f, "/%s", fmt__label_source_name(sp->labels[ls->first + j].source));
		fprintf(f, ",");
	}
	fprintf(f, "} [");
	for (j = 0; j < st->count; j++)
		fprintf(f, "%u,", sp->stack_locations[st->first + j]);
	fprintf(f, "] %llu\n", (unsigned long long)s->count);
	fclose(f);
	return out;
}

/*
 * The profile as text that does not depend on string, stack and label-set
 * ids: meta, then mappings, functions and locations by id (ids the format
 * keeps), processes, and the samples sorted.
 */
static char *describe(const struct symprof *sp)
{
	char *out = NULL, **samples = calloc(sp->sample_count + 1, sizeof(char *));
	size_t len, i, j;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(samples);
	assert_non_null(f);
	fprintf(f, "meta %llu %llu %llu %llu\n", (unsigned long long)sp->meta.frequency_hz,
		(unsigned long long)sp->meta.period_ns,
		(unsigned long long)sp->meta.start_time_unix_ns,
		(unsigned long long)sp->meta.duration_ns);
	for (i = 1; i < sp->mapping_count; i++) {
		const struct sp_mapping *m = &sp->mappings[i];

		fprintf(f, "mapping %zu %llx %llx %llx %d ", i, (unsigned long long)m->start,
			(unsigned long long)m->limit, (unsigned long long)m->file_offset,
			m->kernel);
		fixture_put_str(f, sp, m->file);
		fixture_put_str(f, sp, m->build_id);
		fprintf(f, "\n");
	}
	for (i = 1; i < sp->function_count; i++) {
		const struct sp_function *fn = &sp->functions[i];

		fprintf(f, "function %zu ", i);
		fixture_put_str(f, sp, fn->name);
		fixture_put_str(f, sp, fn->system_name);
		fixture_put_str(f, sp, fn->file);
		fprintf(f, " %u\n", fn->start_line);
	}
	for (i = 1; i < sp->location_count; i++) {
		const struct sp_location *l = &sp->locations[i];

		fprintf(f, "location %zu %u %d %u %llx %llx %llx", i, l->mapping, l->kernel,
			l->kind, (unsigned long long)l->address,
			(unsigned long long)l->module_offset,
			(unsigned long long)l->function_offset);
		for (j = 0; j < l->line_count; j++) {
			const struct sp_line *ln = &sp->lines[l->first_line + j];

			fprintf(f, " %u:%u:%u", ln->function, ln->line, ln->column);
		}
		fprintf(f, "\n");
	}
	for (i = 0; i < sp->process_count; i++) {
		fprintf(f, "process %u ", sp->processes[i].pid);
		fixture_put_str(f, sp, sp->processes[i].name);
		fprintf(f, "\n");
	}
	for (i = 0; i < sp->sample_count; i++)
		samples[i] = describe_sample(sp, &sp->samples[i]);
	qsort(samples, sp->sample_count, sizeof(*samples), fixture_str_cmp);
	for (i = 0; i < sp->sample_count; i++) {
		fputs(samples[i], f);
		free(samples[i]);
	}
	free(samples);
	fclose(f);
	return out;
}

#define ALL_LABELS                                                                                 \
	(OUTPUT_LABEL_PID | OUTPUT_LABEL_TID | OUTPUT_LABEL_COMM | OUTPUT_LABEL_THREAD_NAME)

/* With every extra label, everything pprof carries comes back exactly. */
static void test_round_trip(void **state)
{
	struct fixture_ids ids;
	struct symprof *sp = build(&ids), *back;
	char *want, *got;
	unsigned char *buf;
	size_t len;

	buf = fixture_write(output__write_pprof, sp, ALL_LABELS, &len);
	back = read_pprof(buf, len);
	want = describe(sp);
	got = describe(back);
	assert_string_equal(got, want);
	assert_int_equal(back->process_count, 2);
	/* and again: a profile read back writes the same file */
	free(got);
	free(buf);
	buf = fixture_write(output__write_pprof, back, ALL_LABELS, &len);
	symprof__free(back);
	back = read_pprof(buf, len);
	got = describe(back);
	assert_string_equal(got, want);
	free(want);
	free(got);
	free(buf);
	symprof__free(back);
	symprof__free(sp);
}

/* Without extra labels, samples that differ only in pid, tid or thread name merge. */
static void test_merge_without_labels(void **state)
{
	struct fixture_ids ids;
	struct symprof *sp = build(&ids), *back;
	unsigned char *buf;
	size_t len, i;
	bool merged = false;

	buf = fixture_write(output__write_pprof, sp, 0, &len);
	back = read_pprof(buf, len);
	assert_int_equal(back->sample_count, sp->sample_count - 1);
	assert_int_equal(symprof__total(back), symprof__total(sp));
	assert_int_equal(back->process_count, 0);
	for (i = 0; i < back->sample_count; i++) {
		const struct sp_sample *s = &back->samples[i];

		assert_int_equal(s->pid, 0);
		assert_int_equal(s->tid, 0);
		assert_int_equal(s->comm, 0);
		merged |= s->count == 12;
	}
	assert_true(merged);
	free(buf);
	symprof__free(back);
	symprof__free(sp);
}

static unsigned char *gunzip(const unsigned char *in, size_t len, size_t *out_len)
{
	size_t cap = 1 << 20;
	unsigned char *out = malloc(cap);
	z_stream z = {};

	assert_non_null(out);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}

static bool pb_str_is(const pb_profile *p, int64_t idx, const char *s)
{
	assert_true(idx >= 0 && (size_t)idx < p->n_string_table);
	return p->string_table[idx].len == strlen(s) &&
	       !memcmp(p->string_table[idx].data, s, strlen(s));
}

static bool has_string(const pb_profile *p, const char *s)
{
	size_t i;

	for (i = 0; i < p->n_string_table; i++)
		if (pb_str_is(p, i, s))
			return true;
	return false;
}

/* The file itself: pprof's rules, the escaping, the labels and flags. */
static void test_file_contents(void **state)
{
	struct fixture_ids ids;
	struct symprof *sp = build(&ids);
	unsigned char *gz, *raw;
	size_t gz_len, raw_len, i, j;
	pb_profile *p;
	bool pid_label = false;

	gz = fixture_write(output__write_pprof, sp, ALL_LABELS, &gz_len);
	assert_true(gz_len > 2 && gz[0] == 0x1f && gz[1] == 0x8b);
	raw = gunzip(gz, gz_len, &raw_len);
	p = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	assert_non_null(p);

	assert_true(p->n_string_table > 1);
	assert_int_equal(p->string_table[0].len, 0);
	for (i = 0; i < p->n_string_table; i++) {
		const ProtobufCBinaryData *s = &p->string_table[i];
		size_t n;

		for (j = 0; j < s->len; j += n) {
			n = output__utf8_len(s->data + j, s->len - j);
			assert_true(n > 0);
			assert_true(s->data[j] >= 0x20 && s->data[j] != 0x7f);
		}
		for (j = 0; j < i; j++) /* interned */
			assert_false(s->len == p->string_table[j].len &&
				     !memcmp(s->data, p->string_table[j].data, s->len));
	}
	assert_true(has_string(p, "\\xff\\xfe\\x00v"));
	assert_true(has_string(p, "bin\\x00key"));
	assert_true(has_string(p, "a\\x5cx41\\x5c"));
	assert_true(has_string(p, "значение 🚀"));
	assert_true(has_string(p, "line\\x0anext\\x09\\x7f"));
	assert_true(has_string(p, "helper\\x5cx41<\xc3\xa9\\xff>"));
	assert_true(has_string(p, "labelprof extra labels: pid,tid,comm,thread_name"));

	assert_int_equal(p->n_sample_type, 2);
	assert_true(pb_str_is(p, p->sample_type[0]->type, "samples"));
	assert_true(pb_str_is(p, p->sample_type[0]->unit, "count"));
	assert_true(pb_str_is(p, p->sample_type[1]->type, "cpu"));
	assert_true(pb_str_is(p, p->sample_type[1]->unit, "nanoseconds"));
	assert_non_null(p->period_type);
	assert_true(pb_str_is(p, p->period_type->type, "cpu"));
	assert_true(pb_str_is(p, p->period_type->unit, "nanoseconds"));
	assert_int_equal(p->period, PERIOD);
	assert_int_equal(p->time_nanos, 1700000000123456789ll);
	assert_int_equal(p->duration_nanos, 5000000000ll);

	assert_int_equal(p->n_mapping, 3);
	for (i = 0; i < p->n_mapping; i++)
		assert_int_equal(p->mapping[i]->id, i + 1);
	assert_true(pb_str_is(p, p->mapping[ids.exe - 1]->build_id, "deadbeef0001"));
	assert_true(pb_str_is(p, p->mapping[ids.kernel - 1]->filename, "[kernel.kallsyms]"));
	assert_true(pb_str_is(p, p->mapping[ids.libc - 1]->filename, "/lib/libc\\xff.so"));
	assert_true(p->mapping[ids.exe - 1]->has_functions);
	assert_true(p->mapping[ids.exe - 1]->has_filenames);
	assert_true(p->mapping[ids.exe - 1]->has_line_numbers);
	assert_true(p->mapping[ids.exe - 1]->has_inline_frames);
	assert_true(p->mapping[ids.libc - 1]->has_functions);
	assert_false(p->mapping[ids.libc - 1]->has_line_numbers);
	assert_false(p->mapping[ids.libc - 1]->has_inline_frames);
	for (i = 0; i < p->n_location; i++)
		assert_int_equal(p->location[i]->id, i + 1);
	for (i = 0; i < p->n_function; i++)
		assert_int_equal(p->function[i]->id, i + 1);
	assert_int_equal(p->location[ids.loc_inlined - 1]->n_line, 2);
	/* the frameless sample's stand-in frame comes last */
	assert_int_equal(p->n_location, sp->location_count);
	assert_int_equal(p->n_function, sp->function_count);
	assert_int_equal(p->location[p->n_location - 1]->address, 0);
	assert_int_equal(p->location[p->n_location - 1]->mapping_id, 0);
	assert_int_equal(p->location[p->n_location - 1]->line[0]->function_id, p->n_function);
	assert_true(pb_str_is(p, p->function[p->n_function - 1]->name, OUTPUT_PPROF_NO_STACK));

	assert_int_equal(p->n_sample, sp->sample_count);
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		assert_int_equal(s->n_value, 2);
		assert_int_equal(s->value[1], s->value[0] * (int64_t)PERIOD);
		for (j = 0; j < s->n_label; j++) {
			const Perftools__Profiles__Label *l = s->label[j];

			if (pb_str_is(p, l->key, "pid") && !l->str) {
				assert_int_equal(l->num, s->label[0]->num);
				assert_int_equal(l->num_unit, 0);
				pid_label = true;
			}
		}
	}
	assert_true(pid_label);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	symprof__free(sp);
}

/*
 * Python frames (no mapping, tokens for addresses above the kernel's half) are
 * on a "[python]" mapping of their own over their tokens, and come back as
 * Python frames, not kernel ones.
 */
static void test_python_frames(void **state)
{
	struct fixture_ids ids;
	struct symprof *sp = build(&ids), *back;
	struct sp_function fn = {.name = S(sp, "burn"), .file = S(sp, "/srv/pyburn.py")};
	struct sp_line line = {.function = symprof__function(sp, &fn), .line = 7};
	struct sp_location loc = {.kind = FRAME_PYTHON,
				  .address = 0xb000000000000002ull,
				  .module_offset = SP_UNKNOWN,
				  .function_offset = SP_UNKNOWN};
	__u32 frames[3], python;
	unsigned char *gz, *raw;
	size_t gz_len, raw_len, i;
	char *want, *got;
	pb_profile *p;

	frames[0] = symprof__location(sp, &loc, &line, 1);
	line.line = 3;
	loc.address = 0xb000000000000005ull;
	frames[1] = symprof__location(sp, &loc, &line, 1);
	frames[2] = ids.loc_main;
	fixture_sample(sp, 100, 100, S(sp, "server"), 0, symprof__stack(sp, frames, 3), 4);

	gz = fixture_write(output__write_pprof, sp, ALL_LABELS, &gz_len);
	raw = gunzip(gz, gz_len, &raw_len);
	p = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	assert_non_null(p);
	python = sp->mapping_count;
	assert_int_equal(p->n_mapping, python);
	assert_int_equal(p->mapping[python - 1]->id, python);
	assert_true(pb_str_is(p, p->mapping[python - 1]->filename, "[python]"));
	assert_int_equal(p->mapping[python - 1]->memory_start, 0xb000000000000002ull);
	assert_int_equal(p->mapping[python - 1]->memory_limit, 0xb000000000000006ull);
	assert_true(p->mapping[python - 1]->has_functions);
	assert_true(p->mapping[python - 1]->has_filenames);
	assert_true(p->mapping[python - 1]->has_line_numbers);
	for (i = 0; i < 2; i++)
		assert_int_equal(p->location[frames[i] - 1]->mapping_id, python);
	assert_int_equal(p->location[ids.loc_main - 1]->mapping_id, ids.exe);

	back = read_pprof(gz, gz_len);
	assert_int_equal(back->locations[frames[0]].kind, FRAME_PYTHON);
	assert_false(back->locations[frames[0]].kernel);
	assert_int_equal(back->locations[frames[0]].mapping, 0);
	want = describe(sp);
	got = describe(back);
	assert_string_equal(got, want);
	free(want);
	free(got);
	symprof__free(back);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	symprof__free(sp);
}

/*
 * Python, Java and JavaScript frames are each on a mapping of their own,
 * named by their kind, and come back as frames of that kind.
 */
static void test_runtime_frames(void **state)
{
	static const char *const names[] = {
		[FRAME_PYTHON] = "[python]", [FRAME_JAVA] = "[java]", [FRAME_JS] = "[js]"};
	struct fixture_ids ids;
	struct symprof *sp = build(&ids), *back;
	__u32 locs[FRAME_JS + 1], kind;
	unsigned char *gz, *raw;
	size_t gz_len, raw_len;
	char *want, *got;
	pb_profile *p;

	fixture_sample(sp, 100, 100, S(sp, "server"), 0, fixture_runtime_stack(sp, &ids, locs), 6);
	gz = fixture_write(output__write_pprof, sp, ALL_LABELS, &gz_len);
	raw = gunzip(gz, gz_len, &raw_len);
	p = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	assert_non_null(p);
	/* the file's mappings, then one per runtime */
	assert_int_equal(p->n_mapping, sp->mapping_count - 1 + 3);
	back = read_pprof(gz, gz_len);
	for (kind = FRAME_PYTHON; kind <= FRAME_JS; kind++) {
		const Perftools__Profiles__Location *pl = p->location[locs[kind] - 1];
		const Perftools__Profiles__Mapping *pm;

		assert_in_range(pl->mapping_id, sp->mapping_count, p->n_mapping);
		pm = p->mapping[pl->mapping_id - 1];
		assert_true(pb_str_is(p, pm->filename, names[kind]));
		assert_int_equal(pm->memory_start, sp->locations[locs[kind]].address);
		assert_int_equal(back->locations[locs[kind]].kind, kind);
		assert_false(back->locations[locs[kind]].kernel);
		assert_int_equal(back->locations[locs[kind]].mapping, 0);
	}
	want = describe(sp);
	got = describe(back);
	assert_string_equal(got, want);
	free(want);
	free(got);
	symprof__free(back);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	symprof__free(sp);
}

/* ---- malformed and foreign profiles, built message by message ---- */

static const char *const base_strings[] = {"",	  "samples", "count", "f",    "cpu", "nanoseconds",
					   "pid", "comm",    "tid",   "bytes"};

struct pb {
	pb_profile p;
	ProtobufCBinaryData strings[16];
	Perftools__Profiles__ValueType vt[2], *vtp[2], period_type;
	Perftools__Profiles__Mapping m[2], *mp[2];
	Perftools__Profiles__Function fn, *fnp;
	Perftools__Profiles__Line line, *linep;
	Perftools__Profiles__Location loc[2], *locp[2];
	Perftools__Profiles__Label label[2], *labelp[2];
	Perftools__Profiles__Sample sample, *samplep;
	uint64_t location_ids[1];
	int64_t values[2];
};

/* A valid profile: one sample of count 3 in function f, mapping 1. */
static void pb_init(struct pb *b)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	perftools__profiles__profile__init(&b->p);
	for (i = 0; i < sizeof(base_strings) / sizeof(base_strings[0]); i++)
		b->strings[i] =
			(ProtobufCBinaryData){strlen(base_strings[i]), (uint8_t *)base_strings[i]};
	b->p.n_string_table = i;
	b->p.string_table = b->strings;
	perftools__profiles__value_type__init(&b->vt[0]);
	b->vt[0].type = 1;
	b->vt[0].unit = 2;
	b->vtp[0] = &b->vt[0];
	b->p.n_sample_type = 1;
	b->p.sample_type = b->vtp;
	perftools__profiles__mapping__init(&b->m[0]);
	b->m[0].id = 1;
	b->m[0].memory_start = 0x1000;
	b->m[0].memory_limit = 0x2000;
	b->mp[0] = &b->m[0];
	b->p.n_mapping = 1;
	b->p.mapping = b->mp;
	perftools__profiles__function__init(&b->fn);
	b->fn.id = 1;
	b->fn.name = 3;
	b->fnp = &b->fn;
	b->p.n_function = 1;
	b->p.function = &b->fnp;
	perftools__profiles__line__init(&b->line);
	b->line.function_id = 1;
	b->line.line = 4;
	b->linep = &b->line;
	perftools__profiles__location__init(&b->loc[0]);
	b->loc[0].id = 1;
	b->loc[0].mapping_id = 1;
	b->loc[0].address = 0x1234;
	b->loc[0].n_line = 1;
	b->loc[0].line = &b->linep;
	b->locp[0] = &b->loc[0];
	b->p.n_location = 1;
	b->p.location = b->locp;
	perftools__profiles__sample__init(&b->sample);
	b->location_ids[0] = 1;
	b->sample.n_location_id = 1;
	b->sample.location_id = b->location_ids;
	b->values[0] = 3;
	b->values[1] = 3 * 10000000;
	b->sample.n_value = 1;
	b->sample.value = b->values;
	for (i = 0; i < 2; i++) {
		perftools__profiles__label__init(&b->label[i]);
		b->labelp[i] = &b->label[i];
	}
	b->sample.label = b->labelp;
	b->samplep = &b->sample;
	b->p.n_sample = 1;
	b->p.sample = &b->samplep;
}

static unsigned char *pb_pack(const struct pb *b, size_t *len)
{
	unsigned char *buf;

	*len = perftools__profiles__profile__get_packed_size(&b->p);
	buf = malloc(*len + 1);
	assert_non_null(buf);
	assert_int_equal(perftools__profiles__profile__pack(&b->p, buf), *len);
	return buf;
}

/* Reading buf fails with -EINVAL and a message containing want. */
static void expect_invalid(const void *buf, size_t len, const char *want)
{
	struct symprof *sp = symprof__new();
	char err[256] = "unset";
	int ret;

	assert_non_null(sp);
	ret = input__read_pprof(buf, len, sp, err, sizeof(err));
	if (ret != -EINVAL || !strstr(err, want))
		fail_msg("got %d \"%s\", want -EINVAL \"%s\"", ret, err, want);
	symprof__free(sp);
}

static void expect_pb_invalid(const struct pb *b, const char *want)
{
	size_t len;
	unsigned char *buf = pb_pack(b, &len);

	expect_invalid(buf, len, want);
	free(buf);
}

static void test_base_is_valid(void **state)
{
	struct pb b;
	unsigned char *buf;
	struct symprof *sp;
	size_t len;

	pb_init(&b);
	buf = pb_pack(&b, &len);
	sp = read_pprof(buf, len);
	assert_int_equal(sp->sample_count, 1);
	assert_int_equal(sp->samples[0].count, 3);
	free(buf);
	symprof__free(sp);
}

static void test_bad_references(void **state)
{
	struct pb b;

	pb_init(&b);
	b.loc[0].mapping_id = 9;
	expect_pb_invalid(&b, "location 1: mapping_id 9 does not exist");
	pb_init(&b);
	b.line.function_id = 9;
	expect_pb_invalid(&b, "location 1: line 0: function_id 9 does not exist");
	pb_init(&b);
	b.line.function_id = 0;
	expect_pb_invalid(&b, "function_id 0 does not exist");
	pb_init(&b);
	b.location_ids[0] = 9;
	expect_pb_invalid(&b, "sample 0: location_id 9 does not exist");
	pb_init(&b);
	b.fn.name = 99;
	expect_pb_invalid(&b, "function name: string index 99 out of range");
	pb_init(&b);
	b.m[0].filename = -1;
	expect_pb_invalid(&b, "mapping filename: string index -1 out of range");
	pb_init(&b);
	b.sample.n_label = 1;
	b.label[0].key = 50;
	expect_pb_invalid(&b, "label key: string index 50 out of range");
	pb_init(&b);
	b.sample.n_label = 1;
	b.label[0].key = 6;
	b.label[0].str = 10;
	expect_pb_invalid(&b, "label str: string index 10 out of range");
	pb_init(&b);
	b.vt[0].unit = 77;
	expect_pb_invalid(&b, "sample_type unit: string index 77");
	pb_init(&b);
	b.p.n_comment = 1;
	b.p.comment = (int64_t[]){12};
	expect_pb_invalid(&b, "comment: string index 12");
}

static void test_bad_tables(void **state)
{
	struct pb b;

	pb_init(&b);
	b.loc[1] = b.loc[0];
	b.locp[1] = &b.loc[1];
	b.p.n_location = 2;
	expect_pb_invalid(&b, "two locations with id 1");
	pb_init(&b);
	b.m[0].id = 0;
	b.loc[0].mapping_id = 0;
	expect_pb_invalid(&b, "mapping with id 0");
	pb_init(&b);
	b.sample.n_value = 2;
	expect_pb_invalid(&b, "sample 0 has 2 values for 1 sample types");
	pb_init(&b);
	b.values[0] = -1;
	expect_pb_invalid(&b, "sample 0: negative value -1");
	pb_init(&b);
	b.strings[0] = b.strings[3];
	expect_pb_invalid(&b, "string_table[0] is not \"\"");
	pb_init(&b);
	b.p.n_string_table = 0;
	expect_pb_invalid(&b, "string_table is empty");
	pb_init(&b);
	b.p.n_sample_type = 0;
	b.sample.n_value = 0;
	expect_pb_invalid(&b, "not a CPU profile");
	pb_init(&b);
	b.line.line = -1;
	expect_pb_invalid(&b, "line of location 1: value -1 out of range");
	pb_init(&b);
	b.fn.start_line = 1ll << 32;
	expect_pb_invalid(&b, "start_line of function 1: value 4294967296 out of range");
	pb_init(&b);
	b.p.duration_nanos = -5;
	expect_pb_invalid(&b, "negative period, time_nanos or duration_nanos");
	pb_init(&b);
	b.sample.n_label = 1;
	b.label[0].key = 6;
	b.label[0].num = -5;
	expect_pb_invalid(&b, "sample 0: pid -5 out of range");
}

static void test_bad_encoding(void **state)
{
	static const unsigned char bad_method[] = {0x1f, 0x8b, 0x07, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3};
	static const unsigned char not_pb[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2};
	struct fixture_ids ids;
	struct symprof *sp = build(&ids), *back;
	unsigned char *gz, *raw, *two, *a, *c;
	size_t gz_len, raw_len, a_len, c_len;

	gz = fixture_write(output__write_pprof, sp, ALL_LABELS, &gz_len);
	expect_invalid(bad_method, sizeof(bad_method), "bad gzip data");
	expect_invalid(gz, gz_len / 2, "truncated gzip stream");
	expect_invalid(gz, 2, "truncated gzip stream");
	expect_invalid(not_pb, sizeof(not_pb), "not a valid Profile message");
	raw = gunzip(gz, gz_len, &raw_len);
	expect_invalid(raw, raw_len - 3, "not a valid Profile message");

	/* a second gzip member continues the message; garbage after one does not */
	a = fixture_gzip(raw, raw_len / 2, &a_len);
	c = fixture_gzip(raw + raw_len / 2, raw_len - raw_len / 2, &c_len);
	two = malloc(a_len + c_len + 3);
	assert_non_null(two);
	memcpy(two, a, a_len);
	memcpy(two + a_len, c, c_len);
	back = read_pprof(two, a_len + c_len);
	assert_int_equal(symprof__total(back), symprof__total(sp));
	symprof__free(back);
	memcpy(two + gz_len, "xyz", 3);
	memcpy(two, gz, gz_len);
	expect_invalid(two, gz_len + 3, "bad gzip data");
	/* raw bytes read as well as gzipped ones */
	back = read_pprof(raw, raw_len);
	assert_int_equal(symprof__total(back), symprof__total(sp));
	symprof__free(back);

	free(a);
	free(c);
	free(two);
	free(raw);
	free(gz);
	symprof__free(sp);
}

/* Tiny repeated entries would make protobuf-c allocate ~60 times the input: refused. */
static void test_decode_budget(void **state)
{
	size_t n = 8 << 20, i;
	unsigned char *buf = malloc(n);

	assert_non_null(buf);
	for (i = 0; i < n; i += 2) {
		buf[i] = 0x12; /* field 2 (sample), length-delimited */
		buf[i + 1] = 0;
	}
	expect_invalid(buf, n, "would take more than");
	free(buf);
}

/* A small file that inflates past 1 GiB is refused, not read into memory. */
static void test_gzip_bomb(void **state)
{
	size_t member_len, i, n = 1025;
	void *zeros = calloc(1, 1 << 20);
	unsigned char *member, *bomb;

	/* 1025 gzip members of 1 MiB of zeros each: one stream of 1025 MiB */
	assert_non_null(zeros);
	member = fixture_gzip(zeros, 1 << 20, &member_len);
	bomb = malloc(n * member_len);
	assert_non_null(bomb);
	for (i = 0; i < n; i++)
		memcpy(bomb + i * member_len, member, member_len);
	expect_invalid(bomb, n * member_len, "more than 1024 MiB once decompressed");
	free(bomb);
	free(member);
	free(zeros);
}

/* What other tools write: CPU time only, numeric labels, non-hex build ids, backslashes. */
static void test_foreign(void **state)
{
	static const char go_build_id[] = "go-build/abc";
	static const char path[] = "C:\\dir\\x4";
	struct pb b;
	unsigned char *buf;
	struct symprof *sp;
	const struct sp_range *set;
	const struct sp_string *s;
	size_t len;

	pb_init(&b);
	b.vt[0].type = 4; /* cpu/nanoseconds */
	b.vt[0].unit = 5;
	perftools__profiles__value_type__init(&b.period_type);
	b.period_type.type = 4;
	b.period_type.unit = 5;
	b.p.period_type = &b.period_type;
	b.p.period = 10000000;
	b.values[0] = 29999999; /* rounds to 3 */
	b.strings[10] = (ProtobufCBinaryData){strlen(go_build_id), (uint8_t *)go_build_id};
	b.strings[11] = (ProtobufCBinaryData){strlen(path), (uint8_t *)path};
	b.p.n_string_table = 12;
	b.m[0].build_id = 10;
	b.m[0].filename = 11;
	b.sample.n_label = 2;
	b.label[0].key = 9; /* bytes=1024 (with a unit) */
	b.label[0].num = 1024;
	b.label[0].num_unit = 9;
	b.label[1].key = 7; /* comm, undeclared: a custom label */
	b.label[1].str = 3;
	buf = pb_pack(&b, &len);
	sp = read_pprof(buf, len);
	assert_int_equal(sp->meta.period_ns, 10000000);
	assert_int_equal(sp->meta.frequency_hz, 100);
	assert_int_equal(sp->sample_count, 1);
	assert_int_equal(sp->samples[0].count, 3);
	assert_int_equal(sp->samples[0].pid, 0);
	set = &sp->label_sets[sp->samples[0].label_set];
	assert_int_equal(set->count, 2);
	assert_string_equal(symprof__str(sp, sp->labels[set->first].key)->bytes, "bytes");
	assert_string_equal(symprof__str(sp, sp->labels[set->first].value)->bytes, "1024");
	assert_string_equal(symprof__str(sp, sp->labels[set->first + 1].key)->bytes, "comm");
	assert_string_equal(symprof__str(sp, sp->labels[set->first + 1].value)->bytes, "f");
	s = symprof__str(sp, sp->mappings[1].build_id);
	assert_string_equal(s->bytes, go_build_id);
	assert_string_equal(symprof__str(sp, sp->mappings[1].file)->bytes, path);
	assert_false(sp->mappings[1].kernel);
	assert_int_equal(sp->locations[1].module_offset, 0x234);
	free(buf);
	symprof__free(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),     cmocka_unit_test(test_merge_without_labels),
		cmocka_unit_test(test_file_contents),  cmocka_unit_test(test_python_frames),
		cmocka_unit_test(test_runtime_frames), cmocka_unit_test(test_base_is_valid),
		cmocka_unit_test(test_bad_references), cmocka_unit_test(test_bad_tables),
		cmocka_unit_test(test_bad_encoding),   cmocka_unit_test(test_decode_budget),
		cmocka_unit_test(test_gzip_bomb),      cmocka_unit_test(test_foreign),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

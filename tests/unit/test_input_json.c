// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * JSON reader: the example of docs/json-format.md read field by field,
 * surrogate escapes back to the exact bytes, 64-bit integers read exactly,
 * hostile documents refused with a clear error, and symprof -> JSON ->
 * symprof giving the same tables.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format/input.h"
#include "format/output.h"
#include "profile/profile.h"
#include "profile/symprof.h"

/* The example of docs/json-format.md, build ids completed. */
static const char spec_example[] =
	"{\"format\":\"labelprof-json\",\"version\":1,\"frequency_hz\":99,\n"
	" \"start_time_unix_ns\":1700000000000000000,\"duration_ns\":10000000000,\n"
	" \"host_name\":\"node-7\",\"period_ns\":10101010,\n"
	" \"counters\":{\"samples\":1980,\"samples_with_labels\":1500,\"label_read_faults\":0,\n"
	"  \"truncations\":2,\"malformed_labels\":0,\"ringbuf_drops\":0,\"event_drops\":0,\n"
	"  \"unknown_pids\":3,\"filtered\":120,\"kernel_threads\":40,\n"
	"  \"samples_received\":1980,\"records_rejected\":0,\"samples_dropped\":0},\n"
	" \"processes\":[{\"pid\":4242,\"name\":\"server\",\"executable\":\"/srv/app/server\"}],\n"
	" \"samples\":[\n"
	"  {\"pid\":4242,\"tid\":4243,\"comm\":\"server\",\n"
	"   \"labels\":{\"endpoint\":\"/api/items\",\"tenant\":\"acme\"},\n"
	"   \"flags\":[\"labels_read\"],\"count\":17,\n"
	"   \"frames\":[\n"
	"    "
	"{\"address\":\"0xffffffff81a3c0f4\",\"kernel\":true,\"module\":\"[kernel.kallsyms]\",\n"
	"     "
	"\"function\":\"do_syscall_64\",\"offset\":100,\"module_offset\":\"0xffffffff81a3c0f4\",\n"
	"     \"build_id\":\"6f0c4d5e\"},\n"
	"    {\"address\":\"0x7f3a1c2d4e5f\",\"kernel\":false,"
	"\"module\":\"/usr/lib/x86_64-linux-gnu/libc.so.6\",\n"
	"     \"function\":\"__write\",\"file\":null,\"line\":null,\"offset\":15,"
	"\"module_offset\":\"0x10fe5f\",\n"
	"     \"build_id\":\"93ac61ec\"},\n"
	"    {\"address\":\"0x55d7f66de456\",\"kernel\":false,\"module\":\"/srv/app/server\",\n"
	"     \"function\":\"handle\",\"file\":\"src/server.c\",\"line\":88,\"offset\":70,\n"
	"     \"module_offset\":\"0x3456\",\"build_id\":\"1b2c\",\n"
	"     \"inlined\":[{\"function\":\"parse_header\",\"file\":\"src/http.h\",\"line\":12}]},\n"
	"    {\"address\":\"0x55d7f66de123\",\"kernel\":false,\"module\":\"/srv/app/server\",\n"
	"     \"function\":null,\"file\":null,\"line\":null,\"offset\":null,"
	"\"module_offset\":\"0x3123\",\n"
	"     \"build_id\":null}\n"
	"   ]}\n"
	" ]}\n";

/* Reads doc from an exact-size heap copy (ASan sees any read past it). */
static int read_doc_len(const char *doc, size_t len, struct symprof **out, char *err, size_t errlen)
{
	struct symprof *sp = symprof__new();
	char *copy = malloc(len ? len : 1);
	int r;

	assert_non_null(sp);
	assert_non_null(copy);
	memcpy(copy, doc, len);
	r = input__read_json(copy, len, sp, err, errlen);
	free(copy);
	if (r || !out) {
		symprof__free(sp);
		sp = NULL;
	}
	if (out)
		*out = sp;
	return r;
}

static struct symprof *read_ok(const char *doc)
{
	struct symprof *sp;
	char err[256];
	int r = read_doc_len(doc, strlen(doc), &sp, err, sizeof(err));

	if (r)
		fail_msg("unexpected error %d: %s", r, err);
	return sp;
}

/* Asserts that doc fails with -EINVAL and an error containing what. */
static void read_bad(const char *doc, size_t len, const char *what)
{
	char err[256] = "unset";

	if (read_doc_len(doc, len, NULL, err, sizeof(err)) != -EINVAL)
		fail_msg("accepted: %.*s", (int)len, doc);
	if (!strstr(err, what))
		fail_msg("error \"%s\" lacks \"%s\" for: %.*s", err, what, (int)len, doc);
	if (strncmp(err, "line ", 5) || strchr(err, '\n'))
		fail_msg("error \"%s\" is not \"line L column C: ...\"", err);
}

#define BAD(doc, what) read_bad(doc, sizeof(doc) - 1, what)

static void assert_str(const struct symprof *sp, __u32 id, const char *s, size_t len)
{
	const struct sp_string *str = symprof__str(sp, id);

	if (str->len != len || memcmp(str->bytes, s, len))
		fail_msg("string %u is \"%.*s\", not \"%.*s\"", id, (int)str->len, str->bytes,
			 (int)len, s);
}

#define ASSERT_STR(sp, id, s) assert_str(sp, id, s, sizeof(s) - 1)

static const struct sp_location *frame(const struct symprof *sp, const struct sp_sample *s, __u32 i)
{
	assert_true(i < sp->stacks[s->stack].count);
	return &sp->locations[sp->stack_locations[sp->stacks[s->stack].first + i]];
}

static const struct sp_line *line(const struct symprof *sp, const struct sp_location *loc, __u32 i)
{
	assert_true(i < loc->line_count);
	return &sp->lines[loc->first_line + i];
}

static void test_spec_example(void **state)
{
	struct symprof *sp = read_ok(spec_example);
	const struct sp_meta *m = &sp->meta;
	const struct sp_sample *s;
	const struct sp_location *loc;
	const struct sp_mapping *map;
	const struct sp_function *fn;
	const struct sp_process *proc;
	const struct sp_label *l;

	assert_int_equal(m->frequency_hz, 99);
	assert_int_equal(m->period_ns, 10101010);
	assert_true(m->start_time_unix_ns == 1700000000000000000ull);
	assert_true(m->duration_ns == 10000000000ull);
	ASSERT_STR(sp, m->host_name, "node-7");
	assert_int_equal(m->counters.samples, 1980);
	assert_int_equal(m->counters.samples_with_labels, 1500);
	assert_int_equal(m->counters.label_read_faults, 0);
	assert_int_equal(m->counters.truncations, 2);
	assert_int_equal(m->counters.malformed_labels, 0);
	assert_int_equal(m->counters.ringbuf_drops, 0);
	assert_int_equal(m->counters.event_drops, 0);
	assert_int_equal(m->counters.unknown_pids, 3);
	assert_int_equal(m->counters.filtered, 120);
	assert_int_equal(m->counters.kernel_threads, 40);
	assert_int_equal(m->samples_received, 1980);
	assert_int_equal(m->records_rejected, 0);
	assert_int_equal(m->samples_dropped, 0);

	assert_int_equal(sp->process_count, 1);
	proc = symprof__process(sp, 4242);
	assert_non_null(proc);
	ASSERT_STR(sp, proc->name, "server");
	ASSERT_STR(sp, proc->executable, "/srv/app/server");

	assert_int_equal(sp->sample_count, 1);
	s = &sp->samples[0];
	assert_int_equal(s->pid, 4242);
	assert_int_equal(s->tid, 4243);
	ASSERT_STR(sp, s->comm, "server");
	assert_int_equal(s->status, LP_ST_LABELS_READ);
	assert_int_equal(s->count, 17);
	assert_int_equal(sp->label_sets[s->label_set].count, 2);
	l = &sp->labels[sp->label_sets[s->label_set].first];
	ASSERT_STR(sp, l[0].key, "endpoint");
	ASSERT_STR(sp, l[0].value, "/api/items");
	ASSERT_STR(sp, l[1].key, "tenant");
	ASSERT_STR(sp, l[1].value, "acme");
	assert_int_equal(sp->stacks[s->stack].count, 4);

	/* kernel frame: the kernel mapping spans the address space, as the builder's */
	loc = frame(sp, s, 0);
	assert_true(loc->kernel);
	assert_true(loc->address == 0xffffffff81a3c0f4ull);
	assert_true(loc->module_offset == 0xffffffff81a3c0f4ull);
	assert_int_equal(loc->function_offset, 100);
	map = &sp->mappings[loc->mapping];
	assert_int_not_equal(loc->mapping, 0);
	assert_true(map->kernel);
	assert_true(map->start == 0 && map->limit == SP_UNKNOWN && map->file_offset == 0);
	ASSERT_STR(sp, map->file, "[kernel.kallsyms]");
	ASSERT_STR(sp, map->build_id, "\x6f\x0c\x4d\x5e");
	assert_int_equal(loc->line_count, 1);
	fn = &sp->functions[line(sp, loc, 0)->function];
	ASSERT_STR(sp, fn->name, "do_syscall_64");
	assert_int_equal(fn->file, 0);
	assert_int_equal(line(sp, loc, 0)->line, 0);

	loc = frame(sp, s, 1);
	assert_false(loc->kernel);
	assert_true(loc->address == 0x7f3a1c2d4e5full);
	assert_int_equal(loc->module_offset, 0x10fe5f);
	assert_int_equal(loc->function_offset, 15);
	map = &sp->mappings[loc->mapping];
	assert_false(map->kernel);
	assert_true(map->start == 0 && map->limit == 0 && map->file_offset == 0);
	ASSERT_STR(sp, map->file, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	ASSERT_STR(sp, map->build_id, "\x93\xac\x61\xec");
	assert_int_equal(loc->line_count, 1);
	ASSERT_STR(sp, sp->functions[line(sp, loc, 0)->function].name, "__write");

	/* inlined: innermost first, the function that holds the address last */
	loc = frame(sp, s, 2);
	assert_int_equal(loc->address, 0x55d7f66de456ull);
	assert_int_equal(loc->module_offset, 0x3456);
	assert_int_equal(loc->function_offset, 70);
	ASSERT_STR(sp, sp->mappings[loc->mapping].build_id, "\x1b\x2c");
	assert_int_equal(loc->line_count, 2);
	fn = &sp->functions[line(sp, loc, 0)->function];
	ASSERT_STR(sp, fn->name, "parse_header");
	ASSERT_STR(sp, fn->file, "src/http.h");
	assert_int_equal(line(sp, loc, 0)->line, 12);
	fn = &sp->functions[line(sp, loc, 1)->function];
	ASSERT_STR(sp, fn->name, "handle");
	ASSERT_STR(sp, fn->file, "src/server.c");
	assert_int_equal(line(sp, loc, 1)->line, 88);

	/* unknown function: no line, unknown offset; same module, no build id: other mapping */
	loc = frame(sp, s, 3);
	assert_int_equal(loc->address, 0x55d7f66de123ull);
	assert_int_equal(loc->module_offset, 0x3123);
	assert_true(loc->function_offset == SP_UNKNOWN);
	assert_int_equal(loc->line_count, 0);
	ASSERT_STR(sp, sp->mappings[loc->mapping].file, "/srv/app/server");
	assert_int_equal(sp->mappings[loc->mapping].build_id, 0);
	assert_int_not_equal(loc->mapping, frame(sp, s, 2)->mapping);
	symprof__free(sp);
}

/* A document of one sample whose comm is the JSON string literal str. */
static struct symprof *read_comm(const char *str, char *doc, size_t size)
{
	snprintf(doc, size,
		 "{\"format\":\"labelprof-json\",\"version\":1,\"samples\":"
		 "[{\"pid\":1,\"tid\":1,\"count\":1,\"comm\":%s}]}",
		 str);
	return read_ok(doc);
}

static void test_string_escapes(void **state)
{
	static const struct {
		const char *json, *bytes;
		size_t len;
	} cases[] = {
		/* bytes that are not UTF-8, as the writer escapes them */
		{"\"bad\\udcff\\udc80 x\"", "bad\xff\x80 x", 7},
		{"\"\\udcc3\\udca9\"", "\xc3\xa9", 2}, /* escaped bytes that form UTF-8 */
		{"\"\\u00e9\\u20ac\"", "\xc3\xa9\xe2\x82\xac", 5},
		{"\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4}, /* a surrogate pair */
		{"\"\\uD83D\\uDE00\"", "\xf0\x9f\x98\x80", 4},
		{"\"\\ud800\\udc80\"", "\xf0\x90\x82\x80", 4}, /* a pair, not a byte */
		{"\"\xc3\xa9\xf0\x9f\x98\x80\x7f\"", "\xc3\xa9\xf0\x9f\x98\x80\x7f", 7},
		{"\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t\"", "q\" b\\ s/ \b\f\n\r\t", 14},
		{"\"nul\\u0000end\\u001f\\u007f\"", "nul\0end\x1f\x7f", 9},
	};
	char doc[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct symprof *sp = read_comm(cases[i].json, doc, sizeof(doc));

		assert_str(sp, sp->samples[0].comm, cases[i].bytes, cases[i].len);
		symprof__free(sp);
	}
}

/* Every byte value, and hostile sequences, survive symprof -> JSON -> symprof. */
static void test_bytes_round_trip(void **state)
{
	unsigned char all[256 + 16];
	struct sp_label lbl = {0};
	struct sp_sample s = {.pid = 1, .tid = 1, .count = 1};
	struct symprof *sp = symprof__new(), *back;
	char *doc = NULL, err[256];
	size_t len = 0, i;
	FILE *f;

	for (i = 0; i < 256; i++)
		all[i] = i;
	/* a surrogate, overlong, past U+10FFFF, truncated */
	memcpy(all + 256, "\xed\xa0\x80\xc0\xaf\xf4\x90\x80\x80\xe2\x82\xf0\x9f\x98\x80\xff", 16);
	lbl.key = symprof__string(sp, all, sizeof(all));
	lbl.value = symprof__string(sp, all + 100, sizeof(all) - 100);
	s.comm = symprof__string(sp, all + 200, 16);
	s.label_set = symprof__label_set(sp, &lbl, 1);
	assert_int_equal(symprof__add_sample(sp, &s), 0);
	f = open_memstream(&doc, &len);
	assert_int_equal(output__write_json(f, sp, NULL), 0);
	fclose(f);
	assert_int_equal(read_doc_len(doc, len, &back, err, sizeof(err)), 0);
	s = back->samples[0];
	assert_str(back, s.comm, (const char *)all + 200, 16);
	lbl = back->labels[back->label_sets[s.label_set].first];
	assert_str(back, lbl.key, (const char *)all, sizeof(all));
	assert_str(back, lbl.value, (const char *)all + 100, sizeof(all) - 100);
	free(doc);
	symprof__free(back);
	symprof__free(sp);
}

static void test_big_integers(void **state)
{
	struct symprof *sp;

	sp = read_ok("{\"format\":\"labelprof-json\",\"version\":1,"
		     "\"start_time_unix_ns\":18446744073709551615,"
		     "\"duration_ns\":9007199254740993,\"samples\":[{\"pid\":4294967295,"
		     "\"tid\":0,\"count\":18446744073709551614,\"frames\":[{\"address\":"
		     "\"0xffffffffffffffff\",\"module\":\"m\",\"module_offset\":\"0x0\","
		     "\"offset\":18446744073709551615}]}]}");
	assert_true(sp->meta.start_time_unix_ns == UINT64_MAX);
	assert_true(sp->meta.duration_ns == (1ull << 53) + 1);
	assert_int_equal(sp->meta.frequency_hz, 0);
	assert_int_equal(sp->meta.period_ns, 0);
	assert_int_equal(sp->samples[0].pid, UINT32_MAX);
	assert_true(sp->samples[0].count == UINT64_MAX - 1);
	assert_true(frame(sp, &sp->samples[0], 0)->address == UINT64_MAX);
	assert_int_equal(frame(sp, &sp->samples[0], 0)->module_offset, 0);
	symprof__free(sp);

	/* without period_ns, the period follows from the frequency */
	sp = read_ok("{\"format\":\"labelprof-json\",\"version\":1,\"frequency_hz\":99,"
		     "\"samples\":[]}");
	assert_int_equal(sp->meta.period_ns, 1000000000 / 99);
	assert_int_equal(sp->sample_count, 0);
	symprof__free(sp);

	BAD("{\"format\":\"labelprof-json\",\"version\":1,\"duration_ns\":18446744073709551616,"
	    "\"samples\":[]}",
	    "\"duration_ns\" exceeds 2^64 - 1");
	BAD("{\"format\":\"labelprof-json\",\"version\":1,\"duration_ns\":"
	    "99999999999999999999999999999999999999999999,\"samples\":[]}",
	    "exceeds 2^64 - 1");
	BAD("{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[{\"pid\":4294967296,"
	    "\"tid\":1,\"count\":1}]}",
	    "\"pid\" exceeds 2^32 - 1");
	BAD("{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[{\"pid\":1,"
	    "\"tid\":1,\"count\":18446744073709551615},{\"pid\":2,\"tid\":1,\"count\":1}]}",
	    "add up past 2^64 - 1");
	BAD("{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[{\"pid\":1,"
	    "\"tid\":1,\"count\":1,\"frames\":[{\"address\":\"0x10000000000000000\"}]}]}",
	    "\"address\" must be \"0x\" and 1 to 16 hex digits");
}

#define DOC(samples) "{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[" samples "]}"
#define SAMPLE(rest) "{\"pid\":1,\"tid\":2,\"count\":3" rest "}"

static void test_hostile(void **state)
{
	static const struct {
		const char *doc, *what;
	} cases[] = {
		{"", "line 1 column 1: empty document"},
		{"  \n ", "line 2 column 2: empty document"},
		{"[]", "expected '{'"},
		{"\xef\xbb\xbf{}", "unexpected byte 0xef"},
		{"{\"format\":\"labelprof-json\"}", "no \"version\""},
		{"{\"version\":1,\"samples\":[]}", "no \"format\""},
		{"{\"format\":\"pprof\",\"version\":1,\"samples\":[]}", "not \"labelprof-json\""},
		{"{\"format\":1,\"version\":1}", "\"format\" must be a string, not a number"},
		{"{\"format\":\"labelprof-json\",\"version\":2,\"samples\":{\"new\":true}}",
		 "version 2 is not supported"},
		{"{\"samples\":7,\"format\":\"labelprof-json\",\"version\":3}",
		 "version 3 is not supported"},
		{"{\"format\":\"labelprof-json\",\"version\":1.0,\"samples\":[]}",
		 "\"version\" must be a non-negative integer"},
		{"{\"format\":\"labelprof-json\",\"version\":\"1\",\"samples\":[]}",
		 "\"version\" must be a non-negative integer, not a string"},
		{"{\"format\":\"labelprof-json\",\"version\":1}", "no \"samples\""},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"version\":1,\"samples\":[]}",
		 "duplicate key \"version\""},
		{DOC("") "x", "data after the end"},
		{DOC("") "{}", "data after the end"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],}", "a key string"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[1,]}",
		 "expected a value"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":[1,]}",
		 "expected a value"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":[1 2]}",
		 "expected ',' or ']'"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":{\"a\" 1}}",
		 "expected ':'"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":{1:2}}",
		 "expected a key string"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":tru}",
		 "expected a value"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":nulll}",
		 "expected ',' or '}'"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":'a'}",
		 "unexpected '''"},
		/* numbers */
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":01}",
		 "leading zero"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":1.}",
		 "no digit after '.'"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":1e+}",
		 "no digit in the exponent"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":-}",
		 "invalid number"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":+1}",
		 "unexpected '+'"},
		{DOC(SAMPLE(",\"count\":1")), "duplicate key \"count\""},
		{DOC("{\"pid\":1,\"tid\":2,\"count\":-3}"), "\"count\" must be a non-negative"},
		{DOC("{\"pid\":1,\"tid\":2,\"count\":3.5}"), "\"count\" must be a non-negative"},
		{DOC("{\"pid\":1,\"tid\":2,\"count\":3e0}"), "\"count\" must be a non-negative"},
		/* strings */
		{DOC(SAMPLE(",\"comm\":\"a\x01\"")), "control character 0x01"},
		{DOC(SAMPLE(",\"comm\":\"a\n\"")), "control character 0x0a"},
		{DOC(SAMPLE(",\"comm\":\"bad\xff\"")), "byte 0xff in a string is not UTF-8"},
		{DOC(SAMPLE(",\"comm\":\"\xc3\"")), "byte 0xc3 in a string is not UTF-8"},
		{DOC(SAMPLE(",\"comm\":\"\xed\xa0\x80\"")), "byte 0xed in a string is not UTF-8"},
		{DOC(SAMPLE(",\"comm\":\"\xc0\xaf\"")), "byte 0xc0 in a string is not UTF-8"},
		{DOC(SAMPLE(",\"comm\":\"\xf4\x90\x80\x80\"")), "not UTF-8"},
		{DOC(SAMPLE(",\"comm\":\"\\udc41\"")), "lone surrogate \\udc41"},
		{DOC(SAMPLE(",\"comm\":\"\\udfff\"")), "lone surrogate \\udfff"},
		{DOC(SAMPLE(",\"comm\":\"\\ud800\"")), "lone surrogate \\ud800"},
		{DOC(SAMPLE(",\"comm\":\"\\ud800\\u0041\"")), "lone surrogate \\ud800"},
		{DOC(SAMPLE(",\"comm\":\"\\ud800\\udcff\\ud800\"")), "lone surrogate \\ud800"},
		{DOC(SAMPLE(",\"comm\":\"\\ud800\\")), "lone surrogate \\ud800"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":\"ab\\",
		 "column 60: unterminated string"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":\"ab",
		 "column 57: unterminated string"},
		{DOC(SAMPLE(",\"comm\":\"\\u12\"")), "expected four hex digits"},
		{DOC(SAMPLE(",\"comm\":\"\\x41\"")), "invalid escape sequence"},
		{DOC(SAMPLE(",\"comm\":\"\\U0041\"")), "invalid escape sequence"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":\"\\udc00\"}",
		 "lone surrogate"},
		/* labels: a set has unique keys, however they are spelled */
		{DOC(SAMPLE(",\"labels\":{\"a\":\"1\",\"b\":\"2\",\"a\":\"3\"}")),
		 "column 104: duplicate label key"},
		{DOC(SAMPLE(",\"labels\":{\"a\":\"1\",\"\\u0061\":\"1\"}")), "duplicate label key"},
		{DOC(SAMPLE(",\"labels\":{\"\":\"1\",\"\":\"2\"}")), "duplicate label key"},
		{DOC(SAMPLE(",\"labels\":{\"a\":1}")), "\"label value\" must be a string"},
		{DOC(SAMPLE(",\"labels\":{\"a\":null}")), "must be a string, not null"},
		{DOC(SAMPLE(",\"labels\":[]")), "\"labels\" must be an object, not an array"},
		/* wrong types */
		{DOC("[]"), "\"samples\" must be an array of objects, not an array"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":{}}",
		 "\"samples\" must be an array, not an object"},
		{DOC(SAMPLE(",\"pid\":1")), "duplicate key \"pid\""},
		{DOC("{\"pid\":\"1\",\"tid\":2,\"count\":3}"), "\"pid\" must be a non-negative"},
		{DOC("{\"tid\":2,\"count\":3}"), "sample without \"pid\""},
		{DOC("{\"pid\":2,\"count\":3}"), "sample without \"tid\""},
		{DOC("{\"pid\":2,\"tid\":3}"), "sample without \"count\""},
		{DOC(SAMPLE(",\"comm\":null")), "\"comm\" must be a string, not null"},
		{DOC(SAMPLE(",\"flags\":\"labels_read\"")), "\"flags\" must be an array"},
		{DOC(SAMPLE(",\"flags\":[1]")), "\"flags\" must be an array of strings"},
		{DOC(SAMPLE(",\"frames\":{}")), "\"frames\" must be an array"},
		{DOC(SAMPLE(",\"frames\":[\"0x1\"]")), "\"frames\" must be an object"},
		{DOC(SAMPLE(",\"frames\":[{}]")), "frame without \"address\""},
		{DOC(SAMPLE(",\"frames\":[{\"address\":1}]")), "\"address\" must be a hex string"},
		{DOC(SAMPLE(",\"frames\":[{\"address\":\"1\"}]")), "\"address\" must be \"0x\""},
		{DOC(SAMPLE(",\"frames\":[{\"address\":\"0x\"}]")), "\"address\" must be \"0x\""},
		{DOC(SAMPLE(",\"frames\":[{\"address\":\"0xg\"}]")), "\"address\" must be \"0x\""},
		{DOC(SAMPLE(",\"frames\":[{\"address\":\"0x1\",\"kernel\":1}]")),
		 "\"kernel\" must be true or false"},
		{DOC(SAMPLE(",\"frames\":[{\"address\":\"0x1\",\"module\":7}]")),
		 "\"module\" must be a string or null"},
		{DOC(SAMPLE(",\"frames\":[{\"address\":\"0x1\",\"offset\":\"7\"}]")),
		 "\"offset\" must be a non-negative integer"},
		{DOC(SAMPLE(",\"frames\":[{\"address\":\"0x1\",\"build_id\":\"abc\"}]")),
		 "\"build_id\" must be pairs of hex digits"},
		{DOC(SAMPLE(",\"frames\":[{\"address\":\"0x1\",\"build_id\":\"\"}]")),
		 "\"build_id\" must be pairs of hex digits"},
		{DOC(SAMPLE(",\"frames\":[{\"address\":\"0x1\",\"build_id\":\"zz\"}]")),
		 "\"build_id\" must be pairs of hex digits"},
		{DOC(SAMPLE(",\"frames\":[{\"address\":\"0x1\",\"line\":4294967296}]")),
		 "\"line\" exceeds 2^32 - 1"},
		{DOC(SAMPLE(",\"frames\":[{\"address\":\"0x1\",\"inlined\":{}}]")),
		 "\"inlined\" must be an array"},
		{DOC(SAMPLE(",\"frames\":[{\"address\":\"0x1\",\"inlined\":[{\"line\":\"1\"}]}]")),
		 "\"line\" must be a non-negative integer"},
		{DOC(SAMPLE(",\"frames\":[{\"address\":\"0x1\",\"address\":\"0x2\"}]")),
		 "duplicate key \"address\""},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"counters\":{"
		 "\"samples\":-1}}",
		 "\"samples\" must be a non-negative integer"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"host_name\":1}",
		 "\"host_name\" must be a string or null"},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"processes\":[{}]}",
		 "process without \"pid\""},
		{"{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"processes\":"
		 "[{\"pid\":5},{\"pid\":5}]}",
		 "a second process with pid 5"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		read_bad(cases[i].doc, strlen(cases[i].doc), cases[i].what);
	/* a NUL byte in the middle of the document */
	BAD("{\"format\":\"labelprof-json\"\0,\"version\":1,\"samples\":[]}", "byte 0x00");
	BAD(DOC(SAMPLE(",\"comm\":\"a\0\"")), "control character 0x00");
}

static void test_error_position(void **state)
{
	static const char doc1[] = "{\"format\":\"labelprof-json\",\n\"version\":1,\n"
				   "\"samples\":[{\"pid\":\"\xc3\xa9\"}]}";
	static const char doc2[] =
		DOC("{\"pid\":1,\"tid\":1,\"count\":1,\"comm\":\"\xc3\xa9\xff\"}");
	char err[256];

	assert_int_equal(read_doc_len(doc1, sizeof(doc1) - 1, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 3 column 19: \"pid\" must be a non-negative integer, "
				 "not a string");
	/* columns count characters, not bytes */
	assert_int_equal(read_doc_len(doc2, sizeof(doc2) - 1, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 1 column 87: byte 0xff in a string is not UTF-8 (write "
				 "bytes as \\udcXX)");
	/* a small buffer gets a truncated message, none gets nothing */
	assert_int_equal(read_doc_len("[", 1, NULL, err, 8), -EINVAL);
	assert_string_equal(err, "line 1 ");
	assert_int_equal(read_doc_len("[", 1, NULL, NULL, 0), -EINVAL);
}

/* A document with n levels of open...close under an unknown key. */
static char *nested(size_t n, const char *open, const char *close)
{
	const char *head = "{\"format\":\"labelprof-json\",\"version\":1,\"samples\":[],\"x\":";
	size_t hl = strlen(head), ol = strlen(open), cl = strlen(close), i;
	char *doc = malloc(hl + n * (ol + cl) + 2), *o = doc;

	assert_non_null(doc);
	o = mempcpy(o, head, hl);
	for (i = 0; i < n; i++)
		o = mempcpy(o, open, ol);
	for (i = 0; i < n; i++)
		o = mempcpy(o, close, cl);
	strcpy(o, "}");
	return doc;
}

static void test_nesting(void **state)
{
	size_t n = 1000000;
	char *doc;

	/* the root object is one level: 127 more fit */
	doc = nested(127, "[", "]");
	symprof__free(read_ok(doc));
	free(doc);
	doc = nested(128, "[", "]");
	read_bad(doc, strlen(doc), "line 1 column 184: nesting deeper than 128");
	free(doc);
	/* a million levels, unterminated: refused at the limit, without recursing */
	doc = nested(n, "[", "]");
	doc[strlen(doc) - n - 1] = 0;
	read_bad(doc, strlen(doc), "nesting deeper than 128");
	free(doc);
	doc = nested(63, "{\"a\":[", "]}");
	symprof__free(read_ok(doc));
	free(doc);
	doc = nested(64, "{\"a\":[", "]}");
	read_bad(doc, strlen(doc), "nesting deeper than 128");
	free(doc);
	/* deep in a known place: inside a frame's unknown key */
	symprof__free(
		read_ok(DOC(SAMPLE(",\"frames\":[{\"address\":\"0x1\",\"x\":[[[[{\"y\":[]}]]]]}"
				   "]"))));
}

/* Every proper prefix of a valid document is refused cleanly. */
static void test_truncated(void **state)
{
	size_t len = strlen(spec_example), n;
	char err[256];

	for (n = 0; n < len; n++) {
		int r = read_doc_len(spec_example, n, NULL, err, sizeof(err));

		/* only white space may follow the document */
		if (n >= len - 1 && !r)
			continue;
		if (r != -EINVAL)
			fail_msg("prefix of %zu bytes: %d", n, r);
	}
}

static void test_ignored_and_lenient(void **state)
{
	struct symprof *sp;
	const struct sp_sample *s;
	const struct sp_location *loc;

	sp = read_ok("  {\"future\":{\"a\":[1,2.5e-3,-0,true,false,null,\"\\udcff\",{}]},"
		     "\"samples\":[{\"count\":2,\"frames\":[{\"new\":1,\"address\":\"0xABCdef\","
		     "\"inlined\":[{\"function\":\"f\",\"column\":3},{\"file\":null}]}],"
		     "\"flags\":[\"bit_0\",\"bit_31\",\"bit_20\",\"bit_32\",\"bit_07\",\"exiting\","
		     "\"a_later_flag\",\"dropped\"],\"tid\":5,\"pid\":4,\"more\":[[]],"
		     "\"labels\":{\"z\":\"1\",\"a\":\"\"}}],"
		     "\"format\":\"labelprof-json\",\"version\":1,\"counters\":{\"new\":9,"
		     "\"filtered\":4},\"processes\":[{\"pid\":4,\"name\":null,\"x\":1}]}\r\n\t ");
	assert_int_equal(sp->sample_count, 1);
	s = &sp->samples[0];
	assert_int_equal(s->pid, 4);
	assert_int_equal(s->tid, 5);
	assert_int_equal(s->comm, 0);
	assert_int_equal(s->count, 2);
	assert_int_equal(s->status,
			 LP_ST_NO_RECIPE | PROFILE_ST_DROPPED | (1u << 20) | LP_ST_EXITING);
	/* keys are sorted; an empty value is the empty string */
	assert_int_equal(sp->label_sets[s->label_set].count, 2);
	ASSERT_STR(sp, sp->labels[sp->label_sets[s->label_set].first].key, "a");
	assert_int_equal(sp->labels[sp->label_sets[s->label_set].first].value, 0);
	assert_int_equal(sp->meta.counters.filtered, 4);
	assert_int_equal(sp->process_count, 1);
	assert_int_equal(sp->processes[0].name, 0);
	loc = frame(sp, s, 0);
	assert_int_equal(loc->address, 0xabcdef);
	assert_false(loc->kernel);
	assert_int_equal(loc->mapping, 0);
	assert_true(loc->module_offset == SP_UNKNOWN);
	assert_true(loc->function_offset == SP_UNKNOWN);
	/* inlined functions but no physical one: the unknown function (0) last */
	assert_int_equal(loc->line_count, 3);
	ASSERT_STR(sp, sp->functions[line(sp, loc, 0)->function].name, "f");
	assert_int_equal(line(sp, loc, 1)->function, 0);
	assert_int_equal(line(sp, loc, 2)->function, 0);
	assert_int_equal(sp->function_count, 2);
	symprof__free(sp);

	/* equal samples merge, as in any symprof */
	sp = read_ok(DOC(SAMPLE(",\"labels\":{}") "," SAMPLE(",\"flags\":[\"truncated\"]")));
	assert_int_equal(sp->sample_count, 1);
	assert_int_equal(sp->samples[0].count, 6);
	assert_int_equal(sp->samples[0].status, LP_ST_TRUNCATED);
	symprof__free(sp);
}

/* ---- symprof -> JSON -> symprof ------------------------------------------------ */

static char *write_json(const struct symprof *sp, size_t *len)
{
	char *doc = NULL;
	FILE *f = open_memstream(&doc, len);

	assert_non_null(f);
	assert_int_equal(output__write_json(f, sp, NULL), 0);
	assert_int_equal(fclose(f), 0);
	return doc;
}

static void assert_same_string(const struct symprof *a, __u32 ia, const struct symprof *b, __u32 ib)
{
	assert_int_equal(!ia, !ib);
	assert_str(b, ib, (const char *)symprof__str(a, ia)->bytes, symprof__str(a, ia)->len);
}

static void assert_same_location(const struct symprof *a, __u32 la, const struct symprof *b,
				 __u32 lb)
{
	const struct sp_location *x = &a->locations[la], *y = &b->locations[lb];
	const struct sp_mapping *mx = &a->mappings[x->mapping], *my = &b->mappings[y->mapping];
	__u32 i;

	assert_int_equal(!x->mapping, !y->mapping);
	assert_true(x->kernel == y->kernel && x->address == y->address);
	assert_int_equal(x->kind, y->kind);
	assert_true(x->module_offset == y->module_offset);
	assert_true(x->function_offset == y->function_offset);
	assert_true(mx->start == my->start && mx->limit == my->limit);
	assert_true(mx->file_offset == my->file_offset && mx->kernel == my->kernel);
	assert_same_string(a, mx->file, b, my->file);
	assert_same_string(a, mx->build_id, b, my->build_id);
	assert_int_equal(x->line_count, y->line_count);
	for (i = 0; i < x->line_count; i++) {
		const struct sp_line *lx = &a->lines[x->first_line + i];
		const struct sp_line *ly = &b->lines[y->first_line + i];
		const struct sp_function *fx = &a->functions[lx->function];
		const struct sp_function *fy = &b->functions[ly->function];

		assert_int_equal(lx->line, ly->line);
		assert_same_string(a, fx->name, b, fy->name);
		assert_same_string(a, fx->file, b, fy->file);
	}
}

/* Everything the JSON format carries is equal, whatever the ids. */
static void assert_same_profile(const struct symprof *a, const struct symprof *b)
{
	size_t i, j;

	assert_memory_equal(&a->meta.counters, &b->meta.counters, sizeof(a->meta.counters));
	assert_true(a->meta.frequency_hz == b->meta.frequency_hz);
	assert_true(a->meta.period_ns == b->meta.period_ns);
	assert_true(a->meta.start_time_unix_ns == b->meta.start_time_unix_ns);
	assert_true(a->meta.duration_ns == b->meta.duration_ns);
	assert_true(a->meta.samples_received == b->meta.samples_received);
	assert_true(a->meta.records_rejected == b->meta.records_rejected);
	assert_true(a->meta.samples_dropped == b->meta.samples_dropped);
	assert_true(a->meta.unwind_misses == b->meta.unwind_misses);
	assert_same_string(a, a->meta.host_name, b, b->meta.host_name);
	assert_int_equal(a->process_count, b->process_count);
	for (i = 0; i < a->process_count; i++) {
		const struct sp_process *x = &a->processes[i], *y = &b->processes[i];

		assert_int_equal(x->pid, y->pid);
		assert_same_string(a, x->name, b, y->name);
		assert_same_string(a, x->executable, b, y->executable);
	}
	assert_int_equal(a->sample_count, b->sample_count);
	for (i = 0; i < a->sample_count; i++) {
		const struct sp_sample *x = &a->samples[i], *y = &b->samples[i];
		const struct sp_range *lx = &a->label_sets[x->label_set];
		const struct sp_range *ly = &b->label_sets[y->label_set];
		const struct sp_range *sx = &a->stacks[x->stack], *sy = &b->stacks[y->stack];

		assert_true(x->pid == y->pid && x->tid == y->tid);
		assert_true(x->status == y->status && x->count == y->count);
		assert_same_string(a, x->comm, b, y->comm);
		assert_int_equal(lx->count, ly->count);
		for (j = 0; j < lx->count; j++) {
			assert_same_string(a, a->labels[lx->first + j].key, b,
					   b->labels[ly->first + j].key);
			assert_same_string(a, a->labels[lx->first + j].value, b,
					   b->labels[ly->first + j].value);
		}
		assert_int_equal(sx->count, sy->count);
		for (j = 0; j < sx->count; j++)
			assert_same_location(a, a->stack_locations[sx->first + j], b,
					     b->stack_locations[sy->first + j]);
	}
	/* interning gives the same table sizes when the source has only what JSON carries */
	assert_int_equal(a->string_count, b->string_count);
	assert_int_equal(a->mapping_count, b->mapping_count);
	assert_int_equal(a->function_count, b->function_count);
	assert_int_equal(a->location_count, b->location_count);
	assert_int_equal(a->line_count, b->line_count);
	assert_int_equal(a->stack_count, b->stack_count);
	assert_int_equal(a->label_set_count, b->label_set_count);
}

static __u32 fn(struct symprof *sp, const char *name, const char *file)
{
	struct sp_function f = {symprof__cstring(sp, name), 0, symprof__cstring(sp, file), 0};

	return symprof__function(sp, &f);
}

static void test_round_trip(void **state)
{
	struct symprof *a = symprof__new(), *b;
	struct sp_mapping kmap = {.file = symprof__cstring(a, "[kernel.kallsyms]"),
				  .build_id = symprof__string(a, "\x01\x02\xff", 3),
				  .limit = SP_UNKNOWN,
				  .kernel = true};
	struct sp_mapping umap = {.file = symprof__cstring(a, "/lib/\xffweird \"name\"")};
	struct sp_mapping bmap = {.build_id = symprof__string(a, "\xab\xcd", 2)};
	struct sp_location loc = {.mapping = symprof__mapping(a, &kmap),
				  .kernel = true,
				  .address = 0xffffffff81000010ull,
				  .module_offset = 0xffffffff81000010ull,
				  .function_offset = 0x10};
	struct sp_line lines[3] = {
		{.function = fn(a, "inner\x80", "a.h"), .line = 3},
		{.function = fn(a, "middle", NULL), .line = 0},
		{.function = fn(a, "outer", "main.c"), .line = 42},
	};
	struct sp_label labels[2] = {
		{symprof__cstring(a, "tenant"), symprof__cstring(a, "acme\x01"),
		 LP_SRC_CUSTOM_LABELS},
		{symprof__string(a, "\0k", 2), symprof__cstring(a, "v"), LP_SRC_CUSTOM_LABELS},
	};
	struct sp_process proc = {.pid = 7, .name = symprof__cstring(a, "server")};
	struct sp_sample s = {.pid = 7,
			      .tid = 8,
			      .comm = symprof__cstring(a, "w\xc3\xa9"),
			      .status = LP_ST_LABELS_READ | (1u << 17) | PROFILE_ST_DROPPED |
					LP_ST_UNWIND_CFI | LP_ST_UNWIND_FP | LP_ST_USTACK_TRUNCATED,
			      .count = 5};
	__u32 stack[4], runtime[FRAME_JS], kind;
	char *doc, *doc2, err[256];
	size_t len, len2;

	a->meta = (struct sp_meta){.frequency_hz = 97,
				   .period_ns = 12345,
				   .start_time_unix_ns = (1ull << 63) + 1,
				   .duration_ns = 3,
				   .counters = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
				   .samples_received = 11,
				   .records_rejected = 12,
				   .samples_dropped = 13,
				   .unwind_misses = 14,
				   .host_name = symprof__cstring(a, "h\xfe")};
	stack[0] = symprof__location(a, &loc, &lines[2], 1);
	loc = (struct sp_location){.mapping = symprof__mapping(a, &umap),
				   .address = 0x401234,
				   .module_offset = 0x1234,
				   .function_offset = 7};
	stack[1] = symprof__location(a, &loc, lines, 3);
	loc = (struct sp_location){.mapping = symprof__mapping(a, &bmap),
				   .address = 0x1,
				   .module_offset = SP_UNKNOWN,
				   .function_offset = SP_UNKNOWN};
	stack[2] = symprof__location(a, &loc, NULL, 0);
	loc = (struct sp_location){.address = 0x2, .module_offset = 9, .function_offset = 8};
	stack[3] = symprof__location(a, &loc, &lines[1], 1);
	s.stack = symprof__stack(a, stack, 4);
	s.label_set = symprof__label_set(a, labels, 2);
	assert_int_equal(symprof__add_sample(a, &s), 0);
	s = (struct sp_sample){.pid = 9, .tid = 9, .count = 1};
	assert_int_equal(symprof__add_sample(a, &s), 0);
	s = (struct sp_sample){
		.pid = 7, .tid = 7, .stack = symprof__stack(a, stack + 1, 2), .count = 2};
	assert_int_equal(symprof__add_sample(a, &s), 0);
	/* a frame of each runtime's kind: no mapping, a token for an address */
	for (kind = FRAME_PYTHON; kind <= FRAME_JS; kind++) {
		loc = (struct sp_location){.kind = kind,
					   .address = 0xb000000000000000ull + kind,
					   .module_offset = SP_UNKNOWN,
					   .function_offset = SP_UNKNOWN};
		runtime[kind - 1] = symprof__location(a, &loc, &lines[kind - 1], 1);
	}
	s = (struct sp_sample){
		.pid = 7, .tid = 7, .stack = symprof__stack(a, runtime, FRAME_JS), .count = 3};
	assert_int_equal(symprof__add_sample(a, &s), 0);
	assert_int_equal(symprof__set_process(a, &proc), 0);
	assert_int_equal(symprof__error(a), 0);

	doc = write_json(a, &len);
	/* how the user stack was unwound is a field of its own, the truncation a flag */
	assert_non_null(memmem(doc, len, "\"unwind\":\"mixed\"", 16));
	assert_non_null(memmem(doc, len, "\"ustack_truncated\"", 18));
	assert_null(memmem(doc, len, "bit_12", 6));
	assert_non_null(memmem(doc, len, "\"kind\":\"python\"", 15));
	assert_non_null(memmem(doc, len, "\"kind\":\"java\"", 13));
	assert_non_null(memmem(doc, len, "\"kind\":\"js\"", 11));
	assert_int_equal(read_doc_len(doc, len, &b, err, sizeof(err)), 0);
	assert_same_profile(a, b);
	/* and the document written again is the same */
	doc2 = write_json(b, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(doc, doc2, len);
	free(doc);
	free(doc2);
	symprof__free(a);
	symprof__free(b);
}

/* An empty profile round trips too. */
static void test_round_trip_empty(void **state)
{
	struct symprof *a = symprof__new(), *b;
	char *doc, err[256];
	size_t len;

	doc = write_json(a, &len);
	assert_int_equal(read_doc_len(doc, len, &b, err, sizeof(err)), 0);
	assert_same_profile(a, b);
	free(doc);
	symprof__free(a);
	symprof__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_example),
		cmocka_unit_test(test_string_escapes),
		cmocka_unit_test(test_bytes_round_trip),
		cmocka_unit_test(test_big_integers),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_error_position),
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_ignored_and_lenient),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

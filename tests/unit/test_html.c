// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * HTML writer: hostile label values, comm and symbol names stay inside the
 * JSON blob as escaped text (no script end, no markup, no raw line
 * separators, no invalid UTF-8), the blob is JSON that Python parses, and
 * its tables say what the profile holds.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <cmocka.h>

#include "format/output.h"
#include "profile/profile.h"
#include "profile/symprof.h"

#define DATA_START "<script type=\"application/json\" id=\"labelprof-data\">"

/* Hostile byte strings, each with its length (some hold NUL). */
#define HOSTILE(s)                                                                                 \
	{                                                                                          \
		s, sizeof(s) - 1                                                                   \
	}
static const struct {
	const char *bytes;
	size_t len;
} hostile[] = {
	HOSTILE("</script><script>alert(1)</script>"),
	HOSTILE("<img src=x onerror=alert(1)>"),
	HOSTILE("q\"u'o`te&amp;"),
	HOSTILE("line\xe2\x80\xa8sep\xe2\x80\xa9"),
	HOSTILE("bad\xff\xfe\x80\xc3"),
	HOSTILE("nul\0byte\n\x7f"),
	HOSTILE("back\\slash\\x41"),
	HOSTILE("<!--<script>"),
	HOSTILE("rtl\xe2\x80\xae"
		"evil"),
	HOSTILE("caf\xc3\xa9 \xf0\x9f\x94\xa5"),
};
#define NHOSTILE (sizeof(hostile) / sizeof(hostile[0]))

/* How each hostile string must appear in the JSON, quotes included. */
static const char *const hostile_json[NHOSTILE] = {
	"\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\"",
	"\"\\u003cimg src=x onerror=alert(1)\\u003e\"",
	"\"q\\\"u'o`te\\u0026amp;\"",
	"\"line\\\\xe2\\\\x80\\\\xa8sep\\\\xe2\\\\x80\\\\xa9\"",
	"\"bad\\\\xff\\\\xfe\\\\x80\\\\xc3\"",
	"\"nul\\\\x00byte\\\\x0a\\\\x7f\"",
	"\"back\\\\x5cslash\\\\x5cx41\"",
	"\"\\u003c!--\\u003cscript\\u003e\"",
	"\"rtl\\\\xe2\\\\x80\\\\xae"
	"evil\"",
	"\"caf\xc3\xa9 \xf0\x9f\x94\xa5\"",
};

static char tmpdir[64];

static __u32 str(struct symprof *sp, size_t i)
{
	return symprof__string(sp, hostile[i].bytes, hostile[i].len);
}

static __u32 function(struct symprof *sp, __u32 name)
{
	struct sp_function fn = {.name = name};

	return symprof__function(sp, &fn);
}

/*
 * A profile with a hostile string in every place the page shows one:
 * process 10 ("srv", threads 11 and 12) and 20 (named by a hostile comm).
 */
static struct symprof *hostile_profile(void)
{
	struct symprof *sp = symprof__new();
	struct sp_mapping exe = {.start = 0x1000, .limit = 0x9000};
	struct sp_mapping kern = {.kernel = true};
	struct sp_location loc = {.address = 0x1234, .module_offset = 0x234};
	struct sp_line inl[2];
	struct sp_label labels[NHOSTILE];
	__u32 locs[4], stack, set, k;
	size_t i;

	assert_non_null(sp);
	exe.file = str(sp, 0);
	kern.file = symprof__cstring(sp, "[kernel.kallsyms]");
	loc.mapping = symprof__mapping(sp, &exe);
	/* An inlined function (innermost first) in a hostile one. */
	inl[0] = (struct sp_line){.function = function(sp, str(sp, 1)), .line = 3};
	inl[1] = (struct sp_line){.function = function(sp, symprof__cstring(sp, "outer"))};
	locs[1] = symprof__location(sp, &loc, inl, 2);
	/* A frame with no known function. */
	loc.address = 0x1fff;
	loc.module_offset = 0xfff;
	locs[2] = symprof__location(sp, &loc, NULL, 0);
	inl[0] = (struct sp_line){.function = function(sp, symprof__cstring(sp, "main"))};
	loc.address = 0x1100;
	locs[3] = symprof__location(sp, &loc, inl, 1);
	loc = (struct sp_location){.address = 0xffffffff81000010ull, .kernel = true};
	loc.mapping = symprof__mapping(sp, &kern);
	loc.module_offset = loc.address;
	inl[0] = (struct sp_line){.function = function(sp, str(sp, 5))};
	locs[0] = symprof__location(sp, &loc, inl, 1);
	stack = symprof__stack(sp, locs, 4); /* leaf first */

	k = symprof__cstring(sp, "k");
	for (i = 0; i < NHOSTILE; i++) {
		labels[0] = (struct sp_label){k, str(sp, i), LP_SRC_CUSTOM_LABELS};
		labels[1] = (struct sp_label){str(sp, (i + 1) % NHOSTILE), k, LP_SRC_CUSTOM_LABELS};
		set = symprof__label_set(sp, labels, 2);
		assert_int_equal(symprof__add_sample(sp, &(struct sp_sample){.pid = 10,
									     .tid = 11,
									     .comm = k,
									     .label_set = set,
									     .stack = stack,
									     .count = 1}),
				 0);
	}
	/* Merged with the first sample of thread 11: same process name, set and stack. */
	labels[0] = (struct sp_label){k, str(sp, 0), LP_SRC_CUSTOM_LABELS};
	labels[1] = (struct sp_label){str(sp, 1), k, LP_SRC_CUSTOM_LABELS};
	set = symprof__label_set(sp, labels, 2);
	assert_int_equal(symprof__add_sample(sp, &(struct sp_sample){.pid = 10,
								     .tid = 12,
								     .comm = str(sp, 6),
								     .label_set = set,
								     .stack = stack,
								     .count = 4}),
			 0);
	assert_int_equal(symprof__add_sample(sp, &(struct sp_sample){.pid = 20,
								     .tid = 20,
								     .comm = str(sp, 7),
								     .status = PROFILE_ST_DROPPED,
								     .count = 2}),
			 0);
	assert_int_equal(symprof__set_process(sp,
					      &(struct sp_process){
						      .pid = 10,
						      .name = symprof__cstring(sp, "srv"),
					      }),
			 0);
	sp->meta.frequency_hz = 99;
	sp->meta.period_ns = 10101010;
	sp->meta.duration_ns = 2000000000;
	sp->meta.start_time_unix_ns = 1700000000123456789ull;
	sp->meta.counters.ringbuf_drops = 3;
	sp->meta.host_name = str(sp, 8);
	assert_int_equal(symprof__error(sp), 0);
	return sp;
}

static char *html(const struct symprof *sp, size_t *len)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, len);

	assert_non_null(f);
	assert_int_equal(output__write_html(f, sp, NULL), 0);
	fclose(f);
	return out;
}

static size_t count_ci(const char *s, const char *needle)
{
	size_t n = 0, len = strlen(needle);

	for (; *s; s++)
		n += !strncasecmp(s, needle, len);
	return n;
}

/* The JSON blob of a page, NUL-terminated in place. */
static char *blob(char *page)
{
	char *start = strstr(page, DATA_START), *end;

	assert_non_null(start);
	start += strlen(DATA_START);
	end = strstr(start, "</script>");
	assert_non_null(end);
	*end = '\0';
	return start;
}

static void test_html_escaping(void **state)
{
	struct symprof *sp = hostile_profile();
	size_t len, i, n;
	char *page = html(sp, &len), *data;

	/* Only the page's own elements: the hostile strings opened and closed none. */
	assert_int_equal(strlen(page), len);
	assert_int_equal(count_ci(page, "<script"), 2);
	assert_int_equal(count_ci(page, "</script"), 2);
	assert_int_equal(count_ci(page, "<style"), 1);
	assert_int_equal(count_ci(page, "<img"), 0);
	assert_int_equal(count_ci(page, "<!--"), 0);
	data = blob(page);
	for (i = 0; data[i]; i += n) {
		unsigned char c = data[i];

		assert_true(c != '<' && c != '>' && c != '&');
		assert_true(c >= 0x20 || c == '\n');
		assert_true(c != 0x7f);
		n = output__utf8_len((const unsigned char *)data + i, strlen(data + i));
		assert_true(n > 0);
		/* No raw line separators or bidi overrides: JavaScript and people see them. */
		assert_false(n == 3 && !memcmp(data + i, "\xe2\x80\xa8", 3));
		assert_false(n == 3 && !memcmp(data + i, "\xe2\x80\xa9", 3));
		assert_false(n == 3 && !memcmp(data + i, "\xe2\x80\xae", 3));
	}
	for (i = 0; i < NHOSTILE; i++)
		if (!strstr(data, hostile_json[i]))
			fail_msg("%s is not in %s", hostile_json[i], data);
	free(page);
	symprof__free(sp);
}

/* Runs python3 on a JSON blob with a script reading it as d; returns what it printed. */
static char *python(const char *data, const char *code)
{
	char path[128], cmd[256], buf[4096], *out = NULL;
	size_t out_len = 0, n;
	FILE *f, *o;

	snprintf(path, sizeof(path), "%s/data.json", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(data, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/check.py", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "import json, sys\nd = json.load(open(sys.argv[1], encoding='utf-8'))\n%s",
		code);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 '%s/check.py' '%s/data.json'", tmpdir, tmpdir);
	f = popen(cmd, "r");
	assert_non_null(f);
	o = open_memstream(&out, &out_len);
	while ((n = fread(buf, 1, sizeof(buf), f)))
		fwrite(buf, 1, n, o);
	fclose(o);
	assert_int_equal(pclose(f), 0);
	return out;
}

static void test_html_tables(void **state)
{
	static const char check[] =
		"S = d['strings']\n"
		"assert S[0] == ''\n"
		"m = d['meta']\n"
		"print('meta', m['samples'], m['frequency_hz'], m['period_ns'], m['start_ms'],\n"
		"      m['duration_ns'], m['ringbuf_drops'], m['processes'], S[m['host']])\n"
		"for l in d['locs']:\n"
		"    print('loc', S[l[0]], l[1], *[x if isinstance(x, str) else S[x] for x in "
		"l[2:]])\n"
		"for s in d['stacks']:\n"
		"    print('stack', *s)\n"
		"s = d['samples']\n"
		"assert len(s) % 5 == 0\n"
		"for i in range(0, len(s), 5):\n"
		"    p, ls, st, c, dr = s[i:i + 5]\n"
		"    assert ls < len(d['sets']) and st < len(d['stacks'])\n"
		"    labels = d['sets'][ls]\n"
		"    print('sample', S[p], st, c, dr,\n"
		"          *['%s=%s' % (S[labels[j]], S[labels[j + 1]]) for j in range(0, "
		"len(labels), 2)])\n";
	static const char want[] =
		"meta 16 99 10101010 1700000000123 2000000000 3 2 rtl\\xe2\\x80\\xaeevil\n"
		"loc  0\n"
		"loc </script><script>alert(1)</script> 0 outer <img src=x onerror=alert(1)>\n"
		"loc </script><script>alert(1)</script> 0 0xfff\n"
		"loc </script><script>alert(1)</script> 0 main\n"
		"loc [kernel.kallsyms] 1 nul\\x00byte\\x0a\\x7f\n"
		"stack\n"
		"stack 3 2 1 4\n"
		"sample <!--<script> 0 2 1\n"
		"sample srv 1 5 0 <img src=x onerror=alert(1)>=k "
		"k=</script><script>alert(1)</script>\n"
		"sample srv 1 1 0 k=<img src=x onerror=alert(1)> q\"u'o`te&amp;=k\n"
		"sample srv 1 1 0 k=q\"u'o`te&amp; line\\xe2\\x80\\xa8sep\\xe2\\x80\\xa9=k\n"
		"sample srv 1 1 0 bad\\xff\\xfe\\x80\\xc3=k "
		"k=line\\xe2\\x80\\xa8sep\\xe2\\x80\\xa9\n"
		"sample srv 1 1 0 k=bad\\xff\\xfe\\x80\\xc3 nul\\x00byte\\x0a\\x7f=k\n"
		"sample srv 1 1 0 back\\x5cslash\\x5cx41=k k=nul\\x00byte\\x0a\\x7f\n"
		"sample srv 1 1 0 <!--<script>=k k=back\\x5cslash\\x5cx41\n"
		"sample srv 1 1 0 k=<!--<script> rtl\\xe2\\x80\\xaeevil=k\n"
		"sample srv 1 1 0 caf\xc3\xa9 \xf0\x9f\x94\xa5=k k=rtl\\xe2\\x80\\xaeevil\n"
		"sample srv 1 1 0 </script><script>alert(1)</script>=k k=caf\xc3\xa9 "
		"\xf0\x9f\x94\xa5\n";
	/*
	 * Threads 11 and 12 of srv merged (5); labels sorted by key bytes; pid 20
	 * named by its comm, with no stack and the dropped flag.
	 */
	struct symprof *sp = hostile_profile();
	size_t len;
	char *page = html(sp, &len), *out;

	out = python(blob(page), check);
	if (strcmp(out, want))
		fail_msg("got:\n%s\nwant:\n%s", out, want);
	free(out);
	free(page);
	symprof__free(sp);
}

static void test_html_empty(void **state)
{
	struct symprof *sp = symprof__new();
	size_t len;
	char *page, *out;

	assert_non_null(sp);
	page = html(sp, &len);
	assert_non_null(strstr(page, "</html>"));
	out = python(blob(page), "print(d['meta']['samples'], d['meta']['processes'], d['samples'],"
				 " d['locs'], d['stacks'], d['sets'], d['strings'])\n");
	assert_string_equal(out, "0 0 [] [[0, 0]] [[]] [[]] ['']\n");
	free(out);
	free(page);
	symprof__free(sp);
}

/* A Python frame is a kind of its own (2), with its source: not a user frame. */
static void test_html_python(void **state)
{
	struct symprof *sp = symprof__new();
	struct sp_mapping exe = {.start = 0x1000, .limit = 0x9000};
	struct sp_function burn = {.name = symprof__cstring(sp, "burn"),
				   .file = symprof__cstring(sp, "pyburn.py")};
	struct sp_line line = {.function = symprof__function(sp, &burn), .line = 7};
	struct sp_location loc = {.kind = FRAME_PYTHON,
				  .address = 0xb000000000000001ull,
				  .module_offset = SP_UNKNOWN,
				  .function_offset = SP_UNKNOWN};
	__u32 locs[2];
	size_t len;
	char *page, *out;

	exe.file = symprof__cstring(sp, "/usr/bin/python3");
	locs[0] = symprof__location(sp, &loc, &line, 1);
	line = (struct sp_line){.function = function(sp, symprof__cstring(sp, "main"))};
	loc = (struct sp_location){.mapping = symprof__mapping(sp, &exe),
				   .address = 0x1100,
				   .module_offset = 0x100,
				   .function_offset = SP_UNKNOWN};
	locs[1] = symprof__location(sp, &loc, &line, 1);
	assert_int_equal(
		symprof__add_sample(sp, &(struct sp_sample){.pid = 1,
							    .tid = 1,
							    .stack = symprof__stack(sp, locs, 2),
							    .count = 3}),
		0);
	page = html(sp, &len);
	out = python(blob(page), "S = d['strings']\n"
				 "for l, s in zip(d['locs'][1:], d['srcs'][1:]):\n"
				 "    print(S[l[0]] or '-', l[1], S[l[2]], S[s[0]], s[1])\n");
	assert_string_equal(out, "- 2 burn pyburn.py 7\n/usr/bin/python3 0 main  0\n");
	free(out);
	free(page);
	symprof__free(sp);
}

/* Each runtime's frames are a kind of their own: Python 2, Java 6, JavaScript 7. */
static void test_html_runtime_kinds(void **state)
{
	static const char *const names[] = {
		[FRAME_PYTHON] = "burn", [FRAME_JAVA] = "Burn.spin", [FRAME_JS] = "spin"};
	struct symprof *sp = symprof__new();
	struct sp_sample s = {.pid = 1, .tid = 1, .count = 2};
	__u32 locs[FRAME_JS], kind;
	size_t len;
	char *page, *out;

	for (kind = FRAME_PYTHON; kind <= FRAME_JS; kind++) {
		struct sp_line line = {.function = function(sp, symprof__cstring(sp, names[kind]))};
		struct sp_location loc = {.kind = kind,
					  .address = 0xb000000000000000ull + kind,
					  .module_offset = SP_UNKNOWN,
					  .function_offset = SP_UNKNOWN};

		locs[kind - 1] = symprof__location(sp, &loc, &line, 1);
	}
	s.stack = symprof__stack(sp, locs, FRAME_JS);
	assert_int_equal(symprof__add_sample(sp, &s), 0);
	page = html(sp, &len);
	out = python(blob(page), "S = d['strings']\n"
				 "for l in d['locs'][1:]:\n"
				 "    print(l[1], S[l[2]])\n");
	assert_string_equal(out, "2 burn\n6 Burn.spin\n7 spin\n");
	free(out);
	free(page);
	symprof__free(sp);
}

static void test_html_write_error(void **state)
{
	struct symprof *sp = hostile_profile();
	FILE *f = fopen("/dev/full", "w");

	assert_non_null(f);
	assert_true(output__write_html(f, sp, NULL) < 0);
	fclose(f);
	symprof__free(sp);
}

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/lp-test-html-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html_escaping),	   cmocka_unit_test(test_html_tables),
		cmocka_unit_test(test_html_empty),	   cmocka_unit_test(test_html_python),
		cmocka_unit_test(test_html_runtime_kinds), cmocka_unit_test(test_html_write_error),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Folded and JSON writers: exact folded lines, lossless escaping of hostile
 * bytes, JSON that Python parses, and surrogate escapes that give back the
 * exact bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "kallsyms.h"
#include "own_snapshot.h"
#include "format/output.h"
#include "profile/profile.h"
#include "profile/symprof.h"
#include "symbolize/symbols.h"

int lp_out_leaf(int x);
int lp_out_caller(int x);

__attribute__((noinline)) int lp_out_leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

__attribute__((noinline)) int lp_out_caller(int x)
{
	__asm__ volatile("" : "+r"(x));
	return lp_out_leaf(x) * 2;
}

struct lbl {
	const char *key;
	size_t key_len;
	const char *value;
	size_t value_len;
};

#define L(k, v)                                                                                    \
	{                                                                                          \
		k, sizeof(k) - 1, v, sizeof(v) - 1                                                 \
	}

/* Adds one sample record laid out as the BPF program writes it. */
static void add(struct profile *p, __u32 pid, __u32 tid, const char *comm, __u32 status,
		const __u64 *k, size_t nk, const __u64 *u, size_t nu, const struct lbl *l,
		size_t nl)
{
	unsigned char buf[4096];
	struct lp_sample h = {0};
	size_t off = sizeof(h), lstart, i;

	h.hdr.type = LP_EVENT_SAMPLE;
	h.tgid = pid;
	h.tid = tid;
	h.status = status;
	h.kstack_len = nk;
	h.ustack_len = nu;
	h.label_count = nl;
	memcpy(h.comm, comm, strnlen(comm, sizeof(h.comm)));
	if (nk)
		memcpy(buf + off, k, nk * 8);
	off += nk * 8;
	if (nu)
		memcpy(buf + off, u, nu * 8);
	off += nu * 8;
	lstart = off;
	for (i = 0; i < nl; i++) {
		struct lp_label_hdr lh = {l[i].key_len, l[i].value_len};

		memcpy(buf + off, &lh, sizeof(lh));
		off += sizeof(lh);
		memcpy(buf + off, l[i].key, l[i].key_len);
		off += l[i].key_len;
		memcpy(buf + off, l[i].value, l[i].value_len);
		off += l[i].value_len;
	}
	h.label_bytes = off - lstart;
	h.hdr.size = off;
	memcpy(buf, &h, sizeof(h));
	assert_int_equal(profile__add_sample(p, buf, off), 0);
}

/* Symbolizes p (sym may be NULL) and writes it in format; returns the text. */
static char *render(enum output_format format, const struct profile *p, struct symbolizer *sym,
		    const struct symprof_build_opts *opts, size_t *len)
{
	struct symprof *sp = symprof__from_profile(p, sym, opts);
	char *out = NULL;
	FILE *f = open_memstream(&out, len);

	assert_non_null(sp);
	assert_non_null(f);
	assert_int_equal(output__write(f, format, sp, NULL), 0);
	fclose(f);
	symprof__free(sp);
	return out;
}

static char *folded(const struct profile *p, struct symbolizer *sym)
{
	size_t len;

	return render(OUTPUT_FOLDED, p, sym, NULL, &len);
}

static const __u64 kst[] = {0xffffffff81000010ULL};
static const __u64 ust[] = {0x401010, 0x401020};

static void test_folded_basic(void **state)
{
	const struct lbl l[] = {L("k=1", "v,x"), L("a", "b c")};
	struct profile *p = profile__new(NULL, NULL);
	char *out;

	add(p, 1, 1, "my;comm", 0, kst, 1, ust, 2, l, 2);
	add(p, 1, 2, "my;comm", 0, kst, 1, ust, 2, l, 2); /* other tid: same line */
	add(p, 2, 3, "my;comm", 0, kst, 1, ust, 2, l, 2); /* other pid: same line */
	add(p, 1, 1, "idle", 0, NULL, 0, NULL, 0, NULL, 0);
	add(p, 1, 1, "user", 0, NULL, 0, ust, 1, NULL, 0);
	out = folded(p, NULL);
	assert_string_equal(out, "idle;[] 1\n"
				 "my\\x3bcomm;[a=b c,k\\x3d1=v\\x2cx];[unknown];[unknown];"
				 "[unknown]_[k] 3\n"
				 "user;[];[unknown] 1\n");
	free(out);
	profile__free(p);
}

/* Undoes the folded escaping of one field. */
static size_t unescape(const char *s, size_t n, unsigned char *out)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		unsigned int v;

		if (s[i] == '\\') {
			assert_true(i + 3 < n);
			assert_int_equal(s[i + 1], 'x');
			assert_int_equal(sscanf(s + i + 2, "%2x", &v), 1);
			out[o++] = v;
			i += 3;
		} else {
			out[o++] = s[i];
		}
	}
	return o;
}

static void test_folded_hostile_bytes(void **state)
{
	static const char value[] = "line1\nline2;[x]=y,z \\ \x01\x7f\xff\xfe\xc3\xa9\xe2\x82"
				    "\xed\xa0\x80\xf4\x90\x80\x80\xc0\xaf end";
	const struct lbl l[] = {{"k\n", 2, value, sizeof(value) - 1}};
	struct profile *p = profile__new(NULL, NULL);
	unsigned char decoded[256];
	const char *v, *end;
	char *out;
	size_t n, i;

	add(p, 1, 1, "c\r\n\x80", 0, NULL, 0, NULL, 0, l, 1);
	out = folded(p, NULL);
	/* One line, of printable ASCII and the one valid UTF-8 character, copied as is. */
	assert_int_equal(strchr(out, '\n') - out, strlen(out) - 1);
	for (i = 0; out[i] != '\n'; i++) {
		if (!memcmp(out + i, "\xc3\xa9", 2))
			i++;
		else
			assert_true(out[i] >= 0x20 && out[i] < 0x7f);
	}
	assert_non_null(strstr(out, "\xc3\xa9"));
	assert_null(strstr(out, "\\xc3"));
	assert_memory_equal(out, "c\\x0d\\x0a\\x80;[k\\x0a=", 21);
	/* Fields split on structural characters; each decodes to the exact bytes. */
	v = out + 21;
	end = strchr(v, ']');
	assert_non_null(end);
	n = unescape(v, end - v, decoded);
	assert_int_equal(n, sizeof(value) - 1);
	assert_memory_equal(decoded, value, n);
	assert_string_equal(end, "] 1\n");
	free(out);
	profile__free(p);
}

static char tmpdir[64];

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/lp-test-output-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

static void test_folded_symbolized(void **state)
{
	__u64 sched = kallsyms_addr("schedule");
	struct symbolizer *sym = symbolizer__new(NULL);
	struct profile *p = profile__new(sym, NULL);
	struct own_snapshot own;
	/* interrupted at its first instruction, under kernel frames: the leaf itself, exact */
	const __u64 u[] = {(uintptr_t)lp_out_leaf, (uintptr_t)lp_out_caller + 4};
	char path[PATH_MAX], *out;
	unsigned char junk[4096];
	void *m;
	int fd;

	/* An executable mapping of a file without symbols, with a name to escape. */
	snprintf(path, sizeof(path), "%s/my lib;x.so", tmpdir);
	memset(junk, 0xcc, sizeof(junk));
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, junk, sizeof(junk)), sizeof(junk));
	m = mmap(NULL, sizeof(junk), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		fail_msg("executable mapping of %s: %s (a noexec /tmp?)", path, strerror(errno));
	own_snapshot__use(&own, p, sym, getpid());
	add(p, getpid(), 1, "t", 0, (const __u64[]){sched + 4}, 1, u, 2, NULL, 0);
	add(p, getpid(), 1, "t", 0, NULL, 0, (const __u64[]){(uintptr_t)m + 0x64}, 1, NULL, 0);
	out = folded(p, sym);
	assert_string_equal(out, "t;[];[my lib\\x3bx.so+0x64] 1\n"
				 "t;[];lp_out_caller;lp_out_leaf;schedule_[k] 1\n");
	free(out);
	profile__free(p);
	symbolizer__free(sym);
	munmap(m, sizeof(junk));
}

static void test_folded_dropped(void **state)
{
	const struct lbl l[] = {L("k", "v")};
	struct profile_opts opts = {};
	struct profile_stats st;
	struct profile *p;
	char *out;

	/* Past the memory limit after the first sample: the second one loses its stack. */
	p = profile__new(NULL, NULL);
	profile__stats(p, &st);
	profile__free(p);
	opts.max_bytes = st.bytes + 1024;
	p = profile__new(NULL, &opts);
	add(p, 1, 1, "c", 0, kst, 1, ust, 2, l, 1);
	add(p, 1, 1, "c", 0, NULL, 0, (const __u64[]){0x999}, 1, NULL, 0);
	out = folded(p, NULL);
	assert_string_equal(out, "c;[];[dropped] 1\n"
				 "c;[k=v];[unknown];[unknown];[unknown]_[k] 1\n");
	free(out);
	profile__free(p);
}

/* Runs Python's json module on the document and returns its summary. */
static char *python_summary(const char *doc, size_t len)
{
	static const char script[] =
		"import json, sys\n"
		"d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
		"h = lambda s: s.encode('utf-8', 'surrogateescape').hex()\n"
		"print('doc', d['format'], d['version'], d['frequency_hz'], "
		"d['start_time_unix_ns'],"
		" d['duration_ns'])\n"
		"print('counters', ' '.join('%s=%s' % kv for kv in d['counters'].items()))\n"
		"for s in d['samples']:\n"
		"    print('sample', s['pid'], s['tid'], h(s['comm']), s['count'],"
		" ','.join(s['flags']), len(s['frames']))\n"
		"    for k, v in s['labels'].items():\n"
		"        print('label', h(k), h(v))\n"
		"    for f in s['frames']:\n"
		"        print('frame', f['address'], f['kernel'], f['module'], f['function'],"
		" f['offset'], f['module_offset'], f['build_id'] is not None)\n";
	char doc_path[128], script_path[128], cmd[512], *out = NULL;
	size_t out_len = 0, n;
	char buf[4096];
	FILE *f, *o;

	snprintf(doc_path, sizeof(doc_path), "%s/doc.json", tmpdir);
	snprintf(script_path, sizeof(script_path), "%s/summary.py", tmpdir);
	f = fopen(doc_path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(doc, 1, len, f), len);
	fclose(f);
	f = fopen(script_path, "w");
	assert_non_null(f);
	fputs(script, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 '%s' '%s'", script_path, doc_path);
	f = popen(cmd, "r");
	assert_non_null(f);
	o = open_memstream(&out, &out_len);
	while ((n = fread(buf, 1, sizeof(buf), f)))
		fwrite(buf, 1, n, o);
	fclose(o);
	assert_int_equal(pclose(f), 0);
	return out;
}

static char *json(const struct profile *p, struct symbolizer *sym,
		  const struct symprof_build_opts *opts, size_t *len)
{
	return render(OUTPUT_JSON, p, sym, opts, len);
}

static void test_json_round_trip(void **state)
{
	static const char value[] =
		"quote\" back\\ nl\n tab\t nul\0 del\x7f bad\xff\x80 "
		"utf8\xc3\xa9\xf0\x9f\x98\x80 surrogate\xed\xa0\x80 trunc\xe2\x82";
	const struct lbl l[] = {{"k\"", 2, value, sizeof(value) - 1}, L("\xfe", ""), L("a", "1")};
	const struct lp_counters counters = {
		.samples = 10, .ringbuf_drops = 2, .kernel_threads = 1};
	const struct symprof_build_opts meta = {
		.frequency_hz = 99,
		.start_time_unix_ns = 1700000000123456789ULL,
		.duration_ns = 5000000000ULL,
		.counters = &counters,
	};
	struct profile *p = profile__new(NULL, NULL);
	char *doc, *sum, expect[2048];
	size_t len, i, off;

	add(p, 7, 8, "c\"\\\n\xff", LP_ST_LABELS_READ | LP_ST_TRUNCATED | (1u << 20), kst, 1, ust,
	    2, l, 3);
	add(p, 7, 8, "c\"\\\n\xff", LP_ST_READ_FAULT, kst, 1, ust, 2, l, 3);
	add(p, 9, 9, "x", 0, NULL, 0, NULL, 0, NULL, 0);
	doc = json(p, NULL, &meta, &len);
	/* Nothing but ASCII and the valid UTF-8 sequences reaches the document. */
	assert_null(memchr(doc, '\xff', len));
	assert_null(memchr(doc, '\0', len));
	sum = python_summary(doc, len);
	off = snprintf(expect, sizeof(expect),
		       "doc labelprof-json 1 99 1700000000123456789 5000000000\n"
		       "counters samples=10 samples_with_labels=0 label_read_faults=0 "
		       "truncations=0 malformed_labels=0 ringbuf_drops=2 event_drops=0 "
		       "unknown_pids=0 filtered=0 kernel_threads=1 null_values=0 "
		       "samples_received=3 "
		       "records_rejected=0 samples_dropped=0 unwind_misses=0\n"
		       "sample 7 8 63225c0aff 2 labels_read,read_fault,truncated,bit_20 3\n"
		       "label 61 31\n"
		       "label 6b22 ");
	for (i = 0; i < sizeof(value) - 1; i++)
		off += snprintf(expect + off, sizeof(expect) - off, "%02x",
				(unsigned char)value[i]);
	snprintf(expect + off, sizeof(expect) - off,
		 "\nlabel fe \n"
		 "frame 0xffffffff81000010 True None None None None False\n"
		 "frame 0x401010 False None None None None False\n"
		 "frame 0x401020 False None None None None False\n"
		 "sample 9 9 78 1  0\n");
	assert_string_equal(sum, expect);
	free(sum);
	free(doc);
	profile__free(p);
}

static void test_json_symbolized(void **state)
{
	__u64 sched = kallsyms_addr("schedule");
	struct symbolizer *sym = symbolizer__new(NULL);
	struct profile *p = profile__new(sym, NULL);
	struct own_snapshot own;
	const __u64 u[] = {(uintptr_t)lp_out_leaf + 2, (uintptr_t)lp_out_caller + 4};
	char exe[PATH_MAX], *doc, *sum, expect[PATH_MAX + 512];
	size_t len;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	own_snapshot__use(&own, p, sym, getpid());
	add(p, getpid(), 5, "t", 0, (const __u64[]){sched + 4, sched + 8}, 2, u, 2, NULL, 0);
	doc = json(p, sym, NULL, &len);
	sum = python_summary(doc, len);
	/* Leaf first: kernel frames, then user frames; every frame after the leaf is a return
	 * address. */
	snprintf(expect, sizeof(expect),
		 "sample %d 5 74 1  4\n"
		 "frame 0x%llx True [kernel.kallsyms] schedule 4 0x%llx True\n"
		 "frame 0x%llx True [kernel.kallsyms] schedule 8 0x%llx True\n"
		 "frame 0x%llx False %s lp_out_leaf 2 0x",
		 getpid(), (unsigned long long)sched + 4, (unsigned long long)sched + 4,
		 (unsigned long long)sched + 8, (unsigned long long)sched + 8,
		 (unsigned long long)u[0], exe);
	assert_non_null(strstr(sum, expect));
	snprintf(expect, sizeof(expect), "frame 0x%llx False %s lp_out_caller 4 0x",
		 (unsigned long long)u[1], exe);
	assert_non_null(strstr(sum, expect));
	free(sum);
	free(doc);
	profile__free(p);
	symbolizer__free(sym);
}

static void test_json_empty(void **state)
{
	struct profile *p = profile__new(NULL, NULL);
	char *doc, *sum;
	size_t len;

	doc = json(p, NULL, NULL, &len);
	sum = python_summary(doc, len);
	assert_non_null(strstr(sum, "doc labelprof-json 1 0 0 0\n"));
	assert_null(strstr(sum, "\nsample "));
	free(sum);
	free(doc);
	profile__free(p);
}

static void test_write_error(void **state)
{
	struct profile *p = profile__new(NULL, NULL);
	FILE *f = fopen("/dev/full", "w");
	struct symprof *sp;
	int format;

	assert_non_null(f);
	add(p, 1, 1, "c", 0, kst, 1, ust, 2, NULL, 0);
	sp = symprof__from_profile(p, NULL, NULL);
	assert_non_null(sp);
	for (format = 0; format < OUTPUT_FORMAT_COUNT; format++) {
		if (!output__format_name(format))
			continue;
		assert_true(output__write(f, format, sp, NULL) < 0);
		clearerr(f);
	}
	fclose(f);
	symprof__free(sp);
	profile__free(p);
}

static void test_utf8_len(void **state)
{
	static const struct {
		const char *s;
		size_t n, len;
	} cases[] = {
		{"a", 1, 1},
		{"\xc3\xa9", 2, 2},
		{"\xc3", 1, 0},
		{"\xc0\xaf", 2, 0}, /* overlong */
		{"\xc1\xbf", 2, 0},
		{"\xe0\x80\xaf", 3, 0}, /* overlong */
		{"\xe0\xa0\x80", 3, 3},
		{"\xed\x9f\xbf", 3, 3}, /* U+D7FF */
		{"\xed\xa0\x80", 3, 0}, /* U+D800, a surrogate */
		{"\xee\x80\x80", 3, 3},
		{"\xf0\x8f\xbf\xbf", 4, 0}, /* overlong */
		{"\xf0\x90\x80\x80", 4, 4},
		{"\xf4\x8f\xbf\xbf", 4, 4}, /* U+10FFFF */
		{"\xf4\x90\x80\x80", 4, 0}, /* past U+10FFFF */
		{"\xf5\x80\x80\x80", 4, 0},
		{"\x80", 1, 0},
		{"\xe2\x82", 2, 0},
		{"\xe2\x82\x41", 3, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (output__utf8_len((const unsigned char *)cases[i].s, cases[i].n) != cases[i].len)
			fail_msg("case %zu", i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded_basic),
		cmocka_unit_test(test_folded_hostile_bytes),
		cmocka_unit_test_teardown(test_folded_symbolized, kallsyms_restore),
		cmocka_unit_test(test_folded_dropped),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test_teardown(test_json_symbolized, kallsyms_restore),
		cmocka_unit_test(test_json_empty),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_utf8_len),
	};

	lp_out_caller(1);
	return cmocka_run_group_tests(tests, setup, teardown);
}

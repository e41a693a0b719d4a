// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/PID/maps parser: real layouts, odd paths, hostile input. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc/maps.h"

static struct maps *parse(const char *text, unsigned int flags)
{
	struct maps *m = NULL;

	assert_int_equal(maps__parse(text, strlen(text), flags, &m), 0);
	assert_non_null(m);
	return m;
}

static void test_fields(void **state)
{
	const char *text =
		"55d7f66db000-55d7f66dd000 r--p 00000000 fe:00 247134                     "
		"/usr/bin/cat\n"
		"55d7f66dd000-55d7f66e2000 r-xp 00002000 fe:00 247134                     "
		"/usr/bin/cat\n"
		"55d8100f1000-55d810112000 rw-p 00000000 00:00 0                          [heap]\n"
		"7fb18a44e000-7fb18a470000 rw-p 00000000 00:00 0 \n"
		"7fb18a4f7000-7fb18a64d000 r-xp 00026000 103:0a 332835                    "
		"/usr/lib/libc.so.6\n"
		"7fb18a6b6000-7fb18a6bd000 r--s 00000000 fe:00 332280                     "
		"/usr/lib/gconv.cache\n"
		"7ffd5a1f1000-7ffd5a1f3000 r-xp 00000000 00:00 0                          [vdso]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  "
		"[vsyscall]";
	struct maps *m = parse(text, 0);
	const struct maps_entry *e;

	assert_int_equal(maps__count(m), 8);
	e = maps__entry(m, 1);
	assert_int_equal(e->start, 0x55d7f66dd000ULL);
	assert_int_equal(e->end, 0x55d7f66e2000ULL);
	assert_int_equal(e->offset, 0x2000);
	assert_int_equal(e->dev_major, 0xfe);
	assert_int_equal(e->dev_minor, 0);
	assert_int_equal(e->inode, 247134);
	assert_int_equal(e->prot, MAPS_PROT_READ | MAPS_PROT_EXEC);
	assert_int_equal(e->kind, MAPS_FILE);
	assert_false(e->deleted);
	assert_string_equal(e->path, "/usr/bin/cat");

	e = maps__entry(m, 2);
	assert_int_equal(e->kind, MAPS_SPECIAL);
	assert_string_equal(e->path, "[heap]");
	e = maps__entry(m, 3);
	assert_int_equal(e->kind, MAPS_ANON);
	assert_string_equal(e->path, "");
	e = maps__entry(m, 4);
	assert_int_equal(e->dev_major, 0x103);
	assert_int_equal(e->dev_minor, 0x0a);
	e = maps__entry(m, 5);
	assert_int_equal(e->prot, MAPS_PROT_READ | MAPS_PROT_SHARED);
	e = maps__entry(m, 6);
	assert_int_equal(e->kind, MAPS_VDSO);
	/* The last line has no newline. */
	e = maps__entry(m, 7);
	assert_string_equal(e->path, "[vsyscall]");
	assert_int_equal(e->end, 0xffffffffff601000ULL);
	assert_null(maps__entry(m, 8));
	maps__free(m);
}

static void test_exec_only(void **state)
{
	const char *text = "1000-2000 r--p 00000000 08:01 12 /a\n"
			   "2000-3000 r-xp 00001000 08:01 12 /a\n"
			   "3000-4000 rw-p 00002000 08:01 12 /a\n"
			   "5000-6000 rwxp 00000000 00:00 0 \n";
	struct maps *m = parse(text, MAPS_EXEC_ONLY);

	assert_int_equal(maps__count(m), 2);
	assert_int_equal(maps__entry(m, 0)->start, 0x2000);
	assert_int_equal(maps__entry(m, 1)->kind, MAPS_ANON);
	maps__free(m);
}

static void test_odd_paths(void **state)
{
	const char *text = "1000-2000 r-xp 00000000 08:01 12 /opt/my app/lib x.so\n"
			   "2000-3000 r-xp 00000000 08:01 13 /tmp/gone.so (deleted)\n"
			   "3000-4000 r-xp 00000000 00:01 14 /memfd:jit code (deleted)\n"
			   "4000-5000 r-xp 00000000 08:01 15 /weird\\012name\n"
			   "5000-6000 r-xp 00000000 08:01 16 /x (deleted) (deleted)\n"
			   "6000-7000 r-xp 00000000 08:01 17  (deleted)\n"
			   "7000-8000 r-xp 00000000 00:0e 18 anon_inode:[perf_event]\n"
			   "8000-9000 r-xp 00000000 00:00 0 [anon:my region]\n";
	struct maps *m = parse(text, 0);

	assert_int_equal(maps__count(m), 8);
	assert_string_equal(maps__entry(m, 0)->path, "/opt/my app/lib x.so");
	assert_false(maps__entry(m, 0)->deleted);
	assert_string_equal(maps__entry(m, 1)->path, "/tmp/gone.so");
	assert_true(maps__entry(m, 1)->deleted);
	assert_string_equal(maps__entry(m, 2)->path, "/memfd:jit code");
	assert_true(maps__entry(m, 2)->deleted);
	assert_int_equal(maps__entry(m, 2)->kind, MAPS_FILE);
	assert_string_equal(maps__entry(m, 3)->path, "/weird\\012name");
	/* Only one suffix is the kernel's. */
	assert_string_equal(maps__entry(m, 4)->path, "/x (deleted)");
	/* A path that is nothing but the suffix is a path, not a suffix. */
	assert_string_equal(maps__entry(m, 5)->path, "(deleted)");
	assert_false(maps__entry(m, 5)->deleted);
	assert_int_equal(maps__entry(m, 6)->kind, MAPS_SPECIAL);
	assert_string_equal(maps__entry(m, 7)->path, "[anon:my region]");
	maps__free(m);
}

static void test_malformed_lines(void **state)
{
	static const char *const bad[] = {
		"",
		"\n",
		"1000-2000",
		"1000-2000 r-xp",
		"1000-2000 r-xp 0 08:01",
		"1000-2000 r-xp 0 08:01 x /a",
		"1000 2000 r-xp 0 08:01 1 /a",
		"-2000 r-xp 0 08:01 1 /a",
		"2000-1000 r-xp 0 08:01 1 /a", /* end before start */
		"1000-1000 r-xp 0 08:01 1 /a", /* empty */
		"1000-2000 rxp 0 08:01 1 /a",
		"1000-2000 r-xq 0 08:01 1 /a",
		"1000-2000 R-xp 0 08:01 1 /a",
		"10000000000000000-10000000000000001 r-xp 0 08:01 1 /a", /* 17 hex digits */
		"1000-2000 r-xp 0 08:01 99999999999999999999 /a",	 /* inode overflow */
		"1000-2000 r-xp 0 1000:01 1 /a",			 /* major too large */
		"1000-2000 r-xp 0 08:01 1/a",
		"1000-2000  r-xp 0 08:01 1 /a",
		"g000-2000 r-xp 0 08:01 1 /a",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct maps *m = parse(bad[i], 0);

		if (maps__count(m))
			fail_msg("accepted: \"%s\"", bad[i]);
		maps__free(m);
	}
}

static void test_nul_in_path(void **state)
{
	static const char text[] = "1000-2000 r-xp 0 08:01 1 /a\0b\n3000-4000 r-xp 0 08:01 1 /c\n";
	struct maps *m = NULL;

	assert_int_equal(maps__parse(text, sizeof(text) - 1, 0, &m), 0);
	assert_int_equal(maps__count(m), 1);
	assert_string_equal(maps__entry(m, 0)->path, "/c");
	maps__free(m);
}

static void test_sort_and_find(void **state)
{
	const char *text = "5000-6000 r-xp 0 08:01 1 /c\n"
			   "1000-3000 r-xp 0 08:01 1 /a\n"
			   "2000-4000 r-xp 0 08:01 1 /overlaps-a\n"
			   "3000-4000 r-xp 0 08:01 1 /b\n";
	struct maps *m = parse(text, 0);

	assert_int_equal(maps__count(m), 3);
	assert_string_equal(maps__entry(m, 0)->path, "/a");
	assert_string_equal(maps__entry(m, 1)->path, "/b");
	assert_string_equal(maps__entry(m, 2)->path, "/c");
	assert_null(maps__find(m, 0xfff));
	assert_string_equal(maps__find(m, 0x1000)->path, "/a");
	assert_string_equal(maps__find(m, 0x2fff)->path, "/a");
	assert_string_equal(maps__find(m, 0x3000)->path, "/b");
	assert_null(maps__find(m, 0x4000));
	assert_null(maps__find(m, 0x4fff));
	assert_string_equal(maps__find(m, 0x5fff)->path, "/c");
	assert_null(maps__find(m, 0x6000));
	assert_null(maps__find(m, ~0ULL));
	maps__free(m);
}

void lp_maps_probe(void);
__attribute__((noinline)) void lp_maps_probe(void)
{
	__asm__ volatile("");
}

static void test_read_self(void **state)
{
	char exe[PATH_MAX];
	const struct maps_entry *e;
	struct maps *m;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(maps__read(getpid(), MAPS_EXEC_ONLY, &m), 0);
	e = maps__find(m, (uintptr_t)lp_maps_probe);
	assert_non_null(e);
	assert_int_equal(e->kind, MAPS_FILE);
	assert_true(e->prot & MAPS_PROT_EXEC);
	assert_string_equal(e->path, exe);
	maps__free(m);
}

static void test_read_missing(void **state)
{
	struct maps *m = (struct maps *)1;

	/* Beyond pid_max's largest value: never a process. */
	assert_int_equal(maps__read(INT_MAX, 0, &m), -ESRCH);
	assert_null(m);
	maps__free(NULL);
}

static void test_path_in_root(void **state)
{
	char root[PATH_MAX] = "x";

	/* the kernel names our own root "/" for us: nothing to take off */
	maps__read_root(getpid(), root, sizeof(root));
	assert_string_equal(root, "");
	assert_string_equal(maps__path_in_root("/usr/bin/x", ""), "/usr/bin/x");
	assert_string_equal(maps__path_in_root("/srv/jail/usr/bin/x", "/srv/jail"), "/usr/bin/x");
	/* outside the root (mapped before a chroot), or a sibling with the same prefix */
	assert_string_equal(maps__path_in_root("/usr/lib/libc.so.6", "/srv/jail"),
			    "/usr/lib/libc.so.6");
	assert_string_equal(maps__path_in_root("/srv/jailbreak/x", "/srv/jail"),
			    "/srv/jailbreak/x");
	assert_string_equal(maps__path_in_root("/srv/jail", "/srv/jail"), "/srv/jail");
}

/* Mutated real lines and random bytes: run under ASan, nothing may crash. */
static void test_fuzz(void **state)
{
	const char *seed = "55d7f66dd000-55d7f66e2000 r-xp 00002000 fe:00 247134   /usr/bin/c at\n"
			   "7ffd5a1f1000-7ffd5a1f3000 r-xp 00000000 00:00 0        [vdso]\n"
			   "1000-2000 r-xp 0 08:01 1 /x (deleted)\n";
	size_t len = strlen(seed), i, k;
	unsigned int rng = 12345;
	char buf[256];

	for (i = 0; i < 50000; i++) {
		struct maps *m;
		size_t n = len, j;

		memcpy(buf, seed, len);
		for (k = 0; k < 1 + i % 8; k++) {
			rng = rng * 1103515245 + 12345;
			buf[(rng >> 8) % len] =
				i % 3 ? (char)(rng >> 20) : "0f-: \n(x"[(rng >> 20) % 8];
		}
		rng = rng * 1103515245 + 12345;
		n = (rng >> 8) % (len + 1);
		assert_int_equal(maps__parse(buf, n, i & 1, &m), 0);
		for (j = 0; j < maps__count(m); j++) {
			const struct maps_entry *e = maps__entry(m, j);

			assert_true(e->start < e->end);
			assert_true(strlen(e->path) < n);
			if (j)
				assert_true(maps__entry(m, j - 1)->end <= e->start);
			assert_ptr_equal(maps__find(m, e->start), e);
		}
		maps__free(m);
	}
}

/* A snapshot's executable part: its own copy, paths and order kept; empty stays empty. */
static void test_exec_only_copy(void **state)
{
	const char *text = "1000-2000 r--p 00000000 fe:00 1 /a\n"
			   "2000-3000 r-xp 00001000 fe:00 1 /a\n"
			   "3000-4000 rw-p 00000000 00:00 0 [heap]\n"
			   "5000-6000 r-xp 00000000 fe:00 2 /lib/b.so\n";
	struct maps *m = parse(text, 0), *x, *empty = parse("", 0);

	assert_int_equal(maps__exec_only(m, &x), 0);
	maps__free(m);
	assert_int_equal(maps__count(x), 2);
	assert_string_equal(maps__entry(x, 0)->path, "/a");
	assert_int_equal(maps__entry(x, 0)->start, 0x2000);
	assert_string_equal(maps__entry(x, 1)->path, "/lib/b.so");
	assert_non_null(maps__find(x, 0x5800));
	assert_null(maps__find(x, 0x3800));
	maps__free(x);
	assert_int_equal(maps__exec_only(empty, &x), 0);
	assert_int_equal(maps__count(x), 0);
	maps__free(x);
	maps__free(empty);
}

/* A reference taken keeps the snapshot alive after its first owner lets go. */
static void test_references(void **state)
{
	struct maps *m = parse("1000-2000 r-xp 00000000 fe:00 1 /a\n", 0);
	struct maps *ref = maps__get(m);

	maps__free(m);
	assert_string_equal(maps__entry(ref, 0)->path, "/a");
	maps__free(ref);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),	       cmocka_unit_test(test_exec_only),
		cmocka_unit_test(test_exec_only_copy), cmocka_unit_test(test_references),
		cmocka_unit_test(test_odd_paths),      cmocka_unit_test(test_malformed_lines),
		cmocka_unit_test(test_nul_in_path),    cmocka_unit_test(test_sort_and_find),
		cmocka_unit_test(test_read_self),      cmocka_unit_test(test_read_missing),
		cmocka_unit_test(test_path_in_root),   cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

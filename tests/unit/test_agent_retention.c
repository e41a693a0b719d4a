// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Retention of the agent's files: which go, and that the oldest go first. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/retention.h"

#define S 1000000000ull

static void test_select_bytes(void **state)
{
	const struct retention_entry e[] = {
		{NULL, 1 * S, 100}, {NULL, 2 * S, 100}, {NULL, 3 * S, 100}, {NULL, 4 * S, 100}};

	assert_int_equal(retention__select(e, 4, 0, 0, 10 * S), 0);   /* no limits */
	assert_int_equal(retention__select(e, 4, 400, 0, 10 * S), 0); /* exactly at the bound */
	assert_int_equal(retention__select(e, 4, 399, 0, 10 * S), 1);
	assert_int_equal(retention__select(e, 4, 250, 0, 10 * S), 2);
	assert_int_equal(retention__select(e, 4, 100, 0, 10 * S), 3);
	/* the newest goes too when it alone is past the bound */
	assert_int_equal(retention__select(e, 4, 99, 0, 10 * S), 4);
	assert_int_equal(retention__select(e, 0, 1, 1, 10 * S), 0);
}

static void test_select_age(void **state)
{
	const struct retention_entry e[] = {
		{NULL, 1 * S, 10}, {NULL, 5 * S, 10}, {NULL, 8 * S, 10}, {NULL, 9 * S, 10}};

	assert_int_equal(retention__select(e, 4, 0, 5 * S, 10 * S), 1); /* 9 s old */
	assert_int_equal(retention__select(e, 4, 0, 5 * S, 11 * S), 2); /* 6 s old */
	assert_int_equal(retention__select(e, 4, 0, 100 * S, 11 * S), 0);
	/* a clock that went back does not make files old */
	assert_int_equal(retention__select(e, 4, 0, 5 * S, 0), 0);
	/* both limits: whichever removes more */
	assert_int_equal(retention__select(e, 4, 15, 5 * S, 10 * S), 3);
	assert_int_equal(retention__select(e, 4, 35, 5 * S, 12 * S), 2);
}

static char dir[] = "/tmp/test_agent_retention.XXXXXX";

static void make_file(const char *name, size_t size, time_t mtime)
{
	char path[PATH_MAX], buf[256] = {0};
	struct timespec times[2] = {{mtime, 0}, {mtime, 0}};
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	while (size) {
		size_t n = size < sizeof(buf) ? size : sizeof(buf);

		assert_int_equal(write(fd, buf, n), (ssize_t)n);
		size -= n;
	}
	assert_int_equal(futimens(fd, times), 0);
	close(fd);
}

static bool exists(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !access(path, F_OK);
}

static void test_apply_dir(void **state)
{
	char path[PATH_MAX];

	assert_non_null(mkdtemp(dir));
	make_file("labelprof-h-1.pb.gz", 100, 1000);
	make_file("labelprof-h-2.pb.gz", 100, 2000);
	make_file("labelprof-h-2.otlp.pb", 100, 2000);
	make_file("labelprof-h-3.pb.gz", 100, 3000);
	/* not ours: other prefixes, temporary files, directories, symlinks */
	make_file("labelprof-other-0.pb.gz", 100000, 10);
	make_file(".labelprof-h-4.pb.gz.XXXXXX", 100000, 10);
	snprintf(path, sizeof(path), "%s/labelprof-h-dir", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/labelprof-h-link", dir);
	assert_int_equal(symlink("/etc/passwd", path), 0);

	/* 400 bytes, at most 250: the oldest by time, then by name, go */
	assert_int_equal(retention__apply_dir(dir, "labelprof-h-", 250, 0, 3000 * S), 2);
	assert_false(exists("labelprof-h-1.pb.gz"));
	assert_false(exists("labelprof-h-2.otlp.pb"));
	assert_true(exists("labelprof-h-2.pb.gz"));
	assert_true(exists("labelprof-h-3.pb.gz"));
	/* age */
	assert_int_equal(retention__apply_dir(dir, "labelprof-h-", 0, 500 * S, 3000 * S), 1);
	assert_false(exists("labelprof-h-2.pb.gz"));
	assert_true(exists("labelprof-h-3.pb.gz"));
	assert_int_equal(retention__apply_dir(dir, "labelprof-h-", 0, 0, 3000 * S), 0);
	assert_true(exists("labelprof-other-0.pb.gz"));
	assert_true(exists(".labelprof-h-4.pb.gz.XXXXXX"));
	assert_true(exists("labelprof-h-dir"));
	assert_true(exists("labelprof-h-link"));
	assert_int_equal(retention__apply_dir("/nonexistent", "x", 1, 1, 1), -ENOENT);
}

static void test_mkdirs(void **state)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	assert_int_equal(retention__mkdirs(path, 0700), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(retention__mkdirs(path, 0700), 0); /* exists: fine */
	snprintf(path, sizeof(path), "%s/labelprof-h-3.pb.gz", dir);
	assert_int_equal(retention__mkdirs(path, 0700), -ENOTDIR);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_select_bytes),
		cmocka_unit_test(test_select_age),
		cmocka_unit_test(test_apply_dir),
		cmocka_unit_test(test_mkdirs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

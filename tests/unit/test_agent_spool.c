// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The agent's spool: oldest first, bounded, on disk it survives a restart,
 * and what the disk cannot take waits in memory, in its place.
 */
#include <dirent.h>
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
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/spool.h"

static char dir[] = "/tmp/test_agent_spool.XXXXXX";
static char err[256];

/* A request of len bytes, every byte tag. */
static void *request(int tag, size_t len)
{
	void *p = malloc(len);

	assert_non_null(p);
	memset(p, tag, len);
	return p;
}

/* Puts request tag; returns the error of writing it to the directory. */
static int put(struct spool *sp, int tag, size_t len, __u64 *dropped)
{
	void *data = request(tag, len);
	int write_err = 1;

	assert_int_equal(spool__put(sp, 1000 + tag, tag & 1, data, len, dropped, &write_err), 0);
	return write_err;
}

/* The oldest request must have this tag and length; then it is popped. */
static void expect_oldest(struct spool *sp, int tag, size_t len)
{
	void *data;
	size_t n;
	bool gz;
	__u64 t;

	assert_int_equal(spool__peek(sp, &data, &n, &gz, &t), 0);
	assert_int_equal(n, len);
	assert_int_equal(((unsigned char *)data)[0], tag);
	assert_int_equal(((unsigned char *)data)[n - 1], tag);
	assert_int_equal(t, 1000 + tag);
	assert_int_equal(gz, tag & 1);
	free(data);
	spool__pop(sp);
}

static void order_and_bounds(const char *where)
{
	__u64 dropped = 0;
	struct spool *sp = spool__open(where, 1000, &dropped, err, sizeof(err));
	void *data;
	size_t n;
	bool gz;
	__u64 t;

	assert_non_null(sp);
	assert_int_equal(spool__peek(sp, &data, &n, &gz, &t), -ENOENT);
	put(sp, 1, 300, &dropped);
	put(sp, 2, 300, &dropped);
	put(sp, 3, 300, &dropped);
	assert_int_equal(dropped, 0);
	assert_int_equal(spool__bytes(sp), 900);
	/* past 1000 bytes: the oldest goes */
	put(sp, 4, 300, &dropped);
	assert_int_equal(dropped, 1);
	assert_int_equal(spool__count(sp), 3);
	assert_int_equal(spool__bytes(sp), 900);
	/* one larger than the bound drops everything, itself included */
	put(sp, 5, 2000, &dropped);
	assert_int_equal(dropped, 5);
	assert_int_equal(spool__count(sp), 0);
	assert_int_equal(spool__bytes(sp), 0);
	put(sp, 6, 100, &dropped);
	put(sp, 7, 200, &dropped);
	put(sp, 8, 300, &dropped);
	expect_oldest(sp, 6, 100);
	/* a lower bound applies at once */
	spool__set_max_bytes(sp, 300, &dropped);
	assert_int_equal(dropped, 6);
	expect_oldest(sp, 8, 300);
	assert_int_equal(spool__count(sp), 0);
	spool__pop(sp); /* empty: nothing happens */
	spool__free(sp);
}

static void test_memory(void **state)
{
	order_and_bounds(NULL);
}

static void test_disk(void **state)
{
	char path[PATH_MAX];

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/spool", dir);
	order_and_bounds(path);
}

static size_t files_in(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_disk_survives_restart(void **state)
{
	char path[PATH_MAX], file[PATH_MAX + 64];
	__u64 dropped = 0;
	struct spool *sp;
	struct stat st;
	int fd, i;

	snprintf(path, sizeof(path), "%s/restart", dir);
	sp = spool__open(path, 1 << 20, &dropped, err, sizeof(err));
	assert_non_null(sp);
	for (i = 1; i <= 12; i++)
		put(sp, i, 10 * i, &dropped);
	expect_oldest(sp, 1, 10);
	spool__free(sp);
	assert_int_equal(files_in(path), 11);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);

	/* a crash's leftover and a stranger are not requests */
	snprintf(file, sizeof(file), "%s/.tmp-0000000000000099", path);
	fd = open(file, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(file, sizeof(file), "%s/README", path);
	fd = open(file, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);

	/* the next run takes them in order (12 sorts after 9), and goes on numbering */
	sp = spool__open(path, 1 << 20, &dropped, err, sizeof(err));
	assert_non_null(sp);
	assert_int_equal(dropped, 0);
	assert_int_equal(spool__count(sp), 11);
	snprintf(file, sizeof(file), "%s/.tmp-0000000000000099", path);
	assert_int_equal(access(file, F_OK), -1);
	put(sp, 13, 5, &dropped);
	for (i = 2; i <= 13; i++)
		expect_oldest(sp, i, i == 13 ? 5 : 10 * i);
	assert_int_equal(files_in(path), 1); /* README */
	spool__free(sp);

	/* a restart with a lower bound drops the oldest */
	sp = spool__open(path, 1 << 20, &dropped, err, sizeof(err));
	for (i = 1; i <= 4; i++)
		put(sp, i, 100, &dropped);
	spool__free(sp);
	sp = spool__open(path, 250, &dropped, err, sizeof(err));
	assert_non_null(sp);
	assert_int_equal(dropped, 2);
	expect_oldest(sp, 3, 100);
	spool__free(sp);
}

/* Files larger than max bytes cannot be written from now on (EFBIG, a real write failure). */
static void limit_file_size(rlim_t max)
{
	struct rlimit rl = {max, RLIM_INFINITY};

	assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

static void test_disk_full_held_in_memory(void **state)
{
	char path[PATH_MAX];
	__u64 dropped = 0;
	struct spool *sp;
	int i;

	snprintf(path, sizeof(path), "%s/full", dir);
	sp = spool__open(path, 1 << 20, &dropped, err, sizeof(err));
	assert_non_null(sp);
	/* past the limit a write fails with EFBIG (and SIGXFSZ, which the agent never gets) */
	signal(SIGXFSZ, SIG_IGN);
	limit_file_size(1000);
	assert_int_equal(put(sp, 1, 100, &dropped), 0);
	assert_int_equal(put(sp, 2, 4000, &dropped), -EFBIG);
	assert_int_equal(put(sp, 3, 100, &dropped), 0);
	assert_int_equal(put(sp, 4, 5000, &dropped), -EFBIG);
	/* no partial file, no temporary: 1 and 3 only */
	assert_int_equal(files_in(path), 2);
	assert_int_equal(spool__count(sp), 4);
	assert_int_equal(spool__bytes(sp), 9200);
	/* what cannot be written yet stays held */
	assert_int_equal(spool__save(sp), 2);
	expect_oldest(sp, 1, 100);
	/* held ones go in their place in the order */
	expect_oldest(sp, 2, 4000);
	assert_int_equal(spool__count(sp), 2);
	assert_int_equal(files_in(path), 1);

	/* the disk takes requests again: the next put writes the held one too */
	limit_file_size(RLIM_INFINITY);
	assert_int_equal(put(sp, 5, 100, &dropped), 0);
	assert_int_equal(files_in(path), 3);
	assert_int_equal(spool__save(sp), 0);
	/* and it survives a restart, in order */
	spool__free(sp);
	sp = spool__open(path, 1 << 20, &dropped, err, sizeof(err));
	assert_non_null(sp);
	expect_oldest(sp, 3, 100);
	expect_oldest(sp, 4, 5000);
	expect_oldest(sp, 5, 100);

	/* held requests count in the bound, and are dropped first when oldest */
	limit_file_size(1000);
	for (i = 6; i <= 8; i++)
		assert_int_equal(put(sp, i, 3000, &dropped), -EFBIG);
	spool__set_max_bytes(sp, 7000, &dropped);
	assert_int_equal(dropped, 1);
	assert_int_equal(spool__count(sp), 2);
	expect_oldest(sp, 7, 3000);
	/* spool__save says what stopping now would lose */
	assert_int_equal(spool__save(sp), 1);
	limit_file_size(RLIM_INFINITY);
	assert_int_equal(spool__save(sp), 0);
	assert_int_equal(files_in(path), 1);
	spool__free(sp);
	signal(SIGXFSZ, SIG_DFL);

	/* without a directory everything is in memory */
	sp = spool__open(NULL, 1000, &dropped, err, sizeof(err));
	assert_int_equal(put(sp, 1, 10, &dropped), 0);
	assert_int_equal(spool__save(sp), 1);
	spool__free(sp);
}

static void test_disk_changed_file(void **state)
{
	char path[PATH_MAX], file[PATH_MAX * 2];
	__u64 dropped = 0;
	struct spool *sp;
	struct dirent *de;
	void *data;
	size_t n;
	bool gz;
	__u64 t;
	DIR *d;

	snprintf(path, sizeof(path), "%s/changed", dir);
	sp = spool__open(path, 1 << 20, &dropped, err, sizeof(err));
	assert_non_null(sp);
	put(sp, 2, 100, &dropped);
	put(sp, 4, 100, &dropped);
	/* someone truncates the oldest file: refused, then popped by the caller */
	d = opendir(path);
	while ((de = readdir(d)))
		if (strstr(de->d_name, "00000000000000001002"))
			snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
	closedir(d);
	assert_int_equal(truncate(file, 10), 0);
	assert_int_equal(spool__peek(sp, &data, &n, &gz, &t), -EIO);
	spool__pop(sp);
	expect_oldest(sp, 4, 100);
	spool__free(sp);
}

static void test_open_errors(void **state)
{
	char path[PATH_MAX];
	__u64 dropped = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_null(spool__open(path, 1000, &dropped, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot create the spool directory"));
	assert_non_null(strstr(err, "Not a directory"));
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_disk),
		cmocka_unit_test(test_disk_survives_restart),
		cmocka_unit_test(test_disk_full_held_in_memory),
		cmocka_unit_test(test_disk_changed_file),
		cmocka_unit_test(test_open_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Opening a process's files inside its root: a chrooted child's absolute
 * symlink must lead to its file, not to the host's of the same name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc/root.h"

static char dir[] = "/tmp/test_root.XXXXXX";

/* dir/file, and dir/link -> /file: inside dir, the link names dir/file. */
static void make_tree(void)
{
	char path[PATH_MAX];
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/link", dir);
	assert_int_equal(symlink("/file", path), 0);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
}

static void remove_tree(void)
{
	const char *const names[] = {"file", "link", "fifo"};
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

static void test_chroot_symlink(void **state)
{
	struct stat st, want;
	int pipefd[2], fd;
	char path[PATH_MAX], c;
	pid_t child;

	make_tree();
	snprintf(path, sizeof(path), "%s/file", dir);
	assert_int_equal(stat(path, &want), 0);
	assert_int_equal(pipe(pipefd), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		/* Tells the parent it is in its root, then waits to be killed. */
		if (chroot(dir) || chdir("/"))
			_exit(1);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);

	fd = proc_root__open(child, "/link", &st);
	assert_true(fd >= 0);
	assert_true(st.st_dev == want.st_dev && st.st_ino == want.st_ino);
	close(fd);
	/* The same path from the host's root is not there. */
	assert_int_equal(proc_root__open(0, "/file", &st), -ENOENT);
	/* Not a regular file: refused, without blocking on the FIFO. */
	assert_int_equal(proc_root__open(child, "/fifo", &st), -EINVAL);
	assert_int_equal(proc_root__open(child, "/", &st), -EINVAL);
	assert_int_equal(proc_root__open(child, "/missing", &st), -ENOENT);

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_true(proc_root__open(child, "/file", &st) < 0);
	remove_tree();
}

/* Our executable's mapping: by its path, or through map_files when it has none. */
static void test_open_mapped(void **state)
{
	const struct maps_entry *exe = NULL;
	struct maps_entry e;
	struct maps *m;
	struct stat st;
	size_t i;
	int fd;

	assert_int_equal(maps__read(getpid(), MAPS_EXEC_ONLY, &m), 0);
	for (i = 0; i < maps__count(m) && !exe; i++)
		if (maps__entry(m, i)->kind == MAPS_FILE)
			exe = maps__entry(m, i);
	assert_non_null(exe);
	e = *exe;
	fd = proc_root__open_mapped(getpid(), &e, &st);
	assert_true(fd >= 0);
	assert_true(proc_root__same_file(&st, &e));
	close(fd);
	/* As if deleted: only map_files names it (we are root). */
	e.deleted = true;
	fd = proc_root__open_mapped(getpid(), &e, &st);
	assert_true(fd >= 0);
	assert_true(proc_root__same_file(&st, &e));
	close(fd);
	/* No mapping has that range. */
	e.start = 0x1000;
	e.end = 0x2000;
	assert_true(proc_root__open_mapped(getpid(), &e, &st) < 0);
	maps__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chroot_symlink),
		cmocka_unit_test(test_open_mapped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

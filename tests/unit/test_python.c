// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CPython (runtime/python_*.c): line tables of both formats, and the
 * interpreters on this machine (Debian's python3.11, pyenv's 3.10-3.13,
 * those present): found among a running one's mappings, its offsets leading
 * to its thread states, the main thread's first.
 */
#include <errno.h>
#include <glob.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc/maps.h"
#include "runtime/python/python.h"
#include "skip.h"

static void test_linetable_311(void **state)
{
	/*
	 * first line 10: 2 units one line on (13: delta only), 3 units two on
	 * (12: one-line form, 2 column bytes), 1 unit without location (15),
	 * 1 unit five back (14: long form), 1 unit the same line (3: short form)
	 */
	static const unsigned char t[] = {0x80 | 13 << 3 | 1, 0x02, 0x80 | 12 << 3 | 2, 1, 2,
					  0x80 | 15 << 3,     0x80 | 14 << 3, 11, 0, 1, 1,
					  0x80 | 3 << 3,      5};
	static const __u32 want[] = {11, 11, 13, 13, 13, 0, 8, 8, 0};
	__u32 i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(py_linetable__line(0x030b, t, sizeof(t), 10, i), want[i]);
}

static void test_linetable_310(void **state)
{
	/* (bytes, line delta): 4 bytes line 6, 2 bytes none, 6 bytes line 8 */
	static const unsigned char t[] = {4, 1, 2, 0x80, 6, 2};
	static const __u32 want[] = {6, 6, 0, 8, 8, 8, 0};
	__u32 i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(py_linetable__line(0x030a, t, sizeof(t), 5, i), want[i]);
}

/* Runs python with a second thread, looks at it, returns how many interpreters were. */
static int check_interpreter(const char *python)
{
	static const char script[] = "import threading, time, sys\n"
				     "threading.Thread(target=time.sleep, args=(30,)).start()\n"
				     "print('ready', flush=True)\n"
				     "time.sleep(30)\n";
	int out[2], n = 0, tries;
	struct py_image img;
	struct maps *maps;
	__u64 bias, tids[8];
	char err[160], buf[16];
	pid_t pid;

	if (access(python, X_OK))
		return 0;
	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(out[1], 1);
		execl(python, python, "-c", script, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	assert_true(read(out[0], buf, sizeof(buf)) > 0);
	close(out[0]);
	assert_int_equal(maps__read(pid, 0, &maps), 0);
	assert_int_equal(py_image__find(pid, maps, &img, &bias, NULL, err, sizeof(err)), 0);
	maps__free(maps);
	print_message("%s: Python %u.%u, offsets: %s\n", python, img.version >> 8,
		      img.version & 0xff, img.source);
	/* the second thread's state may take a moment to be linked */
	for (tries = 0; tries < 100 && n < 2; tries++) {
		n = py_thread_states(pid, &img, bias, tids, 8);
		if (n < 2)
			usleep(10000);
	}
	assert_int_equal(n, 2);
	/* the newest state first; by tid from 3.11 on */
	if (img.ref.flags & LP_PY_NATIVE_TID)
		assert_int_equal(tids[1], pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 1;
}

static void test_interpreters(void **state)
{
	const char *root = getenv("PYENV_ROOT") ?: "/root/.pyenv";
	char pattern[512];
	glob_t g = {0};
	int found = check_interpreter("/usr/bin/python3.11");
	size_t i;

	snprintf(pattern, sizeof(pattern), "%s/versions/3.1[0-3].*/bin/python3.1[0-3]", root);
	if (!glob(pattern, 0, NULL, &g))
		for (i = 0; i < g.gl_pathc; i++)
			found += check_interpreter(g.gl_pathv[i]);
	globfree(&g);
	if (!found)
		skip_because("no Python 3.10-3.13 here");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linetable_311),
		cmocka_unit_test(test_linetable_310),
		cmocka_unit_test(test_interpreters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

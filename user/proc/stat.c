// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "proc/stat.h"

const char *proc_stat_fields(pid_t pid, char *buf, size_t size)
{
	char path[64], *paren;
	ssize_t n;
	int fd, err;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, size - 1);
	err = errno;
	close(fd);
	if (n <= 0) {
		/* an empty read: the process has gone in between */
		errno = n < 0 ? err : ESRCH;
		return NULL;
	}
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	if (!paren || paren[1] != ' ') {
		errno = EIO;
		return NULL;
	}
	return paren + 2;
}

pid_t proc_tgid(pid_t pid)
{
	char path[64], line[256], state = 0;
	pid_t tgid = -ESRCH;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
	/* State comes before Tgid */
	while (fgets(line, sizeof(line), f) && sscanf(line, "Tgid: %d", &tgid) != 1)
		sscanf(line, "State: %c", &state);
	fclose(f);
	/* a zombie or a dead task has exited: it only waits to be reaped */
	return state == 'Z' || state == 'X' ? -ESRCH : tgid;
}

bool proc_is_kernel_thread(pid_t pid)
{
	/* include/linux/sched.h; stable since 2.6 */
	const unsigned long pf_kthread = 0x00200000;
	unsigned long flags;
	char buf[512];
	const char *f = proc_stat_fields(pid, buf, sizeof(buf));

	/* state, ppid, pgrp, session, tty_nr, tpgid, then flags */
	return f && sscanf(f, "%*c %*d %*d %*d %*d %*d %lu", &flags) == 1 && flags & pf_kthread;
}

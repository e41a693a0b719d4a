// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Opening a process's files inside its root. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc/root.h"

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

/* fd if it is a regular file, else -errno (-EINVAL) and fd closed; fd < 0 passes errno on. */
static int regular_or_close(int fd, struct stat *st)
{
	int err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		err = -errno;
		goto out_close;
	}
	if (!S_ISREG(st->st_mode)) {
		err = -EINVAL;
		goto out_close;
	}
	return fd;

out_close:
	close(fd);
	return err;
}

int proc_root__open(int pid, const char *path, struct stat *st)
{
	struct open_how how = {
		.flags = OPEN_FLAGS,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char root[32];
	int dirfd, fd;

	if (!pid)
		return regular_or_close(open(path, OPEN_FLAGS), st);
	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	/* No openat2 before Linux 5.6: absolute symlinks then resolve as we see them. */
	if (fd < 0 && errno == ENOSYS) {
		while (*path == '/')
			path++;
		fd = openat(dirfd, *path ? path : ".", OPEN_FLAGS);
	}
	fd = regular_or_close(fd, st);
	close(dirfd);
	return fd;
}

bool proc_root__same_file(const struct stat *st, const struct maps_entry *e)
{
	return st->st_dev == makedev(e->dev_major, e->dev_minor) && st->st_ino == e->inode;
}

int proc_root__open_mapped(int pid, const struct maps_entry *e, struct stat *st)
{
	struct stat mst;
	char mf[64];
	int fd = -ENOENT, mfd;

	if (!e->deleted) {
		fd = proc_root__open(pid, e->path, st);
		if (fd >= 0 && proc_root__same_file(st, e))
			return fd;
	}
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", pid, (unsigned long long)e->start,
		 (unsigned long long)e->end);
	mfd = regular_or_close(open(mf, OPEN_FLAGS), &mst);
	if (mfd < 0)
		return fd;
	if (fd >= 0)
		close(fd);
	*st = mst;
	return mfd;
}

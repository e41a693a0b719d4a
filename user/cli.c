// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Helpers the labelprof commands share: argument parsing and output files. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli_parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || *out > max)
		return -EINVAL;
	return 0;
}

/* A device or pipe at path (lst: its lstat) to write to directly, or -1. */
static int open_special(const char *path, const struct stat *lst)
{
	struct stat st;
	int fd;

	if (S_ISLNK(lst->st_mode)) {
		/* followed only if nobody else could have planted it */
		if (lst->st_uid != 0 && lst->st_uid != geteuid())
			return -1;
		fd = open(path, O_WRONLY | O_CLOEXEC);
	} else {
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return S_ISLNK(lst->st_mode) ? -1 : -errno;
	if (!fstat(fd, &st) && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
		return fd;
	close(fd);
	return S_ISLNK(lst->st_mode) ? -1 : -EINVAL;
}

int output_file__open(struct output_file *of, const char *path)
{
	char dir_buf[PATH_MAX], base_buf[PATH_MAX];
	struct stat st;
	int fd;

	of->path = path;
	if (!path) {
		of->f = stdout;
		return 0;
	}
	if (!lstat(path, &st) && S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!lstat(path, &st) && !S_ISREG(st.st_mode)) {
		fd = open_special(path, &st);
		if (fd < -1)
			return fd;
		if (fd >= 0) {
			of->direct = true;
			of->f = fdopen(fd, "w");
			if (!of->f) {
				close(fd);
				return -ENOMEM;
			}
			return 0;
		}
	}
	snprintf(dir_buf, sizeof(dir_buf), "%s", path);
	snprintf(base_buf, sizeof(base_buf), "%s", path);
	if ((size_t)snprintf(of->tmp_path, sizeof(of->tmp_path), "%s/.%s.XXXXXX", dirname(dir_buf),
			     basename(base_buf)) >= sizeof(of->tmp_path))
		return -ENAMETOOLONG;
	fd = mkostemp(of->tmp_path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644) || !(of->f = fdopen(fd, "w"))) {
		int err = -errno;

		close(fd);
		unlink(of->tmp_path);
		return err;
	}
	return 0;
}

int output_file__commit(struct output_file *of)
{
	int err = 0;

	if (!of->path)
		return fflush(stdout) ? -errno : 0;
	if (of->direct) {
		err = fclose(of->f) ? -errno : 0;
		of->f = NULL;
		return err;
	}
	if (fflush(of->f) || fsync(fileno(of->f)))
		err = -errno;
	if (fclose(of->f) && !err)
		err = -errno;
	of->f = NULL;
	if (!err && rename(of->tmp_path, of->path))
		err = -errno;
	if (err)
		unlink(of->tmp_path);
	return err;
}

void output_file__abort(struct output_file *of)
{
	if (!of->path || !of->f)
		return;
	fclose(of->f);
	if (!of->direct)
		unlink(of->tmp_path);
	of->f = NULL;
}

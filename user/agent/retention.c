// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Retention of files by total size and age (retention.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/log.h"
#include "lib/array.h"
#include "agent/retention.h"

size_t retention__select(const struct retention_entry *e, size_t n, __u64 max_bytes,
			 __u64 max_age_ns, __u64 now_ns)
{
	__u64 total = 0;
	size_t i, drop = 0;

	for (i = 0; i < n; i++)
		total += e[i].bytes;
	for (; drop < n; drop++) {
		bool too_old = max_age_ns && now_ns > e[drop].time_ns &&
			       now_ns - e[drop].time_ns > max_age_ns;

		if (!too_old && (!max_bytes || total <= max_bytes))
			break;
		total -= e[drop].bytes;
	}
	return drop;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct retention_entry *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

int retention__apply_dir(const char *dir, const char *prefix, __u64 max_bytes, __u64 max_age_ns,
			 __u64 now_ns)
{
	struct retention_entry *e = NULL;
	size_t n = 0, cap = 0, drop, i, plen = strlen(prefix);
	struct dirent *de;
	struct stat st;
	int removed = 0, err = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, prefix, plen) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (ARRAY_RESERVE_MIN(e, cap, n + 1, 64)) {
			err = -ENOMEM;
			goto out_free;
		}
		e[n].name = strdup(de->d_name);
		if (!e[n].name) {
			err = -ENOMEM;
			goto out_free;
		}
		e[n].time_ns = st.st_mtim.tv_sec * 1000000000ull + st.st_mtim.tv_nsec;
		e[n++].bytes = st.st_size;
	}
	if (n)
		qsort(e, n, sizeof(*e), entry_cmp);
	drop = retention__select(e, n, max_bytes, max_age_ns, now_ns);
	for (i = 0; i < drop; i++) {
		if (unlinkat(dirfd(d), e[i].name, 0) && errno != ENOENT) {
			agent_log(LOG_WARNING, "cannot remove %s/%s: %s", dir, e[i].name,
				  strerror(errno));
			continue;
		}
		removed++;
	}

out_free:
	for (i = 0; i < n; i++)
		free(e[i].name);
	free(e);
	closedir(d);
	return err ? err : removed;
}

int retention__mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX], *p;
	struct stat st;

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) && errno != EEXIST)
		return -errno;
	if (stat(buf, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

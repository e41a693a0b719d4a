// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * /proc/PID/maps parser. A line is
 *   start-end perms offset major:minor inode [padding path]
 * with hex numbers except the decimal inode. The path is the rest of the line:
 * it may contain spaces, and the kernel appends " (deleted)" to unlinked files.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/hex.h"
#include "lib/sorted.h"
#include "proc/maps.h"

#define DELETED_SUFFIX " (deleted)"

struct maps {
	struct maps_entry *entries;
	size_t count;
	char *paths; /* every entry's path, NUL-terminated, back to back */
	size_t paths_len;
	unsigned int refs; /* atomic: a snapshot is shared with the unwind thread */
};

/* A cursor over one line: [p, end). */
struct line {
	const char *p;
	const char *end;
};

/* At least one digit, no overflow. */
static bool parse_num(struct line *l, unsigned int base, __u64 *out)
{
	const char *start = l->p;
	__u64 v = 0;
	int d;

	while (l->p < l->end && (d = hex__digit(*l->p)) >= 0 && (unsigned int)d < base) {
		if (v > (~0ULL - d) / base)
			return false;
		v = v * base + d;
		l->p++;
	}
	*out = v;
	return l->p > start;
}

static bool expect(struct line *l, char c)
{
	if (l->p >= l->end || *l->p != c)
		return false;
	l->p++;
	return true;
}

static bool parse_prot(struct line *l, __u32 *prot)
{
	static const char yes[] = "rwx";
	int i;

	if (l->end - l->p < 4)
		return false;
	*prot = 0;
	for (i = 0; i < 3; i++) {
		if (l->p[i] == yes[i])
			*prot |= 1u << i; /* MAPS_PROT_READ, _WRITE, _EXEC */
		else if (l->p[i] != '-')
			return false;
	}
	if (l->p[3] == 's')
		*prot |= MAPS_PROT_SHARED;
	else if (l->p[3] != 'p')
		return false;
	l->p += 4;
	return true;
}

static __u32 path_kind(const char *path, size_t len)
{
	if (!len)
		return MAPS_ANON;
	if (path[0] == '/')
		return MAPS_FILE;
	if (len == 6 && !memcmp(path, "[vdso]", 6))
		return MAPS_VDSO;
	return MAPS_SPECIAL;
}

/*
 * Fills e from one line (without its newline); the path is returned in
 * path/path_len, pointing into the line. False if the line is malformed.
 */
static bool parse_line(struct line *l, struct maps_entry *e, const char **path, size_t *path_len)
{
	__u64 major, minor;
	size_t n;

	if (!parse_num(l, 16, &e->start) || !expect(l, '-') || !parse_num(l, 16, &e->end) ||
	    !expect(l, ' ') || !parse_prot(l, &e->prot) || !expect(l, ' ') ||
	    !parse_num(l, 16, &e->offset) || !expect(l, ' ') || !parse_num(l, 16, &major) ||
	    !expect(l, ':') || !parse_num(l, 16, &minor) || !expect(l, ' ') ||
	    !parse_num(l, 10, &e->inode))
		return false;
	if (e->start >= e->end || major > 0xfff || minor > 0xfffff)
		return false;
	e->dev_major = major;
	e->dev_minor = minor;
	if (l->p < l->end && *l->p != ' ')
		return false;
	while (l->p < l->end && *l->p == ' ')
		l->p++;
	*path = l->p;
	n = l->end - l->p;
	/* A path cannot hold a NUL; such a line was not written by the kernel. */
	if (memchr(*path, '\0', n))
		return false;
	e->deleted = false;
	if (n > sizeof(DELETED_SUFFIX) - 1 && !memcmp(*path + n - (sizeof(DELETED_SUFFIX) - 1),
						      DELETED_SUFFIX, sizeof(DELETED_SUFFIX) - 1)) {
		e->deleted = true;
		n -= sizeof(DELETED_SUFFIX) - 1;
	}
	*path_len = n;
	e->kind = path_kind(*path, n);
	return true;
}

static int cmp_start(const void *a, const void *b)
{
	const struct maps_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* The kernel gives sorted, disjoint entries; anything else is made so. */
static void sort_entries(struct maps *m)
{
	size_t i, out;

	for (i = 1; i < m->count; i++)
		if (m->entries[i].start < m->entries[i - 1].end)
			break;
	if (i >= m->count)
		return;
	qsort(m->entries, m->count, sizeof(*m->entries), cmp_start);
	for (i = 1, out = 1; i < m->count; i++) {
		if (m->entries[i].start < m->entries[out - 1].end)
			continue;
		m->entries[out++] = m->entries[i];
	}
	m->count = out;
}

int maps__parse(const char *buf, size_t len, unsigned int flags, struct maps **out)
{
	size_t cap = 0, paths_len = 0, paths_cap = 0, i;
	const char *p = buf, *end = buf + len;
	struct maps *m;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->refs = 1;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		struct line l = {p, nl ? nl : end};
		struct maps_entry e;
		const char *path;
		size_t path_len;

		p = nl ? nl + 1 : end;
		if (!parse_line(&l, &e, &path, &path_len))
			continue;
		if ((flags & MAPS_EXEC_ONLY) && !(e.prot & MAPS_PROT_EXEC))
			continue;
		if (ARRAY_RESERVE_MIN(m->entries, cap, m->count + 1, 64) ||
		    ARRAY_RESERVE_MIN(m->paths, paths_cap, paths_len + path_len + 1, 4096))
			goto out_free;
		memcpy(m->paths + paths_len, path, path_len);
		m->paths[paths_len + path_len] = '\0';
		/* An offset until the blob stops moving. */
		e.path = (const char *)(uintptr_t)paths_len;
		paths_len += path_len + 1;
		m->entries[m->count++] = e;
	}
	for (i = 0; i < m->count; i++)
		m->entries[i].path = m->paths + (uintptr_t)m->entries[i].path;
	m->paths_len = paths_len;
	sort_entries(m);
	*out = m;
	return 0;

out_free:
	maps__free(m);
	return -ENOMEM;
}

void maps__read_root(int pid, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/root", pid);
	n = readlink(link, buf, size);
	/* "/", unreadable, or cut: nothing to take off */
	if (n <= 1 || (size_t)n >= size)
		n = 0;
	buf[n] = '\0';
}

const char *maps__path_in_root(const char *path, const char *root)
{
	size_t n = strlen(root);

	return n && !strncmp(path, root, n) && path[n] == '/' ? path + n : path;
}

int maps__read(int pid, unsigned int flags, struct maps **out)
{
	size_t len = 0, cap = 65536, i;
	char path[64], root[PATH_MAX], *buf;
	int fd, err;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			if (cap >= MAPS_MAX_FILE_BYTES) {
				err = -EFBIG;
				goto out_free;
			}
			if (ARRAY_RESERVE(buf, cap, len + 1)) {
				err = -ENOMEM;
				goto out_free;
			}
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			/* Reading the maps of a process that just exited fails with ESRCH. */
			err = -errno;
			goto out_free;
		}
		if (n == 0)
			break;
		len += n;
	}
	err = maps__parse(buf, len, flags, out);
	if (!err) {
		struct maps_entry *e = (*out)->entries;

		maps__read_root(pid, root, sizeof(root));
		for (i = 0; i < (*out)->count; i++)
			if (e[i].kind == MAPS_FILE)
				e[i].path = maps__path_in_root(e[i].path, root);
	}
out_free:
	free(buf);
out_close:
	close(fd);
	return err;
}

struct maps *maps__get(struct maps *m)
{
	__atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
	return m;
}

int maps__exec_only(const struct maps *m, struct maps **out)
{
	struct maps *x = calloc(1, sizeof(*x));
	size_t i;

	*out = NULL;
	if (!x)
		return -ENOMEM;
	x->refs = 1;
	x->entries = malloc((m->count ? m->count : 1) * sizeof(*x->entries));
	x->paths = malloc(m->paths_len ? m->paths_len : 1);
	if (!x->entries || !x->paths) {
		maps__free(x);
		return -ENOMEM;
	}
	/* paths keep their offsets; entries stay sorted (an exiting process has none) */
	if (m->paths_len)
		memcpy(x->paths, m->paths, m->paths_len);
	x->paths_len = m->paths_len;
	for (i = 0; i < m->count; i++) {
		struct maps_entry e = m->entries[i];

		if (!(e.prot & MAPS_PROT_EXEC))
			continue;
		e.path = x->paths + (e.path - m->paths);
		x->entries[x->count++] = e;
	}
	*out = x;
	return 0;
}

void maps__free(struct maps *m)
{
	if (!m || __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL))
		return;
	free(m->entries);
	free(m->paths);
	free(m);
}

size_t maps__count(const struct maps *m)
{
	return m->count;
}

const struct maps_entry *maps__entry(const struct maps *m, size_t i)
{
	return i < m->count ? &m->entries[i] : NULL;
}

const struct maps_entry *maps__find(const struct maps *m, __u64 addr)
{
	size_t i = SORTED_UPPER_BOUND(m->entries, m->count, start, addr);

	/* Mappings do not overlap: only the last one starting at or before addr can hold it. */
	return i && addr < m->entries[i - 1].end ? &m->entries[i - 1] : NULL;
}

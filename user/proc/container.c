// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Container ids and pod uids from cgroup paths (container.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/compiler.h"
#include "lib/hashmap.h"
#include "proc/container.h"

/* A byte range of the cgroup path. */
struct span {
	const char *s;
	size_t n;
};

static bool is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return false;
	return true;
}

static bool starts_with(struct span c, const char *prefix)
{
	size_t n = strlen(prefix);

	return c.n >= n && !memcmp(c.s, prefix, n);
}

static bool ends_with(struct span c, const char *suffix)
{
	size_t n = strlen(suffix);

	return c.n >= n && !memcmp(c.s + c.n - n, suffix, n);
}

static bool equals(struct span c, const char *s)
{
	return c.n == strlen(s) && !memcmp(c.s, s, c.n);
}

static bool set_id(struct container_info *out, struct span c)
{
	size_t i;

	if (c.n != CONTAINER_ID_LEN || !is_hex(c.s, c.n))
		return false;
	for (i = 0; i < c.n; i++)
		out->id[i] = c.s[i] | 0x20; /* lowercase: ids are compared as strings */
	out->id[c.n] = '\0';
	return true;
}

/* A UUID (8-4-4-4-12, '_' or '-' between groups) or a static pod's 32-digit hash. */
static bool set_pod_uid(struct container_info *out, struct span c)
{
	static const size_t dashes[] = {8, 13, 18, 23};
	size_t i, d = 0;

	if (c.n == 32 && is_hex(c.s, c.n)) {
		memcpy(out->pod_uid, c.s, c.n);
		out->pod_uid[c.n] = '\0';
		return true;
	}
	if (c.n != POD_UID_MAX_LEN)
		return false;
	for (i = 0; i < c.n; i++) {
		if (d < 4 && i == dashes[d]) {
			if (c.s[i] != '-' && c.s[i] != '_')
				return false;
			d++;
		} else if (!is_hex(c.s + i, 1)) {
			return false;
		}
	}
	for (i = 0; i < c.n; i++)
		out->pod_uid[i] = c.s[i] == '_' ? '-' : c.s[i];
	out->pod_uid[c.n] = '\0';
	return true;
}

/* RUNTIME-<id>.scope of the systemd cgroup drivers. */
static bool scope_id(struct container_info *out, struct span c)
{
	static const char *const prefixes[] = {"docker-", "cri-containerd-", "crio-", "libpod-"};
	size_t i, n;

	if (!ends_with(c, ".scope"))
		return false;
	c.n -= strlen(".scope");
	for (i = 0; i < ARRAY_SIZE(prefixes); i++) {
		n = strlen(prefixes[i]);
		if (starts_with(c, prefixes[i]) && set_id(out, (struct span){c.s + n, c.n - n}))
			return true;
	}
	return false;
}

/* kubepods[-QOS]-pod<uid>.slice */
static bool pod_slice(struct container_info *out, struct span c)
{
	const char *pod;

	if (!starts_with(c, "kubepods-") || !ends_with(c, ".slice"))
		return false;
	c.n -= strlen(".slice");
	pod = memmem(c.s, c.n, "-pod", 4);
	if (!pod)
		return false;
	pod += 4;
	return set_pod_uid(out, (struct span){pod, c.s + c.n - pod});
}

/*
 * One path component; prev is the one before it, in_kubepods whether a
 * "kubepods" component came before.
 */
static void parse_component(struct container_info *out, struct span c, struct span prev,
			    bool in_kubepods)
{
	const char *colon = memchr(c.s, ':', c.n), *last;

	/* cgroup v1 with the systemd driver: SLICE:RUNTIME:ID in one component */
	if (colon) {
		last = memrchr(c.s, ':', c.n);
		pod_slice(out, (struct span){c.s, colon - c.s});
		if (last != colon)
			set_id(out, (struct span){last + 1, c.s + c.n - last - 1});
		return;
	}
	if (scope_id(out, c) || pod_slice(out, c))
		return;
	if (in_kubepods && starts_with(c, "pod") &&
	    set_pod_uid(out, (struct span){c.s + 3, c.n - 3}))
		return;
	/* cgroupfs drivers: a bare id under /docker/ or under a pod's directory */
	if (equals(prev, "docker") || (in_kubepods && starts_with(prev, "pod")))
		set_id(out, c);
}

static bool found(const struct container_info *ci)
{
	return ci->id[0] || ci->pod_uid[0];
}

static void parse_path(struct container_info *out, const char *path, size_t len)
{
	struct span prev = {"", 0}, c;
	const char *p = path, *end = path + len, *slash;
	bool in_kubepods = false;

	while (p < end) {
		slash = memchr(p, '/', end - p);
		c = (struct span){p, (slash ? slash : end) - p};
		p = slash ? slash + 1 : end;
		if (!c.n)
			continue;
		parse_component(out, c, prev, in_kubepods);
		if (starts_with(c, "kubepods"))
			in_kubepods = true;
		prev = c;
	}
}

int container__parse_cgroup(const char *text, size_t len, struct container_info *out)
{
	struct container_info v1 = {}, line_info;
	const char *p = text, *end = text + len, *nl, *c1, *c2;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		/* ID:CONTROLLERS:PATH, the path itself may hold ':' */
		c1 = memchr(p, ':', nl - p);
		c2 = c1 ? memchr(c1 + 1, ':', nl - c1 - 1) : NULL;
		if (c2) {
			memset(&line_info, 0, sizeof(line_info));
			parse_path(&line_info, c2 + 1, nl - c2 - 1);
			if (c1 - p == 1 && p[0] == '0' && c2 == c1 + 1) {
				if (found(&line_info)) {
					*out = line_info;
					return 0;
				}
			} else if (!found(&v1)) {
				v1 = line_info;
			}
		}
		p = nl + 1;
	}
	*out = v1;
	return found(out) ? 0 : -ENOENT;
}

int container__read(pid_t pid, struct container_info *out)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* one read: procfs gives the whole (small) file; a longer one is cut, not misread */
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	return container__parse_cgroup(buf, n, out);
}

struct cache_entry {
	pid_t pid;
	unsigned int gen;
	struct container_info info;
};

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Snapshots: a process's executable mappings and identity, as first read. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/compiler.h"
#include "symbolize/symbols_int.h"

/* ---- process identity ----------------------------------------------------------- */

/* The last number of a line like "NSpid:\t1234\t5". */
static __u32 last_number(const char *p)
{
	unsigned long v = 0;

	while (*p) {
		char *end;
		unsigned long n = strtoul(p, &end, 10);

		if (end == p) {
			p++;
			continue;
		}
		v = n;
		p = end;
	}
	return v > UINT32_MAX ? 0 : v;
}

/*
 * What s's process is: uids and NSpid from /proc/PID/status, its executable
 * and name. Read with its first maps, so it describes the same process.
 */
static void snapshot_read_identity(struct snapshot *s)
{
	char path[64], buf[PATH_MAX], root[PATH_MAX], *line = NULL;
	size_t cap = 0, del = strlen(" (deleted)");
	__u32 nspid = 0;
	ssize_t len;
	FILE *fp;
	int fd;

	s->identity_read = true;
	s->uid = s->euid = UINT32_MAX;
	container__read(s->pid, &s->container);
	snprintf(path, sizeof(path), "/proc/%u/status", s->pid);
	fp = fopen(path, "re");
	if (fp) {
		while (getline(&line, &cap, fp) > 0) {
			if (!strncmp(line, "Uid:", 4))
				sscanf(line + 4, "%u %u", &s->uid, &s->euid);
			else if (!strncmp(line, "NSpid:", 6))
				nspid = last_number(line + 6);
		}
		free(line);
		fclose(fp);
	}
	if (nspid)
		snprintf(s->jit.path, sizeof(s->jit.path), "/tmp/perf-%u.map", nspid);
	snprintf(path, sizeof(path), "/proc/%u/exe", s->pid);
	len = readlink(path, buf, sizeof(buf) - 1);
	if (len > 0) {
		buf[len] = '\0';
		/* as in the maps, an unlinked file is still named by its path */
		if ((size_t)len > del && !strcmp(buf + len - del, " (deleted)"))
			buf[len - del] = '\0';
		maps__read_root(s->pid, root, sizeof(root));
		s->exe = strdup(maps__path_in_root(buf, root));
	}
	snprintf(path, sizeof(path), "/proc/%u/comm", s->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		len = read(fd, s->comm, sizeof(s->comm) - 1);
		close(fd);
		s->comm[len > 0 ? len : 0] = '\0';
		s->comm[strcspn(s->comm, "\n")] = '\0';
	}
}

/* ---- snapshots -------------------------------------------------------------------- */

static void snapshot_release_files(struct symbolizer *sym, struct snapshot *s)
{
	size_t i;

	if (!s->maps)
		return;
	for (i = 0; i < maps__count(s->maps); i++)
		sym_file__put(sym, s->files[i]);
	sym->st.map_entries -= maps__count(s->maps);
	free(s->files);
	maps__free(s->maps);
	s->files = NULL;
	s->maps = NULL;
}

void snapshot__free(struct symbolizer *sym, struct snapshot *s)
{
	pairmap__del(&sym->snaps, s->id, 0);
	list__del(&s->node);
	snapshot_release_files(sym, s);
	perf_map__clear(sym, &s->jit);
	free(s->exe);
	sym->st.snapshots--;
	free(s);
}

/*
 * Whether now maps the same image as old: the first file mapping old has is
 * still there. Samples are resolved after the fact, and a re-read may come
 * after the process exec'd (or while an exec is building its new image).
 */
static bool same_image(const struct maps *old, const struct maps *now)
{
	const struct maps_entry *first = NULL, *e;
	size_t i;

	for (i = 0; i < maps__count(old) && !first; i++)
		if (maps__entry(old, i)->kind == MAPS_FILE)
			first = maps__entry(old, i);
	if (!first)
		return true;
	e = maps__find(now, first->start);
	return e && e->start == first->start && e->inode == first->inode &&
	       e->dev_major == first->dev_major && e->dev_minor == first->dev_minor;
}

/*
 * Takes the executable mappings of maps (NULL: reads pid's) into s, replacing
 * what s had unless the process has exec'd since.
 */
int snapshot__read(struct symbolizer *sym, struct snapshot *s, const struct maps *maps)
{
	struct sym_file **files;
	struct maps *m;
	size_t i, n;
	int err;

	if (!maps)
		sym->st.maps_reads++;
	err = maps ? maps__exec_only(maps, &m) : maps__read(s->pid, MAPS_EXEC_ONLY, &m);
	if (err) {
		sym->st.snapshot_failures++;
		return err;
	}
	n = maps__count(m);
	if (!n && s->maps) {
		/* an exiting process (or a zombie) has no maps left: keep what it had */
		maps__free(m);
		sym->st.snapshot_failures++;
		return -ESRCH;
	}
	if (s->maps && !same_image(s->maps, m)) {
		maps__free(m);
		sym->st.other_images++;
		return -ESTALE;
	}
	files = calloc(n ? n : 1, sizeof(*files));
	if (!files) {
		maps__free(m);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (maps__entry(m, i)->kind == MAPS_FILE)
			files[i] = sym_file__get(sym, s->pid, maps__entry(m, i));
	snapshot_release_files(sym, s);
	s->maps = m;
	s->files = files;
	sym->st.map_entries += n;
	if (!s->identity_read)
		snapshot_read_identity(s);
	perf_map__update(sym, s);
	return 0;
}

void snapshot__enforce_limits(struct symbolizer *sym, struct snapshot *keep)
{
	while (sym->st.snapshots > sym->opts.max_snapshots ||
	       sym->st.map_entries > sym->opts.max_map_entries) {
		struct snapshot *old = container_of(sym->snap_lru.prev, struct snapshot, node);

		if (old == keep)
			break;
		snapshot__free(sym, old);
		sym->st.evictions++;
	}
}

struct snapshot *snapshot__new(struct symbolizer *sym, __u32 pid, const struct maps *maps)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pid = pid;
	/* Ids wrap after 2^32 snapshots; 0 stays invalid and live ids are skipped. */
	do
		s->id = ++sym->next_id;
	while (!s->id || pairmap__get(&sym->snaps, s->id, 0));
	if (pairmap__put(&sym->snaps, s->id, 0, s)) {
		free(s);
		return NULL;
	}
	s->attached = true;
	list__add(&sym->snap_lru, &s->node);
	sym->st.snapshots++;
	s->refresh_backoff_ns = REFRESH_MIN_NS;
	if (snapshot__read(sym, s, maps))
		s->refresh_at_ns = now_ns() + REFRESH_MIN_NS;
	snapshot__enforce_limits(sym, s);
	return s;
}

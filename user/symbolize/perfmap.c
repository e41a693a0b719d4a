// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Perf maps: the symbols JITs write to /tmp/perf-NSPID.map, read as they grow. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/sorted.h"
#include "proc/root.h"
#include "symbolize/symbols_int.h"

/* perf maps: larger files are refused, longer names cut. */
#define PERF_MAP_MAX_BYTES (64u << 20)
#define PERF_MAP_MAX_NAME  1024
#define PERF_MAP_CHUNK	   (64u << 10)

void perf_map__clear(struct symbolizer *sym, struct perf_map *pm)
{
	sym->st.map_entries -= pm->nr;
	free(pm->syms);
	free(pm->names);
	pm->syms = NULL;
	pm->names = NULL;
	pm->nr = pm->cap = pm->names_len = pm->names_cap = 0;
	pm->parsed = 0;
	pm->seq = 0;
	pm->skip_line = false;
	pm->full = false;
}

static bool parse_hex(const char **pp, const char *end, __u64 *v)
{
	const char *p = *pp, *digits;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	digits = p;
	for (*v = 0; p < end; p++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f')
			d = (*p | 0x20) - 'a' + 10;
		else
			break;
		if (*v >> 60)
			return false;
		*v = *v << 4 | d;
	}
	*pp = p;
	return p > digits;
}

static bool skip_blanks(const char **pp, const char *end)
{
	const char *p = *pp;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == *pp)
		return false;
	*pp = p;
	return true;
}

/*
 * Adds the entry of line [p, end) ("START SIZE name", hex with or without 0x,
 * the name being the rest of the line). Returns 0 (also for a malformed
 * line), -E2BIG at the entry limit, -ENOMEM.
 */
static int perf_map_add_line(struct perf_map *pm, const char *p, const char *end, size_t limit)
{
	__u64 start, size;
	size_t len;

	if (end > p && end[-1] == '\r')
		end--;
	if (!parse_hex(&p, end, &start) || !skip_blanks(&p, end) || !parse_hex(&p, end, &size) ||
	    !skip_blanks(&p, end) || p == end)
		return 0;
	if (pm->nr >= limit)
		return -E2BIG;
	len = end - p < PERF_MAP_MAX_NAME ? (size_t)(end - p) : PERF_MAP_MAX_NAME;
	if (ARRAY_RESERVE_MIN(pm->syms, pm->cap, pm->nr + 1, 256) ||
	    ARRAY_RESERVE_MIN(pm->names, pm->names_cap, pm->names_len + len + 1, 4096))
		return -ENOMEM;
	pm->syms[pm->nr++] = (struct jit_sym){start, size > UINT32_MAX ? UINT32_MAX : size,
					      pm->names_len, pm->seq++};
	memcpy(pm->names + pm->names_len, p, len);
	pm->names[pm->names_len + len] = '\0';
	pm->names_len += len + 1;
	return 0;
}

static int cmp_jit(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Sorts the entries; of those at one address, the newest stays, and the
 * names of the others are dropped, so that names stay bounded by entries.
 */
static void perf_map_sort(struct perf_map *pm)
{
	size_t i, n = 0, len = 0;
	char *names;

	qsort(pm->syms, pm->nr, sizeof(*pm->syms), cmp_jit);
	for (i = 0; i < pm->nr; i++) {
		if (n && pm->syms[n - 1].start == pm->syms[i].start)
			n--;
		pm->syms[n++] = pm->syms[i];
	}
	if (n == pm->nr)
		return;
	pm->nr = n;
	names = malloc(pm->names_len);
	if (!names)
		return;
	for (i = 0; i < n; i++) {
		size_t l = strlen(pm->names + pm->syms[i].name) + 1;

		memcpy(names + len, pm->names + pm->syms[i].name, l);
		pm->syms[i].name = len;
		len += l;
	}
	free(pm->names);
	pm->names = names;
	pm->names_cap = pm->names_len;
	pm->names_len = len;
}

/*
 * Parses the complete lines of fd from pm->parsed up to size. JITs append
 * while we read: a last line without its newline is left for the next read.
 */
static void perf_map_read(struct symbolizer *sym, struct perf_map *pm, int fd, __u64 size)
{
	size_t limit = sym->opts.max_map_entries / 2, have = 0, old_nr = pm->nr;
	__u64 off = pm->parsed;
	char *buf = malloc(PERF_MAP_CHUNK);
	int err = 0;

	if (!buf)
		return;
	while (off < size && !err) {
		size_t want =
			size - off < PERF_MAP_CHUNK - have ? size - off : PERF_MAP_CHUNK - have;
		ssize_t n = pread(fd, buf + have, want, off);
		const char *p = buf, *nl;

		if (n <= 0)
			break;
		off += n;
		have += n;
		while (!err && (nl = memchr(p, '\n', buf + have - p))) {
			if (!pm->skip_line)
				err = perf_map_add_line(pm, p, nl, limit);
			pm->skip_line = false;
			p = nl + 1;
		}
		if (p == buf && have == PERF_MAP_CHUNK) {
			/* no name is that long: drop the line */
			pm->skip_line = true;
			p = buf + have;
		}
		have = buf + have - p;
		memmove(buf, p, have);
		pm->parsed = off - have;
	}
	free(buf);
	if (err == -E2BIG) {
		if (!pm->full)
			sym->st.perf_map_failures++;
		pm->full = true;
		pm->parsed = size;
	}
	if (pm->nr != old_nr) {
		sym->st.map_entries -= old_nr;
		perf_map_sort(pm);
		sym->st.map_entries += pm->nr;
	}
}

/* Reads what was appended to s's perf map since the last read (all of a new file). */
void perf_map__update(struct symbolizer *sym, struct snapshot *s)
{
	struct perf_map *pm = &s->jit;
	bool same, refuse;
	struct stat st;
	int fd;

	if (!pm->path[0])
		return;
	fd = proc_root__open(s->pid, pm->path, &st);
	if (fd < 0)
		return;
	same = st.st_dev == pm->dev && st.st_ino == pm->ino;
	/* Like perf: not a file another user could have planted for the process to read. */
	refuse = (st.st_uid && st.st_uid != s->uid && st.st_uid != s->euid) ||
		 st.st_size > PERF_MAP_MAX_BYTES;
	if (refuse) {
		if (!same || !pm->refused)
			sym->st.perf_map_failures++;
		pm->refused = true;
	} else {
		if (!same || (__u64)st.st_size < pm->parsed)
			perf_map__clear(sym, pm);
		pm->refused = false;
		perf_map_read(sym, pm, fd, st.st_size);
	}
	pm->dev = st.st_dev;
	pm->ino = st.st_ino;
	close(fd);
}

/* Re-reads s's perf map, at most every REFRESH_MIN_NS while the process lives. */
void perf_map__recheck(struct symbolizer *sym, struct snapshot *s)
{
	__u64 now;

	if (!s->attached || !s->jit.path[0])
		return;
	now = now_ns();
	if (now < s->jit.check_at_ns)
		return;
	s->jit.check_at_ns = now + REFRESH_MIN_NS;
	perf_map__update(sym, s);
}

const struct jit_sym *perf_map__find(const struct perf_map *pm, __u64 addr)
{
	const struct jit_sym *best = NULL;
	size_t lo = SORTED_UPPER_BOUND(pm->syms, pm->nr, start, addr), k;

	/* Code may be freed and reused: of overlapping entries, the newest holds. */
	for (k = 0; k < MAX_NESTED_LOOKBACK && lo > k; k++) {
		const struct jit_sym *j = &pm->syms[lo - 1 - k];

		if (addr - j->start < (j->size ? j->size : 1) && (!best || j->seq > best->seq))
			best = j;
	}
	return best;
}

/* Where JITs put code: anonymous mappings, named or not, and memfds (or no mapping yet). */
bool perf_map__is_jit(const struct maps_entry *e)
{
	return !e || e->kind == MAPS_ANON ||
	       (e->kind == MAPS_SPECIAL && !strncmp(e->path, "[anon:", 6)) ||
	       (e->kind == MAPS_FILE && !strncmp(e->path, "/memfd:", 7));
}

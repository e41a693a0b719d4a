// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ELF inspection results (proc/tls_file.c) per file, keyed by the device and
 * inode the maps name and checked against what the file looks like now: a
 * library mapped by many processes is read once.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "lib/compiler.h"
#include "lib/list.h"
#include "lib/msg.h"
#include "lib/pairmap.h"
#include "proc/tls.h"
#include "proc/tls_arch.h"

struct cache_entry {
	struct list lru;   /* most recent first */
	uint64_t dev, ino; /* key, as in /proc/PID/maps */
	/* What the file looked like when inspected. */
	uint64_t st_dev, st_ino, st_size;
	struct timespec st_mtim;
	int err; /* inspection result: a malformed file stays so until it changes */
	struct tls_file_info info;
};

struct tls_cache {
	struct pairmap entries; /* (dev, ino) -> cache_entry */
	unsigned int max_entries;
	struct list lru;
	struct tls_cache_stats stats;
};

struct tls_cache *tls_cache__new(unsigned int max_entries)
{
	struct tls_cache *cache;

	if (!max_entries || max_entries > (1u << 24))
		return NULL;
	cache = calloc(1, sizeof(*cache));
	if (!cache)
		return NULL;
	cache->max_entries = max_entries;
	list__init(&cache->lru);
	return cache;
}

void tls_cache__free(struct tls_cache *cache)
{
	size_t i;

	if (!cache)
		return;
	for (i = 0; i < cache->entries.count; i++)
		free(cache->entries.entries[i].val);
	pairmap__free(&cache->entries);
	free(cache);
}

void tls_cache__stats(const struct tls_cache *cache, struct tls_cache_stats *stats)
{
	*stats = cache->stats;
	stats->entries = cache->entries.count;
}

static void cache_remove(struct tls_cache *cache, struct cache_entry *e)
{
	pairmap__del(&cache->entries, e->dev, e->ino);
	list__del(&e->lru);
	free(e);
}

static bool entry_matches(const struct cache_entry *e, const struct stat *st)
{
	return e->st_dev == st->st_dev && e->st_ino == st->st_ino &&
	       e->st_size == (uint64_t)st->st_size && e->st_mtim.tv_sec == st->st_mtim.tv_sec &&
	       e->st_mtim.tv_nsec == st->st_mtim.tv_nsec;
}

/* The cached result for a file, if it has not changed since; removes stale ones. */
static struct cache_entry *cache_lookup(struct tls_cache *cache, uint64_t dev, uint64_t ino,
					const struct stat *st)
{
	struct cache_entry *e = pairmap__get(&cache->entries, dev, ino);

	if (e && !entry_matches(e, st)) {
		cache_remove(cache, e);
		e = NULL;
	}
	if (!e) {
		cache->stats.misses++;
		return NULL;
	}
	list__touch(&cache->lru, &e->lru);
	cache->stats.hits++;
	return e;
}

static void cache_insert(struct tls_cache *cache, uint64_t dev, uint64_t ino, const struct stat *st,
			 int err, const struct tls_file_info *info)
{
	struct cache_entry *e;

	if (cache->entries.count >= cache->max_entries) {
		cache_remove(cache, container_of(cache->lru.prev, struct cache_entry, lru));
		cache->stats.evictions++;
	}
	e = malloc(sizeof(*e));
	if (!e)
		return; /* not cached: inspected again next time */
	e->dev = dev;
	e->ino = ino;
	e->st_dev = st->st_dev;
	e->st_ino = st->st_ino;
	e->st_size = st->st_size;
	e->st_mtim = st->st_mtim;
	e->err = err;
	e->info = *info;
	if (pairmap__put(&cache->entries, dev, ino, e)) {
		free(e);
		return;
	}
	list__add(&cache->lru, &e->lru);
}

int tls_cache__inspect(struct tls_cache *cache, int fd, const struct stat *st, uint64_t dev,
		       uint64_t ino, const char *name, struct tls_file_info *info, char *err,
		       size_t err_len)
{
	struct cache_entry *e;
	int ret;

	if (cache && (e = cache_lookup(cache, dev, ino, st))) {
		*info = e->info;
		if (e->err)
			msg__set(err, err_len, "%s: malformed (cached)", name);
		return e->err;
	}
	ret = tls__inspect_fd(fd, name, info, err, err_len);
	if (cache)
		cache_insert(cache, dev, ino, st, ret, info);
	return ret;
}

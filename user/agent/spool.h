/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The spool: OTLP requests not delivered yet, oldest first. In a directory
 * (one file per request, so that a restart of the agent loses nothing) or,
 * without one, in memory. Bounded by total bytes and by SPOOL_MAX_ITEMS:
 * putting past a bound drops the oldest requests, and says how many.
 *
 * Files: SEQ-TIME.otlp (protobuf) or SEQ-TIME.otlp.gz (gzip-compressed, sent
 * with Content-Encoding: gzip), SEQ the 16-digit put order (it continues
 * after a restart), TIME the interval's start in Unix nanoseconds (20
 * digits). Mode 0600, written as .tmp-SEQ, synced, then renamed: a crash
 * leaves no partial request (leftover .tmp-* files are removed at open).
 * Other files are ignored. A request the directory cannot take (a full
 * disk) is held in memory instead, in its place in the order, and written
 * once the directory takes requests again. Not thread-safe.
 */
#ifndef LABELPROF_AGENT_SPOOL_H
#define LABELPROF_AGENT_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define SPOOL_MAX_ITEMS 16384

struct spool;

/*
 * dir NULL: in memory. Requests already in dir are taken in, and dropped
 * past max_bytes (*dropped counts them). NULL with a message in err.
 */
struct spool *spool__open(const char *dir, __u64 max_bytes, __u64 *dropped, char *err,
			  size_t err_len);
void spool__free(struct spool *sp);

/*
 * Adds a request of len bytes (data: malloc'd, owned by the spool from now
 * on, freed on failure too), then drops the oldest past the bounds (*dropped
 * counts them: the new one too if it alone exceeds max_bytes). 0 or -errno
 * (nothing added). *write_err: 0, or -errno when the directory could not
 * take the request, which is then held in memory.
 */
int spool__put(struct spool *sp, __u64 time_ns, bool gzip, void *data, size_t len, __u64 *dropped,
	       int *write_err);
/*
 * The oldest request, in a malloc'd *data the caller frees. 0, -ENOENT when
 * the spool is empty, or -errno if it cannot be read (then pop it).
 */
int spool__peek(struct spool *sp, void **data, size_t *len, bool *gzip, __u64 *time_ns);
/* Removes the oldest request. */
void spool__pop(struct spool *sp);
/*
 * Writes the requests held in memory to the directory, oldest first, until
 * one fails. Returns how many are still only in memory (all of them without
 * a directory): what stopping now would lose.
 */
size_t spool__save(struct spool *sp);
/* A new bound, enforced at once (*dropped counts the requests dropped). */
void spool__set_max_bytes(struct spool *sp, __u64 max_bytes, __u64 *dropped);

__u64 spool__bytes(const struct spool *sp);
size_t spool__count(const struct spool *sp);

#endif /* LABELPROF_AGENT_SPOOL_H */

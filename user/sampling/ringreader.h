/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF ring buffer's reader: a thread that drains the ring into a queue
 * in userspace as soon as it fills a little, so that the ring can be small
 * (docs/design.md section 4), while the caller's thread handles the queued
 * records whenever its loop comes round.
 */
#ifndef LABELPROF_RINGREADER_H
#define LABELPROF_RINGREADER_H

#include <stddef.h>

/* Called on the caller's thread for every record, in ring order; < 0 stops. */
typedef int (*ringreader_fn)(void *ctx, const void *data, size_t size);

struct ringreader;

/*
 * Starts reading the BPF ring buffer map_fd. Past max_queued bytes of
 * records not yet handed over, the reader stops draining: the BPF ring fills
 * and its writer counts what it drops. NULL with errno on failure.
 */
struct ringreader *ringreader__new(int map_fd, size_t max_queued, ringreader_fn fn, void *ctx);
/*
 * Waits up to timeout_ms (-1: no limit) for records that want handling now
 * (any but samples) or for a full queue, then hands every queued record to
 * fn: their count, or -errno.
 */
int ringreader__poll(struct ringreader *r, int timeout_ms);
/*
 * Stops the reader and hands over everything queued and everything in the
 * ring: count, or -errno. Later polls read the ring themselves.
 */
int ringreader__drain(struct ringreader *r);
void ringreader__free(struct ringreader *r);

#endif /* LABELPROF_RINGREADER_H */

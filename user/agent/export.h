/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's sender: a thread that takes each interval's encoded profiles
 * and writes them to the output directory (with retention) and delivers the
 * OTLP request to the endpoint, so that neither disk nor network ever holds
 * up the sampling loop.
 *
 * Every request goes through the spool (spool.h) and leaves it only
 * once the endpoint accepted it, oldest first: an outage delays requests but
 * loses none until the spool's bound drops the oldest. Failed attempts are
 * retried with exponential backoff (otlp_retry_initial doubled up to
 * otlp_retry_max, jittered, or the server's Retry-After). As OTLP/HTTP says,
 * network errors, timeouts and statuses 429, 502, 503 and 504 are retried,
 * and any other 4xx or 5xx drops the request (counted, logged): the endpoint
 * will never take it. Other statuses (a redirect) are retried.
 *
 * A file that cannot be written (a full disk) is counted and logged, and
 * costs that file only; a request the spool directory cannot take waits in
 * memory (spool.h) and is sent all the same.
 *
 * The queue between the loop and the thread holds EXPORT_QUEUE_MAX
 * intervals; past that the oldest waiting one is dropped (counted).
 */
#ifndef LABELPROF_AGENT_EXPORT_H
#define LABELPROF_AGENT_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "agent/config.h"
#include "agent/metrics.h"

#define EXPORT_QUEUE_MAX 16

struct spool;

/* One interval, encoded. */
struct export_job {
	__u64 start_ns; /* the interval's start, Unix nanoseconds: names the files */
	void *pprof;	/* gzipped pprof for the directory, or NULL */
	size_t pprof_len;
	void *otlp; /* OTLP request (protobuf) for the directory and the endpoint, or NULL */
	size_t otlp_len;
};

struct exporter;

/*
 * Starts the thread with configuration c (a reference is taken) and spool
 * (owned from now on), counting in stats. NULL with a message in err.
 */
struct exporter *exporter__start(struct agent_config *c, struct spool *spool,
				 struct agent_stats *stats, char *err, size_t err_len);
/* Hands over job's buffers (*job is cleared). Never blocks on I/O. */
void exporter__submit(struct exporter *e, struct export_job *job);
/*
 * A new configuration for the next requests (a reference is taken), and a
 * new spool if not NULL: the old one's requests move into it.
 */
void exporter__reconfigure(struct exporter *e, struct agent_config *c, struct spool *spool);
/*
 * Writes what is queued, tries each spooled request once (oldest first,
 * stopping at the first failure, until otlp_timeout after this call: a
 * request in flight is let finish), stops the thread and frees e. What stays
 * in a spool directory is sent at the next start.
 */
void exporter__stop(struct exporter *e);

/*
 * The delay before the next attempt after `failures` consecutive failures
 * (>= 1): initial_ns doubled each time up to max_ns, then made up to half
 * shorter by rnd (any random value), so that agents that failed together do
 * not all retry together.
 */
__u64 export_backoff_ns(unsigned int failures, __u64 initial_ns, __u64 max_ns, __u64 rnd);
/* Whether a request answered with this HTTP status (not 2xx) may be retried. */
bool export_status_retryable(long status);

#endif /* LABELPROF_AGENT_EXPORT_H */

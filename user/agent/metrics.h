/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's counters and the Prometheus endpoint that serves them
 * (libmicrohttpd, its own thread): GET /metrics, text format 0.0.4.
 * Counters are written by the sampling loop and the sender thread and read
 * by the server thread, always with the stats__ helpers: a store releases
 * and a load acquires, so a reader that loads a part (samples with labels)
 * before its whole (samples), which the writer stores first, never sees
 * the part exceed the whole.
 */
#ifndef LABELPROF_AGENT_METRICS_H
#define LABELPROF_AGENT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <linux/types.h>

/* The modules' counters (registry/module.h) the agent serves, at most. */
#define AGENT_MAX_MODULE_COUNTERS 64

/* One of them: names and texts are the modules' own (static) strings. */
struct agent_module_counter {
	const char *name;
	const char *title;
	const char *text;
	__u64 value;
	__u64 gauge;
};

struct agent_stats {
	__u64 samples; /* counters: since the agent started */
	__u64 samples_with_labels;
	__u64 ringbuf_drops;
	__u64 label_read_faults;
	__u64 null_values;
	__u64 intervals;
	__u64 export_success;
	__u64 export_failure;
	__u64 export_rejected;
	__u64 spool_dropped;
	__u64 file_write_failure;
	__u64 spool_write_failure;
	__u64 process_inspections;
	__u64 execs;		 /* and the sum of their delays (registry.h) */
	__u64 exec_delay_sum_ns;
	__u64 processes_tracked; /* gauges */
	__u64 spool_bytes;
	__u64 spool_intervals;
	/*
	 * The modules' counters of the current session (a runtime's walk, the
	 * unwind tables): slots [0, nr_module_counters), each filled before
	 * the count that publishes it (metrics__set_module_counters).
	 */
	__u64 nr_module_counters;
	struct agent_module_counter module_counters[AGENT_MAX_MODULE_COUNTERS];
	/* health (metrics__health), not metrics; times are CLOCK_MONOTONIC ns */
	__u64 loop_ns;		  /* the sampling loop's last pass; 0: not sampling */
	__u64 interval_ns;	  /* the interval in force */
	__u64 backlog_since_ns;	  /* since when intervals wait for the sender; 0: none */
	__u64 file_write_failing; /* 1: the last write to output_dir failed */
};

static inline void stats__add(__u64 *counter, __u64 v)
{
	__atomic_add_fetch(counter, v, __ATOMIC_RELEASE);
}

static inline void stats__set(__u64 *gauge, __u64 v)
{
	__atomic_store_n(gauge, v, __ATOMIC_RELEASE);
}

static inline __u64 stats__get(const __u64 *v)
{
	return __atomic_load_n(v, __ATOMIC_ACQUIRE);
}

struct proc_counters;

/* Publishes the modules' counters, n groups (registry__counters), in st. */
void metrics__set_module_counters(struct agent_stats *st, const struct proc_counters *c, size_t n);

/* The agent's own CPU time and resident memory, from /proc/self/stat. 0 or -errno. */
int metrics__self(double *cpu_seconds, __u64 *rss_bytes);

/*
 * The text exposition of st and the agent's own figures into buf (len
 * bytes). Returns the length of the text, which was cut if it is >= len.
 */
size_t metrics__render(const struct agent_stats *st, double cpu_seconds, __u64 rss_bytes, char *buf,
		       size_t len);

/* The sampling loop counts as stopped when its last pass is older than this. */
#define HEALTH_STALL_NS (30 * 1000000000ull)
/* Export is behind when intervals have waited for more than this many intervals. */
#define HEALTH_BEHIND_INTERVALS 3

/*
 * The agent's health at now (CLOCK_MONOTONIC ns) as a small JSON object in
 * buf: whether sampling runs (its loop passed within HEALTH_STALL_NS) and,
 * unless only_sampling, whether export keeps up (no interval has waited for
 * delivery HEALTH_BEHIND_INTERVALS intervals, the last write to output_dir
 * succeeded). Returns whether healthy.
 */
bool metrics__health(const struct agent_stats *st, __u64 now, bool only_sampling, char *buf,
		     size_t len);

struct metrics_server;

/* Listens on addr and serves st until stopped. NULL with a message in err. */
struct metrics_server *metrics_server__start(const struct sockaddr *addr,
					     const struct agent_stats *st, char *err,
					     size_t err_len);
void metrics_server__stop(struct metrics_server *m);

#endif /* LABELPROF_AGENT_METRICS_H */

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Prometheus metrics of the agent (metrics.h). */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <microhttpd.h>

#include "agent/metrics.h"
#include "lib/clock.h"
#include "proc/stat.h"
#include "registry/module.h"
#include "version.h"

int metrics__self(double *cpu_seconds, __u64 *rss_bytes)
{
	unsigned long utime, stime;
	long rss;
	char buf[1024];
	const char *fields = proc_stat_fields(0, buf, sizeof(buf));

	if (!fields || sscanf(fields,
			      "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d "
			      "%*d %*d %*u %*u %ld",
			      &utime, &stime, &rss) != 3)
		return -EIO;
	*cpu_seconds = (double)(utime + stime) / sysconf(_SC_CLK_TCK);
	*rss_bytes = (__u64)(rss > 0 ? rss : 0) * sysconf(_SC_PAGESIZE);
	return 0;
}

struct render {
	char *buf;
	size_t len;
	size_t used; /* may exceed len: then the text was cut */
};

static void put(struct render *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct render *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(r->used < r->len ? r->buf + r->used : NULL,
		      r->used < r->len ? r->len - r->used : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		r->used += n;
}

static void metric(struct render *r, const char *name, const char *type, const char *help, __u64 v)
{
	put(r, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name, type, name,
	    (unsigned long long)v);
}

void metrics__set_module_counters(struct agent_stats *st, const struct proc_counters *c, size_t n)
{
	__u64 slots = stats__get(&st->nr_module_counters), k = 0;
	struct agent_module_counter *m;
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < c[i].n && k < AGENT_MAX_MODULE_COUNTERS; j++, k++) {
			m = &st->module_counters[k];
			/* a slot published keeps its names: a session's modules are the last's */
			if (k >= slots) {
				__atomic_store_n(&m->name, c[i].c[j].name, __ATOMIC_RELEASE);
				__atomic_store_n(&m->title, c[i].title, __ATOMIC_RELEASE);
				__atomic_store_n(&m->text, c[i].c[j].text, __ATOMIC_RELEASE);
				stats__set(&m->gauge, c[i].c[j].gauge);
			}
			stats__set(&m->value, c[i].c[j].value);
		}
	}
	if (k > slots)
		stats__set(&st->nr_module_counters, k);
}

/* The modules' counters: labelprof_NAME, or labelprof_NAME_total for a count. */
static void module_metrics(struct render *r, const struct agent_stats *st)
{
	__u64 n = stats__get(&st->nr_module_counters), i;
	const struct agent_module_counter *m;
	const char *name, *type, *total;

	for (i = 0; i < n && i < AGENT_MAX_MODULE_COUNTERS; i++) {
		m = &st->module_counters[i];
		name = __atomic_load_n(&m->name, __ATOMIC_ACQUIRE);
		type = stats__get(&m->gauge) ? "gauge" : "counter";
		total = stats__get(&m->gauge) ? "" : "_total";
		put(r,
		    "# HELP labelprof_%s%s %s: %s.\n# TYPE labelprof_%s%s %s\nlabelprof_%s%s "
		    "%llu\n",
		    name, total, __atomic_load_n(&m->title, __ATOMIC_ACQUIRE),
		    __atomic_load_n(&m->text, __ATOMIC_ACQUIRE), name, total, type, name, total,
		    (unsigned long long)stats__get(&m->value));
	}
}

size_t metrics__render(const struct agent_stats *st, double cpu_seconds, __u64 rss_bytes, char *buf,
		       size_t len)
{
	struct render r = {buf, len, 0};
	/* the parts before the whole (metrics.h) */
	__u64 with_labels = stats__get(&st->samples_with_labels);
	__u64 read_faults = stats__get(&st->label_read_faults);
	__u64 samples = stats__get(&st->samples);

	metric(&r, "labelprof_samples_total", "counter", "CPU samples received.", samples);
	metric(&r, "labelprof_samples_with_labels_total", "counter",
	       "CPU samples received that carried at least one label.", with_labels);
	metric(&r, "labelprof_ringbuf_drops_total", "counter",
	       "Samples lost because the ring buffer was full.", stats__get(&st->ringbuf_drops));
	metric(&r, "labelprof_label_read_faults_total", "counter",
	       "CPU samples received whose label read faulted in the sampled process.",
	       read_faults);
	metric(&r, "labelprof_null_values_total", "counter",
	       "Labels skipped for a NULL value of length 0 (a writer's label not in use).",
	       stats__get(&st->null_values));
	metric(&r, "labelprof_processes_tracked", "gauge", "Processes in the process table.",
	       stats__get(&st->processes_tracked));
	metric(&r, "labelprof_process_inspections_total", "counter",
	       "Processes inspected for labels and unwind mappings (at the start, exec, new code).",
	       stats__get(&st->process_inspections));
	put(&r,
	    "# HELP labelprof_exec_inspection_delay_seconds From a process's exec to its new "
	    "image's inspection: its samples carry no labels before.\n"
	    "# TYPE labelprof_exec_inspection_delay_seconds summary\n"
	    "labelprof_exec_inspection_delay_seconds_sum %.6f\n"
	    "labelprof_exec_inspection_delay_seconds_count %llu\n",
	    stats__get(&st->exec_delay_sum_ns) / 1e9, (unsigned long long)stats__get(&st->execs));
	module_metrics(&r, st);
	metric(&r, "labelprof_intervals_total", "counter", "Profiles (intervals) completed.",
	       stats__get(&st->intervals));
	metric(&r, "labelprof_export_success_total", "counter",
	       "OTLP requests the endpoint accepted.", stats__get(&st->export_success));
	metric(&r, "labelprof_export_failure_total", "counter",
	       "OTLP requests that failed (each attempt).", stats__get(&st->export_failure));
	metric(&r, "labelprof_export_rejected_total", "counter",
	       "OTLP requests the endpoint refused with a status not to retry: dropped.",
	       stats__get(&st->export_rejected));
	metric(&r, "labelprof_spool_bytes", "gauge", "Bytes of OTLP requests waiting for delivery.",
	       stats__get(&st->spool_bytes));
	metric(&r, "labelprof_spool_intervals", "gauge", "OTLP requests waiting for delivery.",
	       stats__get(&st->spool_intervals));
	metric(&r, "labelprof_spool_dropped_total", "counter",
	       "Intervals never delivered: spool or queue full, refused by the endpoint, or lost "
	       "at exit.",
	       stats__get(&st->spool_dropped));
	metric(&r, "labelprof_file_write_failure_total", "counter",
	       "Profile files that could not be written to output_dir.",
	       stats__get(&st->file_write_failure));
	metric(&r, "labelprof_spool_write_failure_total", "counter",
	       "OTLP requests that could not be written to spool_dir (held in memory instead).",
	       stats__get(&st->spool_write_failure));
	put(&r,
	    "# HELP labelprof_build_info The labelprof version running.\n"
	    "# TYPE labelprof_build_info gauge\nlabelprof_build_info{version=\"%s\"} 1\n",
	    LABELPROF_VERSION);
	put(&r,
	    "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
	    "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.2f\n",
	    cpu_seconds);
	metric(&r, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
	       rss_bytes);
	return r.used;
}

bool metrics__health(const struct agent_stats *st, __u64 now, bool only_sampling, char *buf,
		     size_t len)
{
	__u64 loop = stats__get(&st->loop_ns), since = stats__get(&st->backlog_since_ns);
	__u64 waiting = since && now > since ? now - since : 0;
	bool sampling = loop && now - loop < HEALTH_STALL_NS;
	bool behind = waiting > HEALTH_BEHIND_INTERVALS * stats__get(&st->interval_ns);
	bool failing = stats__get(&st->file_write_failing);
	bool ok = sampling && (only_sampling || (!behind && !failing));

	snprintf(buf, len,
		 "{\"status\":\"%s\",\"sampling\":%s,\"export_behind\":%s,"
		 "\"oldest_waiting_seconds\":%.1f,\"output_dir_failing\":%s}\n",
		 ok ? "ok" : "unhealthy", sampling ? "true" : "false", behind ? "true" : "false",
		 waiting / 1e9, failing ? "true" : "false");
	return ok;
}

#define TEXT	     "text/plain; charset=utf-8"
#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct metrics_server {
	struct MHD_Daemon *daemon;
	const struct agent_stats *st;
};

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *text,
			     size_t len, const char *type)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (!text)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct metrics_server *m = cls;
	double cpu = 0;
	__u64 rss = 0;
	size_t len = 4096, n;
	char *text;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, strdup("GET only\n"), 9, TEXT);
	if (!strcmp(url, "/healthz") || !strcmp(url, "/livez")) {
		text = malloc(len);
		if (!text)
			return MHD_NO;
		n = metrics__health(m->st, now_ns(), !strcmp(url, "/livez"), text, len)
			    ? MHD_HTTP_OK
			    : MHD_HTTP_SERVICE_UNAVAILABLE;
		return reply(conn, n, text, strlen(text), "application/json");
	}
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, strdup("see /metrics, /healthz, /livez\n"),
			     31, TEXT);
	/* what cannot be read is reported as 0: the agent's counters matter more */
	metrics__self(&cpu, &rss);
	for (;;) {
		text = malloc(len);
		if (!text)
			return MHD_NO;
		n = metrics__render(m->st, cpu, rss, text, len);
		if (n < len)
			return reply(conn, MHD_HTTP_OK, text, n, METRICS_TYPE);
		free(text);
		len = n + 1;
	}
}

struct metrics_server *metrics_server__start(const struct sockaddr *addr,
					     const struct agent_stats *st, char *err,
					     size_t err_len)
{
	struct metrics_server *m = calloc(1, sizeof(*m));
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD;

	if (!m) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	m->st = st;
	if (addr->sa_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	errno = 0;
	/* few, short connections: a scraper or two */
	m->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR,
				     addr, MHD_OPTION_CONNECTION_LIMIT, 16U,
				     MHD_OPTION_CONNECTION_TIMEOUT, 10U, MHD_OPTION_END);
	if (!m->daemon) {
		snprintf(err, err_len, "cannot serve metrics: %s",
			 errno ? strerror(errno) : "libmicrohttpd failed to start");
		free(m);
		return NULL;
	}
	return m;
}

void metrics_server__stop(struct metrics_server *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->daemon);
	free(m);
}

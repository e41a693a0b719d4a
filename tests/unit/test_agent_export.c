// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The agent's sender: retry delays, which refusals are retried, the metrics
 * text, an interval that cannot be delivered staying in the spool, what a
 * real endpoint on 127.0.0.1 (libmicrohttpd) answering an error does to the
 * spool, the counters and the log, and writes that fail (a file size limit:
 * EFBIG from the kernel, as a full disk gives ENOSPC).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <microhttpd.h>

#include "agent/config.h"
#include "agent/export.h"
#include "agent/metrics.h"
#include "agent/spool.h"
#include "registry/module.h"

#define S  1000000000ull
#define MS 1000000ull

static void test_backoff(void **state)
{
	/* without jitter (rnd 0): doubling from the initial delay, capped */
	assert_int_equal(export_backoff_ns(1, S, 60 * S, 0), S);
	assert_int_equal(export_backoff_ns(2, S, 60 * S, 0), 2 * S);
	assert_int_equal(export_backoff_ns(3, S, 60 * S, 0), 4 * S);
	assert_int_equal(export_backoff_ns(6, S, 60 * S, 0), 32 * S);
	assert_int_equal(export_backoff_ns(7, S, 60 * S, 0), 60 * S);
	assert_int_equal(export_backoff_ns(1000000, S, 60 * S, 0), 60 * S);
	/* no overflow near the top of the range */
	assert_int_equal(export_backoff_ns(200, UINT64_MAX / 3, UINT64_MAX - 1, 0), UINT64_MAX - 1);
	/* an initial delay past the cap is capped */
	assert_int_equal(export_backoff_ns(1, 10 * S, S, 0), S);
}

static void test_backoff_jitter(void **state)
{
	__u64 d, lo = UINT64_MAX, hi = 0, r;

	/* jitter shortens by at most half, never lengthens */
	for (r = 0; r < 100000; r += 7) {
		d = export_backoff_ns(3, S, 60 * S, r * 2654435761u);
		assert_true(d >= 2 * S && d <= 4 * S);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	/* and it spreads */
	assert_true(hi - lo > S);
	assert_int_equal(export_backoff_ns(1, 1, 1, 12345), 1);
}

static void test_retryable(void **state)
{
	/* OTLP/HTTP's retryable statuses, and redirects (they refuse nothing) */
	static const long retry[] = {429, 502, 503, 504, 301, 302, 307, 308};
	static const long never[] = {400, 401, 403, 404, 405, 408, 413, 415, 500, 501, 505};
	size_t i;

	for (i = 0; i < sizeof(retry) / sizeof(retry[0]); i++)
		assert_true(export_status_retryable(retry[i]));
	for (i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		assert_false(export_status_retryable(never[i]));
}

static void test_metrics_text(void **state)
{
	static const char *const names[] = {
		"labelprof_samples_total",
		"labelprof_samples_with_labels_total",
		"labelprof_ringbuf_drops_total",
		"labelprof_label_read_faults_total",
		"labelprof_null_values_total",
		"labelprof_processes_tracked",
		"labelprof_process_inspections_total",
		"labelprof_intervals_total",
		"labelprof_export_success_total",
		"labelprof_export_failure_total",
		"labelprof_export_rejected_total",
		"labelprof_spool_bytes",
		"labelprof_spool_dropped_total",
		"labelprof_file_write_failure_total",
		"labelprof_spool_write_failure_total",
		"process_cpu_seconds_total",
		"process_resident_memory_bytes",
	};
	struct agent_stats st = {.samples = 1234,
				 .export_failure = 7,
				 .export_rejected = 3,
				 .spool_bytes = 99,
				 .execs = 4,
				 .exec_delay_sum_ns = 2500000};
	/* what the modules count: a runtime's walk, the unwind tables */
	const struct proc_counters modules[] = {
		{.title = "Python",
		 .n = 2,
		 .c = {{.name = "python_walks", .text = "walks", .value = 12},
		       {.name = "python_faults", .text = "faults", .value = 1}}},
		{.title = "unwind",
		 .n = 1,
		 .c = {{.name = "unwind_rows", .text = "rows", .value = 300, .gauge = true}}},
	};
	char buf[8192], small[16], line[128];
	size_t n, i;

	metrics__set_module_counters(&st, modules, 2);
	n = metrics__render(&st, 1.5, 4096, buf, sizeof(buf));

	assert_true(n < sizeof(buf));
	assert_int_equal(strlen(buf), n);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(line, sizeof(line), "# HELP %s ", names[i]);
		assert_non_null(strstr(buf, line));
		snprintf(line, sizeof(line), "# TYPE %s %s\n", names[i],
			 strstr(names[i], "_total") ? "counter" : "gauge");
		assert_non_null(strstr(buf, line));
	}
	assert_non_null(strstr(buf, "\nlabelprof_samples_total 1234\n"));
	assert_non_null(strstr(buf, "\nlabelprof_export_failure_total 7\n"));
	assert_non_null(strstr(buf, "\nlabelprof_export_rejected_total 3\n"));
	assert_non_null(strstr(buf, "\nlabelprof_spool_bytes 99\n"));
	assert_non_null(strstr(buf, "# TYPE labelprof_exec_inspection_delay_seconds summary\n"
				    "labelprof_exec_inspection_delay_seconds_sum 0.002500\n"
				    "labelprof_exec_inspection_delay_seconds_count 4\n"));
	assert_non_null(strstr(buf, "# HELP labelprof_python_walks_total Python: walks.\n"
				    "# TYPE labelprof_python_walks_total counter\n"
				    "labelprof_python_walks_total 12\n"));
	assert_non_null(strstr(buf, "\nlabelprof_python_faults_total 1\n"));
	assert_non_null(strstr(buf, "# TYPE labelprof_unwind_rows gauge\nlabelprof_unwind_rows 300\n"));
	assert_non_null(strstr(buf, "\nprocess_cpu_seconds_total 1.50\n"));
	assert_non_null(strstr(buf, "\nprocess_resident_memory_bytes 4096\n"));
	assert_int_equal(buf[n - 1], '\n');
	/* too small a buffer: cut, terminated, and the length needed comes back */
	assert_int_equal(metrics__render(&st, 1.5, 4096, small, sizeof(small)), n);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

static void test_metrics_self(void **state)
{
	double cpu = -1;
	__u64 rss = 0;

	assert_int_equal(metrics__self(&cpu, &rss), 0);
	assert_true(cpu >= 0);
	assert_true(rss > 0);
}

/* Polls until *v is at least want, for at most 20 s (CPUs may be shared); whether it got there. */
static bool wait_at_least(const __u64 *v, __u64 want)
{
	struct timespec tick = {0, 10 * MS};
	int i;

	for (i = 0; i < 2000; i++) {
		if (__atomic_load_n(v, __ATOMIC_SEQ_CST) >= want)
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

static size_t count_files(const char *path, const char *suffix)
{
	DIR *d = opendir(path);
	struct dirent *de;
	size_t n = 0, len;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		len = strlen(de->d_name);
		n += de->d_name[0] != '.' && len > strlen(suffix) &&
		     !strcmp(de->d_name + len - strlen(suffix), suffix);
	}
	closedir(d);
	return n;
}

/* Nothing listens on port 1: every attempt fails, the interval stays spooled. */
static void test_undeliverable_stays_spooled(void **state)
{
	char dir[] = "/tmp/test_agent_export.XXXXXX", text[1024], spool_dir[128], err[256];
	struct agent_stats st = {};
	struct agent_config *c;
	struct export_job job;
	struct exporter *e;
	struct spool *sp;
	__u64 dropped = 0;

	assert_non_null(mkdtemp(dir));
	snprintf(spool_dir, sizeof(spool_dir), "%s/spool", dir);
	snprintf(text, sizeof(text),
		 "output_dir = %s\nformats = pprof,otlp\notlp_endpoint = http://127.0.0.1:1\n"
		 "otlp_timeout = 500ms\notlp_retry_initial = 50ms\notlp_retry_max = 100ms\n"
		 "spool_dir = %s\n",
		 dir, spool_dir);
	c = agent_config__parse_string(text, "test", err, sizeof(err));
	assert_non_null(c);
	sp = spool__open(c->spool_dir, c->max_spool_bytes, &dropped, err, sizeof(err));
	assert_non_null(sp);
	e = exporter__start(c, sp, &st, err, sizeof(err));
	assert_non_null(e);

	job = (struct export_job){.start_ns = 1700000000123456789ull,
				  .pprof = strdup("pprof bytes"),
				  .pprof_len = 11,
				  .otlp = strdup("otlp bytes"),
				  .otlp_len = 10};
	exporter__submit(e, &job);
	assert_null(job.pprof);
	assert_true(wait_at_least(&st.export_failure, 2));
	exporter__stop(e);
	agent_config__put(c);

	/* both files written, named after the interval's start (UTC) */
	assert_int_equal(count_files(dir, "-20231114T221320.123Z.pb.gz"), 1);
	assert_int_equal(count_files(dir, "-20231114T221320.123Z.otlp.pb"), 1);
	/* retried, then left in the spool, compressed */
	assert_true(stats__get(&st.export_failure) >= 2);
	assert_int_equal(stats__get(&st.export_success), 0);
	assert_int_equal(stats__get(&st.spool_intervals), 1);
	assert_int_equal(stats__get(&st.spool_dropped), 0);
	assert_int_equal(count_files(spool_dir, "-01700000000123456789.otlp.gz"), 1);
	snprintf(text, sizeof(text), "rm -rf %s", dir);
	assert_int_equal(system(text), 0);
}

/*
 * An OTLP/HTTP endpoint on 127.0.0.1: answers every POST with status and
 * reply, and keeps the start of each request's body.
 */
struct endpoint {
	struct MHD_Daemon *daemon;
	unsigned int status; /* atomic: the test changes it while the server runs */
	const char *content_type;
	const void *reply;
	size_t reply_len;
	__u64 requests; /* atomic */
	char bodies[64][16];
	char url[64];
};

struct upload {
	char body[16];
	size_t len;
};

static enum MHD_Result on_post(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *size, void **con_cls)
{
	struct endpoint *ep = cls;
	struct upload *up = *con_cls;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	size_t n;

	if (!up) {
		*con_cls = calloc(1, sizeof(*up));
		return *con_cls ? MHD_YES : MHD_NO;
	}
	if (*size) {
		n = *size < sizeof(up->body) - 1 - up->len ? *size : sizeof(up->body) - 1 - up->len;
		memcpy(up->body + up->len, data, n);
		up->len += n;
		*size = 0;
		return MHD_YES;
	}
	n = __atomic_load_n(&ep->requests, __ATOMIC_SEQ_CST);
	if (n < 64)
		memcpy(ep->bodies[n], up->body, sizeof(up->body));
	resp = MHD_create_response_from_buffer(ep->reply_len, (void *)ep->reply,
					       MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", ep->content_type);
	ret = MHD_queue_response(conn, __atomic_load_n(&ep->status, __ATOMIC_SEQ_CST), resp);
	MHD_destroy_response(resp);
	__atomic_store_n(&ep->requests, n + 1, __ATOMIC_SEQ_CST);
	return ret;
}

static void on_done(void *cls, struct MHD_Connection *conn, void **con_cls,
		    enum MHD_RequestTerminationCode toe)
{
	free(*con_cls);
	*con_cls = NULL;
}

static void endpoint__start(struct endpoint *ep)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	const union MHD_DaemonInfo *info;

	/* one thread: requests are answered, and recorded, in the order they come */
	ep->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_post, ep,
				      MHD_OPTION_SOCK_ADDR, &sin, MHD_OPTION_NOTIFY_COMPLETED,
				      on_done, NULL, MHD_OPTION_END);
	assert_non_null(ep->daemon);
	info = MHD_get_daemon_info(ep->daemon, MHD_DAEMON_INFO_BIND_PORT);
	assert_non_null(info);
	snprintf(ep->url, sizeof(ep->url), "http://127.0.0.1:%u", info->port);
}

/* What the agent logs (stderr) goes to a file while a test runs. */
struct captured {
	char path[64];
	int saved;
};

static void capture__start(struct captured *c)
{
	int fd;

	snprintf(c->path, sizeof(c->path), "/tmp/test_agent_export.log.XXXXXX");
	fd = mkstemp(c->path);
	assert_true(fd >= 0);
	fflush(stderr);
	c->saved = dup(STDERR_FILENO);
	assert_true(c->saved >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

/* Stops capturing; returns what was logged (malloc'd), and passes it on to stderr. */
static char *capture__stop(struct captured *c)
{
	char *text = calloc(1, 65536);
	int fd = open(c->path, O_RDONLY);
	ssize_t n;

	assert_non_null(text);
	assert_true(fd >= 0);
	fflush(stderr);
	assert_int_equal(dup2(c->saved, STDERR_FILENO), STDERR_FILENO);
	close(c->saved);
	n = read(fd, text, 65535);
	assert_true(n >= 0);
	close(fd);
	unlink(c->path);
	fputs(text, stderr);
	return text;
}

static size_t occurrences(const char *text, const char *what)
{
	size_t n = 0;

	for (; (text = strstr(text, what)); text++)
		n++;
	return n;
}

/*
 * An exporter sending to url, without gzip (the endpoint sees the bodies as
 * submitted), spooling in spool_dir, and writing both formats to output_dir
 * unless it is NULL.
 */
static struct exporter *exporter_to(const char *url, const char *spool_dir, const char *output_dir,
				    struct agent_stats *st)
{
	char text[1024], err[256];
	struct agent_config *c;
	struct exporter *e;
	struct spool *sp;
	__u64 dropped = 0;

	snprintf(text, sizeof(text),
		 "otlp_endpoint = %s\notlp_gzip = false\notlp_timeout = 5s\n"
		 "otlp_retry_initial = 20ms\notlp_retry_max = 50ms\nspool_dir = %s\n%s%s%s",
		 url, spool_dir, output_dir ? "formats = pprof,otlp\noutput_dir = " : "",
		 output_dir ?: "", output_dir ? "\n" : "");
	c = agent_config__parse_string(text, "test", err, sizeof(err));
	assert_non_null(c);
	sp = spool__open(c->spool_dir, c->max_spool_bytes, &dropped, err, sizeof(err));
	assert_non_null(sp);
	e = exporter__start(c, sp, st, err, sizeof(err));
	assert_non_null(e);
	agent_config__put(c);
	return e;
}

/* start, padded with dots to len bytes, in a malloc'd buffer. */
static void *padded(const char *start, size_t len)
{
	char *p = malloc(len);

	assert_non_null(p);
	memset(p, '.', len);
	memcpy(p, start, strlen(start));
	return p;
}

/* Interval n (1, 2, ...): its request and its pprof profile are "request n", padded to len. */
static void submit(struct exporter *e, int n, size_t len)
{
	struct export_job job = {.start_ns = 1700000000123456789ull + n * 60 * S};
	char start[16];

	snprintf(start, sizeof(start), "request %d", n);
	len = len > strlen(start) ? len : strlen(start);
	job.pprof = padded(start, len);
	job.otlp = padded(start, len);
	job.otlp_len = job.pprof_len = len;
	exporter__submit(e, &job);
}

/* A status OTLP/HTTP says not to retry: the request is dropped, counted and logged once. */
static void refused(unsigned int status, const char *content_type, const void *reply,
		    size_t reply_len, const char *logged)
{
	struct endpoint ep = {
		.status = status,
		.content_type = content_type,
		.reply = reply,
		.reply_len = reply_len,
	};
	char dir[] = "/tmp/test_agent_export.XXXXXX", cmd[64], *log;
	struct agent_stats st = {};
	struct captured cap;
	struct exporter *e;

	assert_non_null(mkdtemp(dir));
	endpoint__start(&ep);
	capture__start(&cap);
	e = exporter_to(ep.url, dir, NULL, &st);
	submit(e, 1, 0);
	assert_true(wait_at_least(&st.export_rejected, 1));
	submit(e, 2, 0);
	assert_true(wait_at_least(&st.export_rejected, 2));
	exporter__stop(e);
	log = capture__stop(&cap);
	MHD_stop_daemon(ep.daemon);

	/* each request once, in order: a refused one is never sent again */
	assert_int_equal(ep.requests, 2);
	assert_string_equal(ep.bodies[0], "request 1");
	assert_string_equal(ep.bodies[1], "request 2");
	/* dropped from the spool, its file too */
	assert_int_equal(stats__get(&st.spool_intervals), 0);
	assert_int_equal(stats__get(&st.spool_bytes), 0);
	assert_int_equal(count_files(dir, ".otlp"), 0);
	assert_int_equal(stats__get(&st.export_rejected), 2);
	assert_int_equal(stats__get(&st.spool_dropped), 2);
	assert_int_equal(stats__get(&st.export_failure), 2);
	assert_int_equal(stats__get(&st.export_success), 0);
	/* one line for the first, with the interval and the reply; the second waits a minute */
	assert_non_null(strstr(log, "refused the profile of 20231114T221420.123Z: "));
	assert_non_null(strstr(log, logged));
	assert_int_equal(occurrences(log, "refused"), 1);
	assert_int_equal(occurrences(log, "dropped"), 1);
	free(log);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_refused_dropped(void **state)
{
	/* google.rpc.Status{code 3, message, details [{}]}, as OTLP endpoints answer */
	static const char status_pb[] = "\x08\x03\x12\x13invalid sample type\x1a\x02\x0a\x00";
	static const char text[] = "internal\nerror \xff";
	char longer[300], quoted[160];

	refused(400, "application/x-protobuf", status_pb, sizeof(status_pb) - 1,
		"/v1development/profiles refused the profile of 20231114T221420.123Z: HTTP 400: "
		"invalid sample type; dropped, not retried\n");
	/* other bodies are quoted, escaped */
	refused(500, "text/plain", text, sizeof(text) - 1,
		"HTTP 500: internal\\x0aerror \\xff; dropped");
	refused(401, "text/plain", "", 0, "HTTP 401; dropped");
	/* and cut after 120 bytes */
	memset(longer, 'x', sizeof(longer));
	snprintf(quoted, sizeof(quoted), "HTTP 413: %.120s...; dropped", longer);
	refused(413, "application/json", longer, sizeof(longer), quoted);
	/* a protobuf body that is no Status: its bytes */
	refused(400, "application/x-protobuf", "\x0f", 1, "HTTP 400: \\x0f; dropped");
}

/* A status to retry: the request stays first in the spool, sent again until taken. */
static void kept(unsigned int status)
{
	struct endpoint ep = {
		.status = status, .content_type = "text/plain", .reply = "later", .reply_len = 5};
	char dir[] = "/tmp/test_agent_export.XXXXXX", cmd[64];
	struct agent_stats st = {};
	struct exporter *e;
	__u64 i;

	assert_non_null(mkdtemp(dir));
	endpoint__start(&ep);
	e = exporter_to(ep.url, dir, NULL, &st);
	submit(e, 1, 0);
	submit(e, 2, 0);
	assert_true(wait_at_least(&ep.requests, 3));
	assert_int_equal(stats__get(&st.export_rejected), 0);
	assert_int_equal(stats__get(&st.spool_dropped), 0);
	assert_int_equal(stats__get(&st.spool_intervals), 2);
	assert_int_equal(count_files(dir, ".otlp"), 2);
	/* the endpoint takes them now: both arrive, in order */
	__atomic_store_n(&ep.status, 200, __ATOMIC_SEQ_CST);
	assert_true(wait_at_least(&st.export_success, 2));
	exporter__stop(e);
	MHD_stop_daemon(ep.daemon);

	for (i = 0; i + 2 < ep.requests; i++)
		assert_string_equal(ep.bodies[i], "request 1");
	assert_string_equal(ep.bodies[ep.requests - 2], "request 1");
	assert_string_equal(ep.bodies[ep.requests - 1], "request 2");
	assert_int_equal(stats__get(&st.export_failure), ep.requests - 2);
	assert_int_equal(stats__get(&st.spool_intervals), 0);
	assert_int_equal(count_files(dir, ".otlp"), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_retryable_kept(void **state)
{
	kept(503);
	kept(429);
	kept(502);
	kept(504);
	kept(308);
}

/* Entries of path, hidden ones (temporary files) included. */
static size_t entries_in(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* Files and spool requests larger than 4 KiB cannot be written from now on. */
static void limit_file_size(bool on)
{
	struct rlimit rl = {on ? 4096 : RLIM_INFINITY, RLIM_INFINITY};

	/* the agent never gets SIGXFSZ: nothing limits its file size */
	signal(SIGXFSZ, on ? SIG_IGN : SIG_DFL);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

static void test_write_failures(void **state)
{
	struct endpoint ep = {.status = 200, .content_type = "text/plain"};
	char dir[] = "/tmp/test_agent_export.XXXXXX", out[64], spool[64], line[256], *log;
	struct agent_stats st = {};
	struct captured cap;
	struct exporter *e;
	int i;

	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	assert_int_equal(mkdir(out, 0755), 0);
	endpoint__start(&ep);
	capture__start(&cap);
	e = exporter_to(ep.url, spool, out, &st);
	limit_file_size(true);
	submit(e, 1, 8192);
	submit(e, 2, 8192);
	/* the requests the spool could not write are sent from memory */
	assert_true(wait_at_least(&st.export_success, 2));
	assert_int_equal(stats__get(&st.file_write_failure), 4);
	assert_int_equal(stats__get(&st.spool_write_failure), 2);
	/* no partial file, no temporary one */
	assert_int_equal(entries_in(out), 0);
	assert_int_equal(entries_in(spool), 0);
	limit_file_size(false);
	submit(e, 3, 8192);
	assert_true(wait_at_least(&st.export_success, 3));
	exporter__stop(e);
	log = capture__stop(&cap);
	MHD_stop_daemon(ep.daemon);

	assert_int_equal(ep.requests, 3);
	for (i = 0; i < 3; i++) {
		snprintf(line, sizeof(line), "request %d......", i + 1);
		assert_string_equal(ep.bodies[i], line);
	}
	assert_int_equal(stats__get(&st.spool_dropped), 0);
	assert_int_equal(stats__get(&st.file_write_failure), 4);
	assert_int_equal(count_files(out, "-20231114T221620.123Z.pb.gz"), 1);
	assert_int_equal(count_files(out, "-20231114T221620.123Z.otlp.pb"), 1);
	assert_int_equal(entries_in(out), 2);
	/* a line for the first failure, none for the next ones in the minute, one at the end */
	snprintf(line, sizeof(line), "labelprof: cannot write profiles to %s: labelprof-", out);
	assert_non_null(strstr(log, line));
	assert_non_null(strstr(log, "-20231114T221420.123Z.pb.gz: File too large\n"));
	assert_int_equal(occurrences(log, "cannot write profiles"), 1);
	snprintf(line, sizeof(line),
		 "labelprof: cannot write requests to the spool %s: File too large (held in "
		 "memory until sent)\n",
		 spool);
	assert_non_null(strstr(log, line));
	assert_int_equal(occurrences(log, "cannot write requests"), 1);
	assert_int_equal(occurrences(log, "still cannot"), 0);
	snprintf(line, sizeof(line), "writing profiles to %s again after 4 failures\n", out);
	assert_non_null(strstr(log, line));
	snprintf(line, sizeof(line), "writing requests to the spool %s again after 2 failures\n",
		 spool);
	assert_non_null(strstr(log, line));
	free(log);
	snprintf(line, sizeof(line), "rm -rf %s", dir);
	assert_int_equal(system(line), 0);
}

/*
 * The endpoint is down and the spool cannot write: at exit, a last try
 * writes the held request, or the log says it is lost.
 */
static void held_at_exit(bool room_at_exit, const char *logged)
{
	char dir[] = "/tmp/test_agent_export.XXXXXX", line[256], *log;
	struct agent_stats st = {};
	struct captured cap;
	struct exporter *e;

	assert_non_null(mkdtemp(dir));
	capture__start(&cap);
	e = exporter_to("http://127.0.0.1:1", dir, NULL, &st);
	limit_file_size(true);
	submit(e, 1, 8192);
	assert_true(wait_at_least(&st.export_failure, 1));
	assert_int_equal(stats__get(&st.spool_write_failure), 1);
	assert_int_equal(entries_in(dir), 0);
	limit_file_size(!room_at_exit);
	exporter__stop(e);
	limit_file_size(false);
	log = capture__stop(&cap);

	assert_non_null(strstr(log, logged));
	assert_int_equal(count_files(dir, "-01700000060123456789.otlp"), room_at_exit);
	assert_int_equal(entries_in(dir), room_at_exit);
	free(log);
	snprintf(line, sizeof(line), "rm -rf %s", dir);
	assert_int_equal(system(line), 0);
}

static void test_write_failure_at_exit(void **state)
{
	held_at_exit(true, "1 interval not delivered at exit: kept in the spool for the next");
	held_at_exit(false, "1 interval not delivered at exit: lost (/tmp/test_agent_export.");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_backoff_jitter),
		cmocka_unit_test(test_retryable),
		cmocka_unit_test(test_metrics_text),
		cmocka_unit_test(test_metrics_self),
		cmocka_unit_test(test_undeliverable_stays_spooled),
		cmocka_unit_test(test_refused_dropped),
		cmocka_unit_test(test_retryable_kept),
		cmocka_unit_test(test_write_failures),
		cmocka_unit_test(test_write_failure_at_exit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's sender thread (export.h). */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <zlib.h>

#include "agent/export.h"
#include "agent/log.h"
#include "agent/retention.h"
#include "agent/spool.h"
#include "cli/cli.h"
#include "google/rpc/status.pb-c.h"
#include "format/pb.h"
#include "lib/clock.h"
#include "lib/msg.h"

#define LOG_EVERY_NS (60 * NS_PER_S)
#define REPLY_MAX    4096 /* bytes of a reply's body kept: an OTLP error's Status fits */
#define REPLY_QUOTE  120  /* bytes of it quoted in the log */

/* At most one line per LOG_EVERY_NS for a repeated event; callers count the others. */
struct log_limit {
	__u64 last_ns;
	__u64 suppressed;
};

/* Consecutive failures of one kind of write (profile files, spool files). */
struct write_streak {
	unsigned int failures;
	struct log_limit log;
};

struct exporter {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* under lock */
	struct export_job queue[EXPORT_QUEUE_MAX];
	size_t head, count;
	struct agent_config *pending_cfg;
	struct spool *pending_spool;
	bool stopping;
	__u64 stop_ns;		    /* when exporter__stop was called (CLOCK_MONOTONIC) */
	struct log_limit queue_log; /* the submitting thread's */

	/* the thread's own */
	struct agent_config *cfg;
	struct spool *spool;
	struct agent_stats *stats;
	CURL *curl;
	char curl_err[CURL_ERROR_SIZE];
	char reply[REPLY_MAX + 1];
	size_t reply_len;
	char file_prefix[96];  /* "labelprof-HOST-" */
	unsigned int failures; /* consecutive */
	__u64 next_attempt_ns;
	unsigned int seed;
	__u64 streak_start_ns;
	struct log_limit fail_log, refuse_log, drop_log;
	struct write_streak file_writes, spool_writes;
};

static bool log_limit__allow(struct log_limit *l, __u64 now)
{
	if (l->last_ns && now - l->last_ns < LOG_EVERY_NS)
		return false;
	l->last_ns = now;
	return true;
}

__u64 export_backoff_ns(unsigned int failures, __u64 initial_ns, __u64 max_ns, __u64 rnd)
{
	__u64 d = initial_ns;
	unsigned int i;

	for (i = 1; i < failures && d < max_ns; i++)
		d = d > max_ns / 2 ? max_ns : d * 2;
	if (d > max_ns)
		d = max_ns;
	return d - (d / 2 ? rnd % (d / 2 + 1) : 0);
}

bool export_status_retryable(long status)
{
	/*
	 * OTLP/HTTP retries these and no other 4xx or 5xx. Other statuses refuse
	 * nothing: a redirect (not followed) waits, like an outage, for an
	 * endpoint that takes the request.
	 */
	return status < 400 || status == 429 || status == 502 || status == 503 || status == 504;
}

static void update_gauges(struct exporter *e)
{
	stats__set(&e->stats->spool_bytes, spool__bytes(e->spool));
	stats__set(&e->stats->spool_intervals, spool__count(e->spool));
}

/* Every dropped interval is counted, and reported in a line at most once a minute. */
static void count_dropped(struct exporter *e, __u64 n, const char *why)
{
	struct log_limit *l = &e->drop_log;

	if (!n)
		return;
	stats__add(&e->stats->spool_dropped, n);
	l->suppressed += n;
	if (!log_limit__allow(l, now_ns()))
		return;
	agent_log(LOG_WARNING, "dropped %llu interval%s: %s (%llu since the agent started)",
		  (unsigned long long)l->suppressed, msg__s(l->suppressed), why,
		  (unsigned long long)stats__get(&e->stats->spool_dropped));
	l->suppressed = 0;
}

/*
 * A write of what ("profiles to") into dir failed: counted, logged the first
 * time, then in one line a minute, with the number of failures so far.
 */
static void write_failed(struct write_streak *w, __u64 *counter, const char *what, const char *dir,
			 const char *why)
{
	__u64 now = now_ns();

	stats__add(counter, 1);
	if (!w->failures++) {
		w->log.last_ns = now;
		agent_log(LOG_ERR, "cannot write %s %s: %s", what, dir, why);
	} else if (log_limit__allow(&w->log, now)) {
		agent_log(LOG_ERR, "still cannot write %s %s: %u failure%s, the last: %s", what,
			  dir, w->failures, msg__s(w->failures), why);
	}
}

static void write_succeeded(struct write_streak *w, const char *what, const char *dir)
{
	if (w->failures)
		agent_log(LOG_NOTICE, "writing %s %s again after %u failure%s", what, dir,
			  w->failures, msg__s(w->failures));
	w->failures = 0;
}

/* The time of ns (Unix nanoseconds) in UTC, as profile files are named: 20231114T221320.123Z. */
static void utc_stamp(__u64 ns, char *buf, size_t len)
{
	time_t secs = ns / NS_PER_S;
	struct tm tm;
	size_t n;

	gmtime_r(&secs, &tm);
	n = strftime(buf, len, "%Y%m%dT%H%M%S", &tm);
	snprintf(buf + n, len - n, ".%03lluZ", (unsigned long long)(ns / 1000000 % 1000));
}

/* gzip (RFC 1952) of len bytes into a malloc'd buffer; NULL on failure. */
static void *gzip(const void *data, size_t len, size_t *out_len)
{
	z_stream zs = {};
	unsigned char *out;
	size_t cap;

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return NULL;
	cap = deflateBound(&zs, len) + 32;
	out = malloc(cap);
	if (!out) {
		deflateEnd(&zs);
		return NULL;
	}
	zs.next_in = (unsigned char *)data;
	zs.avail_in = len;
	zs.next_out = out;
	zs.avail_out = cap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&zs);
		free(out);
		return NULL;
	}
	*out_len = zs.total_out;
	deflateEnd(&zs);
	return out;
}

/* ---- the directory ------------------------------------------------------- */

static void write_profile_file(struct exporter *e, __u64 start_ns, const char *suffix,
			       const void *data, size_t len)
{
	const char *dir = e->cfg->output_dir;
	struct output_file of = {};
	char path[PATH_MAX], why[256], stamp[32];
	int err = 0;

	utc_stamp(start_ns, stamp, sizeof(stamp));
	if ((size_t)snprintf(path, sizeof(path), "%s/%s%s%s", dir, e->file_prefix, stamp, suffix) >=
	    sizeof(path))
		err = -ENAMETOOLONG;
	if (!err)
		err = output_file__open(&of, path);
	errno = 0;
	if (!err && fwrite(data, 1, len, of.f) != len) {
		err = errno ? -errno : -EIO;
		output_file__abort(&of);
	}
	/* a failed commit removes the temporary file: no partial profile stays */
	if (!err)
		err = output_file__commit(&of);
	stats__set(&e->stats->file_write_failing, !!err);
	if (err) {
		snprintf(why, sizeof(why), "%s%s%s: %s", e->file_prefix, stamp, suffix,
			 strerror(-err));
		write_failed(&e->file_writes, &e->stats->file_write_failure, "profiles to", dir,
			     why);
	} else {
		write_succeeded(&e->file_writes, "profiles to", dir);
	}
}

static void write_files(struct exporter *e, const struct export_job *job)
{
	const struct agent_config *c = e->cfg;
	int removed;

	if (!c->output_dir)
		return;
	if (job->pprof && (c->formats & AGENT_FORMAT_PPROF))
		write_profile_file(e, job->start_ns, ".pb.gz", job->pprof, job->pprof_len);
	if (job->otlp && (c->formats & AGENT_FORMAT_OTLP))
		write_profile_file(e, job->start_ns, ".otlp.pb", job->otlp, job->otlp_len);
	removed = retention__apply_dir(c->output_dir, e->file_prefix, c->max_dir_bytes,
				       c->max_age_ns, clock_ns(CLOCK_REALTIME));
	if (removed < 0)
		agent_log(LOG_ERR, "cannot apply retention to %s: %s", c->output_dir,
			  strerror(-removed));
}

/* ---- the endpoint -------------------------------------------------------- */

static size_t on_reply(char *data, size_t size, size_t n, void *arg)
{
	struct exporter *e = arg;
	size_t len = size * n, room = REPLY_MAX - e->reply_len;

	memcpy(e->reply + e->reply_len, data, len < room ? len : room);
	e->reply_len += len < room ? len : room;
	e->reply[e->reply_len] = '\0';
	return len;
}

/* Appends a header line; false when out of memory (the list stays whole). */
static bool append(struct curl_slist **list, const char *line)
{
	struct curl_slist *l = curl_slist_append(*list, line);

	if (l)
		*list = l;
	return l;
}

enum post_result {
	POST_OK,
	POST_RETRY,   /* may succeed later */
	POST_REFUSED, /* will never succeed */
};

/*
 * "HTTP 400: what the reply says": the message of an OTLP error body (a
 * protobuf google.rpc.Status), or else the start of the body, escaped.
 */
static void describe_reply(struct exporter *e, long status, char *why, size_t why_len)
{
	unsigned char quote[4 * REPLY_QUOTE + 1];
	Google__Rpc__Status *st = NULL;
	const char *type = NULL, *text = e->reply;
	size_t len = e->reply_len;

	curl_easy_getinfo(e->curl, CURLINFO_CONTENT_TYPE, &type);
	if (type && !strncasecmp(type, "application/x-protobuf", 22))
		st = google__rpc__status__unpack(NULL, e->reply_len, (const uint8_t *)e->reply);
	if (st) {
		text = st->message;
		len = strlen(text);
	}
	pb__escape(text, len < REPLY_QUOTE ? len : REPLY_QUOTE, quote);
	snprintf(why, why_len, "HTTP %ld%s%s%s", status, len ? ": " : "", quote,
		 len > REPLY_QUOTE ? "..." : "");
	if (st)
		google__rpc__status__free_unpacked(st, NULL);
}

/* One POST; what went wrong in why. *retry_after_ns: what the server asked for, or 0. */
static enum post_result post(struct exporter *e, const void *data, size_t len, bool gzipped,
			     __u64 timeout_ns, __u64 *retry_after_ns, char *why, size_t why_len)
{
	const struct agent_config *c = e->cfg;
	struct curl_slist *headers = NULL;
	char line[1024];
	curl_off_t retry_after = 0;
	long status = 0;
	CURLcode rc;
	size_t i;
	bool ok;

	*retry_after_ns = 0;
	/* "Expect:" stops curl from waiting a second for 100-continue on large bodies */
	ok = append(&headers, "Content-Type: application/x-protobuf") &&
	     append(&headers, "Expect:") &&
	     (!gzipped || append(&headers, "Content-Encoding: gzip"));
	for (i = 0; ok && i < c->header_count; i++) {
		snprintf(line, sizeof(line), "%s: %s", c->headers[i].name, c->headers[i].value);
		ok = append(&headers, line);
	}
	if (!ok) {
		curl_slist_free_all(headers);
		snprintf(why, why_len, "out of memory");
		return POST_RETRY;
	}
	e->reply_len = 0;
	e->reply[0] = '\0';
	e->curl_err[0] = '\0';
	curl_easy_setopt(e->curl, CURLOPT_URL, c->otlp_url);
	curl_easy_setopt(e->curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(e->curl, CURLOPT_POSTFIELDS, data);
	curl_easy_setopt(e->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(e->curl, CURLOPT_TIMEOUT_MS, (long)(timeout_ns / 1000000 ?: 1));
	curl_easy_setopt(e->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout_ns / 1000000 ?: 1));
	rc = curl_easy_perform(e->curl);
	curl_easy_setopt(e->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(headers);
	if (rc != CURLE_OK) {
		snprintf(why, why_len, "%s", e->curl_err[0] ? e->curl_err : curl_easy_strerror(rc));
		return POST_RETRY;
	}
	curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return POST_OK;
	curl_easy_getinfo(e->curl, CURLINFO_RETRY_AFTER, &retry_after);
	if (retry_after > 0)
		*retry_after_ns = (__u64)retry_after * NS_PER_S;
	describe_reply(e, status, why, why_len);
	return export_status_retryable(status) ? POST_RETRY : POST_REFUSED;
}

static void on_failure(struct exporter *e, const char *why, __u64 delay_ns)
{
	__u64 now = now_ns();

	stats__add(&e->stats->export_failure, 1);
	if (!e->failures++) {
		e->streak_start_ns = now;
		e->fail_log.last_ns = now;
		agent_log(LOG_WARNING, "cannot send a profile to %s: %s (retrying in %.3g s)",
			  e->cfg->otlp_url, why, delay_ns / 1e9);
	} else if (log_limit__allow(&e->fail_log, now)) {
		agent_log(LOG_WARNING,
			  "still cannot send profiles to %s: %u failure%s in %.0f s, the last: %s; "
			  "%zu interval%s (%llu bytes) waiting",
			  e->cfg->otlp_url, e->failures, msg__s(e->failures),
			  (now - e->streak_start_ns) / 1e9, why, spool__count(e->spool),
			  msg__s(spool__count(e->spool)),
			  (unsigned long long)spool__bytes(e->spool));
	}
}

/*
 * The endpoint refused the request of the interval that started at time_ns
 * with a status not to retry: it is dropped, in one line at most once a
 * minute, which counts the others.
 */
static void on_refusal(struct exporter *e, __u64 time_ns, const char *why)
{
	struct log_limit *l = &e->refuse_log;
	char stamp[32], more[64] = "";

	stats__add(&e->stats->export_failure, 1);
	stats__add(&e->stats->export_rejected, 1);
	stats__add(&e->stats->spool_dropped, 1);
	if (!log_limit__allow(l, now_ns())) {
		l->suppressed++;
		return;
	}
	if (l->suppressed)
		snprintf(more, sizeof(more), " (%llu more refused since the last message)",
			 (unsigned long long)l->suppressed);
	l->suppressed = 0;
	utc_stamp(time_ns, stamp, sizeof(stamp));
	agent_log(LOG_ERR, "%s refused the profile of %s: %s; dropped, not retried%s",
		  e->cfg->otlp_url, stamp, why, more);
}

/*
 * Sends the oldest spooled request, waiting at most timeout_ns. Returns
 * false if it failed and may be retried.
 */
static bool send_oldest(struct exporter *e, __u64 timeout_ns)
{
	const struct agent_config *c = e->cfg;
	__u64 time_ns, retry_after, delay;
	enum post_result r;
	char why[512];
	size_t len;
	void *data;
	bool gz;
	int err = spool__peek(e->spool, &data, &len, &gz, &time_ns);

	if (err == -ENOENT)
		return true;
	if (err) {
		agent_log(LOG_ERR, "cannot read a spooled profile: %s", strerror(-err));
		spool__pop(e->spool);
		count_dropped(e, 1, "unreadable in the spool");
		update_gauges(e);
		return true;
	}
	r = post(e, data, len, gz, timeout_ns, &retry_after, why, sizeof(why));
	free(data);
	if (r == POST_RETRY) {
		delay = export_backoff_ns(e->failures + 1, c->retry_initial_ns, c->retry_max_ns,
					  rand_r(&e->seed));
		if (retry_after > delay)
			delay = retry_after < c->retry_max_ns ? retry_after : c->retry_max_ns;
		e->next_attempt_ns = now_ns() + delay;
		on_failure(e, why, delay);
		return false;
	}
	spool__pop(e->spool);
	if (r == POST_REFUSED) {
		on_refusal(e, time_ns, why);
	} else {
		stats__add(&e->stats->export_success, 1);
		if (e->failures)
			agent_log(LOG_NOTICE,
				  "sending profiles to %s again after %u failure%s; %zu interval%s "
				  "waiting",
				  c->otlp_url, e->failures, msg__s(e->failures),
				  spool__count(e->spool), msg__s(spool__count(e->spool)));
		e->failures = 0;
		e->next_attempt_ns = 0;
	}
	update_gauges(e);
	return true;
}

/* Puts a request into sp: what the spool drops or cannot write is counted and logged. */
static void spool_add(struct exporter *e, struct spool *sp, __u64 time_ns, bool gz, void *data,
		      size_t len)
{
	char why[128];
	__u64 dropped = 0;
	int write_err, err = spool__put(sp, time_ns, gz, data, len, &dropped, &write_err);

	if (err) {
		agent_log(LOG_ERR, "cannot spool a profile: %s", strerror(-err));
		count_dropped(e, 1, "the spool failed");
	}
	if (write_err) {
		snprintf(why, sizeof(why), "%s (held in memory until sent)", strerror(-write_err));
		write_failed(&e->spool_writes, &e->stats->spool_write_failure,
			     "requests to the spool", e->cfg->spool_dir, why);
	} else if (!err && e->spool_writes.failures) {
		write_succeeded(&e->spool_writes, "requests to the spool", e->cfg->spool_dir);
	}
	count_dropped(e, dropped, "the spool is full (max_spool_bytes)");
}

static void spool_request(struct exporter *e, struct export_job *job)
{
	void *body = job->otlp;
	size_t len = job->otlp_len;

	if (e->cfg->otlp_gzip) {
		body = gzip(job->otlp, job->otlp_len, &len);
		if (!body) {
			agent_log(LOG_ERR, "cannot compress a profile: out of memory");
			count_dropped(e, 1, "out of memory");
			return;
		}
	} else {
		job->otlp = NULL; /* the spool owns it now */
	}
	spool_add(e, e->spool, job->start_ns, e->cfg->otlp_gzip, body, len);
	update_gauges(e);
}

static void handle_job(struct exporter *e, struct export_job *job)
{
	write_files(e, job);
	if (e->cfg->otlp_url && job->otlp)
		spool_request(e, job);
	free(job->pprof);
	free(job->otlp);
}

/* Takes the configuration and spool the loop handed over (called without the lock). */
static void apply(struct exporter *e, struct agent_config *cfg, struct spool *spool)
{
	__u64 dropped = 0, time_ns;
	size_t len;
	void *data;
	bool gz;

	if (cfg) {
		agent_config__put(e->cfg);
		e->cfg = cfg;
		/* a new endpoint or new retry delays: try at once */
		e->next_attempt_ns = 0;
	}
	if (spool) {
		/* the failures were the old directory's */
		e->spool_writes.failures = 0;
		while (!spool__peek(e->spool, &data, &len, &gz, &time_ns)) {
			spool_add(e, spool, time_ns, gz, data, len);
			spool__pop(e->spool);
		}
		spool__free(e->spool);
		e->spool = spool;
	}
	spool__set_max_bytes(e->spool, e->cfg->max_spool_bytes, &dropped);
	count_dropped(e, dropped, "the spool is full (max_spool_bytes)");
	update_gauges(e);
}

static bool can_send(const struct exporter *e)
{
	return e->cfg->otlp_url && spool__count(e->spool);
}

/*
 * After the loop: one attempt per spooled request, until otlp_timeout after
 * the stop (a request in flight then was let finish: cut short, it might have
 * been delivered and would be sent twice).
 */
static void final_flush(struct exporter *e, __u64 stop_ns)
{
	__u64 deadline = stop_ns + e->cfg->otlp_timeout_ns, now;
	char why[PATH_MAX + 32] = "";
	size_t left, lost;

	while (can_send(e) && (now = now_ns()) < deadline)
		if (!send_oldest(e, deadline - now))
			break;
	left = spool__count(e->spool);
	if (!left)
		return;
	/* the requests a full disk kept in memory: one last try */
	lost = spool__save(e->spool);
	/* never delivered, like the spool's drops: the stop line and the metric count them */
	stats__add(&e->stats->spool_dropped, lost);
	if (e->cfg->spool_dir)
		snprintf(why, sizeof(why), " (%s could not take %s)", e->cfg->spool_dir,
			 lost == 1 ? "it" : "them");
	if (!lost)
		agent_log(LOG_WARNING, "%zu interval%s not delivered at exit: %s", left,
			  msg__s(left), "kept in the spool for the next start");
	else if (lost == left)
		agent_log(LOG_WARNING, "%zu interval%s not delivered at exit: lost%s", left,
			  msg__s(left), why);
	else
		agent_log(LOG_WARNING,
			  "%zu intervals not delivered at exit: %zu kept in the spool for the next "
			  "start, %zu lost%s",
			  left, left - lost, lost, why);
}

/*
 * Since when intervals wait: in the queue, or in the spool for the endpoint
 * (under the lock: exporter__submit starts a backlog too, while this thread
 * may be stuck in a write).
 */
static void note_backlog(struct exporter *e)
{
	__u64 *since = &e->stats->backlog_since_ns;

	if (!e->count && !can_send(e))
		stats__set(since, 0);
	else if (!stats__get(since))
		stats__set(since, now_ns());
}

static void *run(void *arg)
{
	struct exporter *e = arg;
	struct agent_config *cfg;
	struct spool *spool;
	struct export_job job;
	struct timespec ts;
	__u64 now, stop_ns;

	pthread_mutex_lock(&e->lock);
	for (;;) {
		note_backlog(e);
		if (e->pending_cfg || e->pending_spool) {
			cfg = e->pending_cfg;
			spool = e->pending_spool;
			e->pending_cfg = NULL;
			e->pending_spool = NULL;
			pthread_mutex_unlock(&e->lock);
			apply(e, cfg, spool);
			pthread_mutex_lock(&e->lock);
			continue;
		}
		if (e->count) {
			job = e->queue[e->head];
			e->head = (e->head + 1) % EXPORT_QUEUE_MAX;
			e->count--;
			pthread_mutex_unlock(&e->lock);
			handle_job(e, &job);
			pthread_mutex_lock(&e->lock);
			continue;
		}
		if (e->stopping) {
			stop_ns = e->stop_ns;
			break;
		}
		if (!can_send(e)) {
			pthread_cond_wait(&e->cond, &e->lock);
			continue;
		}
		now = now_ns();
		if (now >= e->next_attempt_ns) {
			pthread_mutex_unlock(&e->lock);
			send_oldest(e, e->cfg->otlp_timeout_ns);
			pthread_mutex_lock(&e->lock);
			continue;
		}
		ts.tv_sec = e->next_attempt_ns / NS_PER_S;
		ts.tv_nsec = e->next_attempt_ns % NS_PER_S;
		pthread_cond_timedwait(&e->cond, &e->lock, &ts);
	}
	pthread_mutex_unlock(&e->lock);
	final_flush(e, stop_ns);
	return NULL;
}

static void set_file_prefix(struct exporter *e)
{
	struct utsname u;
	char *p;

	if (uname(&u))
		snprintf(u.nodename, sizeof(u.nodename), "unknown");
	/* a host name is [A-Za-z0-9.-]; anything else must not reach a path */
	for (p = u.nodename; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '-'))
			*p = '_';
	snprintf(e->file_prefix, sizeof(e->file_prefix), "labelprof-%.64s-", u.nodename);
}

struct exporter *exporter__start(struct agent_config *c, struct spool *spool,
				 struct agent_stats *stats, char *err, size_t err_len)
{
	struct exporter *e = calloc(1, sizeof(*e));
	pthread_condattr_t ca;
	int rc;

	if (!e) {
		snprintf(err, err_len, "out of memory");
		spool__free(spool);
		return NULL;
	}
	e->spool = spool;
	e->stats = stats;
	e->seed = getpid() ^ now_ns();
	set_file_prefix(e);
	/* before any thread: curl_global_init is not thread-safe */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) || !(e->curl = curl_easy_init())) {
		snprintf(err, err_len, "cannot initialize libcurl");
		goto out_free;
	}
	/* NOSIGNAL: the timeouts must not use SIGALRM in a threaded program */
	curl_easy_setopt(e->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e->curl, CURLOPT_USERAGENT, "labelprof-agent");
	curl_easy_setopt(e->curl, CURLOPT_ERRORBUFFER, e->curl_err);
	curl_easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, on_reply);
	curl_easy_setopt(e->curl, CURLOPT_WRITEDATA, e);
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &ca);
	pthread_condattr_destroy(&ca);
	e->cfg = agent_config__get(c);
	update_gauges(e);
	rc = pthread_create(&e->thread, NULL, run, e);
	if (rc) {
		snprintf(err, err_len, "cannot start the sender thread: %s", strerror(rc));
		agent_config__put(e->cfg);
		pthread_cond_destroy(&e->cond);
		pthread_mutex_destroy(&e->lock);
		goto out_free;
	}
	return e;

out_free:
	curl_easy_cleanup(e->curl);
	curl_global_cleanup();
	spool__free(e->spool);
	free(e);
	return NULL;
}

void exporter__submit(struct exporter *e, struct export_job *job)
{
	struct export_job old = {};

	pthread_mutex_lock(&e->lock);
	if (e->count == EXPORT_QUEUE_MAX) {
		old = e->queue[e->head];
		e->head = (e->head + 1) % EXPORT_QUEUE_MAX;
		e->count--;
	}
	e->queue[(e->head + e->count++) % EXPORT_QUEUE_MAX] = *job;
	if (!stats__get(&e->stats->backlog_since_ns))
		stats__set(&e->stats->backlog_since_ns, now_ns());
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
	memset(job, 0, sizeof(*job));
	if (old.pprof || old.otlp) {
		stats__add(&e->stats->spool_dropped, 1);
		e->queue_log.suppressed++;
		if (log_limit__allow(&e->queue_log, now_ns())) {
			agent_log(LOG_WARNING,
				  "the sender is %d intervals behind: dropped the oldest "
				  "(%llu interval%s since the last message)",
				  EXPORT_QUEUE_MAX, (unsigned long long)e->queue_log.suppressed,
				  msg__s(e->queue_log.suppressed));
			e->queue_log.suppressed = 0;
		}
	}
	free(old.pprof);
	free(old.otlp);
}

void exporter__reconfigure(struct exporter *e, struct agent_config *c, struct spool *spool)
{
	pthread_mutex_lock(&e->lock);
	agent_config__put(e->pending_cfg);
	e->pending_cfg = agent_config__get(c);
	if (spool) {
		spool__free(e->pending_spool);
		e->pending_spool = spool;
	}
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

void exporter__stop(struct exporter *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->stopping = true;
	e->stop_ns = now_ns();
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
	pthread_join(e->thread, NULL);
	agent_config__put(e->cfg);
	spool__free(e->spool);
	curl_easy_cleanup(e->curl);
	curl_global_cleanup();
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

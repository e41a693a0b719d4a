// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * labelprof agent: continuous profiling (docs/agent.md). The sampling loop
 * owns the session; once per interval it takes the profile, symbolizes and
 * encodes it, and hands the bytes to the sender thread (agent/export.h),
 * which does every file and network write: a slow disk or a hanging
 * endpoint never stops the ring buffer from being read.
 */
#include <errno.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "agent/config.h"
#include "agent/export.h"
#include "agent/log.h"
#include "agent/metrics.h"
#include "agent/retention.h"
#include "agent/spool.h"
#include "cmd/commands.h"
#include "format/output.h"
#include "lib/clock.h"
#include "lib/compiler.h"
#include "lib/msg.h"
#include "registry/registry.h"
#include "profile/profile.h"
#include "sampling/session.h"
#include "symbolize/symbols.h"
#include "profile/symprof.h"

#define TICK_NS NS_PER_S

struct agent {
	struct agent_config *cfg;
	struct session *session;
	struct exporter *exporter;
	struct metrics_server *metrics;
	struct agent_stats stats;
	/* the current interval */
	__u64 start_mono_ns;
	__u64 start_unix_ns;
	struct lp_counters counters_at_start;
	/* what the sessions closed by reloads counted */
	__u64 received_before, with_labels_before, read_faults_before;
	struct lp_counters counters_before;
	__u64 watchdog_ns; /* 0: systemd does not watch */
};

static volatile sig_atomic_t reload_requested;

static void on_hangup(int sig)
{
	reload_requested = 1;
}

static bool str_eq(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* Counters summed over the agent's sessions. */
static void total_counters(struct agent *a, struct lp_counters *c)
{
	const __u64 *before = (const __u64 *)&a->counters_before;
	__u64 *v = (__u64 *)c;
	size_t i;

	memset(c, 0, sizeof(*c));
	sampler__read_counters(a->session->sampler, c);
	for (i = 0; i < sizeof(*c) / sizeof(__u64); i++)
		v[i] += before[i];
}

/* sp in format, into a malloc'd buffer. 0 or -errno. */
static int encode(const struct agent *a, enum output_format format, const struct symprof *sp,
		  void **buf, size_t *len)
{
	struct output_opts opts = {.extra_labels = a->cfg->extra_labels};
	char *b = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&b, &n);
	int err;

	if (!f)
		return -errno;
	err = output__write(f, format, sp, &opts);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(b);
		return err;
	}
	*buf = b;
	*len = n;
	return 0;
}

static void update_stats(struct agent *a)
{
	struct proc_counters mc[REGISTRY_MAX_MODULES];
	struct lp_counters c;
	struct registry_stats ps;

	total_counters(a, &c);
	registry__stats(a->session->registry, &ps);
	/*
	 * Counted together as records are handled (session.h), and samples
	 * published first: a scrape never sees more of a part than of the whole.
	 */
	stats__set(&a->stats.samples, a->received_before + a->session->received);
	stats__set(&a->stats.samples_with_labels, a->with_labels_before + a->session->with_labels);
	stats__set(&a->stats.label_read_faults, a->read_faults_before + a->session->read_faults);
	stats__set(&a->stats.ringbuf_drops, c.ringbuf_drops);
	stats__set(&a->stats.null_values, c.null_values);
	stats__set(&a->stats.processes_tracked, ps.tracked);
	stats__set(&a->stats.process_inspections, ps.resolves);
	/* the sum before its count: a scrape never sees a count without its delays */
	stats__set(&a->stats.exec_delay_sum_ns, ps.exec_delay_sum_ns);
	stats__set(&a->stats.execs, ps.execs);
	metrics__set_module_counters(&a->stats, mc,
				     registry__counters(a->session->registry, mc, ARRAY_SIZE(mc)));
}

static void start_interval(struct agent *a)
{
	a->start_mono_ns = now_ns();
	a->start_unix_ns = clock_ns(CLOCK_REALTIME);
	total_counters(a, &a->counters_at_start);
}

/*
 * Ends the interval: its profile goes to the sender, a new one starts. What
 * fails is logged and costs this interval only.
 */
static void finish_interval(struct agent *a)
{
	/* the interval that ends */
	__u64 start_mono_ns = a->start_mono_ns, start_unix_ns = a->start_unix_ns;
	struct lp_counters at_start = a->counters_at_start, delta;
	size_t i;
	struct symprof_build_opts bo = {
		.frequency_hz = a->cfg->sampling.opts.freq_hz,
		.start_time_unix_ns = start_unix_ns,
		.counters = &delta,
		.containers = true,
	};
	const struct agent_config *c = a->cfg;
	struct export_job job = {.start_ns = start_unix_ns};
	const __u64 *now = (const __u64 *)&a->counters_at_start, *then = (const __u64 *)&at_start;
	__u64 *d = (__u64 *)&delta;
	struct profile *p = session__take_profile(a->session);
	struct symprof *sp = NULL;
	int err = 0;

	if (!p) {
		/* the profile goes on: the next attempt ends a longer interval */
		agent_log(LOG_ERR, "cannot start a new profile: out of memory");
		return;
	}
	/* the next interval starts now, not after the work below: intervals are back to back */
	start_interval(a);
	bo.duration_ns = a->start_mono_ns - start_mono_ns;
	for (i = 0; i < sizeof(delta) / sizeof(__u64); i++)
		d[i] = now[i] - then[i];
	sp = symprof__from_profile(p, a->session->symbolizer, &bo);
	if (!sp) {
		err = -ENOMEM;
		goto out_free;
	}
	if (c->output_dir && (c->formats & AGENT_FORMAT_PPROF))
		err = encode(a, OUTPUT_PPROF, sp, &job.pprof, &job.pprof_len);
	if (!err && (c->otlp_url || (c->output_dir && (c->formats & AGENT_FORMAT_OTLP))))
		err = encode(a, OUTPUT_OTLP, sp, &job.otlp, &job.otlp_len);
	if (!err) {
		exporter__submit(a->exporter, &job);
		stats__add(&a->stats.intervals, 1);
	}

out_free:
	if (err)
		agent_log(LOG_ERR, "cannot encode the profile of the interval: %s", strerror(-err));
	free(job.pprof);
	free(job.otlp);
	symprof__free(sp);
	profile__free(p);
	/* the snapshots of processes gone are needed no more: memory stays flat */
	symbolizer__release_unused(a->session->symbolizer);
	update_stats(a);
	sd_notifyf(0, "STATUS=%llu interval%s, %llu sample%s, %llu waiting for delivery",
		   (unsigned long long)stats__get(&a->stats.intervals),
		   msg__s(stats__get(&a->stats.intervals)),
		   (unsigned long long)stats__get(&a->stats.samples),
		   msg__s(stats__get(&a->stats.samples)),
		   (unsigned long long)stats__get(&a->stats.spool_intervals));
}

static struct session *open_session(const struct agent_config *c, char *err, size_t err_len)
{
	struct session_opts opts = {.profile_max_bytes = c->max_profile_bytes,
				    .labels = c->labelsel,
				    .symbol_memory = c->symbol_memory};

	return session__begin(&c->sampling.opts, &opts, err, err_len);
}

/* Threads started between these two leave the signals to the sampling loop. */
static void block_signals(sigset_t *old)
{
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, old);
}

static void restore_signals(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static struct metrics_server *start_metrics(const struct agent_config *c,
					    const struct agent_stats *st)
{
	struct metrics_server *m;
	sigset_t old;
	char err[256];

	block_signals(&old);
	m = metrics_server__start((const struct sockaddr *)&c->metrics_addr, st, err, sizeof(err));
	restore_signals(&old);
	if (!m)
		agent_log(LOG_ERR, "metrics_listen %s: %s", c->metrics_listen, err);
	return m;
}

/* What a new configuration needs that may fail, made ready before anything changes. */
struct staged {
	struct spool *spool;
	struct session *session;
	struct metrics_server *metrics;
	bool metrics_changed;
	__u64 dropped;
};

static int stage(struct agent *a, const struct agent_config *c, struct staged *st, char *err,
		 size_t err_len)
{
	int e;

	if (c->output_dir && (e = retention__mkdirs(c->output_dir, 0755))) {
		snprintf(err, err_len, "cannot create output_dir %s: %s", c->output_dir,
			 strerror(-e));
		return e;
	}
	if (!str_eq(c->spool_dir, a->cfg->spool_dir)) {
		st->spool =
			spool__open(c->spool_dir, c->max_spool_bytes, &st->dropped, err, err_len);
		if (!st->spool)
			return -EINVAL;
	}
	if (!agent_config__same_sampling(c, a->cfg)) {
		st->session = open_session(c, err, err_len);
		if (!st->session)
			goto out_spool;
	}
	st->metrics_changed = !str_eq(c->metrics_listen, a->cfg->metrics_listen);
	if (st->metrics_changed && c->metrics_listen) {
		/* the old server may hold the port: release it first, take it back on failure */
		metrics_server__stop(a->metrics);
		a->metrics = NULL;
		st->metrics = start_metrics(c, &a->stats);
		if (!st->metrics) {
			a->metrics =
				a->cfg->metrics_listen ? start_metrics(a->cfg, &a->stats) : NULL;
			snprintf(err, err_len, "cannot serve metrics on %s", c->metrics_listen);
			goto out_session;
		}
	}
	return 0;

out_session:
	session__close(st->session);
out_spool:
	spool__free(st->spool);
	return -EINVAL;
}

/* SIGHUP: the new configuration, or the old one if the new one is not usable. */
static void reload(struct agent *a, int argc, char **argv)
{
	struct agent_config *c;
	struct staged st = {};
	struct lp_counters sum;
	char err[512];

	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
		   (unsigned long long)(now_ns() / 1000));
	c = agent_config__load(argc, argv, err, sizeof(err));
	if (!c || stage(a, c, &st, err, sizeof(err))) {
		agent_log(LOG_ERR, "reload failed, the settings stay as they were: %s", err);
		agent_config__put(c);
		goto out_ready;
	}
	if (st.session) {
		/* the interval sampled the old way ends here, with what its ring buffer holds */
		session__stop(a->session);
		finish_interval(a);
		a->received_before += a->session->received;
		a->with_labels_before += a->session->with_labels;
		a->read_faults_before += a->session->read_faults;
		total_counters(a, &sum);
		a->counters_before = sum;
		session__close(a->session);
		a->session = st.session;
		start_interval(a);
		agent_log(LOG_NOTICE, "sampling at %u Hz from now on", c->sampling.opts.freq_hz);
	} else if (!agent_config__same_labels(c, a->cfg)) {
		/*
		 * The profile being filled holds the old selection, which goes with the
		 * old settings: its interval ends here, the next keeps the new keys.
		 */
		session__set_labels(a->session, c->labelsel);
		finish_interval(a);
		agent_log(LOG_NOTICE, "label selection changed: labels %s, drop_labels %s",
			  c->keep_labels ? c->keep_labels : "(all)",
			  c->drop_labels ? c->drop_labels : "(none)");
	}
	if (st.metrics_changed) {
		metrics_server__stop(a->metrics);
		a->metrics = st.metrics;
	}
	if (st.dropped)
		stats__add(&a->stats.spool_dropped, st.dropped);
	exporter__reconfigure(a->exporter, c, st.spool);
	agent_config__put(a->cfg);
	a->cfg = c;
	stats__set(&a->stats.interval_ns, c->interval_ns);
	agent_log(LOG_NOTICE, "reloaded %s: one profile every %.3g s", c->path ? c->path : "flags",
		  c->interval_ns / 1e9);

out_ready:
	sd_notify(0, "READY=1\nSTATUS=sampling");
}

static void describe(const struct agent *a)
{
	const struct agent_config *c = a->cfg;

	agent_log(LOG_INFO, "sampling %d CPU%s at %u Hz, one profile every %.3g s to %s%s%s",
		  sampler__cpu_count(a->session->sampler),
		  msg__s(sampler__cpu_count(a->session->sampler)), c->sampling.opts.freq_hz,
		  c->interval_ns / 1e9, c->output_dir ? c->output_dir : "",
		  c->output_dir && c->otlp_url ? " and " : "", c->otlp_url ? c->otlp_url : "");
}

static int run(struct agent *a, int argc, char **argv)
{
	__u64 now, last_tick = 0, last_watchdog = 0;
	int err;

	while (!session__stop_requested()) {
		err = session__poll(a->session, 100);
		if (err < 0 && err != -EINTR) {
			agent_log(LOG_ERR, "reading the ring buffer: %s", strerror(-err));
			return 1;
		}
		if (reload_requested) {
			reload_requested = 0;
			reload(a, argc, argv);
		}
		now = now_ns();
		stats__set(&a->stats.loop_ns, now);
		if (now - last_tick >= TICK_NS) {
			last_tick = now;
			update_stats(a);
		}
		if (a->watchdog_ns && now - last_watchdog >= a->watchdog_ns / 2) {
			last_watchdog = now;
			sd_notify(0, "WATCHDOG=1");
		}
		if (now - a->start_mono_ns >= a->cfg->interval_ns)
			finish_interval(a);
	}
	return 0;
}

int cmd_agent(int argc, char **argv)
{
	/* no SA_RESTART: a signal ends the poll at once */
	struct sigaction hup = {.sa_handler = on_hangup}, ign = {.sa_handler = SIG_IGN};
	struct agent a = {};
	struct spool *spool;
	sigset_t old;
	__u64 dropped = 0;
	uint64_t usec;
	char err[512];
	int ret = 1, e;

	a.cfg = agent_config__load(argc, argv, err, sizeof(err));
	if (!a.cfg) {
		agent_log(LOG_ERR, "%s", err);
		return 2;
	}
	/* first: no directory, spool or thread for an agent that cannot sample */
	a.session = open_session(a.cfg, err, sizeof(err));
	if (!a.session) {
		agent_log(LOG_ERR, "%s", err);
		goto out_config;
	}
	sigaction(SIGHUP, &hup, NULL);
	sigaction(SIGPIPE, &ign, NULL);
	if (a.cfg->output_dir && (e = retention__mkdirs(a.cfg->output_dir, 0755))) {
		agent_log(LOG_ERR, "cannot create output_dir %s: %s", a.cfg->output_dir,
			  strerror(-e));
		goto out_free;
	}
	spool = spool__open(a.cfg->spool_dir, a.cfg->max_spool_bytes, &dropped, err, sizeof(err));
	if (!spool) {
		agent_log(LOG_ERR, "%s", err);
		spool__free(spool);
		goto out_free;
	}
	if (dropped)
		agent_log(LOG_WARNING, "dropped %llu spooled interval%s past max_spool_bytes",
			  (unsigned long long)dropped, msg__s(dropped));
	stats__add(&a.stats.spool_dropped, dropped);
	if (spool__count(spool))
		agent_log(LOG_NOTICE, "%zu interval%s left by the previous run wait%s for delivery",
			  spool__count(spool), msg__s(spool__count(spool)),
			  spool__count(spool) == 1 ? "s" : "");

	block_signals(&old);
	a.exporter = exporter__start(a.cfg, spool, &a.stats, err, sizeof(err));
	restore_signals(&old);
	if (!a.exporter) {
		agent_log(LOG_ERR, "%s", err);
		goto out_free;
	}
	if (a.cfg->metrics_listen) {
		a.metrics = start_metrics(a.cfg, &a.stats);
		if (!a.metrics)
			goto out_free;
	}

	start_interval(&a);
	stats__set(&a.stats.interval_ns, a.cfg->interval_ns);
	stats__set(&a.stats.loop_ns, now_ns());
	if (sd_watchdog_enabled(0, &usec) > 0)
		a.watchdog_ns = usec * 1000;
	describe(&a);
	sd_notifyf(0, "READY=1\nSTATUS=sampling %d CPU%s at %u Hz",
		   sampler__cpu_count(a.session->sampler),
		   msg__s(sampler__cpu_count(a.session->sampler)), a.cfg->sampling.opts.freq_hz);

	ret = run(&a, argc, argv);
	stats__set(&a.stats.loop_ns, 0);

	sd_notify(0, "STOPPING=1\nSTATUS=sending the last interval");
	/* the partial interval, with what the ring buffer still holds */
	session__stop(a.session);
	finish_interval(&a);
	/* the sender flushes what it holds before it stops */
	exporter__stop(a.exporter);
	a.exporter = NULL;
	agent_log(LOG_INFO,
		  "stopped: %llu interval%s, %llu sample%s, %llu sent, %llu failed send%s, "
		  "%llu interval%s dropped",
		  (unsigned long long)stats__get(&a.stats.intervals),
		  msg__s(stats__get(&a.stats.intervals)),
		  (unsigned long long)stats__get(&a.stats.samples),
		  msg__s(stats__get(&a.stats.samples)),
		  (unsigned long long)stats__get(&a.stats.export_success),
		  (unsigned long long)stats__get(&a.stats.export_failure),
		  msg__s(stats__get(&a.stats.export_failure)),
		  (unsigned long long)stats__get(&a.stats.spool_dropped),
		  msg__s(stats__get(&a.stats.spool_dropped)));

out_free:
	exporter__stop(a.exporter);
	metrics_server__stop(a.metrics);
	session__close(a.session);
out_config:
	agent_config__put(a.cfg);
	return ret;
}

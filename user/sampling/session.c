// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A sampling session (session.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/stat.h"
#include "profile/profile.h"
#include "registry/registry.h"
#include "sampling/modules.h"
#include "sampling/session.h"
#include "symbolize/symbols.h"
#include "unwind/unwind.h"

static void count_sample(struct session *s, const struct lp_sample *rec)
{
	s->with_labels += rec->label_count > 0;
	s->read_faults += !!(rec->status & LP_ST_READ_FAULT);
	s->truncated += !!(rec->status & LP_ST_TRUNCATED);
	s->malformed += !!(rec->status & LP_ST_MALFORMED);
}

static int on_record(void *ctx, const void *data, size_t size)
{
	struct session *s = ctx;
	const struct lp_event_hdr *h = data;
	const struct lp_proc_event *pe = data;
	size_t i;

	if (size < sizeof(*h)) {
		s->bad_records++;
		return 0;
	}
	if (h->type == LP_EVENT_SAMPLE) {
		s->received++;
		if (size >= sizeof(struct lp_sample))
			count_sample(s, data);
		if (profile__add_sample(s->profile, data, size))
			s->bad_records++;
		return 0;
	}
	registry__handle_record(s->registry, data, size);
	if (h->type == LP_EVENT_EXIT && size >= sizeof(*pe))
		for (i = 0; i < s->target_count; i++)
			if (s->targets[i] == (pid_t)pe->tgid)
				s->target_exited = true;
	return 0;
}

static size_t extra_labels(void *ctx, __u32 pid, const struct profile_label **labels)
{
	return registry__extra_labels(ctx, pid, labels);
}

static bool label(void *ctx, __u32 pid, struct profile_label *l)
{
	return registry__label(ctx, pid, l);
}

static __u32 snapshot(void *ctx, __u32 pid)
{
	return registry__snapshot(ctx, pid);
}

static size_t frames(void *ctx, __u32 pid, __u64 *ips, size_t n, size_t cap)
{
	return registry__frames(ctx, pid, ips, n, cap);
}

static struct profile *new_profile(struct session *s)
{
	struct profile_opts po = {.max_bytes = s->profile_max_bytes, .labels = s->labels};
	struct profile_resolver r = {extra_labels, label, snapshot, frames, s->registry};
	struct profile *p = profile__new(s->symbolizer, &po);

	if (p)
		profile__set_resolver(p, &r);
	return p;
}

static int set_recipe(void *ctx, pid_t pid, const struct lp_recipe *recipe)
{
	return sampler__set_recipe(ctx, pid, recipe);
}

static __u64 exec_seq(void *ctx, pid_t pid)
{
	return sampler__exec_seq(ctx, pid);
}

static bool samples(void *ctx, pid_t pid)
{
	return sampler__samples_tgid(ctx, pid);
}

static int bpf_counters(void *ctx, const char *map, void *out, size_t size)
{
	return sampler__read_map_counters(ctx, map, out, size);
}

/* Process-wide, as signals are. */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	stop_requested = 1;
}

static void install_stop_signals(const int *more)
{
	/* no SA_RESTART: a signal ends the poll at once */
	struct sigaction sa = {.sa_handler = on_stop_signal};

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (; more && *more; more++)
		sigaction(*more, &sa, NULL);
}

/* The pids must run and be processes, the cgroup exist: 0, or -errno with a message in err. */
static int check_targets(const struct sampler_opts *o, char *err, size_t err_len)
{
	pid_t tgid;
	size_t i;

	for (i = 0; i < o->pid_count; i++) {
		tgid = proc_tgid(o->pids[i]);
		if (tgid == -ESRCH) {
			snprintf(err, err_len, "no such process: %d", o->pids[i]);
			return -ESRCH;
		}
		/* an unreadable status (hidepid) is left to the sampler, like a process */
		if (tgid > 0 && tgid != o->pids[i]) {
			snprintf(err, err_len, "%d is a thread of process %d: give the process id",
				 o->pids[i], tgid);
			return -EINVAL;
		}
	}
	if (o->cgroup_path && access(o->cgroup_path, F_OK)) {
		snprintf(err, err_len, "cgroup not found: %s: %s", o->cgroup_path, strerror(errno));
		return -ENOENT;
	}
	return 0;
}

struct session *session__begin(const struct sampler_opts *sampler, const struct session_opts *opts,
			       char *err, size_t err_len)
{
	static const struct session_opts defaults;
	struct session *s = NULL;
	struct unwind_maps um;
	struct sym_frame f;
	int ret;

	if (!opts)
		opts = &defaults;
	if (sampler__check_system(err, err_len) || check_targets(sampler, err, err_len))
		goto out_close;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, err_len, "out of memory");
		goto out_close;
	}
	s->profile_max_bytes = opts->profile_max_bytes;
	s->labels = opts->labels;
	if (sampler->filter_mode == LP_FILTER_PIDS) {
		s->targets = sampler->pids;
		s->target_count = sampler->pid_count;
	}
	s->symbolizer =
		symbolizer__new(&(struct symbolizer_opts){.max_symbol_bytes = opts->symbol_memory});
	if (!s->symbolizer) {
		snprintf(err, err_len, "out of memory");
		goto out_close;
	}
	s->sampler = sampler__open(sampler, on_record, s, err, err_len);
	if (!s->sampler)
		goto out_close;
	if (!sampler__unwind_maps(s->sampler, &um)) {
		s->unwind = unwind__new(&um, sampler->verbose);
		if (!s->unwind) {
			snprintf(err, err_len, "out of memory");
			goto out_close;
		}
	}
	s->registry = registry__new(
		&(struct registry_opts){
			.target = {.set_recipe = set_recipe,
				   .exec_seq = exec_seq,
				   .samples = samples,
				   .bpf_counters = bpf_counters,
				   .ctx = s->sampler},
			.symbolizer = s->symbolizer,
			.unwind = s->unwind,
			.max_processes = sampler->max_processes ? sampler->max_processes
								: SAMPLER_DEFAULT_MAX_PROCESSES,
			.modules = session_modules,
			.verbose = sampler->verbose,
		},
		&ret);
	if (!s->registry) {
		snprintf(err, err_len, "cannot start the process registry: %s", strerror(-ret));
		goto out_close;
	}
	s->profile = new_profile(s);
	if (!s->profile) {
		snprintf(err, err_len, "out of memory");
		goto out_close;
	}
	if (opts->preload_kernel_symbols && sampler->kernel_stacks)
		symbolizer__resolve_kernel(s->symbolizer, 0, 0, &f);
	install_stop_signals(opts->stop_signals);
	registry__scan(s->registry, s->targets, s->target_count);
	/* what runs already is unwound from the first sample */
	if (s->unwind)
		unwind__wait_idle(s->unwind);
	/*
	 * The execs and exits since the scan, before the first sample: a process
	 * that exec'd meanwhile would otherwise be sampled without a recipe until
	 * the first poll got to its exec.
	 */
	ret = sampler__poll(s->sampler, 0);
	if (ret < 0) {
		snprintf(err, err_len, "cannot read the ring buffer: %s", strerror(-ret));
		goto out_close;
	}
	registry__tick(s->registry);
	if (sampler__start(s->sampler, err, err_len))
		goto out_close;
	registry__sampling_started(s->registry);
	return s;

out_close:
	session__close(s);
	return NULL;
}

bool session__stop_requested(void)
{
	return stop_requested;
}

int session__poll(struct session *s, int timeout_ms)
{
	/*
	 * Follow-up inspections after an exec are due within milliseconds, while
	 * samples alone do not wake this loop (sampling/ringreader.c).
	 */
	int due_ms = registry__next_due_ms(s->registry), err;

	if (due_ms >= 0 && (timeout_ms < 0 || due_ms < timeout_ms))
		timeout_ms = due_ms;
	err = sampler__poll(s->sampler, timeout_ms);

	registry__tick(s->registry);
	return err < 0 ? err : 0;
}

struct profile *session__take_profile(struct session *s)
{
	struct profile *fresh = new_profile(s), *old = s->profile;

	if (!fresh)
		return NULL;
	s->profile = fresh;
	return old;
}

void session__set_labels(struct session *s, const struct labelsel *labels)
{
	s->labels = labels;
}

void session__stop(struct session *s)
{
	/* stop first: then every counted sample is either in the ring buffer or dropped */
	sampler__stop(s->sampler);
	sampler__drain(s->sampler);
}

void session__close(struct session *s)
{
	if (!s)
		return;
	profile__free(s->profile);
	registry__free(s->registry);
	unwind__free(s->unwind);
	sampler__close(s->sampler);
	symbolizer__free(s->symbolizer);
	free(s);
}

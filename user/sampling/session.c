// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A sampling session (session.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "sampling/procs.h"
#include "profile/profile.h"
#include "sampling/session.h"
#include "symbolize/symbols.h"

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
		if (profile__add_sample(s->profile, data, size))
			s->bad_records++;
		return 0;
	}
	if (size < sizeof(*pe)) {
		s->bad_records++;
		return 0;
	}
	procs__handle_event(s->procs, pe);
	if (h->type == LP_EVENT_EXEC) {
		/* read the new memory map now: a short-lived process may be gone soon */
		symbolizer__pid_exec(s->symbolizer, pe->tgid);
		symbolizer__observe_pid(s->symbolizer, pe->tgid);
	} else if (h->type == LP_EVENT_EXIT) {
		symbolizer__pid_exit(s->symbolizer, pe->tgid);
		for (i = 0; i < s->target_count; i++)
			if (s->targets[i] == (pid_t)pe->tgid)
				s->target_exited = true;
	}
	return 0;
}

static struct profile *new_profile(struct session *s)
{
	struct profile_opts po = {.max_bytes = s->profile_max_bytes};

	return profile__new(s->symbolizer, &po);
}

struct session *session__open(const struct sampler_opts *opts, size_t profile_max_bytes, char *err,
			      size_t err_len)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	s->profile_max_bytes = profile_max_bytes;
	if (opts->filter_mode == LP_FILTER_PIDS) {
		s->targets = opts->pids;
		s->target_count = opts->pid_count;
	}
	s->symbolizer = symbolizer__new(NULL);
	s->profile = s->symbolizer ? new_profile(s) : NULL;
	if (!s->profile) {
		snprintf(err, err_len, "out of memory");
		goto out_close;
	}
	s->sampler = sampler__open(opts, on_record, s, err, err_len);
	if (!s->sampler)
		goto out_close;
	s->procs = procs__new(s->sampler, opts->max_processes, opts->verbose);
	if (!s->procs) {
		snprintf(err, err_len, "out of memory");
		goto out_close;
	}
	return s;

out_close:
	session__close(s);
	return NULL;
}

int session__start(struct session *s, char *err, size_t err_len)
{
	procs__scan(s->procs, s->targets, s->target_count);
	return sampler__start(s->sampler, err, err_len);
}

int session__poll(struct session *s, int timeout_ms)
{
	int err = sampler__poll(s->sampler, timeout_ms);

	procs__tick(s->procs);
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
	procs__free(s->procs);
	sampler__close(s->sampler);
	profile__free(s->profile);
	symbolizer__free(s->symbolizer);
	free(s);
}

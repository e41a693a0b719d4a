// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* OpenTelemetry labels as written (profile/otel_labels.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labelprof.h"
#include "lib/clock.h"
#include "lib/hex.h"
#include "proc/stat.h"
#include "profile/otel_labels.h"

struct otel_labels {
	struct otel_labels_proc *single; /* the process of otel_labels__resolver */
	/* Hex ids of the record being resolved (extra starts a record). */
	char trace_hex[2 * LP_OTEL_TRACE_ID_LEN];
	char span_hex[2 * LP_OTEL_SPAN_ID_LEN];
};

struct otel_labels *otel_labels__new(void)
{
	return calloc(1, sizeof(struct otel_labels));
}

void otel_labels__free(struct otel_labels *o)
{
	free(o);
}

/* Drops the previous read's context and keeps the current one as previous. */
static void proc_retire(struct otel_labels_proc *p)
{
	otel_ctx__free(p->old_ctx);
	free(p->old_extra);
	p->old_ctx = p->ctx;
	p->old_extra = p->extra;
	p->ctx = NULL;
	p->extra = NULL;
	p->nr_extra = 0;
}

void otel_labels__proc_clear(struct otel_labels_proc *p)
{
	proc_retire(p);
	proc_retire(p);
	p->read_on_miss = false;
}

static size_t bounded_len(const char *s, size_t max)
{
	return strnlen(s, max);
}

/* Reads pid's context again (found in maps, NULL: read them): the labels it adds follow. */
static void proc_read(struct otel_labels_proc *p, const struct maps *maps, __u64 now)
{
	struct otel_ctx *ctx = NULL;
	__u64 addr;
	size_t i;

	p->check_ns = now;
	p->stale = false;
	if (otel_ctx__find(p->pid, maps, &addr) || otel_ctx__read(p->pid, addr, &ctx, NULL, 0)) {
		ctx = NULL;
		/* gone (or a zombie): what it published still names its last samples */
		if (p->ctx && proc_tgid(p->pid) == -ESRCH)
			return;
	}
	proc_retire(p);
	p->ctx = ctx;
	p->read_on_miss = !ctx;
	if (!ctx || !ctx->nr_resource)
		return;
	p->extra = calloc(ctx->nr_resource, sizeof(*p->extra));
	if (!p->extra)
		return;
	for (i = 0; i < ctx->nr_resource; i++) {
		const struct otel_ctx_attr *a = &ctx->resource[i];

		p->extra[i] = (struct profile_label){
			(const unsigned char *)a->key, (const unsigned char *)a->value,
			bounded_len(a->key, LP_MAX_KEY_LEN),
			bounded_len(a->value, LP_MAX_VALUE_LEN), LP_SRC_OTEL_PROCESS};
	}
	p->nr_extra = ctx->nr_resource;
}

void otel_labels__proc_init(struct otel_labels_proc *p, __u32 pid, const struct maps *maps)
{
	otel_labels__proc_clear(p);
	p->pid = pid;
	proc_read(p, maps, now_ns());
}

/* p's context checked, or read again, if it is time to. */
static void proc_check(struct otel_labels_proc *p)
{
	__u64 now = now_ns(), published_at;

	if (p->stale) {
		if (now - p->check_ns >= OTEL_REFRESH_MIN_MS * 1000000ull)
			proc_read(p, NULL, now);
	} else if (!p->ctx) {
		if (now - p->check_ns >= OTEL_ABSENT_RECHECK_MS * 1000000ull)
			proc_read(p, NULL, now);
	} else if (now - p->check_ns >= OTEL_RECHECK_MS * 1000000ull) {
		/* a new publication (or none any more) changes the header */
		if (otel_ctx__published_at(p->pid, p->ctx->addr, &published_at) ||
		    published_at != p->ctx->published_at_ns)
			proc_read(p, NULL, now);
		else
			p->check_ns = now;
	}
}

const struct otel_ctx *otel_labels__proc_ctx(struct otel_labels_proc *p)
{
	proc_check(p);
	return p->ctx;
}

size_t otel_labels__extra(struct otel_labels_proc *p, const struct profile_label **labels)
{
	if (!p) {
		*labels = NULL;
		return 0;
	}
	proc_check(p);
	*labels = p->extra;
	return p->nr_extra;
}

static bool key_is(const struct profile_label *l, const char *key)
{
	return l->key_len == strlen(key) && !memcmp(l->key, key, l->key_len);
}

bool otel_labels__label(struct otel_labels *o, struct otel_labels_proc *p, struct profile_label *l)
{
	const struct otel_ctx *c;
	unsigned int idx;

	if (l->source != LP_SRC_OTEL_THREAD)
		return true;
	if (l->key_len == 1) {
		idx = l->key[0];
		c = p ? p->ctx : NULL;
		if (c && idx < c->nr_keys && c->keys[idx]) {
			l->key = (const unsigned char *)c->keys[idx];
			l->key_len = bounded_len(c->keys[idx], LP_MAX_KEY_LEN);
			return true;
		}
		/*
		 * The map is append-only: one that does not name the index may be
		 * an old one, or none was found yet. Until a new read names it, the
		 * attribute has no name to go by (OTEP 4947: ignored).
		 */
		if (p && (p->read_on_miss ||
			  (p->stale && now_ns() - p->check_ns >=
					       OTEL_REFRESH_MIN_MS * 1000000ull))) {
			proc_read(p, NULL, now_ns());
			c = p->ctx;
			if (c && idx < c->nr_keys && c->keys[idx]) {
				l->key = (const unsigned char *)c->keys[idx];
				l->key_len = bounded_len(c->keys[idx], LP_MAX_KEY_LEN);
				return true;
			}
		}
		if (p && (!c || idx >= c->nr_keys))
			p->stale = true;
		return false;
	} else if (key_is(l, LP_OTEL_KEY_TRACE_ID) && l->value_len == LP_OTEL_TRACE_ID_LEN) {
		hex__encode(o->trace_hex, l->value, l->value_len);
		l->value = (const unsigned char *)o->trace_hex;
		l->value_len = sizeof(o->trace_hex);
	} else if (key_is(l, LP_OTEL_KEY_SPAN_ID) && l->value_len == LP_OTEL_SPAN_ID_LEN) {
		hex__encode(o->span_hex, l->value, l->value_len);
		l->value = (const unsigned char *)o->span_hex;
		l->value_len = sizeof(o->span_hex);
	}
	return true;
}

static size_t single_extra(void *ctx, __u32 pid, const struct profile_label **labels)
{
	struct otel_labels *o = ctx;

	return otel_labels__extra(o->single->pid == pid ? o->single : NULL, labels);
}

static bool single_label(void *ctx, __u32 pid, struct profile_label *l)
{
	struct otel_labels *o = ctx;

	return otel_labels__label(o, o->single->pid == pid ? o->single : NULL, l);
}

void otel_labels__resolver(struct otel_labels *o, struct otel_labels_proc *p,
			   struct profile_resolver *r)
{
	o->single = p;
	*r = (struct profile_resolver){.extra = single_extra, .label = single_label, .ctx = o};
}

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
#include "lib/pairmap.h"
#include "profile/otel_labels.h"

/* What is known of one process's context. */
struct otel_proc {
	__u32 pid;
	bool stale;		     /* a key index the map did not name: read again */
	__u64 check_ns;		     /* when the context was last looked for or checked */
	struct otel_ctx *ctx;	     /* NULL: none found */
	struct profile_label *extra; /* the resource attributes as labels */
	size_t nr_extra;
};

struct otel_labels {
	struct pairmap procs;  /* pid -> otel_proc */
	struct otel_proc *cur; /* the process of the record being resolved */
	/* Hex ids of the record being resolved (extra starts a record). */
	char trace_hex[2 * LP_OTEL_TRACE_ID_LEN];
	char span_hex[2 * LP_OTEL_SPAN_ID_LEN];
	char unnamed[OTEL_CTX_MAX_KEYS][sizeof(OTEL_UNNAMED_KEY_PREFIX) + 3];
};

struct otel_labels *otel_labels__new(void)
{
	struct otel_labels *o = calloc(1, sizeof(*o));
	size_t i;

	if (!o)
		return NULL;
	for (i = 0; i < OTEL_CTX_MAX_KEYS; i++)
		snprintf(o->unnamed[i], sizeof(o->unnamed[i]), OTEL_UNNAMED_KEY_PREFIX "%zu", i);
	return o;
}

static void proc_clear(struct otel_proc *p)
{
	otel_ctx__free(p->ctx);
	free(p->extra);
	p->ctx = NULL;
	p->extra = NULL;
	p->nr_extra = 0;
}

void otel_labels__free(struct otel_labels *o)
{
	size_t i;

	if (!o)
		return;
	for (i = 0; i < o->procs.count; i++) {
		proc_clear(o->procs.entries[i].val);
		free(o->procs.entries[i].val);
	}
	pairmap__free(&o->procs);
	free(o);
}

void otel_labels__forget(struct otel_labels *o, __u32 pid)
{
	struct otel_proc *p = pairmap__get(&o->procs, pid, 0);

	if (!p)
		return;
	pairmap__del(&o->procs, pid, 0);
	if (o->cur == p)
		o->cur = NULL;
	proc_clear(p);
	free(p);
}

static size_t bounded_len(const char *s, size_t max)
{
	return strnlen(s, max);
}

/* Reads pid's context again: the labels it adds follow. */
static void proc_read(struct otel_proc *p, __u64 now)
{
	struct otel_ctx *ctx = NULL;
	__u64 addr;
	size_t i;

	p->check_ns = now;
	p->stale = false;
	if (otel_ctx__find(p->pid, &addr) || otel_ctx__read(p->pid, addr, &ctx, NULL, 0))
		ctx = NULL;
	proc_clear(p);
	p->ctx = ctx;
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

/* pid's entry, its context read or checked if it is time to. */
static struct otel_proc *proc_get(struct otel_labels *o, __u32 pid)
{
	struct otel_proc *p = pairmap__get(&o->procs, pid, 0);
	__u64 now = now_ns(), published_at;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		if (pairmap__put(&o->procs, pid, 0, p)) {
			free(p);
			return NULL;
		}
		p->pid = pid;
		proc_read(p, now);
		return p;
	}
	if (!p->ctx) {
		if (now - p->check_ns >= OTEL_ABSENT_RECHECK_MS * 1000000ull)
			proc_read(p, now);
	} else if (p->stale) {
		if (now - p->check_ns >= OTEL_REFRESH_MIN_MS * 1000000ull)
			proc_read(p, now);
	} else if (now - p->check_ns >= OTEL_RECHECK_MS * 1000000ull) {
		/* a new publication (or none any more) changes the header */
		if (otel_ctx__published_at(pid, p->ctx->addr, &published_at) ||
		    published_at != p->ctx->published_at_ns)
			proc_read(p, now);
		else
			p->check_ns = now;
	}
	return p;
}

const struct otel_ctx *otel_labels__ctx(struct otel_labels *o, __u32 pid)
{
	struct otel_proc *p = proc_get(o, pid);

	return p ? p->ctx : NULL;
}

static size_t resolve_extra(void *ctx, __u32 pid, const struct profile_label **labels)
{
	struct otel_labels *o = ctx;

	o->cur = proc_get(o, pid);
	*labels = o->cur ? o->cur->extra : NULL;
	return o->cur ? o->cur->nr_extra : 0;
}

static bool key_is(const struct profile_label *l, const char *key)
{
	return l->key_len == strlen(key) && !memcmp(l->key, key, l->key_len);
}

static void resolve_label(void *ctx, __u32 pid, struct profile_label *l)
{
	struct otel_labels *o = ctx;
	struct otel_proc *p = o->cur;
	const struct otel_ctx *c;
	unsigned int idx;

	(void)pid;
	if (l->source != LP_SRC_OTEL_THREAD)
		return;
	if (l->key_len == 1) {
		idx = l->key[0];
		c = p ? p->ctx : NULL;
		if (c && idx < c->nr_keys && c->keys[idx]) {
			l->key = (const unsigned char *)c->keys[idx];
			l->key_len = bounded_len(c->keys[idx], LP_MAX_KEY_LEN);
			return;
		}
		/* a map that does not name it may be an old one */
		if (p && c && idx >= c->nr_keys)
			p->stale = true;
		l->key = (const unsigned char *)o->unnamed[idx];
		l->key_len = strlen(o->unnamed[idx]);
	} else if (key_is(l, LP_OTEL_KEY_TRACE_ID) && l->value_len == LP_OTEL_TRACE_ID_LEN) {
		hex__encode(o->trace_hex, l->value, l->value_len);
		l->value = (const unsigned char *)o->trace_hex;
		l->value_len = sizeof(o->trace_hex);
	} else if (key_is(l, LP_OTEL_KEY_SPAN_ID) && l->value_len == LP_OTEL_SPAN_ID_LEN) {
		hex__encode(o->span_hex, l->value, l->value_len);
		l->value = (const unsigned char *)o->span_hex;
		l->value_len = sizeof(o->span_hex);
	}
}

void otel_labels__resolver(struct otel_labels *o, struct profile_resolver *r)
{
	r->extra = resolve_extra;
	r->label = resolve_label;
	r->ctx = o;
}

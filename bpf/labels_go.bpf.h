/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef LABELPROF_LABELS_GO_BPF_H
#define LABELPROF_LABELS_GO_BPF_H

#include "maps.bpf.h"
#include "arch.h"
#include "tls.bpf.h"
#include "labels_custom.bpf.h"

/*
 * Go pprof labels (docs/design.md section 8): sc->labels[0..n) are gathered
 * from the goroutine's map or slice as { key, value } strings, then copied
 * into the record by copy_label like custom labels, marked LP_SRC_GO_PPROF.
 */
struct go_ctx {
	struct copy_ctx cp;
	bool remote;
	bool slice; /* sc->labels hold Go's { ptr, len } strings, not { len, buf } */
};

/* A Go string { ptr, len } read over an lp_string_abi { len, buf }: put in order. */
static __always_inline void go_string_swap(struct lp_string_abi *str)
{
	__u64 ptr = str->len;

	str->len = str->buf;
	str->buf = ptr;
}

/* One Go label, by bpf_loop (see copy_label). */
static __always_inline long go_copy_label(__u32 i, struct go_ctx *gx, bool remote)
{
	struct lp_scratch *sc = gx->cp.sc;
	struct lp_sample *s = gx->cp.s;
	__u32 start = sc->off, before = s->label_count;
	struct lp_label_abi *l;
	long ret;

	if (i >= LP_MAX_LABELS)
		return 1;
	/* copy_label reads labels from sc->set (gx->cp.at is 0) */
	l = set_label(&gx->cp, i);
	*l = sc->labels[i];
	if (gx->slice) {
		go_string_swap(&l->key);
		go_string_swap(&l->value);
	}
	/*
	 * An empty Go string may have no pointer, which copy_label takes for a
	 * missing key or value: point it just after the key (one read then).
	 */
	if (!l->key.len && !l->key.buf)
		l->key.buf = l->value.buf ? l->value.buf : 1;
	if (!l->value.len)
		l->value.buf = l->key.buf + l->key.len;
	ret = copy_label(i, &gx->cp, remote);
	/* the source in the top bits of key_len, whose high byte comes second */
	if (s->label_count != before)
		sc->rec[(start + 1) & REC_MASK] |= LP_SRC_GO_PPROF << (LP_LABEL_SRC_SHIFT - 8);
	return ret;
}

static long go_copy_label_current(__u32 i, struct go_ctx *gx)
{
	return go_copy_label(i, gx, false);
}

static long go_copy_label_remote(__u32 i, struct go_ctx *gx)
{
	return go_copy_label(i, gx, true);
}

/* One bucket of a Go labels map (runtime.bmap of map[string]string), by bpf_loop. */
static __always_inline long go_map_bucket(struct go_ctx *gx, bool remote)
{
	struct lp_scratch *sc = gx->cp.sc;
	struct lp_gowalk *w = &sc->gw;
	__u64 addr = w->next, *word;
	__u32 j, n = w->n;

	if (!addr) {
		if (w->idx >= w->nbuckets)
			return 1;
		addr = w->buckets + (__u64)w->idx * LP_GO_BUCKET_SIZE;
		w->idx++;
	}
	if (read_user(gx->cp.task, remote, sc->go_bucket, LP_GO_BUCKET_SIZE, addr)) {
		gx->cp.s->status |= LP_ST_READ_FAULT;
		w->fault = 1;
		w->next = 0;
		w->idx = w->nbuckets;
		return 1;
	}
	for (j = 0; j < LP_GO_BUCKET_SLOTS; j++) {
		if (sc->go_bucket[j] < LP_GO_MIN_TOPHASH)
			continue;
		if (n >= max_labels || n >= LP_MAX_LABELS) {
			w->full = 1;
			continue;
		}
		/* keys[8] after tophash[8], values[8] after the keys; a string is { ptr, len } */
		word = (__u64 *)&sc->go_bucket[LP_GO_BUCKET_SLOTS + 16 * j];
		sc->labels[n].key.buf = word[0];
		sc->labels[n].key.len = word[1];
		word = (__u64 *)&sc->go_bucket[LP_GO_BUCKET_SLOTS * 17 + 16 * j];
		sc->labels[n].value.buf = word[0];
		sc->labels[n].value.len = word[1];
		n++;
	}
	w->n = n;
	w->next = *(__u64 *)&sc->go_bucket[LP_GO_BUCKET_SIZE - 8];
	return 0;
}

static long go_map_bucket_current(__u32 i, struct go_ctx *gx)
{
	return go_map_bucket(gx, false);
}

static long go_map_bucket_remote(__u32 i, struct go_ctx *gx)
{
	return go_map_bucket(gx, true);
}

/*
 * Gathers the labels of a Go <= 1.23 labels map (*map[string]string) at
 * labels into sc->labels; returns how many.
 */
static __always_inline __u32 go_gather_map(struct go_ctx *gx, __u64 labels)
{
	struct lp_scratch *sc = gx->cp.sc;
	struct lp_sample *s = gx->cp.s;
	struct lp_gowalk *w = &sc->gw;
	/* runtime.hmap: count @0, B @9, buckets @16, oldbuckets @24 */
	__u64 hmap, h[4];
	__u8 b;

	if (read_user(gx->cp.task, gx->remote, &hmap, sizeof(hmap), labels) ||
	    (hmap && read_user(gx->cp.task, gx->remote, h, sizeof(h), hmap))) {
		s->status |= LP_ST_READ_FAULT;
		return 0;
	}
	if (!hmap || !h[0])
		return 0;
	b = h[1] >> 8;
	/*
	 * A label map is built once and never changes, so it is not growing;
	 * one that is (oldbuckets set) or is too large for its bounds is not read.
	 */
	if (b > LP_GO_MAX_B || h[3] || !h[2]) {
		s->status |= b > LP_GO_MAX_B || !h[2] ? LP_ST_MALFORMED : LP_ST_TRUNCATED;
		return 0;
	}
	w->buckets = h[2];
	w->next = 0;
	w->nbuckets = 1u << b;
	w->idx = 0;
	w->n = 0;
	w->full = 0;
	w->fault = 0;
	bpf_loop(LP_GO_MAX_BUCKET_READS, gx->remote ? go_map_bucket_remote : go_map_bucket_current,
		 gx, 0);
	/* (an earlier source's fault is no reason to leave these out) */
	if (w->fault)
		return 0;
	if (w->full || w->next || w->idx < w->nbuckets) {
		s->status |= LP_ST_TRUNCATED;
	} else if (w->n != h[0]) { /* the map says otherwise: no partial set */
		s->status |= LP_ST_MALFORMED;
		return 0;
	}
	return w->n;
}

/* Gathers the labels of a Go >= 1.24 labels slice at labels into sc->labels; how many. */
static __always_inline __u32 go_gather_slice(struct go_ctx *gx, __u64 labels)
{
	struct lp_sample *s = gx->cp.s;
	__u64 slice[2]; /* { ptr, len } of []label, label = { key, value string } */
	__u32 n;

	if (read_user(gx->cp.task, gx->remote, slice, sizeof(slice), labels)) {
		s->status |= LP_ST_READ_FAULT;
		return 0;
	}
	if (!slice[1])
		return 0;
	n = slice[1] > max_labels ? max_labels : slice[1];
	if (slice[1] > max_labels)
		s->status |= LP_ST_TRUNCATED;
	if (n > LP_MAX_LABELS)
		n = LP_MAX_LABELS;
	if (!n)
		return 0;
	if (!slice[0] || read_user(gx->cp.task, gx->remote, gx->cp.sc->labels,
				   n * sizeof(struct lp_label_abi), slice[0])) {
		s->status |= LP_ST_READ_FAULT;
		return 0;
	}
	gx->slice = true;
	return n;
}

/* The g the thread runs (0: none), or -1 when it cannot be read. */
static __always_inline long go_current_g(struct task_struct *task, bool remote,
					 const struct lp_go_ref *go, __u64 *g)
{
	__u64 tp;

	if (go->g_in_register)
		return arch_go_g_register(task, g);
	tp = arch_thread_pointer(task);
	if (!tp)
		return -1;
	return read_user(task, remote, g, sizeof(*g), tp + go->g_offset) ? -1 : 0;
}

/*
 * Reads the pprof labels of the goroutine task runs, g.m.curg.labels, into
 * the record s at *off. A thread that runs no goroutine (the scheduler, a C
 * thread of a cgo program) has none.
 */
static __always_inline void read_go_labels(struct task_struct *task, bool remote,
					   const struct lp_recipe *r, struct lp_scratch *sc,
					   struct lp_sample *s, __u32 *off)
{
	const struct lp_go_ref *go = &r->go;
	struct go_ctx gx = {.cp = {.sc = sc, .s = s, .task = task}, .remote = remote};
	__u64 g, m = 0, curg = 0, labels = 0;
	__u16 before = s->label_count;
	__u32 n;

	if (go_current_g(task, remote, go, &g) ||
	    (g && read_user(task, remote, &m, sizeof(m), g + go->m_offset)) ||
	    (m && read_user(task, remote, &curg, sizeof(curg), m + go->curg_offset)) ||
	    (curg && read_user(task, remote, &labels, sizeof(labels), curg + go->labels_offset))) {
		s->status |= LP_ST_READ_FAULT;
		return;
	}
	s->status |= LP_ST_LABELS_READ;
	if (!labels)
		return;
	if (go->format == LP_GO_LABELS_MAP)
		n = go_gather_map(&gx, labels);
	else if (go->format == LP_GO_LABELS_SLICE)
		n = go_gather_slice(&gx, labels);
	else
		return;
	if (!n || n > LP_MAX_LABELS || *off > LP_RECORD_MAX)
		return;
	sc->off = *off;
	bpf_loop(n, remote ? go_copy_label_remote : go_copy_label_current, &gx, 0);
	/* a string that faults drops the whole set (see copy_label) */
	if (gx.cp.fault || sc->off < *off || sc->off > LP_RECORD_MAX) {
		s->label_count = before;
		return;
	}
	s->label_bytes += sc->off - *off;
	*off = sc->off;
}

#endif /* LABELPROF_LABELS_GO_BPF_H */

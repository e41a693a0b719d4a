/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Custom labels (docs/design.md sections 1 and 3): a v0 or v1 label set found
 * through TLS, copied into the record with as few reads as its layout allows.
 * Go labels are copied by the same copy_label.
 */
#ifndef LABELPROF_LABELS_CUSTOM_BPF_H
#define LABELPROF_LABELS_CUSTOM_BPF_H

#include "maps.bpf.h"
#include "tls.bpf.h"

/* What the steps of a label copy share: where the set and its strings were read to. */
struct copy_ctx {
	struct lp_scratch *sc;
	struct lp_sample *s;
	struct task_struct *task;
	struct lp_counters *c;
	__u64 lo;      /* the user address win[0] holds; strings from there are in the window */
	__u64 hi;      /* the end of the furthest string */
	__u32 at;      /* where in set[] the labels start */
	__u32 win_len; /* bytes of win[] read; 0: no window, every string read by itself */
	__u32 fault;   /* a read failed: the set's labels are left out */
};

/* label i of the set read into sc->set */
static __always_inline struct lp_label_abi *set_label(struct copy_ctx *cx, __u32 i)
{
	return __builtin_assume_aligned(
		&cx->sc->set[(cx->at + i * sizeof(struct lp_label_abi)) & LSET_MASK],
		sizeof(__u64));
}

/* The bytes of a string kept: a key or value is cut at its limit. */
static __always_inline __u64 kept_len(__u64 len, __u32 max)
{
	return len > max ? max : len;
}

/*
 * The extent of the strings of label i that copy_label will read, by
 * bpf_loop: cx->lo and cx->hi grow to take them in, sc->kept counts their
 * bytes (in map memory: a sum on the stack would give the verifier a new
 * range at every iteration). A string whose end wraps around is left to
 * copy_label, whose read of it fails.
 */
static long span_label(__u32 i, struct copy_ctx *cx)
{
	struct lp_label_abi *l;
	__u64 k, v, kend, vend;

	if (i >= LP_MAX_LABELS)
		return 1;
	l = set_label(cx, i);
	k = l->key.buf;
	v = l->value.buf;
	if (!k || !v)
		return 0;
	kend = k + kept_len(l->key.len, max_key_len);
	vend = v + kept_len(l->value.len, max_value_len);
	if (kend < k || vend < v)
		return 0;
	cx->sc->kept += (kend - k) + (vend - v);
	if (k < cx->lo)
		cx->lo = k;
	if (v < cx->lo)
		cx->lo = v;
	if (kend > cx->hi)
		cx->hi = kend;
	if (vend > cx->hi)
		cx->hi = vend;
	return 0;
}

/* Whether [p, p + len) lies in the window; *at: where in win[] it starts. */
static __always_inline bool in_window(const struct copy_ctx *cx, __u64 p, __u32 len, __u32 *at)
{
	if (p < cx->lo || p - cx->lo > cx->win_len || cx->win_len - (p - cx->lo) < len)
		return false;
	*at = p - cx->lo;
	return true;
}

/*
 * len bytes (at most max) from win[src] to rec[dst], by one copy: a loop over
 * words is walked by the verifier a word at a time, and 6.1's, losing the
 * loop's bound, walked it to the instruction limit. The window is map memory,
 * which the copy cannot fail to read; in_window and copy_label keep both ends
 * in range, the bounds here are for the verifier.
 */
static __always_inline void copy_window(struct lp_scratch *sc, __u32 dst, __u32 src, __u32 len,
					__u32 max)
{
	bpf_probe_read_kernel(&sc->rec[bounded(dst, 0, LP_RECORD_MAX)], bounded(len, 0, max),
			      &sc->win[bounded(src, 0, LP_LABEL_WINDOW)]);
}

/*
 * One label, by bpf_loop: the verifier checks this body once, not per label.
 * A NULL key means no label (the spec says so), a NULL value with length 0 a
 * label not in use (the Datadog Java profiler keeps its reserved labels so
 * until a span is set): both are skipped, the second counted. A NULL pointer
 * with a non-zero length is damage: skipped and flagged malformed.
 */
static __always_inline long copy_label(__u32 i, struct copy_ctx *cx, bool remote)
{
	struct lp_scratch *sc = cx->sc;
	struct lp_sample *s = cx->s;
	struct lp_label_abi *l;
	__u32 start = sc->off, o, klen, vlen, kat, vat;

	if (i >= LP_MAX_LABELS || start > LP_RECORD_MAX)
		return 1;
	o = start;
	l = set_label(cx, i);
	if (!l->key.buf || !l->value.buf) {
		if ((!l->key.buf && l->key.len) || (l->key.buf && l->value.len))
			s->status |= LP_ST_MALFORMED;
		else if (l->key.buf && cx->c) /* (readers without counters leave c NULL) */
			cx->c->null_values++;
		return 0;
	}
	klen = kept_len(l->key.len, max_key_len);
	vlen = kept_len(l->value.len, max_value_len);
	if (klen != l->key.len || vlen != l->value.len)
		s->status |= LP_ST_TRUNCATED;
	if (klen > LP_MAX_KEY_LEN || vlen > LP_MAX_VALUE_LEN || o > LP_RECORD_MAX ||
	    o + sizeof(struct lp_label_hdr) + klen + vlen > LP_RECORD_MAX) {
		s->status |= LP_ST_TRUNCATED;
		return 1;
	}
	o += sizeof(struct lp_label_hdr);
	if (in_window(cx, l->key.buf, klen, &kat) && in_window(cx, l->value.buf, vlen, &vat)) {
		copy_window(sc, o, kat, klen, LP_MAX_KEY_LEN);
		copy_window(sc, o + klen, vat, vlen, LP_MAX_VALUE_LEN);
	} else if (klen == l->key.len && l->value.buf == l->key.buf + klen) {
		/* a value right after its whole key (libcustomlabels keeps it so): one read */
		if (read_user(cx->task, remote, &sc->rec[o & REC_MASK],
			      bounded(klen + vlen, 0, LP_MAX_KEY_LEN + LP_MAX_VALUE_LEN),
			      l->key.buf))
			goto fault;
	} else if (read_user(cx->task, remote, &sc->rec[o & REC_MASK],
			     bounded(klen, 0, LP_MAX_KEY_LEN), l->key.buf) ||
		   read_user(cx->task, remote, &sc->rec[(o + klen) & REC_MASK],
			     bounded(vlen, 0, LP_MAX_VALUE_LEN), l->value.buf)) {
		goto fault;
	}
	put_u16(&sc->rec[start & REC_MASK], klen);
	put_u16(&sc->rec[(start + 2) & REC_MASK], vlen);
	sc->off = o + klen + vlen;
	s->label_count++;
	return 0;
fault:
	/*
	 * The labels read before it and a later duplicate of a key would make a
	 * set that never was: the caller drops the set's labels.
	 */
	s->status |= LP_ST_READ_FAULT;
	cx->fault = 1;
	return 1;
}

/* bpf_loop takes a function, not a constant argument: one body per reader. */
static long copy_label_current(__u32 i, struct copy_ctx *cx)
{
	return copy_label(i, cx, false);
}

static long copy_label_remote(__u32 i, struct copy_ctx *cx)
{
	return copy_label(i, cx, true);
}

/*
 * Reads the label set whose { storage, count } is at addr (near: its labels
 * may follow closely, as in a v1 set) and copies its labels into the record
 * at *off, in storage order (duplicates are kept: userspace keeps the first),
 * or none of them when a read fails.
 * Few reads, as each costs about as much as copying a few hundred bytes: the
 * header with the labels close behind it, then one window over the strings
 * when they lie close together, else a read per label (per-string reads for
 * a value apart from its key).
 */
static __always_inline void copy_labels(struct task_struct *task, bool remote,
					struct lp_scratch *sc, struct lp_sample *s, __u32 *off,
					__u64 addr, bool near, struct lp_counters *c)
{
	struct copy_ctx cx = {.sc = sc, .s = s, .task = task, .c = c, .lo = -1ULL};
	__u32 most = max_labels < LP_MAX_LABELS ? max_labels : LP_MAX_LABELS, n;
	__u16 before = s->label_count;
	__u32 spec = LSET_NEAR + most * sizeof(struct lp_label_abi);
	__u64 storage, count, rel, len;

	/* near the end of its mapping the set fails the long read: then its header alone */
	if (!near || !most || spec > LSET_MASK || read_user(task, remote, sc->set, spec, addr)) {
		near = false;
		if (read_user(task, remote, sc->set, 2 * sizeof(__u64), addr)) {
			s->status |= LP_ST_READ_FAULT;
			return;
		}
	}
	s->status |= LP_ST_LABELS_READ;
	storage = WORD(&sc->set[0]);
	count = WORD(&sc->set[sizeof(__u64)]);
	n = count > max_labels ? max_labels : count;
	if (count > max_labels)
		s->status |= LP_ST_TRUNCATED;
	if (!n)
		return;
	if (n > LP_MAX_LABELS)
		n = LP_MAX_LABELS;
	rel = storage - addr;
	if (near && storage >= addr && rel <= spec &&
	    spec - rel >= n * sizeof(struct lp_label_abi)) {
		cx.at = rel;
	} else if (!storage ||
		   read_user(task, remote, sc->set,
			     bounded(n * sizeof(struct lp_label_abi), 1,
				     LP_MAX_LABELS * sizeof(struct lp_label_abi)),
			     storage)) {
		s->status |= LP_ST_READ_FAULT;
		return;
	}
	sc->kept = 0;
	bpf_loop(n, span_label, &cx, 0);
	len = cx.hi - cx.lo;
	if (cx.hi > cx.lo && len <= LP_LABEL_WINDOW && len <= 2 * sc->kept + LP_LABEL_SLACK &&
	    !read_user(task, remote, sc->win, len, cx.lo))
		cx.win_len = len;
	sc->off = *off;
	bpf_loop(n, remote ? copy_label_remote : copy_label_current, &cx, 0);
	/* a fault: back to where the set started */
	if (cx.fault || sc->off < *off || sc->off > LP_RECORD_MAX) {
		s->label_count = before;
		return;
	}
	s->label_bytes += sc->off - *off;
	*off = sc->off;
}

/* The custom labels of task (r->labels) into the record s at *off. */
static __always_inline void read_custom_labels(struct task_struct *task, bool remote,
					       const struct lp_recipe *r, struct lp_scratch *sc,
					       struct lp_sample *s, __u32 *off,
					       struct lp_counters *c)
{
	__u64 addr, ptr;

	if (tls_object_addr(task, remote, &r->labels, &addr, &s->status))
		return;
	if (r->form == LP_FORM_CUSTOM_LABELS_V1) {
		/* the TLS object is a pointer to { storage, count, capacity } */
		if (read_user(task, remote, &ptr, sizeof(ptr), addr)) {
			s->status |= LP_ST_READ_FAULT;
			return;
		}
		if (!ptr) {
			s->status |= LP_ST_LABELS_READ;
			return;
		}
		addr = ptr;
	} else if (r->form != LP_FORM_CUSTOM_LABELS_V0) {
		return;
	}
	/* v0's TLS object and v1's set both start with { storage, count } */
	copy_labels(task, remote, sc, s, off, addr, r->form == LP_FORM_CUSTOM_LABELS_V1, c);
}

#endif /* LABELPROF_LABELS_CUSTOM_BPF_H */

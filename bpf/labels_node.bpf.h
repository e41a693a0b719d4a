/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The OpenTelemetry thread context of Node.js (docs/design.md section 13):
 * one thread runs many requests, so the record is not behind a thread-local
 * pointer but in the V8 heap, found through the thread's discovery struct
 * and the isolate's current AsyncContextFrame. Every step is checked (tags,
 * instance types, table shape, bounds): a walk that meets anything else
 * gives no labels, never another context's.
 */
#ifndef LABELPROF_LABELS_NODE_BPF_H
#define LABELPROF_LABELS_NODE_BPF_H

#include "labels_otel.bpf.h"
#include "v8.bpf.h"

/* OrderedHashMap: element count, deleted count, bucket count; entries are { key, value, chain } */
#define V8_HASH_START 3
#define V8_HASH_ENTRY 3
#define V8_HASH_LOAD  2 /* entries per bucket */

/* otel_thread_ctx_nodejs_v1, one per thread (each isolate's thread has its own). */
struct node_discovery {
	__u64 cped_slot;  /* the isolate's ContinuationPreservedEmbedderData; 0: not published */
	__u64 als_handle; /* a v8::Global: the slot that holds the AsyncLocalStorage */
	__s32 als_hash;	  /* the AsyncLocalStorage's identity hash */
	__u32 pad;
	__u64 undefined_addr; /* the isolate's undefined: no frame, or no context */
};

/* The instance type of the heap object obj (tagged) and, if words, its size in words. */
static __always_inline int v8_type(struct task_struct *task, bool remote,
				   const struct lp_node_ref *n, __u64 obj, __u16 *type, __u8 *words)
{
	__u64 map;

	if (!V8_IS_HEAP(obj) || read_user(task, remote, &map, sizeof(map), obj - V8_HEAP_TAG) ||
	    !V8_IS_HEAP(map) ||
	    read_user(task, remote, type, sizeof(*type), map - V8_HEAP_TAG + n->instance_type))
		return -1;
	if (words &&
	    read_user(task, remote, words, sizeof(*words), map - V8_HEAP_TAG + n->instance_size))
		return -1;
	return 0;
}

/*
 * The Node.js thread context of task: its discovery struct (r->otel), the
 * current AsyncContextFrame (a JSMap) in the isolate's slot, in its table
 * the entry keyed by the writer's AsyncLocalStorage (one bucket's chain, by
 * the identity hash), the context object it maps to, and the record its
 * internal field 0 points to. No frame, no entry, or undefined: no context.
 */
static __always_inline void read_node_thread(struct task_struct *task, bool remote,
					     const struct lp_recipe *r, struct lp_scratch *sc,
					     struct lp_sample *s, __u32 *off)
{
	const struct lp_node_ref *n = &r->node;
	__u64 addr, frame, als, table, hdr[4], slot, e[V8_HASH_ENTRY], ptr;
	struct node_discovery d;
	__s64 nb, idx;
	__u16 type;
	__u8 words;
	int i;

	if (tls_object_addr(task, remote, &r->otel, &addr, &s->status))
		return;
	if (read_user(task, remote, &d, sizeof(d), addr)) {
		s->status |= LP_ST_READ_FAULT;
		return;
	}
	s->status |= LP_ST_LABELS_READ;
	if (!d.cped_slot) /* no context published on this thread */
		return;
	if (read_user(task, remote, &frame, sizeof(frame), d.cped_slot) ||
	    read_user(task, remote, &als, sizeof(als), d.als_handle))
		goto fault;
	if (frame == d.undefined_addr)
		return;
	if (v8_type(task, remote, n, frame, &type, NULL) || type != n->js_map_type ||
	    read_user(task, remote, &table, sizeof(table), frame - V8_HEAP_TAG + n->map_table) ||
	    !V8_IS_HEAP(table) ||
	    /* the FixedArray's length, then element, deleted and bucket counts */
	    read_user(task, remote, hdr, sizeof(hdr), table - V8_HEAP_TAG + n->hash_header - 8))
		goto bad;
	nb = V8_SMI(hdr[3]);
	if (!V8_IS_SMI(hdr[0] | hdr[1] | hdr[2] | hdr[3]) || nb < 1 || nb > LP_NODE_MAX_BUCKETS ||
	    (nb & (nb - 1)) ||
	    V8_SMI(hdr[0]) != V8_HASH_START + nb + V8_HASH_LOAD * V8_HASH_ENTRY * nb ||
	    V8_SMI(hdr[1]) < 0 || V8_SMI(hdr[2]) < 0 ||
	    V8_SMI(hdr[1]) + V8_SMI(hdr[2]) > V8_HASH_LOAD * nb)
		goto bad;
	table += n->hash_header - V8_HEAP_TAG; /* the element count, index 0 */
	if (read_user(task, remote, &slot, sizeof(slot),
		      table + (V8_HASH_START + ((__u32)d.als_hash & (nb - 1))) * 8))
		goto fault;
	for (i = 0; i < LP_NODE_MAX_CHAIN; i++) {
		idx = V8_SMI(slot);
		if (idx == -1) /* the end of the chain: no context in this frame */
			return;
		if (!V8_IS_SMI(slot) || idx < 0 || idx >= V8_HASH_LOAD * nb)
			goto bad;
		if (read_user(task, remote, e, sizeof(e),
			      table + (V8_HASH_START + nb + V8_HASH_ENTRY * idx) * 8))
			goto fault;
		if (e[0] == als)
			break;
		slot = e[2];
	}
	if (i == LP_NODE_MAX_CHAIN)
		goto bad;
	if (e[1] == d.undefined_addr) /* the context cleared */
		return;
	if (v8_type(task, remote, n, e[1], &type, &words) ||
	    (type != n->api_type && type != n->special_api_type) ||
	    n->record + sizeof(ptr) > words * 8ull ||
	    read_user(task, remote, &ptr, sizeof(ptr), e[1] - V8_HEAP_TAG + n->record) || !ptr ||
	    (ptr & 1))
		goto bad;
	read_otel_record(task, remote, ptr, sc, s, off);
	return;
fault:
	s->status |= LP_ST_READ_FAULT;
	return;
bad:
	s->status |= LP_ST_MALFORMED;
}

#endif /* LABELPROF_LABELS_NODE_BPF_H */

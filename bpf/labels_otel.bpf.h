/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The OpenTelemetry thread context (OTEP 4947, docs/design.md section 1), found through TLS. */
#ifndef LABELPROF_LABELS_OTEL_BPF_H
#define LABELPROF_LABELS_OTEL_BPF_H

#include "maps.bpf.h"
#include "tls.bpf.h"

#define OTEL_SRC_BITS (LP_SRC_OTEL_THREAD << LP_LABEL_SRC_SHIFT)

/*
 * Appends the label { key, otel[at..at+len) } of the OTel thread source at
 * sc->off; key and len are constants at every call site. The ids are not
 * counted against max_labels: a sample keeps its trace whatever else it has.
 */
static __always_inline void put_otel_id(struct lp_scratch *sc, struct lp_sample *s, const char *key,
					__u32 klen, __u32 at, __u32 len)
{
	__u32 o = sc->off;

	if (o > LP_RECORD_MAX - 64) {
		s->status |= LP_ST_TRUNCATED;
		return;
	}
	/*
	 * Keeps the masks below: clang drops them as implied by the check, and 6.1's
	 * verifier loses the check's bound when o is spilled and reloaded.
	 */
	barrier_var(o);
	put_u16(&sc->rec[o & REC_MASK], klen | OTEL_SRC_BITS);
	put_u16(&sc->rec[(o + 2) & REC_MASK], len);
	__builtin_memcpy(&sc->rec[(o + 4) & REC_MASK], key, klen);
	__builtin_memcpy(&sc->rec[(o + 4 + klen) & REC_MASK], &sc->otel[at], len);
	sc->off = o + sizeof(struct lp_label_hdr) + klen + len;
	s->label_count++;
}

/*
 * One attrs_data entry { key_index, len, bytes } checked, by bpf_loop: the
 * entries end at otel_end, where one cut short (malformed, or truncated in a
 * record larger than what was read) moves it back to. A key index's last
 * entry is the one that counts (OTEP 4947): otel_last says where it is.
 */
static long otel_scan(__u32 i, struct lp_scratch **scp)
{
	struct lp_scratch *sc = *scp;
	struct lp_sample *s = (struct lp_sample *)sc->rec;
	__u32 pos = sc->otel_pos, end = sc->otel_end;

	if (end > LP_OTEL_RECORD_MAX || pos + 2 > end ||
	    pos + 2 + sc->otel[(pos + 1) & OTEL_BUF_MASK] > end) {
		if (pos < end) /* a lone byte or an entry cut short */
			s->status |= sc->otel_cut ? LP_ST_TRUNCATED : LP_ST_MALFORMED;
		sc->otel_end = pos;
		return 1;
	}
	sc->otel_last[sc->otel[pos & OTEL_BUF_MASK]] = pos;
	sc->otel_pos = pos + 2 + sc->otel[(pos + 1) & OTEL_BUF_MASK];
	return 0;
}

/*
 * One checked attrs_data entry into the record, by bpf_loop: its key is the
 * key index (one byte, userspace names it), its value the bytes. An entry
 * whose key index comes again later is left out.
 */
static long otel_attr(__u32 i, struct lp_scratch **scp)
{
	struct lp_scratch *sc = *scp;
	struct lp_sample *s = (struct lp_sample *)sc->rec;
	__u32 pos = sc->otel_pos, end = sc->otel_end, o = sc->off, len, vlen;
	__u8 key;

	if (end > LP_OTEL_RECORD_MAX || pos + 2 > end)
		return 1;
	len = sc->otel[(pos + 1) & OTEL_BUF_MASK];
	if (pos + 2 + len > end)
		return 1;
	sc->otel_pos = pos + 2 + len;
	key = sc->otel[pos & OTEL_BUF_MASK];
	if (sc->otel_last[key] != pos)
		return 0;
	if (s->label_count >= sc->otel_most) {
		s->status |= LP_ST_TRUNCATED;
		return 1;
	}
	vlen = len > max_value_len ? max_value_len : len;
	if (vlen != len)
		s->status |= LP_ST_TRUNCATED;
	if (o > LP_RECORD_MAX || o + sizeof(struct lp_label_hdr) + 1 + vlen > LP_RECORD_MAX) {
		s->status |= LP_ST_TRUNCATED;
		return 1;
	}
	put_u16(&sc->rec[o & REC_MASK], 1 | OTEL_SRC_BITS);
	put_u16(&sc->rec[(o + 2) & REC_MASK], vlen);
	sc->rec[(o + 4) & REC_MASK] = key;
	bpf_probe_read_kernel(&sc->rec[(o + 5) & REC_MASK], vlen & 0xff,
			      &sc->otel[(pos + 2) & OTEL_BUF_MASK]);
	sc->off = o + sizeof(struct lp_label_hdr) + 1 + vlen;
	s->label_count++;
	return 0;
}

/*
 * The OTEP 4947 record at ptr (not NULL) into the record s at *off, after
 * the custom labels (docs/design.md section 1).
 */
static __always_inline void read_otel_record(struct task_struct *task, bool remote, __u64 ptr,
					     struct lp_scratch *sc, struct lp_sample *s, __u32 *off)
{
	__u64 *ids = (__u64 *)sc->otel;
	__u16 before = s->label_count;
	__u32 size;

	/*
	 * The record's first LP_OTEL_RECORD_MAX bytes (the OTEP's recommended
	 * size; a larger record's attributes past them are left out) in one
	 * read. A shorter record at the end of its mapping makes that fail, and
	 * is read by its header's size.
	 */
	if (read_user(task, remote, sc->otel, LP_OTEL_RECORD_MAX, ptr)) {
		if (read_user(task, remote, sc->otel, LP_OTEL_RECORD_HDR, ptr)) {
			s->status |= LP_ST_READ_FAULT;
			return;
		}
		size = *(__u16 *)&sc->otel[26];
		/* a record that says it is larger than what can be read is not one */
		if (size > LP_OTEL_RECORD_MAX - LP_OTEL_RECORD_HDR ||
		    read_user(task, remote, sc->otel, LP_OTEL_RECORD_HDR + size, ptr)) {
			s->status |= LP_ST_READ_FAULT;
			return;
		}
	}
	if (sc->otel[24] != LP_OTEL_VALID)
		return;
	size = *(__u16 *)&sc->otel[26];
	sc->otel_cut = size > LP_OTEL_RECORD_MAX - LP_OTEL_RECORD_HDR;
	if (sc->otel_cut) {
		s->status |= LP_ST_TRUNCATED;
		size = LP_OTEL_RECORD_MAX - LP_OTEL_RECORD_HDR;
	}
	sc->off = *off;
	if (ids[0] | ids[1]) {
		put_otel_id(sc, s, LP_OTEL_KEY_TRACE_ID, sizeof(LP_OTEL_KEY_TRACE_ID) - 1, 0,
			    LP_OTEL_TRACE_ID_LEN);
		if (ids[2])
			put_otel_id(sc, s, LP_OTEL_KEY_SPAN_ID, sizeof(LP_OTEL_KEY_SPAN_ID) - 1,
				    LP_OTEL_TRACE_ID_LEN, LP_OTEL_SPAN_ID_LEN);
	}
	sc->otel_most = s->label_count - before + max_labels;
	sc->otel_pos = LP_OTEL_RECORD_HDR;
	sc->otel_end = LP_OTEL_RECORD_HDR + size;
	bpf_loop((LP_OTEL_RECORD_MAX - LP_OTEL_RECORD_HDR) / 2, otel_scan, &sc, 0);
	sc->otel_pos = LP_OTEL_RECORD_HDR;
	bpf_loop((LP_OTEL_RECORD_MAX - LP_OTEL_RECORD_HDR) / 2, otel_attr, &sc, 0);
	if (sc->off < *off || sc->off > LP_RECORD_MAX) {
		s->label_count = before;
		return;
	}
	s->label_bytes += sc->off - *off;
	*off = sc->off;
}

/* The OpenTelemetry thread context of task: otel_thread_ctx_v1 (r->otel) points to its record. */
static __always_inline void read_otel_thread(struct task_struct *task, bool remote,
					     const struct lp_recipe *r, struct lp_scratch *sc,
					     struct lp_sample *s, __u32 *off)
{
	__u64 addr, ptr;

	if (tls_object_addr(task, remote, &r->otel, &addr, &s->status))
		return;
	if (read_user(task, remote, &ptr, sizeof(ptr), addr)) {
		s->status |= LP_ST_READ_FAULT;
		return;
	}
	s->status |= LP_ST_LABELS_READ;
	if (ptr) /* NULL: no context */
		read_otel_record(task, remote, ptr, sc, s, off);
}

#endif /* LABELPROF_LABELS_OTEL_BPF_H */

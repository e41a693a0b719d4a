// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Sample records made whole again (deltas.h, docs/design.md section 4). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "sampling/deltas.h"

/* The last whole sample record of one CPU, which its next delta record is told against. */
struct cpu_last {
	unsigned char *rec;
	size_t len; /* 0: none a delta can be told against */
	size_t cap;
	__u32 records; /* sample records of the CPU seen */
};

struct deltas {
	unsigned int ncpus;
	struct cpu_last *cpus;
	unsigned char *build; /* where a record is made whole, then swapped with its CPU's */
	size_t build_cap;
};

struct deltas *deltas__new(unsigned int ncpus)
{
	struct deltas *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->ncpus = ncpus;
	d->cpus = calloc(ncpus ? ncpus : 1, sizeof(*d->cpus));
	if (!d->cpus) {
		free(d);
		return NULL;
	}
	return d;
}

void deltas__free(struct deltas *d)
{
	unsigned int i;

	if (!d)
		return;
	for (i = 0; i < d->ncpus; i++)
		free(d->cpus[i].rec);
	free(d->cpus);
	free(d->build);
	free(d);
}

/* The whole record at rec becomes c's last one. */
static int keep(struct cpu_last *c, const void *rec, size_t len)
{
	if (ARRAY_RESERVE_MIN(c->rec, c->cap, len, 1024)) {
		c->len = 0;
		return -ENOMEM;
	}
	memcpy(c->rec, rec, len);
	c->len = len;
	return 0;
}

/* Makes the delta record rec (header h) whole in d->build against c's last record; its size. */
static long make_whole(struct deltas *d, const struct cpu_last *c, const unsigned char *rec,
		       const struct lp_sample *h, const struct lp_sample_delta *dl)
{
	struct lp_sample p, w = *h;
	const unsigned char *labels;
	size_t kbytes, ubytes, shared_bytes, pu, total;

	memcpy(&p, c->rec, sizeof(p));
	/* (a full record is kept as it came: its parts are checked here) */
	if (sizeof(p) + ((size_t)p.kstack_len + p.ustack_len) * sizeof(__u64) + p.label_bytes >
		    c->len ||
	    dl->ustack_shared > p.ustack_len ||
	    (size_t)h->ustack_len + dl->ustack_shared > 0xffff)
		return -EINVAL;
	kbytes = (size_t)h->kstack_len * sizeof(__u64);
	ubytes = (size_t)h->ustack_len * sizeof(__u64);
	shared_bytes = (size_t)dl->ustack_shared * sizeof(__u64);
	/* the outermost frames of the last record's user stack */
	pu = sizeof(p) + ((size_t)p.kstack_len + p.ustack_len) * sizeof(__u64) - shared_bytes;
	w.hdr.type = LP_EVENT_SAMPLE;
	w.ustack_len = h->ustack_len + dl->ustack_shared;
	labels = rec + sizeof(*h) + kbytes + ubytes;
	if (dl->flags & LP_DELTA_LABELS_SHARED) {
		w.label_count = p.label_count;
		w.label_bytes = p.label_bytes;
		labels = c->rec + pu + shared_bytes;
	}
	total = sizeof(w) + kbytes + ubytes + shared_bytes + w.label_bytes;
	if (ARRAY_RESERVE_MIN(d->build, d->build_cap, total, 1024))
		return -ENOMEM;
	w.hdr.size = total;
	memcpy(d->build, &w, sizeof(w));
	memcpy(d->build + sizeof(w), rec + sizeof(*h), kbytes + ubytes);
	memcpy(d->build + sizeof(w) + kbytes + ubytes, c->rec + pu, shared_bytes);
	memcpy(d->build + sizeof(w) + kbytes + ubytes + shared_bytes, labels, w.label_bytes);
	return total;
}

int deltas__expand(struct deltas *d, const void *rec, size_t size, const void **out,
		   size_t *out_size)
{
	const unsigned char *b = rec;
	struct lp_sample_delta dl;
	struct cpu_last *c;
	struct lp_sample h;
	unsigned char *tmp;
	size_t tmp_cap, present;
	__u32 seen;
	long len;

	if (size < sizeof(h))
		return -EINVAL;
	memcpy(&h, rec, sizeof(h));
	if (h.hdr.size < sizeof(h) || h.hdr.size > size || h.cpu >= d->ncpus)
		return -EINVAL;
	c = &d->cpus[h.cpu];
	seen = c->records++;
	if (h.hdr.type == LP_EVENT_SAMPLE) {
		*out = rec;
		*out_size = size;
		return keep(c, rec, h.hdr.size);
	}
	present = sizeof(h) + ((size_t)h.kstack_len + h.ustack_len) * sizeof(__u64) +
		  h.label_bytes + sizeof(dl);
	if (h.hdr.type != LP_EVENT_SAMPLE_DELTA || h.hdr.size != present)
		goto out_invalid;
	memcpy(&dl, b + h.hdr.size - sizeof(dl), sizeof(dl));
	/* told against a record this reader did not keep: none can be made whole until a full one */
	if (dl.base != seen || !c->len || ((dl.flags & LP_DELTA_LABELS_SHARED) && h.label_bytes))
		goto out_invalid;
	len = make_whole(d, c, b, &h, &dl);
	if (len == -ENOMEM) {
		c->len = 0;
		return -ENOMEM;
	}
	if (len < 0)
		goto out_invalid;
	tmp = c->rec;
	tmp_cap = c->cap;
	c->rec = d->build;
	c->cap = d->build_cap;
	c->len = len;
	d->build = tmp;
	d->build_cap = tmp_cap;
	*out = c->rec;
	*out_size = len;
	return 0;

out_invalid:
	c->len = 0;
	return -EINVAL;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Profile aggregation. The hot path for an already seen (label set, stack,
 * entry) hashes the record's bytes in place and allocates nothing: label sets,
 * stacks and entries live in growable arrays indexed by lib/hashmap.h maps,
 * their bytes in an arena that is only freed with the profile.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lib/array.h"
#include "lib/clock.h"
#include "lib/compiler.h"
#include "lib/hashmap.h"
#include "profile/labelsel.h"
#include "profile/profile.h"
#include "symbolize/symbols.h"

#define DEFAULT_MAX_BYTES (256u << 20)
#define ARENA_CHUNK	  (64u << 10)
/* Sorting more labels than this uses qsort rather than insertion sort. */
#define SMALL_SORT 24

/* A label set; its identity is its canonical encoding (see lset_intern). */
struct lset {
	struct profile_label *labels;
	const unsigned char *enc;
	__u32 enc_len;
	__u32 n;
};

struct stack {
	__u64 *ips; /* kernel IPs then user IPs */
	__u16 klen, ulen;
};

struct entry {
	__u64 count;
	__u32 pid, tid;
	__u32 lset, stack, snapshot;
	__u32 status;
	__u8 comm_len;
	char comm[LP_COMM_LEN + 1];
};

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	unsigned char data[];
};

/* A label while decoding: its position in the record decides duplicates. */
struct dlabel {
	struct profile_label l;
	__u32 pos;
};

struct profile {
	struct symbolizer *sym;
	const struct labelsel *labels;
	size_t max_bytes;
	__u64 seed;
	struct lset *lsets;
	size_t nr_lsets, cap_lsets;
	struct stack *stacks;
	size_t nr_stacks, cap_stacks;
	struct entry *entries;
	size_t nr_entries, cap_entries;
	struct hashmap lset_tab, stack_tab, entry_tab;
	struct arena_chunk *arena;
	struct dlabel *scratch;
	size_t cap_scratch;
	unsigned char *enc; /* a label set's canonical encoding being built */
	size_t cap_enc;
	/* a record's stacks with its runtime frames put in place (resolver.frames) */
	__u64 ips[LP_MAX_STACK_WORDS];
	size_t bytes;
	__u32 empty_lset, empty_stack;
	struct profile_stats st;
	struct profile_resolver resolver; /* extra NULL: none */
};

/* ---- hashing ------------------------------------------------------------------ */

static inline __u64 mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x9fb21c651e98df25ULL;
	return h ^ (h >> 29);
}

static __u64 hash_bytes(__u64 h, const void *p, size_t n)
{
	const unsigned char *b = p;
	__u64 v;

	/* Four independent lanes keep the multiplier busy on stacks. */
	if (n >= 32) {
		__u64 l[4] = {h, h ^ 0x243f6a8885a308d3ULL, h ^ 0x13198a2e03707344ULL,
			      h ^ 0xa4093822299f31d0ULL};
		__u64 w[4];

		for (; n >= 32; b += 32, n -= 32) {
			memcpy(w, b, sizeof(w));
			l[0] = mix(l[0], w[0]);
			l[1] = mix(l[1], w[1]);
			l[2] = mix(l[2], w[2]);
			l[3] = mix(l[3], w[3]);
		}
		h = mix(mix(mix(l[0], l[1]), l[2]), l[3]);
	}
	for (; n >= 8; b += 8, n -= 8) {
		memcpy(&v, b, 8);
		h = mix(h, v);
	}
	if (n) {
		v = 0;
		memcpy(&v, b, n);
		h = mix(h, v ^ (__u64)n << 56);
	}
	return h;
}

static __u64 hash_final(__u64 h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

/* ---- memory --------------------------------------------------------------------- */

static void *arena_alloc(struct profile *p, size_t size)
{
	struct arena_chunk *c = p->arena;
	void *ret;

	size = (size + 7) & ~(size_t)7;
	if (!c || c->cap - c->used < size) {
		size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		c->next = p->arena;
		p->arena = c;
		p->bytes += sizeof(*c) + cap;
	}
	ret = c->data + c->used;
	c->used += size;
	return ret;
}

/*
 * Room for need elements of an array of *cap elements of size sz, at least
 * min_cap of them; counts the growth.
 */
static int reserve(struct profile *p, void *arrp, size_t *cap, size_t need, size_t sz,
		   size_t min_cap)
{
	size_t old = *cap;
	int err = array__reserve(arrp, cap, need, sz, min_cap);

	p->bytes += (*cap - old) * sz;
	return err;
}

/* Room for one more item in map; counts the growth. */
static int map_reserve(struct profile *p, struct hashmap *map)
{
	size_t old = hashmap__bytes(map);
	int err = hashmap__reserve(map, 1024);

	p->bytes += hashmap__bytes(map) - old;
	return err;
}

/* ---- label sets ------------------------------------------------------------------- */

struct lset_key {
	const unsigned char *enc;
	size_t len;
};

static int cmp_key(const struct profile_label *a, const struct profile_label *b)
{
	size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
	int c = n ? memcmp(a->key, b->key, n) : 0;

	if (c)
		return c;
	return a->key_len < b->key_len ? -1 : a->key_len > b->key_len;
}

/*
 * By key, then by source, then by position: the label that wins a key
 * (docs/design.md section 1) sorts first.
 */
static int cmp_dlabel(const void *x, const void *y)
{
	const struct dlabel *a = x, *b = y;
	int c = cmp_key(&a->l, &b->l);

	if (c)
		return c;
	if (a->l.source != b->l.source)
		return a->l.source < b->l.source ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Sorts labels and drops later duplicates of a key; returns the new count. */
static size_t canonicalize(struct dlabel *v, size_t n)
{
	size_t i, j, out;

	if (n > SMALL_SORT) {
		qsort(v, n, sizeof(*v), cmp_dlabel);
	} else {
		for (i = 1; i < n; i++) {
			struct dlabel t = v[i];

			for (j = i; j > 0 && cmp_dlabel(&v[j - 1], &t) > 0; j--)
				v[j] = v[j - 1];
			v[j] = t;
		}
	}
	for (i = 0, out = 0; i < n; i++) {
		if (out && !cmp_key(&v[out - 1].l, &v[i].l))
			continue;
		v[out++] = v[i];
	}
	return out;
}

static bool lset_eq(const void *ctx, __u32 idx, const void *key)
{
	const struct profile *p = ctx;
	const struct lset_key *k = key;
	const struct lset *s = &p->lsets[idx];

	return s->enc_len == k->len && (!k->len || !memcmp(s->enc, k->enc, k->len));
}

/*
 * The interned id of a canonical label set; -ENOSPC past the memory limit.
 * A set is identified by its encoding in the record's own layout, {key_len,
 * value_len, key, value} per label, in canonical order: one hash pass and one
 * comparison per lookup. It is never longer than the record's label part.
 */
static int lset_intern(struct profile *p, const struct dlabel *labels, size_t n, size_t max_len,
		       __u32 *id)
{
	struct lset_key key = {p->enc, 0};
	struct profile_label *copy;
	unsigned char *enc;
	struct lset *s;
	size_t i;
	__u64 h;

	if (max_len > p->cap_enc) {
		unsigned char *ne = realloc(p->enc, max_len);

		if (!ne)
			return -ENOMEM;
		p->bytes += max_len - p->cap_enc;
		p->enc = ne;
		p->cap_enc = max_len;
		key.enc = ne;
	}
	for (i = 0; i < n; i++) {
		const struct profile_label *l = &labels[i].l;
		struct lp_label_hdr lh = {l->key_len | l->source << LP_LABEL_SRC_SHIFT,
					  l->value_len};

		memcpy(p->enc + key.len, &lh, sizeof(lh));
		memcpy(p->enc + key.len + sizeof(lh), l->key, l->key_len);
		memcpy(p->enc + key.len + sizeof(lh) + l->key_len, l->value, l->value_len);
		key.len += sizeof(lh) + l->key_len + l->value_len;
	}
	h = hash_final(hash_bytes(mix(p->seed, n), key.enc, key.len));
	if (hashmap_slot__id(hashmap__find(&p->lset_tab, h, lset_eq, p, &key), id))
		return 0;
	if (p->bytes > p->max_bytes)
		return -ENOSPC;
	if (map_reserve(p, &p->lset_tab) ||
	    reserve(p, &p->lsets, &p->cap_lsets, p->nr_lsets + 1, sizeof(*p->lsets), 256))
		return -ENOMEM;
	copy = arena_alloc(p, n * sizeof(*copy) + key.len);
	if (!copy)
		return -ENOMEM;
	enc = (unsigned char *)(copy + n);
	if (key.len)
		memcpy(enc, key.enc, key.len);
	for (i = 0; i < n; i++) {
		const struct profile_label *l = &labels[i].l;

		enc += sizeof(struct lp_label_hdr);
		copy[i] = (struct profile_label){enc, enc + l->key_len, l->key_len, l->value_len,
						 l->source};
		enc += l->key_len + l->value_len;
	}
	s = &p->lsets[p->nr_lsets];
	*s = (struct lset){copy, (unsigned char *)(copy + n), key.len, n};
	hashmap__set(&p->lset_tab, hashmap__find(&p->lset_tab, h, lset_eq, p, &key), h,
		     p->nr_lsets);
	*id = p->nr_lsets++;
	return 0;
}

/* ---- stacks ------------------------------------------------------------------------ */

struct stack_key {
	const unsigned char *ips; /* unaligned, in the record */
	__u16 klen, ulen;
};

static bool stack_eq(const void *ctx, __u32 idx, const void *key)
{
	const struct profile *p = ctx;
	const struct stack_key *k = key;
	const struct stack *s = &p->stacks[idx];

	return s->klen == k->klen && s->ulen == k->ulen &&
	       !memcmp(s->ips, k->ips, ((size_t)k->klen + k->ulen) * sizeof(__u64));
}

static int stack_intern(struct profile *p, const struct stack_key *k, __u32 *id)
{
	size_t bytes = ((size_t)k->klen + k->ulen) * sizeof(__u64);
	__u64 h =
		hash_final(hash_bytes(mix(p->seed, k->klen | (__u64)k->ulen << 16), k->ips, bytes));
	__u64 *ips;

	if (hashmap_slot__id(hashmap__find(&p->stack_tab, h, stack_eq, p, k), id))
		return 0;
	if (p->bytes > p->max_bytes)
		return -ENOSPC;
	if (map_reserve(p, &p->stack_tab) ||
	    reserve(p, &p->stacks, &p->cap_stacks, p->nr_stacks + 1, sizeof(*p->stacks), 256))
		return -ENOMEM;
	ips = arena_alloc(p, bytes);
	if (!ips)
		return -ENOMEM;
	memcpy(ips, k->ips, bytes);
	p->stacks[p->nr_stacks] = (struct stack){ips, k->klen, k->ulen};
	hashmap__set(&p->stack_tab, hashmap__find(&p->stack_tab, h, stack_eq, p, k), h,
		     p->nr_stacks);
	*id = p->nr_stacks++;
	return 0;
}

/* ---- entries ------------------------------------------------------------------------ */

static bool entry_eq(const void *ctx, __u32 idx, const void *key)
{
	const struct profile *p = ctx;
	const struct entry *k = key, *e = &p->entries[idx];

	return e->pid == k->pid && e->tid == k->tid && e->lset == k->lset && e->stack == k->stack &&
	       e->snapshot == k->snapshot && e->comm_len == k->comm_len &&
	       !memcmp(e->comm, k->comm, k->comm_len);
}

/* Counts the sample into the entry equal to k; *created tells whether it is new. */
static int entry_add(struct profile *p, struct entry *k, __u32 status, bool *created)
{
	struct hashmap_slot *slot;
	struct entry *e;
	__u32 id;
	__u64 h = hash_final(hash_bytes(mix(mix(mix(p->seed, k->pid | (__u64)k->tid << 32),
						k->lset | (__u64)k->stack << 32),
					    k->snapshot),
					k->comm, k->comm_len));

	*created = false;
	if (!hashmap_slot__id(hashmap__find(&p->entry_tab, h, entry_eq, p, k), &id)) {
		if (p->bytes > 2 * p->max_bytes)
			return -ENOSPC;
		if (map_reserve(p, &p->entry_tab) ||
		    reserve(p, &p->entries, &p->cap_entries, p->nr_entries + 1, sizeof(*p->entries),
			    256))
			return -ENOMEM;
		slot = hashmap__find(&p->entry_tab, h, entry_eq, p, k);
		p->entries[p->nr_entries] = *k;
		id = p->nr_entries++;
		hashmap__set(&p->entry_tab, slot, h, id);
		*created = true;
	}
	e = &p->entries[id];
	e->count++;
	e->status |= status;
	return 0;
}

/* ---- records ---------------------------------------------------------------------- */

static int reserve_scratch(struct profile *p, size_t count)
{
	return reserve(p, &p->scratch, &p->cap_scratch, count, sizeof(*p->scratch), 0) ? -ENOMEM
										       : 0;
}

/*
 * Decodes the label part of a record into p->scratch. Returns the number of
 * labels, or -EINVAL if they do not fill exactly label_bytes.
 */
static long decode_labels(struct profile *p, const unsigned char *b, size_t label_bytes,
			  size_t count)
{
	size_t off = 0, i;

	/* Each label takes at least its header: a larger count cannot fit. */
	if (count > label_bytes / sizeof(struct lp_label_hdr))
		return -EINVAL;
	if (reserve_scratch(p, count))
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		struct lp_label_hdr lh;
		struct dlabel *d = &p->scratch[i];

		if (label_bytes - off < sizeof(lh))
			return -EINVAL;
		memcpy(&lh, b + off, sizeof(lh));
		off += sizeof(lh);
		d->l.key_len = lh.key_len & LP_LABEL_LEN_MASK;
		d->l.source = lh.key_len >> LP_LABEL_SRC_SHIFT;
		if ((size_t)d->l.key_len + lh.value_len > label_bytes - off)
			return -EINVAL;
		d->l.key = b + off;
		d->l.value = b + off + d->l.key_len;
		d->l.value_len = lh.value_len;
		d->pos = i;
		off += (size_t)d->l.key_len + lh.value_len;
	}
	return off == label_bytes ? (long)count : -EINVAL;
}

/* Leaves out of p->scratch the labels whose key the selection drops; the new count. */
static size_t select_labels(struct profile *p, size_t n)
{
	size_t i, out = 0;

	for (i = 0; i < n; i++) {
		const struct profile_label *l = &p->scratch[i].l;

		if (labelsel__keeps(p->labels, l->key, l->key_len))
			p->scratch[out++] = p->scratch[i];
	}
	return out;
}

/*
 * The n labels in p->scratch through the resolver, with the process's own
 * appended (*n grows). Returns the bytes of their encoding, 0 without memory
 * (an encoding counts at least 1).
 */
static size_t resolve_labels(struct profile *p, __u32 pid, long *n)
{
	const struct profile_label *extra;
	size_t nextra, i, kept, len = 1;

	/* the record's own first: naming them may read what the process adds */
	for (i = 0, kept = 0; i < (size_t)*n; i++)
		if (p->scratch[i].l.source == LP_SRC_CUSTOM_LABELS ||
		    p->resolver.label(p->resolver.ctx, pid, &p->scratch[i].l))
			p->scratch[kept++] = p->scratch[i];
	*n = kept;
	nextra = p->resolver.extra(p->resolver.ctx, pid, &extra);
	if (reserve_scratch(p, *n + nextra))
		return 0;
	for (i = 0; i < nextra; i++) {
		p->scratch[*n + i].l = extra[i];
		p->scratch[*n + i].pos = *n + i;
	}
	*n += nextra;
	for (i = 0; i < (size_t)*n; i++)
		len += sizeof(struct lp_label_hdr) + p->scratch[i].l.key_len +
		       p->scratch[i].l.value_len;
	return len;
}

void profile__set_resolver(struct profile *p, const struct profile_resolver *r)
{
	if (r)
		p->resolver = *r;
	else
		memset(&p->resolver, 0, sizeof(p->resolver));
}

int profile__add_sample(struct profile *p, const void *rec, size_t size)
{
	const unsigned char *b = rec;
	struct lp_sample h;
	struct stack_key sk;
	struct entry k = {0};
	size_t stack_bytes, enc_len, i;
	__u64 tagged = 0;
	bool created;
	long n;
	int err;

	if (!rec || size < sizeof(h))
		goto out_reject;
	memcpy(&h, rec, sizeof(h));
	/* Bytes past the labels are allowed: room for later record parts. */
	stack_bytes = ((size_t)h.kstack_len + h.ustack_len) * sizeof(__u64);
	if (h.hdr.type != LP_EVENT_SAMPLE || h.hdr.size < sizeof(h) || h.hdr.size > size ||
	    stack_bytes + h.label_bytes > h.hdr.size - sizeof(h))
		goto out_reject;
	n = decode_labels(p, b + sizeof(h) + stack_bytes, h.label_bytes, h.label_count);
	enc_len = h.label_bytes;
	if (n == -ENOMEM)
		return -ENOMEM;
	if (n < 0)
		goto out_reject;
	if (p->resolver.extra) {
		enc_len = resolve_labels(p, h.tgid, &n);
		if (!enc_len)
			return -ENOMEM;
	}
	if (p->labels)
		n = select_labels(p, n);
	n = canonicalize(p->scratch, n);

	p->st.samples++;
	if (n)
		p->st.samples_with_labels++;
	k.pid = h.tgid;
	k.tid = h.tid;
	k.comm_len = strnlen(h.comm, LP_COMM_LEN);
	memcpy(k.comm, h.comm, k.comm_len);
	sk = (struct stack_key){b + sizeof(h), h.kstack_len, h.ustack_len};
	/* A frame-pointer chain ends with a zero return address: no frame is at or past it. */
	for (i = 0; i < h.ustack_len; i++) {
		__u64 ip;

		memcpy(&ip, sk.ips + (h.kstack_len + i) * sizeof(ip), sizeof(ip));
		if (!ip) {
			sk.ulen = i;
			break;
		}
		tagged |= ip >> 60;
	}
	/* a runtime's frames, among the native ones (not an address: the top bits are set) */
	if (p->resolver.frames && tagged && sk.klen <= LP_MAX_STACK_DEPTH &&
	    sk.ulen <= LP_MAX_USTACK_WORDS + LP_MAX_PY_WORDS) {
		memcpy(p->ips, sk.ips, (sk.klen + sk.ulen) * sizeof(__u64));
		sk.ulen = p->resolver.frames(p->resolver.ctx, h.tgid, p->ips + sk.klen, sk.ulen,
					     ARRAY_SIZE(p->ips) - sk.klen);
		sk.ips = (const unsigned char *)p->ips;
	}
	err = lset_intern(p, p->scratch, n, enc_len, &k.lset);
	if (!err)
		err = stack_intern(p, &sk, &k.stack);
	if (err == -ENOSPC) {
		k.lset = p->empty_lset;
		k.stack = p->empty_stack;
		h.status |= PROFILE_ST_DROPPED;
	} else if (err) {
		return err;
	} else if (p->resolver.snapshot && sk.ulen) {
		k.snapshot = p->resolver.snapshot(p->resolver.ctx, h.tgid);
	}
	err = entry_add(p, &k, h.status, &created);
	if (err == -ENOSPC)
		p->st.dropped++;
	if (err)
		return err;
	if (created && k.snapshot && p->sym) {
		const struct stack *s = &p->stacks[k.stack];

		symbolizer__check_ips(p->sym, k.snapshot, s->ips + s->klen, s->ulen);
	}
	return 0;

out_reject:
	p->st.rejected++;
	return -EINVAL;
}

/* ---- lifecycle and readers ---------------------------------------------------------- */

static __u64 random_seed(void)
{
	__u64 seed;

	/* The seed keeps label values chosen by a process from colliding on purpose. */
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == sizeof(seed))
		return seed;
	return hash_final(now_ns());
}

struct profile *profile__new(struct symbolizer *sym, const struct profile_opts *opts)
{
	static const unsigned char none[1];
	struct profile *p = calloc(1, sizeof(*p));
	struct stack_key empty = {none, 0, 0};

	if (!p)
		return NULL;
	p->sym = sym;
	p->labels = opts ? opts->labels : NULL;
	p->seed = random_seed();
	p->bytes = sizeof(*p);
	/* What samples fall back to past the memory limit, so interned before it applies. */
	p->max_bytes = SIZE_MAX / 2;
	if (lset_intern(p, NULL, 0, 0, &p->empty_lset) ||
	    stack_intern(p, &empty, &p->empty_stack)) {
		profile__free(p);
		return NULL;
	}
	p->max_bytes = opts && opts->max_bytes ? opts->max_bytes : DEFAULT_MAX_BYTES;
	return p;
}

void profile__free(struct profile *p)
{
	struct arena_chunk *c, *next;

	if (!p)
		return;
	for (c = p->arena; c; c = next) {
		next = c->next;
		free(c);
	}
	free(p->lsets);
	free(p->stacks);
	free(p->entries);
	hashmap__free(&p->lset_tab);
	hashmap__free(&p->stack_tab);
	hashmap__free(&p->entry_tab);
	free(p->scratch);
	free(p->enc);
	free(p);
}

int profile__for_each(const struct profile *p, profile_sample_fn fn, void *ctx)
{
	size_t i;
	int ret;

	for (i = 0; i < p->nr_entries; i++) {
		const struct entry *e = &p->entries[i];
		const struct lset *l = &p->lsets[e->lset];
		const struct stack *s = &p->stacks[e->stack];
		struct profile_sample v = {
			.pid = e->pid,
			.tid = e->tid,
			.comm = e->comm,
			.comm_len = e->comm_len,
			.labels = l->labels,
			.label_count = l->n,
			.kstack = s->ips,
			.kstack_len = s->klen,
			.ustack = s->ips + s->klen,
			.ustack_len = s->ulen,
			.count = e->count,
			.status = e->status,
			.snapshot = e->snapshot,
			.label_set = e->lset,
			.stack = e->stack,
		};

		ret = fn(&v, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

void profile__stats(const struct profile *p, struct profile_stats *st)
{
	*st = p->st;
	st->entries = p->nr_entries;
	st->label_sets = p->nr_lsets;
	st->stacks = p->nr_stacks;
	st->bytes = p->bytes;
}

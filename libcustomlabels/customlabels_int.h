/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libcustomlabels' layouts and the helpers its files share: the thread's set
 * (customlabels.c), prepared sets (labelset.c) and run_with (run_with.c).
 * Included by those only.
 */
#ifndef CUSTOMLABELS_INT_H
#define CUSTOMLABELS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "customlabels.h"

#define CL_EXPORT __attribute__((visibility("default")))

/* The ABI layouts (LP64). */
struct cl_string {
	size_t len;
	const unsigned char *buf;
};

struct cl_label {
	struct cl_string key;
	struct cl_string value;
};

struct cl_set {
	struct cl_label *storage;
	size_t count;
	size_t capacity;
};

_Static_assert(sizeof(struct cl_string) == 16, "ABI string layout");
_Static_assert(sizeof(struct cl_label) == 32, "ABI label layout");
_Static_assert(sizeof(struct cl_set) == 24, "ABI v1 set layout");

#ifdef CUSTOM_LABELS_ABI_V0
struct cl_v0_tls {
	struct cl_label *storage;
	size_t count;
};

_Static_assert(sizeof(struct cl_v0_tls) == 16, "ABI v0 TLS layout");

extern CL_EXPORT __thread struct cl_v0_tls custom_labels_thread_local_data;
#else
extern CL_EXPORT __thread struct cl_set *custom_labels_current_set;
#endif

/* The rest is the library's own: direct calls and accesses, not through the GOT or PLT. */
#pragma GCC visibility push(hidden)

struct cl_own;

/* A label array: a prepared set, or one of the two arrays a thread owns. */
struct custom_labels_labelset {
	struct cl_set set;    /* first: what a v1 TLS pointer points to */
	struct cl_own *own;   /* owning thread's storage; NULL for a prepared set */
	unsigned char *bytes; /* prepared set: bytes[0..used) hold its labels' bytes */
	size_t used;
	struct cl_label labels[]; /* set.storage; v0's TLS storage points here */
};

/* Slot classes: a label of n key and value bytes goes to class n > CL_SLOT_SMALL. */
#define CL_SLOT_SMALL 64
#define CL_CLASSES    2

/* Free slots of one size: a stack. */
struct cl_pool {
	unsigned char **free;
	size_t nfree;
};

/* A thread's own storage, one allocation, freed by the pthread key destructor. */
struct cl_own {
	struct custom_labels_labelset *arr[2];
	struct cl_pool pool[CL_CLASSES];
	/* class c's slots: [base[c], base[c + 1]), consecutive, ascending */
	unsigned char *base[CL_CLASSES + 1];
};

#define CL_DEFAULT_SLOT (CUSTOM_LABELS_DEFAULT_MAX_KEY_LEN + CUSTOM_LABELS_DEFAULT_MAX_VALUE_LEN)
_Static_assert(CL_DEFAULT_SLOT > CL_SLOT_SMALL && CL_DEFAULT_SLOT % 16 == 0,
	       "the defaults use both classes");

/* Fixed at the first use; read without a lock afterwards. */
struct cl_config {
	size_t max_labels;
	size_t max_key_len;
	size_t max_value_len;
	size_t slot_size; /* a key, then its value right after it */
	/* per slot class: size, and how many each pool holds (0: no label needs it) */
	size_t class_size[CL_CLASSES];
	size_t class_slots[CL_CLASSES];
};

extern struct cl_config cl_cfg;
extern __thread struct cl_own *cl_own_tls;

/* Readers interrupt this thread: ordering against them needs only the compiler. */
#define cl_barrier()   __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define cl_store(p, v) __atomic_store_n(p, v, __ATOMIC_RELAXED)

#define cl_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))
#define cl_always_inline		   inline __attribute__((always_inline))

/* The array the thread's TLS points to, or NULL. */
static inline struct custom_labels_labelset *cl_installed(void)
{
#ifdef CUSTOM_LABELS_ABI_V0
	struct cl_label *storage = custom_labels_thread_local_data.storage;

	return storage ? cl_container_of(storage, struct custom_labels_labelset, labels) : NULL;
#else
	struct cl_set *set = custom_labels_current_set;

	return set ? cl_container_of(set, struct custom_labels_labelset, set) : NULL;
#endif
}

/* The labels a reader sees now. */
static inline const struct cl_label *cl_visible(size_t *count)
{
#ifdef CUSTOM_LABELS_ABI_V0
	*count = custom_labels_thread_local_data.count;
	return custom_labels_thread_local_data.storage;
#else
	struct cl_set *set = custom_labels_current_set;

	*count = set ? set->count : 0;
	return set ? set->storage : NULL;
#endif
}

/*
 * Publishes the thread's own array a; readers may see {a, old count} in
 * between (v0), which the caller has made the old or the new set.
 */
static inline void cl_publish(struct custom_labels_labelset *a)
{
	cl_barrier();
#ifdef CUSTOM_LABELS_ABI_V0
	cl_store(&custom_labels_thread_local_data.storage, a->labels);
	cl_barrier();
	cl_store(&custom_labels_thread_local_data.count, a->set.count);
#else
	cl_store(&custom_labels_current_set, &a->set);
#endif
	cl_barrier();
}

/* Publishes any set (NULL: none) from any state; v0 may show the empty set in between. */
static cl_always_inline struct custom_labels_labelset *cl_install(struct custom_labels_labelset *a)
{
	struct custom_labels_labelset *prev = cl_installed();

	cl_barrier();
#ifdef CUSTOM_LABELS_ABI_V0
	cl_store(&custom_labels_thread_local_data.count, 0);
	cl_barrier();
	cl_store(&custom_labels_thread_local_data.storage, a ? a->labels : NULL);
	cl_barrier();
	cl_store(&custom_labels_thread_local_data.count, a ? a->set.count : 0);
#else
	cl_store(&custom_labels_current_set, a ? &a->set : NULL);
#endif
	cl_barrier();
	return prev;
}

static inline uint64_t cl_load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t cl_load32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Keys are mostly short: compare them without a call (overlapping word loads). */
static inline bool cl_bytes_eq(const unsigned char *a, const unsigned char *b, size_t n)
{
	if (n >= 8) {
		if (cl_load64(a) != cl_load64(b) || cl_load64(a + n - 8) != cl_load64(b + n - 8))
			return false;
		return n <= 16 || !memcmp(a + 8, b + 8, n - 16);
	}
	if (n >= 4)
		return cl_load32(a) == cl_load32(b) && cl_load32(a + n - 4) == cl_load32(b + n - 4);
	while (n--) {
		if (a[n] != b[n])
			return false;
	}
	return true;
}

/* Same idea for copies into a slot (never overlapping the source). */
static inline void cl_copy(unsigned char *dst, const unsigned char *src, size_t n)
{
	uint64_t a, b;

	if (n > 16) {
		memcpy(dst, src, n);
	} else if (n >= 8) {
		a = cl_load64(src);
		b = cl_load64(src + n - 8);
		memcpy(dst, &a, 8);
		memcpy(dst + n - 8, &b, 8);
	} else {
		while (n--)
			dst[n] = src[n];
	}
}

/* Index of key in l[0..n), or n. */
static inline size_t cl_find(const struct cl_label *l, size_t n, const void *key, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (l[i].key.len == len && cl_bytes_eq(l[i].key.buf, key, len))
			break;
	}
	return i;
}

static inline bool cl_label_eq(const struct cl_label *a, const struct cl_label *b)
{
	return a->key.len == b->key.len && a->value.len == b->value.len &&
	       cl_bytes_eq(a->key.buf, b->key.buf, a->key.len) &&
	       cl_bytes_eq(a->value.buf, b->value.buf, a->value.len);
}

static inline bool cl_kv_valid(const void *key, const void *value, size_t value_len)
{
	return key && (value || !value_len);
}

static inline bool cl_len_valid(size_t key_len, size_t value_len)
{
	return key_len <= cl_cfg.max_key_len && value_len <= cl_cfg.max_value_len;
}

/* A label copied into a free slot of the thread's pools (free: no reader sees it). */
static inline struct cl_label cl_own_put(struct cl_own *own, const void *key, size_t key_len,
					 const void *value, size_t value_len)
{
	size_t n = key_len + value_len;
	struct cl_pool *pool = &own->pool[n > CL_SLOT_SMALL];
	unsigned char *slot = pool->free[--pool->nfree];
	unsigned char *vbuf = slot + key_len; /* as in cl_prep_append (labelset.c) */

	cl_copy(slot, key, key_len);
	if (value_len)
		cl_copy(vbuf, value, value_len);
	return (struct cl_label){{key_len, slot}, {value_len, vbuf}};
}

/* Back to its pool, found by address (the key is at the slot's start). */
static inline void cl_own_release(struct cl_own *own, const struct cl_label *l)
{
	unsigned char *slot = (unsigned char *)l->key.buf;
	struct cl_pool *pool = &own->pool[slot >= own->base[1]];

	pool->free[pool->nfree++] = slot;
}

static inline size_t cl_align16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

/* An edit of the thread's current set: built in sp, then published. */
struct cl_edit {
	struct cl_own *own;
	struct custom_labels_labelset *cur; /* holds the current labels */
	struct custom_labels_labelset *sp;  /* same labels, the one to change */
};

/* From now on the configuration is fixed: storage is being sized with it. */
void cl_freeze(void);
/* Empties the own arrays and frees every slot: only while none of them is published. */
void cl_own_reset(struct cl_own *own);
/* The thread's own labels are not published: load the current ones into them. */
int cl_edit_load(struct cl_edit *e);
/* After sp was published: cur's slots sp no longer uses go back, cur becomes sp again. */
void cl_edit_commit(struct cl_edit *e);

static cl_always_inline int cl_edit_begin(struct cl_edit *e)
{
	struct custom_labels_labelset *a = cl_installed();

	if (__builtin_expect(!a || !a->own, 0))
		return cl_edit_load(e);
	e->own = a->own;
	e->cur = a;
	e->sp = a == a->own->arr[0] ? a->own->arr[1] : a->own->arr[0];
	return 0;
}

#pragma GCC visibility pop

#endif /* CUSTOMLABELS_INT_H */
